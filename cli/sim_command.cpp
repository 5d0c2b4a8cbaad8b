// `braid sim FILE|WORKLOAD --machine NAME|FILE [...]`: predict when every operation runs on every
// rank and stream (docs/SIM.md). Exit 0 when the program completes, 1 when it deadlocks, 2 on
// bad input. `--sweep KEY=V1,V2 ...` simulates every combination in parallel and ranks them.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <optional>

#include "cli/budget_flags.h"
#include "cli/command.h"
#include "cli/workload_flags.h"
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

struct SimArgs {
  std::string target;
  std::vector<std::string> binds;
  int64_t ranks = 0;
  std::string machine;
  int64_t nodes = 0;
  int64_t gpusPerNode = 0;
  bool json = false;
  std::string timeline;
  std::string trace;
  std::vector<std::string> sweep;
  bool noFold = false;
  bool printMachine = false;
  WorkloadFlags flags;
  BudgetFlags budget;
};

// Sizes where communication and computation both matter on one H200 (measured-h200.md's
// 8192 x 8192 x 3584 bf16 AG+GEMM), rather than verify's tiny ones.
WorkloadParams simDefaults() {
  WorkloadParams p;
  p.m = 8192;
  p.k = 8192;
  p.n = 3584;
  p.dtype = DataType::kBFloat16;
  return p;
}

std::string presetList() {
  std::string names;
  for (const auto& n : sim::machinePresetNames()) names += (names.empty() ? "" : ", ") + n;
  return names;
}

sim::Machine loadMachineFor(const std::string& name, int64_t nodes, int64_t gpus_per_node) {
  if (name.empty())
    throw Error("--machine is required: a preset (" + presetList() + ") or a machine file (docs/MACHINES.md)");
  sim::Machine m = sim::loadMachine(name);
  if (nodes < 0) throw Error("--nodes must be positive");
  if (gpus_per_node < 0) throw Error("--gpus-per-node must be positive");
  if (nodes > 0) m.topology.nodes = nodes;
  if (gpus_per_node > 0) m.topology.gpusPerNode = gpus_per_node;
  return m;
}

// One configuration to simulate: the program (lowered, or the parsed file) and its options.
struct Prepared {
  HostProgram lowered;           // for workloads
  const HostProgram* program = nullptr;
  sim::SimOptions options;
  std::string name;
};

// Workload flags and the keys a sweep may set for a workload.
const std::vector<std::string> kWorkloadKeys = {"streams", "protocol", "indexing", "pipeline", "m", "k", "n",
                                                "devices", "ranks", "dtype"};

int64_t parseCount(const std::string& key, const std::string& v) {
  try {
    size_t used = 0;
    int64_t x = std::stoll(v, &used);
    if (used == v.size()) return x;
  } catch (const std::exception&) {
  }
  throw Error(key + ": '" + v + "' is not an integer");
}

// Applies a sweep setting to a copy of the command's arguments.
void applySetting(SimArgs& a, const std::string& key, const std::string& v, bool workload) {
  WorkloadFlags& f = a.flags;
  if (key == "machine") {
    a.machine = v;
  } else if (key == "nodes") {
    a.nodes = parseCount(key, v);
  } else if (key == "gpus-per-node" || key == "gpus_per_node") {
    a.gpusPerNode = parseCount(key, v);
  } else if (key == "streams") {
    f.streams = parseCount(key, v);
  } else if (key == "ranks" || key == "devices") {
    a.ranks = parseCount(key, v);
    if (workload) f.devices = a.ranks;
  } else if (workload && key == "protocol") {
    f.protocol = v;
  } else if (workload && key == "indexing") {
    f.indexing = v;
  } else if (workload && key == "pipeline") {
    f.pipeline = v;
  } else if (workload && key == "dtype") {
    f.dtype = v;
  } else if (workload && key == "m") {
    f.m = parseCount(key, v);
  } else if (workload && key == "k") {
    f.k = parseCount(key, v);
  } else if (workload && key == "n") {
    f.n = parseCount(key, v);
  } else if (!workload) {
    a.binds.push_back(key + "=" + v);  // a symbolic extent of the file
  } else {
    std::string keys;
    for (const auto& k : kWorkloadKeys) keys += k + ", ";
    throw Error("--sweep " + key + ": not a setting of a workload (" + keys + "machine, nodes, gpus-per-node)");
  }
}

