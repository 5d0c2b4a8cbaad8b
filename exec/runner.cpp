// `braid run` (see run.h): prepares the program, launches or joins the ranks, runs, gathers and
// checks. Without libtorch only the stub at the bottom is compiled.
#include "exec/run.h"

#include "ir/error.h"

#ifdef BRAID_WITH_TORCH

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <sstream>
#include <thread>

#include <unistd.h>

#include "exec/check.h"
#include "exec/communicator.h"
#include "exec/evaluator.h"
#include "exec/launcher.h"
#include "exec/reference.h"
#include "exec/tensor_ops.h"
#include "ir/host_ir_text.h"
#include "passes/buffer_layout.h"
#include "passes/lower.h"

namespace braid::exec {

bool execAvailable() { return true; }
bool execHasGloo() { return haveGloo(); }

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

// The devices a program addresses: 1 + the largest device id in its meshes and teams.
int64_t devicesOf(const HostProgram& p) {
  int64_t n = 1;
  for (const TensorView* tv : p.tensors().tensors())
    if (tv->deviceMesh())
      for (int64_t d : tv->deviceMesh()->devices()) n = std::max(n, d + 1);
  forEachStmt(p.body(), [&](const Stmt& s, int) {
    if (s.is<Communication>())
      for (int64_t d : s.as<Communication>()->team) n = std::max(n, d + 1);
  });
  return n;
}

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
  params.lowering.streams = params.streams;
  if (isFile(cfg.target)) {
    p.program = parseHostProgramFile(cfg.target);
    p.devices = devicesOf(p.program);
    p.streams = cfg.streams.value_or(4);
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
    os << cfg.target << " (D=" << params.devices << ", S=" << params.streams << ", m=" << params.m
       << ", k=" << params.k << ", n=" << params.n << ", protocol " << streamProtocolName(lo.protocol) << ", "
       << indexingName(lo.indexing) << ", " << pipelineKindName(lo.pipeline) << (lo.ringBuffers ? ", ring" : "")
       << ")";
    p.label = os.str();
  }
  return p;
}

// Refuses sizes this machine cannot hold before anything is allocated: every rank keeps the full
// inputs and outputs in float64 (the reference and the gathered results), and `--ranks N` puts
// all ranks on this machine. An over-large run would otherwise die deep inside an allocator.
// Ranks on this machine: torchrun and OpenMPI say so; braid's own launcher starts them all here.
int64_t localRanks(int64_t world) {
  for (const char* var : {"LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE"})
    if (const char* v = std::getenv(var); v && *v) return std::max<int64_t>(1, std::atoll(v));
  return world;
}

void checkMemoryFits(const HostProgram& program, const Bindings& b, int64_t local_ranks) {
  double bytes = 0;
  ShapeContext ctx;
  ctx.bindings = &b;
  ctx.full = true;
  auto add = [&](const std::vector<TensorView*>& tvs) {
    for (const TensorView* tv : tvs) {
      double n = 8;  // float64
      try {
        for (int64_t e : bufferShape(*tv, ctx)) n *= static_cast<double>(e);
      } catch (const Error&) {
        continue;  // a size not known yet: the evaluator reports it if it matters
      }
      bytes += n;
    }
  };
  add(program.inputs());
  add(program.outputs());
  bytes *= 2.0 * static_cast<double>(local_ranks);  // the data and a working copy, per rank
  double physical = static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGE_SIZE));
  if (physical > 0 && bytes > physical) {
    char msg[256];
    std::snprintf(msg, sizeof msg, "these sizes need about %.1f GiB of memory (%lld rank(s) on this machine, "
                  "full inputs and outputs in float64), but this machine has %.1f GiB: choose smaller sizes",
                  bytes / (1 << 30), static_cast<long long>(local_ranks), physical / (1 << 30));
    throw Error(msg);
  }
}

std::string bindingsStr(const Bindings& b) {
  std::string s;
  for (const auto& [k, v] : b) s += (s.empty() ? "" : ", ") + k + "=" + std::to_string(v);
  return s;
}

}  // namespace

