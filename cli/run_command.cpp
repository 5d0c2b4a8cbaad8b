// `braid run FILE|WORKLOAD --backend cpu --ranks N`: run a host program for real on CPU ranks
// (Gloo collectives) and check its outputs against the unlowered fusion (docs/EXEC.md).
#include <iostream>
#include <memory>

#include "cli/budget_flags.h"
#include "cli/command.h"
#include "cli/exec_module.h"
#include "cli/workload_flags.h"
#include "cli/run_config.h"
#include "cli/sim_target.h"
#include "ir/error.h"
#include "sim/sweep.h"

namespace braid::cli {
namespace {

struct RunArgs {
  RunConfig cfg;
  std::vector<std::string> binds;
  std::vector<std::string> inputs;
  WorkloadFlags flags;
  BudgetFlags budget;
  std::vector<std::string> sweep;  // KEY=V1,V2 axes, as `braid sim --sweep`
  std::vector<int64_t> sweepStreams;
  std::vector<std::string> sweepProtocols;
  bool no_check = false;
  bool check = false;
  double tol = -1;
};

// The settings a run cannot sweep: they change the world the ranks were launched with, or
// describe the simulator's machine.
bool sweepable(const std::string& key) {
  return key != "ranks" && key != "devices" && key != "machine" && key != "nodes" && key != "gpus-per-node" &&
         key != "gpus_per_node";
}

// Every configuration of the --sweep axes (the last varies fastest), each made by applying its
// settings to the run's flags through sim's applySetting: the keys, values and checks of
// `braid sim --sweep`, so a workload flag sim sweeps is one run sweeps. A key also given as its
// own flag (--streams with streams=...) is refused.
std::vector<RunConfig::SweepPoint> sweepPoints(const std::vector<std::string>& specs, const WorkloadFlags& f,
                                               const WorkloadParams& base, const CLI::App& sub) {
  std::vector<sim::SweepAxis> axes;
  for (const std::string& spec : specs) {
    sim::SweepAxis a = sim::parseSweepAxis(spec);
    if (!sweepable(a.key))
      throw Error("--sweep " + a.key + ": braid run cannot sweep it (the ranks are launched once; the machine is "
                  "the one it runs on)");
    const CLI::Option* own = sub.get_option_no_throw("--" + a.key);
    if (own && own->count() > 0)
      throw Error("--" + a.key + " and --sweep " + a.key + "=... contradict each other");
    axes.push_back(std::move(a));
  }
  std::vector<RunConfig::SweepPoint> out;
  for (const sim::SweepConfig& c : sim::sweepConfigs(axes)) {
    SimArgs setting;
    setting.flags = f;
    for (const auto& [key, value] : c) applySetting(setting, key, value, true);
    out.push_back({applyWorkloadFlags(setting.flags, base), c});
  }
  return out;
}

std::pair<std::string, std::string> splitAssign(const std::string& s, const char* what) {
  auto eq = s.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == s.size())
    throw Error(std::string(what) + " '" + s + "' must look like NAME=VALUE");
  return {s.substr(0, eq), s.substr(eq + 1)};
}

BRAID_REGISTER_COMMAND(Command{
    "run",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<RunArgs>();
      RunConfig& c = a->cfg;
      sub.add_option("target", c.target, "host IR file, or a workload name (braid lower --list)")->required();
      sub.add_option("--backend", c.backend,
                     "execution backend: cpu (libtorch CPU tensors + Gloo) or cuda (one GPU per rank, CUDA "
                     "streams + NCCL; builds whose libtorch has CUDA)")
          ->default_val("cpu")
          ->check(CLI::IsMember({"cpu", "cuda"}));
      sub.add_option("--backend-override", c.backendOverride,
                     "run every communication on this transport whatever its backend= says: nccl or cuda "
                     "(the copy engines over CUDA IPC; both --backend cuda), or gloo (--backend cpu)")
          ->check(CLI::IsMember({"nccl", "cuda", "gloo"}));
      sub.add_option("--sm-carveout", c.smCarveout,
                     "leave N SMs of each GPU to the communication kernels: cuBLAS GEMMs target the GPU's SMs minus N "
                     "(--backend cuda; default 0: cuBLAS's own choice)")
          ->check(CLI::Range(int64_t{0}, int64_t{1024}));
      sub.add_option_function<std::string>(
             "--comm-priority", [&c](const std::string& v) { c.commHighPriority = v == "high"; },
             "priority of the communicators' own streams (--backend cuda): normal (default) or high, so NCCL's "
             "kernels and the copy engines' work are scheduled ahead of queued compute blocks")
          ->check(CLI::IsMember({"normal", "high"}));
      sub.add_option("--timeline", c.timelineFile,
                     "write the measured timeline (per-op CUDA events, every rank) as JSON (docs/TIMELINE.md)");
      sub.add_option("--trace", c.traceFile, "write the measured timeline as a Chrome / Perfetto trace");
      sub.add_option("--repeat", c.repeat, "timed runs after the checked one; prints host and wall times")
          ->check(CLI::Range(int64_t{0}, int64_t{100000}));
      sub.add_option("--timeline-run", c.timelineRun,
                     "record the timeline (--timeline / --trace) of the K-th of the --repeat timed runs instead "
                     "of the checked run, which is cold (default 0: the checked run)")
          ->check(CLI::Range(int64_t{0}, int64_t{100000}));
      sub.add_option("--sweep", a->sweep,
                     "run every combination of KEY=V1,V2,... in turn, in the same processes (the keys of "
                     "`braid sim --sweep`: streams, protocol, pipeline, indexing, m, k, n, dtype; e.g. "
                     "--sweep streams=1,2,4 protocol=A,B pipeline=collective,p2p); each prints its own timing "
                     "line, tagged with its settings, and writes its own timeline")
          ->expected(1, -1)
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
      sub.add_option("--sweep-streams", a->sweepStreams, "the same as --sweep streams=LIST")
          ->delimiter(',')
          ->check(CLI::Range(int64_t{1}, int64_t{8192}));
      sub.add_option("--sweep-protocols", a->sweepProtocols, "the same as --sweep protocol=LIST")
          ->delimiter(',')
          ->check(CLI::IsMember({"A", "B", "C"}));
      sub.add_option("--warmup", c.warmup,
                     "untimed runs of each configuration right before its timed runs (--repeat); a sweep "
                     "first runs every configuration this many times, untimed, so the first one timed is "
                     "not the one that warms the clocks and the communicators (0: no warm-up)")
          ->check(CLI::Range(int64_t{0}, int64_t{100000}))
          ->default_val(10);
      sub.add_option("--run-times", c.runTimesFile,
                     "write every timed run's wall and host-issue time, every rank's, as JSON Lines: one line per "
                     "configuration (with --repeat; docs/EXEC.md, Run times)");
      sub.add_option("--cool-down", c.coolDownMs,
                     "idle milliseconds before every warm-up and timed run (all ranks), so each run starts at an "
                     "idle GPU's clocks: on an H200 back-to-back GEMMs slow by 15-17% after 40-100 ms (the power "
                     "cap) and 50 ms idle restores them (docs/EXEC.md, Power state; default 0)")
          ->check(finiteRange(0.0, 10000.0));
      sub.add_flag("--graph", c.graph,
                   "capture the program once as a CUDA graph and replay it (--backend cuda); the replay's "
                   "outputs are checked");
      sub.add_flag("--host-profile", c.hostProfile,
                   "time every statement the --repeat timed runs execute on the host and print, per rank, a "
                   "table of host time per statement kind (count, total, per statement, share); not with --graph");
      sub.add_flag("!--no-poison", c.poison, "leave fresh buffers uninitialized instead of NaN (benchmarks)");
      sub.add_option("--ranks", c.ranks, "number of rank processes to start (default: the program's devices); "
                                         "ignored under torchrun / mpirun, which set the world")
          ->check(rankCount());
      sub.add_option("--seed", c.seed, "seed of the random inputs")->default_val(0);
      sub.add_option("--inputs", c.inputs,
                     "what the seeded inputs hold: integers (in [-2, 2], exact sums; default) or normal (standard "
                     "normal values, like real data; checked within the dtype's tolerance). A GEMM's time depends "
                     "on it: on an H200 bf16 GEMMs run 4-14% slower on normal values (docs/EXEC.md, Input values)")
          ->check(CLI::IsMember({"integers", "normal"}));
      sub.add_flag("--check", a->check, "compare outputs with the float64 reference (default)");
      sub.add_flag("--no-check", a->no_check, "only run and print output checksums");
      sub.add_option("--timeout", c.timeoutSec, "seconds before a stuck run is stopped (every rank)")
          ->default_val(60)
          ->check(finiteRange(0.001, 1e6));
      sub.add_option("--bind", a->binds, "bind a free symbol of a file: --bind i0=64 (repeatable)")
          ->check(bindingSyntax())
          ->expected(1)
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
      sub.add_option("--input", a->inputs, "load a full input tensor: --input T0=path.npy (repeatable)")
          ->expected(1)
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
      sub.add_option("--save-outputs", c.saveOutputs, "write the gathered outputs as DIR/T<n>.npy");
      sub.add_option("--reference", c.referenceWorkload, "check a FILE against this workload's fusion");
      CLI::Option* tol = sub.add_option("--tol", a->tol, "relative tolerance (default per dtype: float 1e-5, bf16 2e-2)")
          ->check(CLI::Range(0.0, 1e300).description("a tolerance >= 0"));
      sub.add_flag("--verbose", c.verbose, "print the host program that runs (rank 0)");
      sub.add_flag("--unsafe", c.unsafe,
                   "run a program that `braid verify` rejects (by default braid run verifies it first for "
                   "the sizes, ranks and streams it runs with, and refuses it)");
      // Workload size and lowering flags, as `braid lower` (--devices defaults to --ranks).
      addWorkloadFlags(sub, a->flags, c.params);
      addBudgetFlags(sub, a->budget);
      CLI::App* sub_ptr = &sub;
      return [a, tol, sub_ptr] {
        RunConfig& c = a->cfg;
        if (tol->count() && !(a->tol >= 0 && a->tol < 1e300)) throw Error("--tol must be a number >= 0");
        c.maxEvents = a->budget.maxEvents;
        c.maxMemoryBytes = applyBudgetFlags(a->budget);
        if (a->check && a->no_check) throw Error("--check and --no-check contradict each other");
        c.check = !a->no_check;
        if (a->tol >= 0) c.tolerance = a->tol;
        c.bindings = parseBindings(a->binds);
        for (const auto& s : a->inputs) c.inputFiles.push_back(splitAssign(s, "--input"));
        const WorkloadFlags& f = a->flags;
        const WorkloadParams base = c.params;
        c.params = applyWorkloadFlags(f, base);
        std::vector<std::string> axes = a->sweep;
        auto alias = [&](const char* key, const std::string& values) {
          for (const std::string& spec : axes)
            if (spec.rfind(std::string(key) + "=", 0) == 0)
              throw Error(std::string("--sweep ") + key + "=... is given twice (once as an alias flag)");
          axes.push_back(std::string(key) + "=" + values);
        };
        if (!a->sweepStreams.empty()) {
          std::string v;
          for (int64_t x : a->sweepStreams) v += (v.empty() ? "" : ",") + std::to_string(x);
          alias("streams", v);
        }
        if (!a->sweepProtocols.empty()) {
          std::string v;
          for (const std::string& x : a->sweepProtocols) v += (v.empty() ? "" : ",") + x;
          alias("protocol", v);
        }
        if (!axes.empty()) c.sweep = sweepPoints(axes, f, base, *sub_ptr);
        c.devicesSet = f.has(f.devices);
        if (f.has(f.streams)) c.streams = f.streams;
        if (c.timeoutSec <= 0) throw Error("--timeout must be positive");
        // exec::runCommand, in the module that links libtorch (cli/exec_module.h).
        return runInExecModule(c);
      };
    },
    "run a host program (file or workload) on CPU ranks with Gloo, or on GPUs with NCCL, and check it "
    "against the reference"});

}  // namespace
}  // namespace braid::cli