// Builds the program and options for `a`; `parsed` is the target file's program (nullptr for a
// workload, which is lowered here).
void prepare(const SimArgs& a, const HostProgram* parsed, Prepared& out) {
  const WorkloadFlags& f = a.flags;
  if (f.has(f.streams) && f.streams <= 0) throw Error("--streams must be positive");
  if (a.ranks < 0) throw Error("--ranks must be positive");
  sim::SimOptions& o = out.options;
  o.semantics.bindings = parseBindings(a.binds);
  o.semantics.numberOfStreams = f.has(f.streams) ? f.streams : 4;
  o.fold = !a.noFold;
  o.recordSmCounters = !a.trace.empty();
  if (parsed) {
    out.program = parsed;
    o.semantics.numRanks = a.ranks;
    out.name = a.target;
    return;
  }
  WorkloadParams base = simDefaults();
  if (a.ranks > 0) base.devices = a.ranks;
  Workload w = makeWorkload(a.target, applyWorkloadFlags(f, base));
  out.lowered = lower(*w.fusion, w.params.lowering, w.params.devices);
  assignPrintedLocations(out.lowered, a.target + ".hir");  // lines of `braid lower NAME` output
  out.program = &out.lowered;
  o.semantics.numRanks = w.params.devices;
  o.semantics.numberOfStreams = w.params.streams;
  out.name = a.target + " (lowered: devices " + std::to_string(w.params.devices) + ", streams " +
             std::to_string(w.params.streams) + ", m " + std::to_string(w.params.m) + ", k " +
             std::to_string(w.params.k) + ", n " + std::to_string(w.params.n) + ", " +
             std::string(dataTypeName(w.params.dtype)) + ", protocol " +
             streamProtocolName(w.params.lowering.protocol) + ")";
}

std::optional<HostProgram> parseTarget(const SimArgs& a) {
  std::error_code ec;
  if (std::filesystem::exists(std::filesystem::symlink_status(a.target, ec))) return parseHostProgramFile(a.target);
  if (!isWorkloadName(a.target)) {
    std::string names;
    for (const auto& w : workloadCatalog()) names += (names.empty() ? "" : ", ") + w.name;
    throw Error("'" + a.target + "' is neither a file nor a workload (known workloads: " + names + ")");
  }
  return std::nullopt;
}

void drawProgress(size_t done, size_t total) {
  const int width = 30;
  int filled = total ? static_cast<int>(width * done / total) : width;
  std::fprintf(stderr, "\r[%s%s] %zu/%zu configurations", std::string(static_cast<size_t>(filled), '#').c_str(),
               std::string(static_cast<size_t>(width - filled), ' ').c_str(), done, total);
  if (done == total) std::fprintf(stderr, "\n");
  std::fflush(stderr);
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
      sub.add_option("--nodes", args->nodes, "number of nodes (default: the machine's; grown to fit the ranks)")
          ->check(rankCount());
      sub.add_option("--gpus-per-node", args->gpusPerNode, "GPUs per node (default: the machine's)")->check(rankCount());
      sub.add_option("--bind", args->binds, "bind a symbolic extent: NAME=VALUE (repeatable)")->check(bindingSyntax());
      sub.add_option("--ranks", args->ranks, "number of ranks (default: from the program's meshes; workloads: 2)")
          ->check(rankCount());
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
      addBudgetFlags(sub, args->budget);
      return [args] {
        applyBudgetFlags(args->budget);
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