CheckResult runAndCheck(const HostProgram& program, const Fusion* ref, Communicator& comm,
                        const CheckOptions& opt) {
  const int64_t rank = comm.rank();
  const int64_t world = comm.size();
  Bindings b = opt.bindings;
  if (ref && ref->inputs().size() != program.inputs().size())
    throw Error("the reference fusion has " + std::to_string(ref->inputs().size()) + " inputs, the program " +
                std::to_string(program.inputs().size()));
  // A file checked against a workload: its free symbols (i0, ...) follow from the workload's sizes.
  if (ref)
    for (size_t i = 0; i < program.inputs().size(); ++i) {
      const TensorView& ptv = *program.inputs()[i];
      std::vector<int64_t> rs = fullShape(*ref->inputs()[i], b, true);
      size_t axes = 0;
      for (IterDomain* id : bufferDomain(ptv)) axes += id->isReduction() ? 0 : 1;
      // The program's buffer is the logical tensor, or the buffer the lowering makes of it (a
      // device axis split off a logical axis, as nvFuser prints outer splits).
      std::vector<int64_t> bs;
      for (const LayoutAxis& a : bufferLayout(ref->inputs()[i], false))
        if (!a.id->isReduction()) bs.push_back(a.id->isBroadcast() ? 1 : a.id->extent().evaluate(b));
      if (axes != rs.size() && axes != bs.size())
        throw Error("input " + ptv.nameStr() + " has " + std::to_string(axes) + " axes but the reference's input " +
                    std::to_string(i) + " has shape " + shapeStr(rs) + " (laid out as a buffer: " + shapeStr(bs) +
                    "): the program does not have the reference workload's layout");
      inferSymbols(ptv, axes == rs.size() ? rs : bs, true, b);
    }
  // Inputs: full tensors (from files or the seed), the same on every rank; each rank runs on its slice.
  // Inputs loaded from files also determine the symbols their extents name.
  std::vector<at::Tensor> loaded(program.inputs().size());
  for (size_t i = 0; i < program.inputs().size(); ++i) {
    const TensorView& ptv = *program.inputs()[i];
    for (const auto& [name, path] : opt.inputFiles)
      if (name == "T" + std::to_string(ptv.name()) || name == std::to_string(i)) loaded[i] = loadNpy(path).to(at::kDouble);
    if (loaded[i].defined()) inferSymbols(ptv, loaded[i].sizes(), true, b);
  }
  checkMemoryFits(program, b, localRanks(world));
  std::vector<at::Tensor> full_inputs, local_inputs;
  for (size_t i = 0; i < program.inputs().size(); ++i) {
    const TensorView& ptv = *program.inputs()[i];
    at::Tensor full = loaded[i];
    std::vector<int64_t> shape = ref ? fullShape(*ref->inputs()[i], b, true) : fullShape(ptv, b);
    if (!full.defined()) {
      full = randomInput(shape, opt.seed, static_cast<int64_t>(i));
    } else if (full.sizes().vec() != shape) {
      throw Error("input file for " + ptv.nameStr() + " has shape " + shapeStr(full.sizes()) + ", expected " +
                  shapeStr(shape));
    }
    full_inputs.push_back(full);
    local_inputs.push_back(sliceForRank(ref ? toBufferLayout(full, ptv, b) : full, ptv, rank, toScalarType(ptv.dtype())));
  }

  EvalOptions eo;
  eo.numberOfStreams = opt.numberOfStreams;
  eo.bindings = b;
  eo.onStatement = opt.onStatement;
  Evaluator ev(program, comm, eo);
  if (opt.current) *opt.current = &ev;
  std::vector<at::Tensor> outs = ev.run(local_inputs);
  if (opt.current) *opt.current = nullptr;
  Bindings scalars = ev.scalars();

  // Gather every output to rank 0.
  std::vector<int64_t> team(static_cast<size_t>(world));
  for (int64_t r = 0; r < world; ++r) team[static_cast<size_t>(r)] = r;
  std::vector<std::vector<at::Tensor>> per_rank(outs.size());
  for (size_t o = 0; o < outs.size(); ++o) {
    at::Tensor local = outs[o].to(at::kDouble).contiguous();
    if (world == 1) {
      per_rank[o].push_back(local);
      continue;
    }
    at::Tensor all = rank == 0 ? at::empty({world * local.numel()}, local.options()) : at::Tensor();
    comm.gather(team, local, all, 0)->wait();
    if (rank == 0)
      for (int64_t r = 0; r < world; ++r)
        per_rank[o].push_back(all.narrow(0, r * local.numel(), local.numel()).view(local.sizes()));
  }

  CheckResult result;
  result.checked = opt.check && ref;
  if (rank == 0) {
    // Errors here are rank 0's alone: report them as a failure, so every rank still agrees below.
    try {
      std::vector<at::Tensor> ref_outs;
      if (result.checked) {
        if (ref->outputs().size() != program.outputs().size())
          throw Error("the reference fusion has " + std::to_string(ref->outputs().size()) + " outputs, the program " +
                      std::to_string(program.outputs().size()));
        OpContext ctx{&b, true, at::kDouble};
        ref_outs = evalFusion(*ref, full_inputs, ctx);
      }
      std::ostringstream os;
      for (size_t o = 0; o < outs.size(); ++o) {
        const TensorView& ptv = *program.outputs()[o];
        std::vector<int64_t> shape = result.checked ? fullShape(*ref->outputs()[o], b, true) : fullShape(ptv, scalars);
        std::string replica;
        std::vector<int64_t> buffer_shape = fullShape(ptv, scalars);
        at::Tensor full = assembleFull(per_rank[o], ptv, buffer_shape, &replica).reshape(shape);
        os << "  " << ptv.nameStr() << " " << shapeStr(full.sizes()) << ": ";
        if (!replica.empty()) {
          os << "MISMATCH: " << replica << "\n";
          ++result.failures;
        } else if (result.checked) {
          double tol = opt.tolerance.value_or(defaultTolerance(toScalarType(ptv.dtype())));
          Comparison c = compare(full, ref_outs[o], tol);
          os << describe(c) << "\n";
          if (!c.ok) ++result.failures;
        } else {
          os << "sum " << full.nan_to_num(0).sum().item<double>() << ", abs sum "
             << full.abs().nan_to_num(0).sum().item<double>()
             << (full.isnan().any().item<bool>() ? ", contains NaN (never written)" : "") << "\n";
        }
        if (!opt.saveOutputs.empty()) {
          std::filesystem::create_directories(opt.saveOutputs);
          saveNpy(opt.saveOutputs + "/T" + std::to_string(ptv.name()) + ".npy", full);
        }
      }
      result.report = os.str();
    } catch (const std::exception& e) {
      result.report += std::string("  check failed: ") + e.what() + "\n";
      result.failures = std::max<int64_t>(result.failures, 1);
    }
  }
  // Every rank learns rank 0's verdict.
  at::Tensor verdict = at::full({1}, static_cast<int64_t>(result.failures), at::TensorOptions().dtype(at::kLong));
  if (world > 1) comm.broadcast(team, verdict, 0)->wait();
  result.failures = verdict.item<int64_t>();
  result.ok = result.failures == 0;
  return result;
}

