// `braid validate --measured TIMELINE.json FILE|WORKLOAD --machine M [...]`: simulate the program
// a measured timeline came from and compare them op by op (docs/CALIBRATION.md, "Validating").
// Exit 0 when compared, 1 when the simulated program deadlocks, 2 on bad input.
#include <iostream>
#include <optional>

#include "cli/command.h"
#include "cli/sim_target.h"
#include "ir/error.h"
#include "ir/timeline.h"
#include "sim/report.h"
#include "viz/render.h"
#include "viz/timeline_draw.h"
#include "viz/trace_writer.h"
#include "viz/validation.h"

namespace braid::cli {
namespace {

struct ValidateArgs {
  SimArgs sim;
  std::string measured;
  std::string picture;
  int64_t top = 10;
};

int runValidate(ValidateArgs& a) {
  SimArgs& s = a.sim;
  if (a.measured.empty()) throw Error("--measured TIMELINE.json is required (docs/TIMELINE.md)");
  if (s.target.empty()) throw Error("the measured program is required: a host IR file or a workload name");
  if (a.top < 0) throw Error("--top must not be negative");
  if (!a.picture.empty()) viz::pictureFormatOf(a.picture);  // a bad extension fails before the work
  Timeline measured = readTimelineFile(a.measured);
  if (s.ranks == 0 && !s.flags.has(s.flags.devices)) s.ranks = measured.ranks;
  s.noFold = true;  // the comparison needs every rank's operations
  std::optional<HostProgram> parsed = parseTarget(s);
  sim::Machine machine = loadMachineFor(s.machine, s.nodes, s.gpusPerNode);
  Prepared p;
  prepare(s, parsed ? &*parsed : nullptr, p);
  sim::SimResult r = sim::simulate(*p.program, machine, p.options);
  if (r.engine.deadlocked) {
    std::cerr << "braid validate: the simulated program deadlocks: " << sim::describeDeadlock(r) << "\n";
    return 1;
  }
  Timeline predicted = sim::toTimeline(r, p.name);
  viz::Validation v = viz::compareTimelines(measured, predicted);
  if (!s.timeline.empty()) writeTimelineFile(predicted, s.timeline);
  if (!s.trace.empty()) viz::writeChromeTrace(viz::sideBySide(measured, predicted), s.trace);
  if (!a.picture.empty()) {
    viz::TimelineDrawOptions o;
    o.labels = {"measured (" + a.measured + ")", "predicted (" + machine.name + ")"};
    viz::renderTimelines({measured, predicted}, o, a.picture);
  }
  if (s.json) {
    std::cout << viz::validationJson(v) << "\n";
    return 0;
  }
  std::cout << "braid validate: " << a.measured << " (" << measured.machine << ") against " << p.name << " on "
            << machine.name << ", " << r.numRanks() << " rank(s)\n"
            << viz::validationReport(v, static_cast<size_t>(a.top));
  for (const auto* f : {&s.timeline, &s.trace, &a.picture})
    if (!f->empty()) std::cout << "wrote " << *f << "\n";
  return 0;
}

BRAID_REGISTER_COMMAND(Command{
    "validate",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<ValidateArgs>();
      SimArgs& s = a->sim;
      sub.add_option("target", s.target, "the measured program: host IR file, or a workload name");
      sub.add_option("--measured", a->measured, "the measured timeline (JSON, docs/TIMELINE.md)");
      addMachineFlags(sub, s);
      sub.add_option("--bind", s.binds, "bind a symbolic extent: NAME=VALUE (repeatable)");
      sub.add_option("--ranks", s.ranks, "number of ranks (default: the measured timeline's)");
      sub.add_flag("--json", s.json, "print the comparison as one JSON object");
      sub.add_option("--timeline", s.timeline, "write the predicted timeline to FILE");
      sub.add_option("--trace", s.trace, "write one Perfetto trace with the measured and predicted streams side by side");
      sub.add_option("--picture", a->picture, "draw both timelines on one time scale: OUT.svg, OUT.png or OUT.dot");
      sub.add_option("--top", a->top, "list the N operations with the largest errors (default 10)");
      addWorkloadFlags(sub, s.flags, simDefaults());
      return [a] { return runValidate(*a); };
    },
    "compare a measured timeline with the simulation of the same program, op by op"});

}  // namespace
}  // namespace braid::cli
