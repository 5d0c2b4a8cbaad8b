// The `braid run` driver, inside the run module (cli/exec_module.h): it reads the flags' config,
// lowers a workload on the fly or reads a file, refuses a program that `braid verify` rejects
// (unless --unsafe), launches or joins the ranks, runs and checks each rank with exec's
// evaluator (exec/check.h), and turns the outcome into an exit code.
#include <atomic>
#include <cctype>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>
#include <unistd.h>

#include "cli/exec_module/rank_support.h"
#include "cli/exec_module/run_driver.h"
#include "cli/exec_module/run_times.h"
#include "exec/check.h"
#include "exec/communicator.h"
#include "exec/device.h"
#include "exec/measured_timeline.h"
#include "exec/evaluator.h"
#include "exec/host_profile.h"
#include "exec/launcher.h"
#include "ir/error.h"
#include "ir/host_ir_text.h"
#include "ir/semantics/interpreter.h"
#include "ir/verifier.h"
#include "passes/lower.h"
#include "verify/checker.h"
#include "viz/trace_writer.h"

namespace braid::cli {

using namespace braid::exec;

namespace {

// Kills this rank when the run outlives its timeout, naming the statement it is stuck in.
class Watchdog {
 public:
  Watchdog(double seconds, int64_t rank, std::function<std::string()> where) {
    thread_ = std::thread([this, seconds, rank, where] {
      std::unique_lock<std::mutex> lock(mu_);
      auto limit = std::chrono::milliseconds(static_cast<int64_t>(seconds * 1000));
      if (cv_.wait_for(lock, limit, [this] { return done_; })) return;
      std::string at = where();
      std::fprintf(stderr, "rank %lld: timed out after %g s%s%s (deadlock, or a peer that is gone)\n",
                   static_cast<long long>(rank), seconds, at.empty() ? "" : " at ", at.c_str());
      std::fflush(stdout);
      std::fflush(stderr);
      std::_Exit(1);
    });
  }
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::thread thread_;
};

// BRAID_EXEC_FAULT=RANK:KIND[:N] makes rank RANK fail before its N-th statement (default 0):
// KIND exit (dies silently, exit code 17), throw (a braid::Error), hang (sleeps), abort.
struct Fault {
  int64_t rank = -1;
  std::string kind;
  int64_t at = 0;
};

std::optional<Fault> parseFault() {
  const char* v = std::getenv("BRAID_EXEC_FAULT");
  if (!v || !*v) return std::nullopt;
  std::string s = v;
  Fault f;
  auto c1 = s.find(':');
  if (c1 == std::string::npos) throw Error("BRAID_EXEC_FAULT=" + s + ": expected RANK:KIND[:N]");
  f.rank = std::stoll(s.substr(0, c1));
  auto c2 = s.find(':', c1 + 1);
  f.kind = s.substr(c1 + 1, c2 == std::string::npos ? std::string::npos : c2 - c1 - 1);
  if (c2 != std::string::npos) f.at = std::stoll(s.substr(c2 + 1));
  if (f.kind != "exit" && f.kind != "throw" && f.kind != "hang" && f.kind != "abort")
    throw Error("BRAID_EXEC_FAULT kind '" + f.kind + "' is not one of exit, throw, hang, abort");
  return f;
}

void injectFault(const Fault& f, int64_t rank) {
  if (f.rank != rank) return;
  if (f.kind == "exit") std::_Exit(17);
  if (f.kind == "abort") std::abort();
  if (f.kind == "hang")
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  throw Error("injected fault (BRAID_EXEC_FAULT)");
}

bool isFile(const std::string& target) {
  std::error_code ec;
  return std::filesystem::is_regular_file(target, ec) || target.find(".hir") != std::string::npos ||
         target.find('/') != std::string::npos;
}

const char* indexingName(StreamIndexing i) { return i == StreamIndexing::kModulo ? "modulo" : "raw"; }

struct Prepared {
  HostProgram program;
  std::optional<Workload> workload;  // the unlowered reference, when there is one
  int64_t devices = 1;
  int64_t streams = 4;
  std::string label;
};

Prepared prepare(const RunConfig& cfg, int64_t ranks_hint) {
  Prepared p;
  WorkloadParams params = cfg.params;
  if (!cfg.devicesSet && ranks_hint > 0) params.devices = ranks_hint;
  if (cfg.streams) params.streams = *cfg.streams;
  params.lowering.streams = poolOf(params);
  if (isFile(cfg.target)) {
    p.program = parseWellFormedHostProgramFile(cfg.target);
    p.devices = sem::ranksFromProgram(p.program);
    p.streams = params.pool > 0 ? params.pool : cfg.streams.value_or(4);  // numberOfStreams
    p.label = cfg.target;
    if (!cfg.referenceWorkload.empty()) {
      if (!cfg.devicesSet) params.devices = p.devices;
      p.workload = makeWorkload(cfg.referenceWorkload, params);
    }
  } else {
    // Lowering annotates its fusion in place: lower one instance, keep another as the reference.
    Workload to_lower = makeWorkload(cfg.target, params);
    p.workload = makeWorkload(cfg.target, params);
    p.devices = params.devices;
    p.streams = p.workload->params.lowering.streams;
    p.program = lower(*to_lower.fusion, to_lower.params.lowering, params.devices);
    // Findings (errors, watchdog messages) then point at lines of `braid lower NAME`'s output.
    assignPrintedLocations(p.program, cfg.target + ".hir");
    const LoweringOptions& lo = p.workload->params.lowering;
    std::ostringstream os;
    os << cfg.target << " (D=" << params.devices << ", S=" << params.streams;
    if (params.pool > 0) os << ", P=" << params.pool;
    os << ", m=" << params.m
       << ", k=" << params.k << ", n=" << params.n << ", protocol " << streamProtocolName(lo.protocol) << ", "
       << indexingName(lo.indexing) << ", " << pipelineKindName(lo.pipeline) << (lo.ringBuffers ? ", ring" : "")
       << scheduleLabel(lo) << ")";
    p.label = os.str();
  }
  return p;
}

// A program `braid verify` rejects: running it would give results that depend on timing (or hang).
struct ProgramRejected {
  int64_t errors = 0;
};

// Verifies the program for the sizes it is about to run with, on the run's world and streams;
// refuses it (rank 0 prints the findings) unless --unsafe.
void refuseIfRejected(const HostProgram& program, const Bindings& b, int64_t streams, int64_t world, int64_t rank) {
  verify::VerifyOptions vo;
  vo.bindings = b;
  vo.ranks = world;
  vo.streams = streams;
  vo.parallelismWarnings = false;
  verify::VerifyResult r = verify::verifyProgram(program, vo);
  if (r.ok()) return;
  if (rank == 0)
    std::cerr << verify::formatReport(r)
              << "braid run: refusing to run a program that `braid verify` rejects: its results would depend on "
                 "timing, or it would hang (--unsafe runs it anyway)\n";
  throw ProgramRejected{r.errors()};
}

std::string bindingsStr(const Bindings& b) {
  std::string s;
  for (const auto& [k, v] : b) s += (s.empty() ? "" : ", ") + k + "=" + std::to_string(v);
  return s;
}

// The backends the program's communications run on (after --backend-override); UCC has no
// transport in braid run.
std::set<CommBackend> commBackends(const HostProgram& program, const RunConfig& cfg) {
  std::set<CommBackend> used;
  std::string ucc;
  forEachStmt(program.body(), [&](const Stmt& s, int) {
    std::optional<CommBackend> b;
    if (s.is<Communication>()) b = s.as<Communication>()->backend;
    if (s.is<P2PCommunication>()) b = s.as<P2PCommunication>()->backend;
    if (s.is<CollectivePermute>()) b = s.as<CollectivePermute>()->backend;
    if (!b) return;
    if (cfg.backendOverride == "nccl") b = CommBackend::kNccl;
    if (cfg.backendOverride == "cuda") b = CommBackend::kCuda;
    if (*b == CommBackend::kUcc && ucc.empty())
      ucc = (s.loc.known() ? s.loc.str() + ": " : std::string()) + stmtKindName(s.kind()) + " has backend=UCC";
    used.insert(*b);
  });
  if (!ucc.empty())
    throw Error(ucc + ", which braid run does not implement; --backend-override nccl (or cuda) runs every "
                "communication over NCCL (or the copy engines)");
  return used;
}

// The CUDA backend's communicator: NCCL and/or the copy engines, as the statements of the
// programs it will run ask (`used`: every program of a sweep), --backend-override applied.
std::unique_ptr<Communicator> cudaCommunicator(std::set<CommBackend> used, const RunConfig& cfg, const RankEnv& env) {
  std::optional<CommBackend> force;
  if (cfg.backendOverride == "nccl") force = CommBackend::kNccl;
  if (cfg.backendOverride == "cuda") force = CommBackend::kCuda;
  std::unique_ptr<Communicator> router = connectCudaTransports(env, std::move(used), force, cfg.timeoutSec, "braid/");
  router->setHighPriorityStreams(cfg.commHighPriority);
  return router;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Every rank writes its part of the measured timeline next to FILE; after a barrier rank 0
// merges them into FILE (and the trace), so ranks on one host (or a shared file system) suffice.
void writeTimelines(const RunConfig& cfg, const CheckResult& r, Communicator& comm, const std::string& label,
                    const std::string& machine) {
  const std::string base = cfg.timelineFile.empty() ? cfg.traceFile + ".timeline.json" : cfg.timelineFile;
  const int64_t rank = comm.rank(), world = comm.size();
  auto part = [&](int64_t k) { return base + ".rank" + std::to_string(k) + ".part"; };
  if (world > 1) writeTimelineFile(r.timeline, part(rank));
  comm.barrier();
  if (rank != 0) return;
  Timeline all = world > 1 ? Timeline() : r.timeline;
  if (world > 1)
    for (int64_t k = 0; k < world; ++k) {
      appendTimeline(all, readTimelineFile(part(k)));
      ::unlink(part(k).c_str());
    }
  all.source = "measured";
  all.program = label;
  all.machine = machine;
  all.ranks = world;
  all.meta["backend"] = comm.backendName();
  all.meta["inputs"] = cfg.inputs;  // what the GEMMs computed on: braid validate compares it with the machine's
  // Where the run stood in the power state (docs/SIM.md, "Power state"): how many runs of this
  // configuration went before it back to back (the checked run, the warm-ups, earlier timed
  // runs), and the idle time before each.
  all.meta["run_index"] = std::to_string(cfg.timelineRun == 0 ? 0 : 1 + r.timings.warmupRuns + cfg.timelineRun - 1);
  std::ostringstream cool;
  cool << cfg.coolDownMs;
  all.meta["cool_down_ms"] = cool.str();
  if (!cfg.timelineFile.empty()) writeTimelineFile(all, cfg.timelineFile);
  if (!cfg.traceFile.empty()) viz::writeChromeTrace(all, cfg.traceFile);
}

}  // namespace

namespace {

// A sweep's programs: the run's flags with one configuration of its --sweep axes; each is tagged
// with its settings (as `braid sim --sweep` prints them) and writes its timeline and trace next
// to the run's, named by a suffix of the same settings.
std::string sweepTag(const RunConfig::SweepPoint& p) {
  std::string s;
  for (const auto& [key, value] : p.settings) s += (s.empty() ? "" : " ") + key + "=" + value;
  return s;
}

// t.json -> t.streams2.protocolB.pipelinep2p.json (any character but [A-Za-z0-9_.-] becomes _).
std::string sweepFile(const std::string& file, const RunConfig::SweepPoint& p) {
  if (file.empty()) return file;
  std::string suffix;
  for (const auto& [key, value] : p.settings) {
    suffix += "." + key + value;
  }
  for (size_t i = 1; i < suffix.size(); ++i)
    if (!std::isalnum(static_cast<unsigned char>(suffix[i])) && suffix[i] != '_' && suffix[i] != '-' &&
        suffix[i] != '.')
      suffix[i] = '_';
  auto dot = file.rfind('.');
  auto slash = file.rfind('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return file + suffix;
  return file.substr(0, dot) + suffix + file.substr(dot);
}

RunConfig sweepConfig(const RunConfig& cfg, const RunConfig::SweepPoint& p) {
  RunConfig c = cfg;
  c.sweep.clear();
  c.params = p.params;
  c.streams = p.params.streams;
  c.timelineFile = sweepFile(cfg.timelineFile, p);
  c.traceFile = sweepFile(cfg.traceFile, p);
  return c;
}

// What one rank keeps across the programs of a sweep: the device and the communicator (its NCCL
// communicators, once created, serve every later program).
struct RankState {
  const RankEnv& env;
  std::atomic<Evaluator*>& current;
  const std::optional<Fault>& fault;
  std::unique_ptr<Device> device;
  std::unique_ptr<Communicator> comm;
  std::map<std::string, at::Tensor> inputs;  // the last program's seeded inputs (CheckOptions::inputCache)
  // The transports every program of a sweep uses (--sweep comm-backend=nccl,cuda needs both
  // communicators from the first program on); empty for a single program.
  std::set<CommBackend> sweepBackends;
};

// How runProgram runs its program: checked, warmed up and timed as the flags say, or only run
// --warmup times, untimed, unchecked and silent (a sweep's warm-up pass).
enum class Pass { kMeasured, kWarmup };

int runProgram(const RunConfig& cfg, RankState& st, const std::string& tag, Pass pass = Pass::kMeasured);

// What the warm-up does, said once by rank 0 (nothing without timed runs).
void announceWarmup(const RunConfig& cfg, int64_t rank) {
  if (rank != 0 || cfg.repeat == 0) return;
  std::ostringstream os;
  os << "braid run: warm-up: ";
  if (cfg.warmup == 0) {
    os << "none (--warmup 0): the first configuration timed also warms the clocks and communicators\n";
  } else if (cfg.sweep.empty()) {
    os << cfg.warmup << " untimed runs after the checked run, before the " << cfg.repeat << " timed ones\n";
  } else {
    os << "every one of the " << cfg.sweep.size() << " configurations runs " << cfg.warmup
       << " times untimed first; then each, after its checked run, " << cfg.warmup << " more untimed runs before its "
       << cfg.repeat << " timed ones\n";
  }
  if (cfg.coolDownMs > 0) os << "braid run: cool-down: " << cfg.coolDownMs << " ms idle before every warm-up and timed run\n";
  std::cout << os.str() << std::flush;
}

// One rank's whole run: one program, or each of a sweep's in turn. Returns the exit code.
int rankMain(const RunConfig& cfg, const RankEnv& env) {
  std::atomic<Evaluator*> current{nullptr};
  const bool cuda = cfg.backend == "cuda";
  // On CUDA the communicator's own timeout (which aborts NCCL and names the operation) comes first.
  Watchdog dog(cfg.timeoutSec + (cuda ? 10 : 0), env.rank, [&current] {
    Evaluator* e = current.load();
    return e ? e->currentStatement() : std::string();
  });
  std::optional<Fault> fault = parseFault();
  if (env.rank == 0 && !cfg.runTimesFile.empty()) startRunTimes(cfg.runTimesFile);
  RankState st{env, current, fault, nullptr, nullptr, {}, {}};
  announceWarmup(cfg, env.rank);
  if (cfg.sweep.empty()) return runProgram(cfg, st, "");
  if (cuda)
    for (const RunConfig::SweepPoint& p : cfg.sweep) {
      std::set<CommBackend> b = commBackends(prepare(sweepConfig(cfg, p), env.worldSize).program, cfg);
      st.sweepBackends.insert(b.begin(), b.end());
    }
  // The first configuration timed would otherwise also pay for the clocks' ramp and whatever
  // the communicators and libraries set up lazily (the GPU run: 15-20% slower than the same
  // program later in the sweep).
  if (cfg.repeat > 0 && cfg.warmup > 0)
    for (const RunConfig::SweepPoint& p : cfg.sweep) runProgram(sweepConfig(cfg, p), st, sweepTag(p), Pass::kWarmup);
  int code = 0;
  for (const RunConfig::SweepPoint& p : cfg.sweep)
    code = std::max(code, runProgram(sweepConfig(cfg, p), st, sweepTag(p)));
  return code;
}

int runProgram(const RunConfig& cfg, RankState& st, const std::string& tag, Pass pass) {
  const bool warmPass = pass == Pass::kWarmup;
  const RankEnv& env = st.env;
  const int64_t rank = env.rank;
  const int64_t world = env.worldSize;
  std::atomic<Evaluator*>& current = st.current;
  const std::optional<Fault>& fault = st.fault;
  const bool cuda = cfg.backend == "cuda";

  Prepared prep = prepare(cfg, world);
  HostProgram& program = prep.program;
  if (prep.devices > world)
    throw Error(prep.label + " needs " + std::to_string(prep.devices) + " ranks but runs on " + std::to_string(world) +
                ": run with --ranks " + std::to_string(prep.devices));

  if (cuda) commBackends(program, cfg);  // refuses UCC before any device work
  // A sweep keeps the device and the communicators of its first program (st).
  std::unique_ptr<Device>& device = st.device;
  std::unique_ptr<Communicator>& comm = st.comm;
  if (cuda && !device) device = makeCudaDevice(env.localRank);
  if (device) device->setComputeSmCarveout(static_cast<int32_t>(cfg.smCarveout));
  if (!comm)
    comm = cuda ? cudaCommunicator(st.sweepBackends.empty() ? commBackends(program, cfg) : st.sweepBackends, cfg, env)
                : connectRank(env, cuda, cfg.timeoutSec, "braid/");

  if (cfg.verbose && rank == 0 && !warmPass) std::cout << print(program) << std::flush;
  CheckOptions co;
  co.seed = cfg.seed;
  co.inputValues = inputValuesNamed(cfg.inputs);
  co.numberOfStreams = prep.streams;
  co.bindings = cfg.bindings;
  co.check = cfg.check && !warmPass;
  co.tolerance = cfg.tolerance;
  co.inputFiles = cfg.inputFiles;
  if (!warmPass) co.saveOutputs = cfg.saveOutputs;
  co.current = &current;
  co.device = device.get();
  co.poison = cfg.poison;
  co.timeline = !warmPass && (!cfg.timelineFile.empty() || !cfg.traceFile.empty());
  co.repeat = warmPass ? 0 : cfg.repeat;
  // The warm-up pass: the run that would be checked and warmup - 1 more.
  co.warmup = warmPass ? cfg.warmup - 1 : (cfg.repeat > 0 ? cfg.warmup : 0);
  co.timelineRun = warmPass ? 0 : cfg.timelineRun;
  co.coolDownMs = cfg.coolDownMs;
  co.graph = cfg.graph;
  co.hostProfile = cfg.hostProfile && !warmPass;
  co.inputCache = &st.inputs;
  co.gather = !warmPass;
  if (!cfg.unsafe)
    co.beforeRun = [&](const Bindings& b) { refuseIfRejected(program, b, prep.streams, world, rank); };
  if (fault)
    co.onStatement = [&](const Stmt&, int64_t n) {
      if (n == fault->at) injectFault(*fault, rank);
    };
  const Fusion* ref = prep.workload ? prep.workload->fusion.get() : nullptr;
  CheckResult r = runAndCheck(program, ref, *comm, co);
  if (warmPass) return r.ok ? 0 : 1;
  if (co.timeline) writeTimelines(cfg, r, *comm, prep.label, device->description());
  if (!cfg.runTimesFile.empty())
    appendRunTimes({cfg.runTimesFile, prep.label, tag, cfg.inputs, cfg.coolDownMs}, r.timings, *comm);
  if (!r.timings.wallUs.empty()) {
    const RunTimings& t = r.timings;
    double issue = median(t.issueUs);
    std::ostringstream ts;
    ts << "braid run: rank " << rank << " timing " << (tag.empty() ? "" : "[" + tag + "] ") << "(" << (t.graph ? "CUDA graph replay" : "interpreted") << ", "
       << t.wallUs.size() << " runs, median): wall " << median(t.wallUs) << " us, host issue " << issue << " us = "
       << (t.statements ? issue / static_cast<double>(t.statements) : 0.0) << " us per host instruction ("
       << t.statements << " instructions)\n";
    if (!t.hostProfile.empty()) {
      ts << "braid run: rank " << rank << " host profile " << (tag.empty() ? "" : "[" + tag + "] ") << "("
         << t.wallUs.size() << " timed runs, " << t.statements << " host instructions each; a statement's time "
         << "excludes the statements nested in it)\n"
         << formatHostProfile(t.hostProfile);
    }
    std::cout << ts.str() << std::flush;
  }
  if (rank != 0) return r.ok ? 0 : 1;
  std::ostringstream os;
  os << "braid run: " << prep.label << " on " << world << (world == 1 ? " rank" : " ranks") << " ["
     << comm->backendName() << (device ? ", " + device->description() : std::string())
     << "], numberOfStreams=" << prep.streams << ", seed " << cfg.seed
     << (cfg.inputs == "integers" ? "" : " (" + cfg.inputs + " inputs)");
  if (!cfg.bindings.empty()) os << ", " << bindingsStr(cfg.bindings);
  os << "\n" << r.report;
  size_t n = program.outputs().size();
  if (r.checked) {
    os << "braid run: " << (r.ok ? "all " : "") << n - static_cast<size_t>(r.failures) << " of " << n
       << " outputs match the float64 reference\n";
  } else if (cfg.check) {
    os << "braid run: no reference for a host IR file (use --reference WORKLOAD to check it); outputs not checked\n";
  }
  std::cout << os.str();
  std::cout.flush();
  return r.ok ? 0 : 1;
}

}  // namespace

int runCommand(const RunConfig& cfg) {
  const bool cuda = checkBackend(cfg.backend, "runs on CPU");
  if (!cfg.sweep.empty() && isFile(cfg.target))
    throw Error("--sweep lowers a workload for each configuration; " + cfg.target + " is a file");
  if (cfg.timelineRun > 0) {
    if (cfg.timelineFile.empty() && cfg.traceFile.empty()) throw Error("--timeline-run needs --timeline or --trace");
    if (cfg.timelineRun > cfg.repeat)
      throw Error("--timeline-run " + std::to_string(cfg.timelineRun) + " names a timed run, but --repeat is " +
                  std::to_string(cfg.repeat));
    if (cfg.graph) throw Error("--timeline-run needs interpreted runs: nothing is timed inside a --graph replay");
  }
  if (!cfg.runTimesFile.empty() && cfg.repeat == 0) throw Error("--run-times records the timed runs: give --repeat N");
  if (cfg.hostProfile) {
    if (cfg.graph)
      throw Error("--host-profile times the statements an interpreted run executes, and a --graph replay "
                  "executes none: drop --graph (or --host-profile)");
    if (cfg.repeat == 0) throw Error("--host-profile profiles the timed runs: give --repeat N");
  }
  if (cuda && cfg.backendOverride == "gloo") throw Error("--backend-override gloo needs --backend cpu");
  if (!cuda && (cfg.backendOverride == "nccl" || cfg.backendOverride == "cuda"))
    throw Error("--backend-override " + cfg.backendOverride + " needs --backend cuda");
  if (!cuda && (cfg.smCarveout > 0 || cfg.commHighPriority))
    throw Error(std::string(cfg.smCarveout > 0 ? "--sm-carveout" : "--comm-priority high") +
                " needs --backend cuda (it is about GPU SMs and streams)");
  if (!cuda && (cfg.graph || !cfg.timelineFile.empty() || !cfg.traceFile.empty()))
    throw Error(std::string(cfg.graph ? "--graph" : "--timeline / --trace") +
                " needs --backend cuda (CPU ops have no device clock or stream capture)");
  std::optional<RankEnv> env = detectRankEnv();
  if (env) {
    // One rank of a launched job: report errors here and leave at once.
    runRankAndExit(*env, [&] {
      try {
        return rankMain(cfg, *env);
      } catch (const ProgramRejected&) {
        return 1;
      }
    });
  }
  int64_t ranks = cfg.ranks;
  if (ranks == 0) {
    if (isFile(cfg.target)) {
      ranks = sem::ranksFromProgram(parseWellFormedHostProgramFile(cfg.target));
    } else {
      ranks = cfg.params.devices;
    }
  }
  // One process per rank, each with its own libtorch: more than this would exhaust the machine
  // (docs/HARDENING.md).
  constexpr int64_t kMaxCpuRanks = 128;
  if (ranks > kMaxCpuRanks)
    throw Error("braid run starts one CPU process per rank; " + std::to_string(ranks) + " ranks is more than the " +
                std::to_string(kMaxCpuRanks) + " it starts on one machine");
  if (!isFile(cfg.target) && cfg.devicesSet && cfg.ranks > 0 && cfg.params.devices != cfg.ranks)
    throw Error("--devices " + std::to_string(cfg.params.devices) + " and --ranks " + std::to_string(cfg.ranks) +
                " disagree: the workload is lowered for one rank per device");
  if (ranks == 1) {
    RankEnv local;
    local.launcher = "local";
    try {
      return rankMain(cfg, local);
    } catch (const ProgramRejected&) {
      return 1;
    }
  }
  if (cuda && ranks > cudaDeviceCount())
    throw Error("--ranks " + std::to_string(ranks) + " with --backend cuda needs one GPU per rank, but " +
                std::to_string(cudaDeviceCount()) + " GPU(s) are visible");
  if (!cuda && !haveGloo())
    throw Error("braid was built without Gloo: only --ranks 1 runs on CPU (install libgloo-dev and reconfigure)");
  // Validate the input once here, so bad input fails with one message instead of N.
  {
    if (!isFile(cfg.target)) {
      std::vector<RunConfig> each;
      if (cfg.sweep.empty()) each.push_back(cfg);
      for (const RunConfig::SweepPoint& p : cfg.sweep) each.push_back(sweepConfig(cfg, p));
      for (const RunConfig& c : each) {
        WorkloadParams params = c.params;
        if (!c.devicesSet) params.devices = ranks;
        if (c.streams) params.streams = *c.streams;
        makeWorkload(c.target, params);
      }
    } else {
      parseWellFormedHostProgramFile(cfg.target);
    }
  }
  SpawnOptions so;
  so.ranks = ranks;
  so.timeoutSec = cfg.timeoutSec;
  so.argv = selfCommandLine();
  return spawnRanks(so);
}

}  // namespace braid::cli