namespace {

// One rank's whole run. Returns the exit code.
int rankMain(const RunConfig& cfg, const RankEnv& env) {
  const int64_t rank = env.rank;
  const int64_t world = env.worldSize;
  std::atomic<Evaluator*> current{nullptr};
  Watchdog dog(cfg.timeoutSec, rank, [&current] {
    Evaluator* e = current.load();
    return e ? e->currentStatement() : std::string();
  });
  std::optional<Fault> fault = parseFault();

  Prepared prep = prepare(cfg, world);
  HostProgram& program = prep.program;
  if (prep.devices > world)
    throw Error(prep.label + " needs " + std::to_string(prep.devices) + " ranks but runs on " + std::to_string(world) +
                ": run with --ranks " + std::to_string(prep.devices));

  std::unique_ptr<Communicator> comm;
  if (world == 1) {
    comm = makeSelfCommunicator();
  } else {
    Rendezvous rv;
    rv.rank = rank;
    rv.worldSize = world;
    rv.masterAddr = env.masterAddr;
    rv.port = env.port;
    rv.storeIsExternal = env.storeIsExternal;
    rv.prefix = "braid/" + env.runId;
    rv.timeout = std::chrono::milliseconds(static_cast<int64_t>(cfg.timeoutSec * 1000));
    if (const char* f = std::getenv("BRAID_STORE_FILE"); f && *f) rv.storeFile = f;
    comm = makeGlooCommunicator(rv);
  }

  if (cfg.verbose && rank == 0) std::cout << print(program) << std::flush;
  CheckOptions co;
  co.seed = cfg.seed;
  co.numberOfStreams = prep.streams;
  co.bindings = cfg.bindings;
  co.check = cfg.check;
  co.tolerance = cfg.tolerance;
  co.inputFiles = cfg.inputFiles;
  co.saveOutputs = cfg.saveOutputs;
  co.current = &current;
  if (fault)
    co.onStatement = [&](const Stmt&, int64_t n) {
      if (n == fault->at) injectFault(*fault, rank);
    };
  const Fusion* ref = prep.workload ? prep.workload->fusion.get() : nullptr;
  CheckResult r = runAndCheck(program, ref, *comm, co);
  if (rank != 0) return r.ok ? 0 : 1;
  std::ostringstream os;
  os << "braid run: " << prep.label << " on " << world << (world == 1 ? " rank" : " ranks") << " ["
     << comm->backendName() << "], numberOfStreams=" << prep.streams << ", seed " << cfg.seed;
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
  if (cfg.backend != "cpu")
    throw Error("--backend " + cfg.backend + " is not available: this build runs on CPU only (--backend cpu)");
  std::optional<RankEnv> env = detectRankEnv();
  if (env) {
    // One rank of a launched job: report errors here and leave at once (a Gloo process group
    // whose peer is gone could otherwise block in its destructor).
    int code = 3;
    try {
      code = rankMain(cfg, *env);
    } catch (const Error& e) {
      std::cerr << "rank " << env->rank << ": " << e.what() << "\n";
      code = 2;
    } catch (const c10::Error& e) {
      // ATen's own message, without the C++ backtrace it carries.
      std::cerr << "rank " << env->rank << ": internal error: " << e.what_without_backtrace() << "\n";
      code = 3;
    } catch (const std::exception& e) {
      std::cerr << "rank " << env->rank << ": internal error: " << e.what() << "\n";
      code = 3;
    }
    std::cout.flush();
    std::cerr.flush();
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(code);
  }
  int64_t ranks = cfg.ranks;
  if (ranks == 0) {
    if (isFile(cfg.target)) {
      ranks = devicesOf(parseHostProgramFile(cfg.target));
    } else {
      ranks = cfg.params.devices;
    }
  }
  if (!isFile(cfg.target) && cfg.devicesSet && cfg.ranks > 0 && cfg.params.devices != cfg.ranks)
    throw Error("--devices " + std::to_string(cfg.params.devices) + " and --ranks " + std::to_string(cfg.ranks) +
                " disagree: the workload is lowered for one rank per device");
  if (ranks == 1) {
    RankEnv local;
    local.launcher = "local";
    return rankMain(cfg, local);
  }
  if (!haveGloo())
    throw Error("braid was built without Gloo: only --ranks 1 runs on CPU (install libgloo-dev and reconfigure)");
  // Validate the input once here, so bad input fails with one message instead of N.
  {
    RunConfig c = cfg;
    if (!isFile(cfg.target)) {
      WorkloadParams params = cfg.params;
      if (!cfg.devicesSet) params.devices = ranks;
      if (cfg.streams) params.streams = *cfg.streams;
      makeWorkload(cfg.target, params);
    } else {
      parseHostProgramFile(cfg.target);
    }
  }
  SpawnOptions so;
  so.ranks = ranks;
  so.timeoutSec = cfg.timeoutSec;
  so.argv = selfCommandLine();
  return spawnRanks(so);
}

}  // namespace braid::exec

#else  // !BRAID_WITH_TORCH

namespace braid::exec {

bool execAvailable() { return false; }
bool execHasGloo() { return false; }

int runCommand(const RunConfig&) {
  throw Error(kBuiltWithoutTorchMessage);
}

}  // namespace braid::exec

#endif  // BRAID_WITH_TORCH
