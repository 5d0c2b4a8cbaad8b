// The `braid calibrate --measure` driver, inside the run module (cli/exec_module.h): it makes the
// measurement plan around a machine's efficiency curves (sim/measure_plan.h), launches or joins
// the ranks as `braid run` does, runs the microbenchmarks on each (exec/microbench.h) and has
// rank 0 write the measurement file (sim/measurements.h).
#include "cli/exec_module/measure_driver.h"

#include "cli/exec_module/rank_support.h"
#include "cli/measure_options.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iostream>

#include "exec/communicator.h"
#include "exec/device.h"
#include "exec/launcher.h"
#include "exec/microbench.h"
#include "ir/error.h"
#include "sim/measure_plan.h"
#include "sim/measurements.h"

namespace braid::cli {

using namespace braid::exec;

namespace {

// The preset whose curves place the sizes when --machine is not given: the GPU's own.
std::string presetForGpu(const std::string& gpu) {
  std::string g = gpu;
  std::transform(g.begin(), g.end(), g.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const char* p : {"h100", "h200", "a100", "b200"})
    if (g.find(p) != std::string::npos) return p;
  return "h200";
}

// "cuda:0 (NVIDIA H100 80GB HBM3)" -> "NVIDIA H100 80GB HBM3".
std::string gpuName(const Device& d) {
  std::string s = d.description();
  auto open = s.find('('), close = s.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return s;
  return s.substr(open + 1, close - open - 1);
}

MicrobenchPlan toBench(const sim::Measurements& m, const MeasureConfig& c, int64_t ranksPerNode) {
  MicrobenchPlan p;
  p.reps = c.reps;
  p.warmup = c.warmup;
  p.coolDownMs = c.coolDownMs;
  p.gemmOperands = inputValuesNamed(c.gemmOperands);
  auto gemm = [](const sim::GemmShape& g) { return BenchGemm{g.m, g.n, g.k, g.batch, g.dtype}; };
  auto coll = [](const sim::CollectiveMeasurement& x) {
    return BenchCollective{x.kind, x.team, static_cast<int64_t>(x.bytes)};
  };
  for (const auto& g : m.gemms) p.gemms.push_back(gemm(g.shape));
  for (const auto& x : m.copies) p.copies.push_back(static_cast<int64_t>(x.bytes));
  for (const auto& x : m.collectives) p.collectives.push_back(coll(x));
  // Ranks are numbered node by node: rank 1 shares rank 0's node, rank ranksPerNode does not.
  for (const auto& x : m.p2p) p.p2p.push_back({static_cast<int64_t>(x.bytes), x.interNode ? ranksPerNode : 1});
  p.host = !m.host.empty();
  for (const auto& o : m.overlaps) p.overlaps.push_back({gemm(o.gemm), coll(o.collective), o.copyEngines});
  for (const auto& x : m.copyEngine) p.copyEngine.push_back({x.kind, x.team, static_cast<int64_t>(x.bytes)});
  for (const auto& x : m.power) p.power.push_back({gemm(x.gemm), x.loadMs, x.gapMs, x.bursts, 1000, x.duty});
  for (const auto& x : m.afterIdle) p.afterIdle.push_back({x.idleMs, x.ops, x.graph});
  return p;
}

// The plan with the measured times filled in; host costs the clock could not measure are left out.
sim::Measurements withTimes(sim::Measurements m, const MicrobenchTimes& t) {
  for (size_t i = 0; i < m.gemms.size(); ++i) m.gemms[i].us = t.gemmUs.at(i);
  for (size_t i = 0; i < m.copies.size(); ++i) m.copies[i].us = t.copyUs.at(i);
  for (size_t i = 0; i < m.collectives.size(); ++i) m.collectives[i].us = t.collectiveUs.at(i);
  for (size_t i = 0; i < m.p2p.size(); ++i) m.p2p[i].us = t.p2pUs.at(i);
  for (size_t i = 0; i < m.copyEngine.size(); ++i) m.copyEngine[i].us = t.copyEngineUs.at(i);
  std::vector<sim::HostMeasurement> host;
  for (const auto& h : m.host)
    for (const auto& [name, us] : t.hostUs)
      if (name == sim::hostCallName(h.call)) host.push_back({h.call, us});
  m.host = host;
  for (size_t i = 0; i < m.overlaps.size(); ++i) {
    const OverlapTimes& o = t.overlaps.at(i);
    m.overlaps[i].gemmAloneUs = o.gemmAloneUs;
    m.overlaps[i].gemmBesideUs = o.gemmBesideUs;
    m.overlaps[i].commAloneUs = o.commAloneUs;
    m.overlaps[i].commBesideUs = o.commBesideUs;
  }
  for (size_t i = 0; i < m.power.size(); ++i) {
    m.power[i].runs.clear();
    for (const auto& [start, us] : t.power.at(i)) m.power[i].runs.push_back({start, us});
  }
  for (size_t i = 0; i < m.afterIdle.size(); ++i) m.afterIdle[i].us = t.afterIdleUs.at(i);
  return m;
}

std::string today() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

// Ranks on this host: torchrun and OpenMPI say so; braid's own launcher starts every rank here.
int64_t ranksPerNode(int64_t world, bool cuda) {
  for (const char* v : {"LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE"})
    if (const char* s = std::getenv(v); s && *s) return std::max<int64_t>(1, std::atoll(s));
  return cuda ? std::max<int64_t>(1, std::min(world, cudaDeviceCount())) : world;
}

int rankMain(const MeasureConfig& cfg, const RankEnv& env) {
  const bool cuda = cfg.backend == "cuda";
  const int64_t world = env.worldSize, rank = env.rank;
  std::unique_ptr<Device> device = cuda ? makeCudaDevice(env.localRank) : makeCpuDevice();
  const int64_t perNode = ranksPerNode(world, cuda);
  const std::string gpu = cuda ? gpuName(*device) : "CPU (host wall clock, not a GPU)";
  const std::string machineName = cfg.machine.empty() ? presetForGpu(gpu) : cfg.machine;
  sim::Measurements plan = sim::planMeasurements(sim::loadMachine(machineName), measurePlanOptions(cfg, world, perNode));
  // With copy-engine measurements in the plan, NCCL and the copy engines behind one router.
  const bool engines = !plan.copyEngine.empty() ||
                       std::any_of(plan.overlaps.begin(), plan.overlaps.end(), [](const auto& o) { return o.copyEngines; });
  std::unique_ptr<Communicator> comm =
      cuda && engines
          ? connectCudaTransports(env, {CommBackend::kNccl, CommBackend::kCuda}, std::nullopt,
                                  std::min(cfg.timeoutSec, 600.0), "braid-measure/")
          : connectRank(env, cuda, std::min(cfg.timeoutSec, 600.0), "braid-measure/");
  comm->setHighPriorityStreams(cfg.commPriority == "high");  // before any team's streams exist
  if (rank == 0)
    std::cerr << "braid calibrate --measure: " << plan.size() << " measurements on " << world
              << (world == 1 ? " rank" : " ranks") << " [" << comm->backendName() << ", " << device->description()
              << "], sizes around " << machineName << "'s curves, median of " << cfg.reps << " runs after "
              << cfg.warmup << " warm-up\n";
  auto progress = [rank](const std::string& line) {
    if (rank == 0) std::cerr << line << "\n";
  };
  MicrobenchTimes t = runMicrobench(toBench(plan, cfg, perNode), *device, *comm, progress);
  if (rank != 0) return 0;
  sim::Measurements m = withTimes(plan, t);
  m.gpu = gpu;
  m.meta["date"] = today();
  m.meta["clock"] = t.deviceClock ? "cuda events (device time)" : "host wall clock";
  m.meta["backend"] = cfg.backend;
  m.meta["communicator"] = comm->backendName();
  m.meta["ranks"] = std::to_string(world);
  m.meta["ranks_per_node"] = std::to_string(perNode);
  m.meta["comm_priority"] = cfg.commPriority;
  m.meta["plan"] = machineName + (cfg.quick ? " quick" : "") + ", " + std::to_string(cfg.reps) + " runs";
  if (cfg.coolDownMs > 0) m.meta["cool_down_ms"] = std::to_string(cfg.coolDownMs);
  m.meta["gemm_operands"] = cfg.gemmOperands;
  for (const auto& [k, v] : microbenchSoftware()) m.meta[k] = v;
  std::ofstream out(cfg.out);
  if (!out) throw Error(cfg.out + ": cannot write the measurement file");
  out << sim::measurementsToJson(m) << "\n";
  out.close();
  if (!out) throw Error(cfg.out + ": cannot write the measurement file");
  // On stderr with the progress: stdout is the fit's, under --fit (its --json is one object).
  std::cerr << "braid calibrate: wrote " << m.size() << " measurements of " << gpu << " to " << cfg.out << "\n";
  return 0;
}

}  // namespace

int measureCommand(const MeasureConfig& cfg) {
  const bool cuda = checkBackend(cfg.backend, "measures the CPU on the host clock");
  if (cfg.out.empty()) throw Error("-o MEASUREMENTS.json is required: where to write the measurements");
  if (cfg.reps < 1) throw Error("--reps must be at least 1");
  if (cfg.warmup < 0) throw Error("--warmup must be >= 0");
  if (!(cfg.timeoutSec > 0)) throw Error("--timeout must be positive");
  std::optional<RankEnv> env = detectRankEnv();
  if (env) {
    runRankAndExit(*env, [&] { return rankMain(cfg, *env); });
  }
  int64_t ranks = cfg.ranks > 0 ? cfg.ranks : cuda ? cudaDeviceCount() : 1;
  if (cuda && ranks < 1) throw Error("--measure --backend cuda: no GPU is visible");
  if (cuda && ranks > cudaDeviceCount())
    throw Error("--ranks " + std::to_string(ranks) + " needs one GPU per rank, but " +
                std::to_string(cudaDeviceCount()) + " GPU(s) are visible");
  if (!cuda && ranks > 1 && !haveGloo())
    throw Error("braid was built without Gloo: only --ranks 1 measures on CPU");
  // Bad flags and an unknown machine fail here, once, before any rank starts.
  const std::string machine = cfg.machine.empty() ? "h200" : cfg.machine;
  if (sim::planMeasurements(sim::loadMachine(machine), measurePlanOptions(cfg, ranks, ranksPerNode(ranks, cuda)))
          .size() == 0)
    throw Error("nothing to measure" + (cfg.only.empty() ? std::string() : " with --only " + cfg.only) + " on " +
                std::to_string(ranks) + (ranks == 1 ? " rank" : " ranks") + " of --backend " + cfg.backend +
                ": overlap needs 2 or more ranks on CUDA, copy_engine 2 or more CUDA ranks on one host");
  if (ranks == 1) {
    RankEnv local;
    local.launcher = "local";
    return rankMain(cfg, local);
  }
  return spawnRanks({.ranks = ranks, .timeoutSec = cfg.timeoutSec, .argv = selfCommandLine()});
}

}  // namespace braid::cli
