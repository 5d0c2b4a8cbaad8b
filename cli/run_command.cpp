// `braid run FILE|WORKLOAD --backend cpu --ranks N`: run a host program for real on CPU ranks
// (Gloo collectives) and check its outputs against the unlowered fusion (docs/EXEC.md).
#include <iostream>
#include <memory>

#include "cli/command.h"
#include "exec/run.h"
#include "ir/error.h"

namespace braid::cli {
namespace {

struct RunArgs {
  exec::RunConfig cfg;
  std::vector<std::string> binds;
  std::vector<std::string> inputs;
  std::string dtype;
  std::string protocol;
  std::string indexing;
  std::string pipeline;
  bool ring = false;
  bool no_check = false;
  bool check = false;
  int64_t devices = 0;
  int64_t streams = 0;
  double tol = -1;
};

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
      exec::RunConfig& c = a->cfg;
      sub.add_option("target", c.target, "host IR file, or a workload name (braid lower --list)")->required();
      sub.add_option("--backend", c.backend, "execution backend (cpu: libtorch CPU tensors + Gloo)")
          ->default_val("cpu");
      sub.add_option("--ranks", c.ranks, "number of rank processes to start (default: the program's devices); "
                                         "ignored under torchrun / mpirun, which set the world");
      sub.add_option("--seed", c.seed, "seed of the random inputs")->default_val(0);
      sub.add_flag("--check", a->check, "compare outputs with the float64 reference (default)");
      sub.add_flag("--no-check", a->no_check, "only run and print output checksums");
      sub.add_option("--timeout", c.timeoutSec, "seconds before a stuck run is stopped (every rank)")
          ->default_val(60);
      sub.add_option("--bind", a->binds, "bind a free symbol of a file: --bind i0=64 (repeatable)")
          ->expected(1)
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
      sub.add_option("--input", a->inputs, "load a full input tensor: --input T0=path.npy (repeatable)")
          ->expected(1)
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
      sub.add_option("--save-outputs", c.saveOutputs, "write the gathered outputs as DIR/T<n>.npy");
      sub.add_option("--reference", c.referenceWorkload, "check a FILE against this workload's fusion");
      sub.add_option("--tol", a->tol, "relative tolerance (default per dtype: float 1e-5, bf16 2e-2)");
      sub.add_flag("--verbose", c.verbose, "print the host program that runs (rank 0)");
      // Workload size and lowering flags, as `braid lower`.
      sub.add_option("--devices", a->devices, "workload: ranks in the mesh (default: --ranks)");
      sub.add_option("--streams", a->streams, "stream-parallel chunks and numberOfStreams");
      sub.add_option("--m", c.params.m, "workload size m")->default_val(c.params.m);
      sub.add_option("--k", c.params.k, "workload size k")->default_val(c.params.k);
      sub.add_option("--n", c.params.n, "workload size n")->default_val(c.params.n);
      sub.add_option("--dtype", a->dtype, "workload dtype: float, double, __half, __bfloat (also bf16, half)");
      sub.add_option("--protocol", a->protocol, "stream protocol A (separate sync loop) or B (in-loop sync)");
      sub.add_option("--indexing", a->indexing, "worker stream keys: modulo or raw");
      sub.add_option("--pipeline", a->pipeline, "DID->Stream resharding: collective or p2p");
      sub.add_flag("--ring", a->ring, "ring buffers of numberOfStreams slices for stream-loop intermediates");
      return [a] {
        exec::RunConfig& c = a->cfg;
        if (a->check && a->no_check) throw Error("--check and --no-check contradict each other");
        c.check = !a->no_check;
        if (a->tol >= 0) c.tolerance = a->tol;
        for (const auto& s : a->binds) {
          auto [k, v] = splitAssign(s, "--bind");
          try {
            c.bindings[k] = std::stoll(v);
          } catch (const std::exception&) {
            throw Error("--bind " + s + ": the value is not an integer");
          }
        }
        for (const auto& s : a->inputs) c.inputFiles.push_back(splitAssign(s, "--input"));
        if (a->devices > 0) {
          c.params.devices = a->devices;
          c.devicesSet = true;
        }
        if (a->streams > 0) c.streams = a->streams;
        if (!a->dtype.empty()) {
          std::string d = a->dtype == "bf16" || a->dtype == "bfloat16" ? "__bfloat"
                          : a->dtype == "half" || a->dtype == "fp16" ? "__half"
                          : a->dtype == "fp32" ? "float" : a->dtype;
          auto t = parseDataType(d);
          if (!t) throw Error("--dtype " + a->dtype + " is not a dtype (float, double, __half, __bfloat)");
          c.params.dtype = *t;
        }
        if (!a->protocol.empty()) {
          if (a->protocol == "A" || a->protocol == "a") c.params.lowering.protocol = StreamProtocol::kSeparateSyncLoop;
          else if (a->protocol == "B" || a->protocol == "b") c.params.lowering.protocol = StreamProtocol::kInLoopSync;
          else throw Error("--protocol " + a->protocol + ": expected A or B");
        }
        if (!a->indexing.empty()) {
          if (a->indexing == "modulo") c.params.lowering.indexing = StreamIndexing::kModulo;
          else if (a->indexing == "raw") c.params.lowering.indexing = StreamIndexing::kRaw;
          else throw Error("--indexing " + a->indexing + ": expected modulo or raw");
        }
        if (!a->pipeline.empty()) {
          if (a->pipeline == "collective") c.params.lowering.pipeline = PipelineKind::kCollective;
          else if (a->pipeline == "p2p") c.params.lowering.pipeline = PipelineKind::kP2P;
          else throw Error("--pipeline " + a->pipeline + ": expected collective or p2p");
        }
        if (a->ring) c.params.lowering.ringBuffers = true;
        if (c.timeoutSec <= 0) throw Error("--timeout must be positive");
        return exec::runCommand(c);
      };
    },
    "run a host program (file or workload) on CPU ranks with Gloo and check it against the reference"});

}  // namespace
}  // namespace braid::cli
