// `braid run`'s flags: execute a host program (a file, or a catalog workload lowered on the fly)
// on CPU ranks with Gloo collectives, gather the outputs and check them against the unlowered
// fusion evaluated in float64 (docs/EXEC.md). This header has no libtorch types (nor includes), so
// the CLI builds everywhere and does not link libtorch: `braid run` hands a RunConfig to the run
// module cli/exec_module.h loads. Without libtorch it reports kBuiltWithoutTorchMessage.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "catalog/workload.h"
#include "ir/scalar.h"

namespace braid::cli {

struct RunConfig {
  std::string target;              // a host IR file, or a workload name (braid lower --list)
  std::string backend = "cpu";
  int64_t ranks = 0;               // 0: the workload's --devices (or 1); ignored under torchrun/mpirun
  WorkloadParams params;           // workload sizes and lowering options (as `braid lower`)
  bool devicesSet = false;         // --devices given
  std::optional<int64_t> streams;  // numberOfStreams (files: default 4; workloads: their S)
  uint64_t seed = 0;
  std::string inputs = "integers";  // --inputs: the values seeded inputs hold (ir/input_values.h)
  bool check = true;
  double timeoutSec = 60;
  Bindings bindings;               // --bind i0=8
  std::string referenceWorkload;   // --reference NAME: check a FILE against this workload's fusion
  std::vector<std::pair<std::string, std::string>> inputFiles;  // --input T0=path.npy (full tensors)
  std::string saveOutputs;         // --save-outputs DIR: rank 0 writes the gathered outputs as .npy
  std::optional<double> tolerance; // --tol: overrides the per-dtype tolerance
  bool verbose = false;
  bool unsafe = false;             // --unsafe: run a program that `braid verify` rejects
  std::string backendOverride;     // --backend-override nccl|cuda|gloo: the transport for every communication
  std::string timelineFile;        // --timeline FILE: measured timeline (CUDA), docs/TIMELINE.md
  std::string traceFile;           // --trace FILE: the same as a Chrome / Perfetto trace
  int64_t repeat = 0;              // --repeat N: timed runs after the checked one
  int64_t timelineRun = 0;         // --timeline-run K: the timeline of the K-th timed run (0: the checked one)
  bool graph = false;              // --graph: capture once as a CUDA graph, replay
  bool hostProfile = false;        // --host-profile: host time per statement kind over the timed runs
  std::string runTimesFile;        // --run-times FILE: every timed run's wall and issue time (JSON Lines)
  bool poison = true;              // --no-poison: leave fresh buffers uninitialized (benchmarks)
  int64_t smCarveout = 0;          // --sm-carveout N: SMs left to the communication (cuBLAS targets the rest)
  bool commHighPriority = false;   // --comm-priority high: communicators' streams at the highest priority
  // --sweep KEY=V1,V2 ...: run each of these workload configurations in turn in the same
  // processes (one device and communicator set-up for all); empty: just `params`.
  struct SweepPoint {
    WorkloadParams params;
    std::vector<std::pair<std::string, std::string>> settings;  // the swept KEY=VALUEs that make it
  };
  std::vector<SweepPoint> sweep;
  // --warmup N: untimed runs of each configuration right before its timed runs; a sweep first
  // runs every configuration N times, untimed, before its first timed configuration.
  int64_t warmup = 10;
  // --cool-down MS: idle time before every warm-up and timed run, so each starts at an idle
  // GPU's clocks instead of partway into the power cap's slowdown (CheckOptions::coolDownMs).
  double coolDownMs = 0;
  int64_t maxEvents = 0;           // --max-events (0: from the memory budget)
  int64_t maxMemoryBytes = 0;      // --max-memory (0: half the machine's memory)
};

inline constexpr const char* kBuiltWithoutTorchMessage =
    "braid was built without libtorch: `braid run` is not available (install libtorch-dev, or point "
    "CMAKE_PREFIX_PATH at an installed PyTorch, and reconfigure)";

}  // namespace braid::cli
