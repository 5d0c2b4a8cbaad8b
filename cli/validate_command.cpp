// `braid validate --measured TIMELINE.json FILE|WORKLOAD --machine M [...]`: simulate the program
// a measured timeline came from and compare them op by op (docs/CALIBRATION.md, "Validating").
// Exit 0 when compared, 1 when the simulated program deadlocks, 2 on bad input.
#include <iostream>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/output_path.h"
#include "cli/sim_target.h"
#include "ir/error.h"
#include "ir/input_values.h"
#include "ir/timeline.h"
#include "sim/rank_skew.h"
#include "sim/report.h"
#include "viz/render.h"
#include "viz/timeline_draw.h"
#include "viz/trace_writer.h"
#include "viz/validation.h"

namespace braid::cli {
namespace {

std::string fmtUs(double us) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f", us);
  return b;
}

struct ValidateArgs {
  SimArgs sim;
  std::string measured;
  std::string picture;
  int64_t top = 10;
  bool noSkew = false;
  std::string transport = "nccl";
};

// The predicted timeline on each rank's own clock, as the measured one counts: rank r's ops
// shifted back by the start the simulation gave it.
void toRankClocks(Timeline& t, const std::vector<double>& start) {
  for (auto& op : t.ops) {
    double s = op.rank >= 0 && static_cast<size_t>(op.rank) < start.size() ? start[static_cast<size_t>(op.rank)] : 0;
    op.startUs -= s;
    op.endUs -= s;
  }
}

// A note when the machine's GEMM constants were measured on other operand values than the run
// computed on (ir/input_values.h): its GEMMs then differ by 4-14% on an H200 before any model
// error. A measured timeline without meta.inputs comes from a run that seeded integers.
std::optional<std::string> operandMismatch(const sim::Machine& machine, const Timeline& measured) {
  if (!machine.gpu.gemmOperands) return std::nullopt;
  auto it = measured.meta.find("inputs");
  const std::string ran = it == measured.meta.end() ? "integers" : it->second;
  const std::string fitted = inputValuesName(*machine.gpu.gemmOperands);
  if (ran == fitted) return std::nullopt;
  return machine.name + "'s GEMM constants were measured on " + fitted + " operands, but the run's inputs were " + ran +
         ": a GEMM's time depends on its values (on an H200 bf16 GEMMs run 4-14% faster on integers); "
         "calibrate with --gemm-operands " + ran + " or run with --inputs " + fitted;
}

// --power auto: the measured run's place in its back-to-back runs, from the timeline's meta
// (run_index: runs of the configuration before it; cool_down_ms: idle before each). A sweep's
// earlier configurations also ran before it; they are not counted, so on a machine with a power
// cap the start is a lower bound. A timeline without them (older braid) starts idle.
// A bad value is the file's fault, not a flag's: the error names the file and the field.
void resolvePowerStart(SimArgs& s, const Timeline& measured, const std::string& file) {
  if (s.power != "auto") return;
  auto index = measured.meta.find("run_index"), cool = measured.meta.find("cool_down_ms");
  if (index == measured.meta.end()) {
    s.power = "idle";
    return;
  }
  const std::string& runs = index->second;
  if (runs.empty() || runs.size() > 9 || runs.find_first_not_of("0123456789") != std::string::npos)
    throw Error(file + ": meta.run_index: expected a number of runs (0 or more), got '" + runs + "'");
  s.power = runs;
  if (cool != measured.meta.end()) {
    const std::optional<double> ms = numberIn(cool->second, 0, 1e9);
    if (!ms) throw Error(file + ": meta.cool_down_ms: expected milliseconds in [0, 1e9], got '" + cool->second + "'");
    s.powerGapMs = *ms;
  }
}

int runValidate(ValidateArgs& a) {
  SimArgs& s = a.sim;
  if (a.measured.empty()) throw Error("--measured TIMELINE.json is required (docs/TIMELINE.md)");
  if (s.target.empty()) throw Error("the measured program is required: a host IR file or a workload name");
  if (a.top < 0) throw Error("--top must not be negative");
  if (!a.picture.empty()) viz::pictureFormatOf(a.picture);  // a bad extension fails before the work
  checkOutputPath("--timeline", s.timeline);
  checkOutputPath("--trace", s.trace);
  checkOutputPath("--picture", a.picture);
  Timeline measured = readTimelineFile(a.measured);
  if (auto in = measured.meta.find("inputs"); in != measured.meta.end() && !parseInputValues(in->second))
    throw Error(a.measured + ": meta.inputs: expected the kind of input values, integers or normal, got '" + in->second + "'");
  resolvePowerStart(s, measured, a.measured);
  if (s.ranks == 0 && !s.flags.has(s.flags.devices)) s.ranks = measured.ranks;
  s.noFold = true;  // the comparison needs every rank's operations
  std::optional<HostProgram> parsed = parseTarget(s);
  sim::Machine machine = loadMachineFor(s.machine, s.nodes, s.gpusPerNode);
  Prepared p;
  prepare(s, parsed ? &*parsed : nullptr, p);
  // The measured ranks started at different moments (sim/rank_skew.h): simulate that.
  std::vector<double> skew = a.noSkew ? std::vector<double>{} : sim::rankStartOffsets(measured);
  p.options.rankStartUs = skew;
  if (a.transport != "nccl" && a.transport != "cuda")
    throw Error("--transport: expected nccl or cuda, got \"" + a.transport + "\"");
  p.options.copyEngines = p.options.copyEngines || a.transport == "cuda";  // or the file's --comm-backend cuda
  sim::SimResult r = sim::simulate(*p.program, machine, p.options);
  if (r.engine.deadlocked) {
    std::cerr << "braid validate: the simulated program deadlocks: " << sim::describeDeadlock(r) << "\n";
    return 1;
  }
  Timeline predicted = sim::toTimeline(r, p.name);
  toRankClocks(predicted, skew);
  viz::Validation v = viz::compareTimelines(measured, predicted);
  const std::optional<std::string> note = operandMismatch(machine, measured);
  if (!s.timeline.empty()) writeTimelineFile(predicted, s.timeline);
  if (!s.trace.empty()) viz::writeChromeTrace(viz::sideBySide(measured, predicted), s.trace);
  if (!a.picture.empty()) {
    viz::TimelineDrawOptions o;
    o.labels = {"measured (" + a.measured + ")", "predicted (" + machine.name + ")"};
    viz::renderTimelines({measured, predicted}, o, a.picture);
  }
  if (s.json) {
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(viz::validationJson(v));
    j["rank_start_us"] = skew;
    if (note) j["notes"] = {*note};
    if (r.power.modelled)
      j["power"] = {{"start", r.power.start},
                    {"start_level", r.power.startLevel},
                    {"capped_fraction", r.power.cappedFraction}};
    j["host_after_idle_us"] = r.power.hostDelayUs;
    std::cout << j.dump(1) << "\n";
    return 0;
  }
  std::cout << "braid validate: " << a.measured << " (" << measured.machine << ") against " << p.name << " on "
            << machine.name << ", " << r.numRanks() << " rank(s)\n"
            << (skew.empty() ? std::string() : "rank starts (from the measured collectives' ends):" + [&] {
                 std::string t;
                 for (size_t i = 0; i < skew.size(); ++i) t += " rank " + std::to_string(i) + " +" + fmtUs(skew[i]) + " us";
                 return t + "\n";
               }())
            << viz::validationReport(v, static_cast<size_t>(a.top));
  if (note) std::cout << "note: " << *note << "\n";
  for (const std::string& n : r.notes)
    if (n.rfind("power: ", 0) == 0 || n.rfind("after idle: ", 0) == 0) std::cout << "note: " << n << "\n";
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
      addPowerFlags(sub, s, true);
      s.power = "auto";
      sub.add_option("--bind", s.binds, "bind a symbolic extent: NAME=VALUE (repeatable)");
      sub.add_option("--ranks", s.ranks, "number of ranks (default: the measured timeline's)")->check(rankCount());
      sub.add_flag("--json", s.json, "print the comparison as one JSON object");
      sub.add_option("--timeline", s.timeline, "write the predicted timeline to FILE");
      sub.add_option("--trace", s.trace, "write one Perfetto trace with the measured and predicted streams side by side");
      sub.add_option("--picture", a->picture, "draw both timelines on one time scale: OUT.svg, OUT.png or OUT.dot");
      sub.add_option("--top", a->top, "list the N operations with the largest errors (default 10)");
      sub.add_option("--transport", a->transport,
                     "how the measured run moved data: nccl (NCCL kernels, default) or cuda (copy engines: no SMs held)");
      sub.add_flag("--no-skew", a->noSkew,
                   "start every rank at 0 (default: each rank starts when the measured collectives' ends say it did)");
      addWorkloadFlags(sub, s.flags, simDefaults());
      return [a] { return runValidate(*a); };
    },
    "compare a measured timeline with the simulation of the same program, op by op"});

}  // namespace
}  // namespace braid::cli
