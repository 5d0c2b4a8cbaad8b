// `braid sim FILE|WORKLOAD --machine NAME|FILE [...]`: predict when every operation runs on every
// rank and stream (docs/SIM.md). Exit 0 when the program completes, 1 when it deadlocks, 2 on
// bad input. `--sweep KEY=V1,V2 ...` simulates every combination in parallel and ranks them.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <optional>

#include "cli/command.h"
#include "cli/sim_target.h"
#include "ir/host_ir_text.h"
#include "ir/timeline.h"
#include "passes/lower.h"
#include "catalog/workload.h"
#include "sim/report.h"
#include "sim/simulate.h"
#include "sim/sweep.h"
#include "viz/trace_writer.h"

namespace braid::cli {
namespace {

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
    SimArgs a = args;
    a.trace.clear();
    for (const auto& [k, v] : c) applySetting(a, k, v, parsed == nullptr);
    sim::Machine m = loadMachineFor(a.machine, a.nodes, a.gpusPerNode);
    Prepared p;
    prepare(a, parsed, p);
    return sim::summarize(sim::simulate(*p.program, m, p.options), c);
  };
  bool tty = ::isatty(STDERR_FILENO) != 0;
  auto outcomes = sim::runSweep(configs, one, 0, tty ? std::function<void(size_t, size_t)>(drawProgress) : nullptr);
  auto ranked = sim::rankSweep(std::move(outcomes));
  if (args.json) {
    std::cout << sim::sweepJson(ranked) << "\n";
  } else {
    std::cout << "braid sim --sweep: " << args.target << ", " << configs.size() << " configurations\n"
              << sim::sweepTable(ranked);
  }
  return ranked.empty() || !ranked.front().ok() ? 1 : 0;
}

BRAID_REGISTER_COMMAND(Command{
    "sim",
    [](CLI::App& sub) -> std::function<int()> {
      auto args = std::make_shared<SimArgs>();
      sub.add_option("target", args->target, "host IR file, or a workload name (see `braid lower --list`)");
      sub.add_option("--machine", args->machine,
                     "machine preset (" + presetList() + ") or machine file (JSON, docs/MACHINES.md)");
      sub.add_option("--nodes", args->nodes, "number of nodes (default: the machine's; grown to fit the ranks)");
      sub.add_option("--gpus-per-node", args->gpusPerNode, "GPUs per node (default: the machine's)");
      sub.add_option("--bind", args->binds, "bind a symbolic extent: NAME=VALUE (repeatable)");
      sub.add_option("--ranks", args->ranks, "number of ranks (default: from the program's meshes; workloads: 2)");
      sub.add_flag("--json", args->json, "print the results as one JSON object");
      sub.add_option("--timeline", args->timeline, "write the predicted timeline (docs/TIMELINE.md) to FILE");
      sub.add_option("--trace", args->trace, "write a Chrome/Perfetto trace to FILE (open it in ui.perfetto.dev)");
      sub.add_option("--sweep", args->sweep,
                     "simulate every combination of KEY=V1,V2,... (workload flags, file bindings, machine, nodes) "
                     "in parallel and rank them")
          ->expected(1, -1);
      sub.add_flag("--no-fold", args->noFold, "simulate every rank even when ranks provably do the same work");
      sub.add_flag("--print-machine", args->printMachine, "print the machine file of --machine and exit");
      addWorkloadFlags(sub, args->flags, simDefaults());
      return [args] {
        if (args->printMachine) {
          std::cout << sim::machineToJson(loadMachineFor(args->machine, args->nodes, args->gpusPerNode)) << "\n";
          return 0;
        }
        if (args->target.empty()) throw Error("a host IR file or a workload name is required");
        std::optional<HostProgram> parsed = parseTarget(*args);
        const HostProgram* program = parsed ? &*parsed : nullptr;
        if (!args->sweep.empty()) {
          if (!args->timeline.empty() || !args->trace.empty())
            throw Error("--timeline and --trace describe one configuration; drop them or --sweep");
          return runSweepCommand(*args, program);
        }
        sim::Machine machine = loadMachineFor(args->machine, args->nodes, args->gpusPerNode);
        Prepared p;
        prepare(*args, program, p);
        sim::SimResult r = sim::simulate(*p.program, machine, p.options);
        if (!args->timeline.empty() || !args->trace.empty()) {
          Timeline t = sim::toTimeline(r, p.name);
          if (!args->timeline.empty()) writeTimelineFile(t, args->timeline);
          if (!args->trace.empty()) {
            viz::TraceOptions to;
            for (size_t gpu = 0; gpu < r.engine.busySms.size(); ++gpu) {
              viz::TraceCounter c;
              c.rank = r.graph.ranks[gpu];
              c.name = "busy SMs";
              for (const auto& pt : r.engine.busySms[gpu]) c.points.emplace_back(pt.us, pt.value);
              to.counters.push_back(std::move(c));
            }
            viz::writeChromeTrace(t, args->trace, to);
          }
        }
        std::cout << (args->json ? sim::resultJson(r, p.name) + "\n" : sim::formatSummary(r, p.name));
        return r.engine.deadlocked ? 1 : 0;
      };
    },
    "predict when every operation runs on every rank and stream, on a machine model"});

}  // namespace
}  // namespace braid::cli
