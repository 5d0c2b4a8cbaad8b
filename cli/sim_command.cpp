// `braid sim FILE|WORKLOAD --machine NAME|FILE [...]`: predict when every operation runs on every
// rank and stream (docs/SIM.md). Exit 0 when the program completes, 1 when it deadlocks, 2 on
// bad input. `--sweep KEY=V1,V2 ...` simulates every combination in parallel and ranks them;
// `--draw FILE` pictures the timeline (with --sweep: the fastest and slowest configurations).
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <optional>

#include "cli/budget_flags.h"
#include "cli/command.h"
#include "cli/sim_outputs.h"
#include "cli/sim_target.h"
#include "ir/host_ir_text.h"
#include "ir/semantics/budget.h"
#include "ir/timeline.h"
#include "passes/lower.h"
#include "catalog/workload.h"
#include "sim/report.h"
#include "sim/simulate.h"
#include "sim/sweep.h"
#include "viz/render.h"
#include "viz/trace_writer.h"

namespace braid::cli {
namespace {

// One configuration of a sweep; `p` keeps the lowered program the result points into.
sim::SimResult simulateSetting(const SimArgs& args, const HostProgram* parsed, const sim::SweepConfig& c,
                               Prepared& p) {
  SimArgs a = args;
  a.trace.clear();
  for (const auto& [k, v] : c) applySetting(a, k, v, parsed == nullptr);
  sim::Machine m = loadMachineFor(a.machine, a.nodes, a.gpusPerNode);
  prepare(a, parsed, p);
  return sim::simulate(*p.program, m, p.options);
}

// --draw with --sweep: the fastest and the slowest configuration that completed, simulated again
// (the sweep keeps only their figures) and drawn on one time scale, labelled with their settings.
void drawSweepEnds(const SimArgs& args, const HostProgram* parsed, const std::vector<sim::SweepOutcome>& ranked) {
  std::vector<const sim::SweepOutcome*> ends;
  for (const auto& o : ranked)
    if (o.ok()) {
      if (ends.size() < 2) ends.push_back(&o);
      else ends[1] = &o;
    }
  if (ends.empty()) throw Error("--draw " + args.draw + ": no configuration completed, nothing to draw");
  std::vector<Timeline> timelines;
  std::vector<std::string> labels;
  for (size_t i = 0; i < ends.size(); ++i) {
    Prepared p;
    sim::SimResult r = simulateSetting(args, parsed, ends[i]->config, p);
    timelines.push_back(sim::toTimeline(r, p.name));
    std::string folded = foldedRanksNote(r);
    labels.push_back(std::string(i == 0 ? "fastest: " : "slowest: ") + sim::configStr(ends[i]->config) +
                     (folded.empty() ? "" : " (" + folded + ")"));
  }
  std::string title = args.target + ": " + (ends.size() > 1 ? "fastest and slowest" : "the one") + " of " +
                      std::to_string(ranked.size()) + " configurations";
  drawSimulatedTimelines(timelines, labels, title, args.draw);
  std::cerr << "wrote " << args.draw << "\n";
}

int runSweepCommand(const SimArgs& args, const HostProgram* parsed) {
  std::vector<sim::SweepAxis> axes;
  for (const auto& spec : args.sweep) axes.push_back(sim::parseSweepAxis(spec));
  std::vector<sim::SweepConfig> configs = sim::sweepConfigs(axes);
  // Check every key and value now, so a typo fails before anything runs.
  for (const auto& c : configs) {
    SimArgs a = args;
    for (const auto& [k, v] : c) applySetting(a, k, v, parsed == nullptr);
    if (parsed == nullptr) applyWorkloadFlags(a.flags, simDefaults());
  }
  auto one = [&](const sim::SweepConfig& c) {
    Prepared p;
    return sim::summarize(simulateSetting(args, parsed, c, p), c);
  };
  bool tty = ::isatty(STDERR_FILENO) != 0;
  // Configurations unroll in parallel: the sweep's bar, not each one's unrolling, shows progress.
  sem::setShowProgress(false);
  auto outcomes = sim::runSweep(configs, one, 0, tty ? std::function<void(size_t, size_t)>(drawProgress) : nullptr);
  auto ranked = sim::rankSweep(std::move(outcomes));
  if (args.json) {
    std::cout << sim::sweepJson(ranked) << "\n";
  } else {
    std::cout << "braid sim --sweep: " << args.target << ", " << configs.size() << " configurations\n"
              << sim::sweepTable(ranked);
  }
  if (!args.draw.empty()) drawSweepEnds(args, parsed, ranked);
  return ranked.empty() || !ranked.front().ok() ? 1 : 0;
}

BRAID_REGISTER_COMMAND(Command{
    "sim",
    [](CLI::App& sub) -> std::function<int()> {
      auto args = std::make_shared<SimArgs>();
      sub.add_option("target", args->target, "host IR file, or a workload name (see `braid lower --list`)");
      sub.add_option("--machine", args->machine,
                     "machine preset (" + presetList() + ") or machine file (JSON, docs/MACHINES.md)");
      sub.add_option("--nodes", args->nodes, "number of nodes (default: the machine's; grown to fit the ranks)")
          ->check(rankCount());
      sub.add_option("--gpus-per-node", args->gpusPerNode, "GPUs per node (default: the machine's)")->check(rankCount());
      sub.add_option("--bind", args->binds, "bind a symbolic extent: NAME=VALUE (repeatable)")->check(bindingSyntax());
      sub.add_option("--ranks", args->ranks, "number of ranks (default: from the program's meshes; workloads: 2)")
          ->check(rankCount());
      sub.add_flag("--json", args->json, "print the results as one JSON object");
      sub.add_option("--timeline", args->timeline, "write the predicted timeline (docs/TIMELINE.md) to FILE");
      sub.add_option("--trace", args->trace, "write a Chrome/Perfetto trace to FILE (open it in ui.perfetto.dev)");
      sub.add_option("--draw", args->draw,
                     "draw the predicted timeline into FILE (.svg, .png or .dot; with --sweep: the fastest and "
                     "slowest configurations on one time scale)");
      sub.add_option("--sweep", args->sweep,
                     "simulate every combination of KEY=V1,V2,... (workload flags, file bindings, machine, nodes) "
                     "in parallel and rank them")
          ->expected(1, -1);
      sub.add_flag("--no-fold", args->noFold, "simulate every rank even when ranks provably do the same work");
      sub.add_flag("--graph", args->graph,
                   "predict a CUDA-graph replay (braid run --graph): no host issue, every operation runs once "
                   "its dependencies are met");
      addPowerFlags(sub, *args);
      sub.add_flag("--print-machine", args->printMachine, "print the machine file of --machine and exit");
      addWorkloadFlags(sub, args->flags, simDefaults());
      auto budget = std::make_shared<BudgetFlags>();
      addBudgetFlags(sub, *budget);
      return [args, budget] {
        applyBudgetFlags(*budget);
        if (args->printMachine) {
          std::cout << sim::machineToJson(loadMachineFor(args->machine, args->nodes, args->gpusPerNode)) << "\n";
          return 0;
        }
        if (args->target.empty()) throw Error("a host IR file or a workload name is required");
        std::optional<HostProgram> parsed = parseTarget(*args);
        const HostProgram* program = parsed ? &*parsed : nullptr;
        if (!args->draw.empty()) viz::pictureFormatOf(args->draw);  // a bad extension fails before simulating
        if (!args->sweep.empty()) {
          if (!args->timeline.empty() || !args->trace.empty())
            throw Error("--timeline and --trace describe one configuration; drop them or --sweep");
          return runSweepCommand(*args, program);
        }
        sim::Machine machine = loadMachineFor(args->machine, args->nodes, args->gpusPerNode);
        Prepared p;
        prepare(*args, program, p);
        sim::SimResult r = sim::simulate(*p.program, machine, p.options);
        if (!args->timeline.empty() || !args->trace.empty() || !args->draw.empty()) {
          Timeline t = sim::toTimeline(r, p.name);
          if (!args->timeline.empty()) writeTimelineFile(t, args->timeline);
          if (!args->trace.empty()) viz::writeChromeTrace(t, args->trace, smCounterTracks(r));
          if (!args->draw.empty()) {
            std::string folded = foldedRanksNote(r);
            drawSimulatedTimelines({t}, {"predicted on " + r.machine.name + (folded.empty() ? "" : " (" + folded + ")")},
                                   "", args->draw);
            std::cerr << "wrote " << args->draw << "\n";
          }
        }
        std::cout << (args->json ? sim::resultJson(r, p.name) + "\n" : sim::formatSummary(r, p.name));
        return r.engine.deadlocked ? 1 : 0;
      };
    },
    "predict when every operation runs on every rank and stream, on a machine model"});

}  // namespace
}  // namespace braid::cli
