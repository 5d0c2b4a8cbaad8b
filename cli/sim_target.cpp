// The target of `braid sim` and the commands built on it: lowering a workload or reading a file,
// machines, and KEY=VALUE settings (cli/sim_target.h).
#include "cli/sim_target.h"

#include <cstdio>

#include "catalog/workload.h"
#include "ir/error.h"
#include "ir/host_ir_text.h"
#include "ir/verifier.h"
#include "passes/lower.h"

namespace braid::cli {

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

void addMachineFlags(CLI::App& sub, SimArgs& a) {
  sub.add_option("--machine", a.machine,
                 "machine preset (" + presetList() + ") or machine file (JSON, docs/MACHINES.md; `braid calibrate` "
                 "writes one)");
  sub.add_option("--nodes", a.nodes, "number of nodes (default: the machine's)")->check(rankCount());
  sub.add_option("--gpus-per-node", a.gpusPerNode, "GPUs per node (default: the machine's)")->check(rankCount());
}

void addPowerFlags(CLI::App& sub, SimArgs& a, bool measured) {
  sub.add_option("--power", a.power,
                 std::string("the power state the run starts in, on a machine with a power cap (gpu.power_cap; "
                             "docs/SIM.md, Power state): idle, N (the run follows N back-to-back runs of the same "
                             "program), or steady (the state back-to-back runs settle in, as in a training loop)") +
                     (measured ? "; default auto: where the measured run stood (its timeline's meta.run_index and "
                                 "meta.cool_down_ms)"
                               : "; default idle"));
  sub.add_option("--power-gap", a.powerGapMs,
                 "idle milliseconds before the run and between those back-to-back runs (default 0): it lowers the power "
                 "level, and on a machine with host.after_idle the run's host issues it later (docs/SIM.md, After idle)");
}

sim::PowerStart parsePowerStart(const std::string& value, double gapMs) {
  sim::PowerStart p;
  if (!(gapMs >= 0) || gapMs > 1e9) throw Error("--power-gap must be a number of milliseconds in [0, 1e9]");
  p.gapUs = gapMs * 1e3;
  if (value == "idle") {
    if (gapMs > 0)
      throw Error("--power-gap needs --power N or steady: idle is a GPU that ran nothing before (--power 0 --power-gap MS "
                  "is one run after MS of idle)");
    return p;
  }
  if (value == "steady") {
    p.kind = sim::PowerStart::Kind::kSteady;
    return p;
  }
  size_t used = 0;
  long long n = -1;
  try {
    n = std::stoll(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != value.size() || value.empty() || n < 0 || n > 100000)
    throw Error("--power: '" + value + "' is not idle, steady or a number of runs (0 to 100000)");
  p.kind = sim::PowerStart::Kind::kAfterRuns;
  p.runs = n;
  return p;
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


// Workload flags and the keys a sweep may set for a workload.
static const std::vector<std::string> kWorkloadKeys = {"streams", "pool", "defer-waits", "prefetch", "own-shard", "comm-backend", "protocol", "indexing", "pipeline", "m", "k", "n",
                                                "devices", "ranks", "dtype"};

static int64_t parseCount(const std::string& key, const std::string& v) {
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
  } else if (key == "pool") {
    f.pool = parseCount(key, v);
  } else if (workload && (key == "defer-waits" || key == "prefetch")) {
    if (v != "on" && v != "off") throw Error(key + ": '" + v + "' must be on or off");
    (key == "prefetch" ? f.prefetch : f.deferWaits) = v == "on";
  } else if (workload && key == "own-shard") {
    f.ownShard = v;
  } else if (workload && key == "comm-backend") {
    f.commBackend = v;
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
  // A file's numberOfStreams: --pool, else --streams, else 4.
  o.semantics.numberOfStreams = f.has(f.pool) ? f.pool : f.has(f.streams) ? f.streams : 4;
  o.fold = !a.noFold;
  o.graphReplay = a.graph;
  o.power = parsePowerStart(a.power, a.powerGapMs);
  o.recordSmCounters = !a.trace.empty();
  if (parsed) {
    refuseLoweringFlags(f, a.target, {"streams", "pool", "comm-backend"});
    if (!f.commBackend.empty() && f.commBackend != "nccl" && f.commBackend != "cuda")
      throw Error("--comm-backend must be nccl or cuda, got '" + f.commBackend + "'");
    // cuda: every communication of the file on the copy engines, whatever its backend= says.
    o.copyEngines = f.commBackend == "cuda";
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
  o.semantics.numberOfStreams = w.params.lowering.streams;
  out.name = a.target + " (lowered: devices " + std::to_string(w.params.devices) + ", streams " +
             std::to_string(w.params.streams) + (w.params.pool > 0 ? ", pool " + std::to_string(w.params.pool) : "") +
             scheduleLabel(w.params.lowering) +
             ", m " + std::to_string(w.params.m) + ", k " +
             std::to_string(w.params.k) + ", n " + std::to_string(w.params.n) + ", " +
             std::string(dataTypeName(w.params.dtype)) + ", protocol " +
             streamProtocolName(w.params.lowering.protocol) + ")";
}

std::optional<HostProgram> parseTarget(const SimArgs& a) { return readTargetFile(a.target); }

void drawProgress(size_t done, size_t total) {
  const int width = 30;
  int filled = total ? static_cast<int>(width * done / total) : width;
  std::fprintf(stderr, "\r[%s%s] %zu/%zu configurations", std::string(static_cast<size_t>(filled), '#').c_str(),
               std::string(static_cast<size_t>(width - filled), ' ').c_str(), done, total);
  if (done == total) std::fprintf(stderr, "\n");
  std::fflush(stderr);
}

}  // namespace braid::cli
