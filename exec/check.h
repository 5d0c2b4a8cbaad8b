// Running a host program on every rank of a communicator and checking its gathered outputs
// against the unlowered fusion in float64: the library form of `braid run` (its driver is in
// cli/exec_module/), used by the CLI and by tests that run many programs in one set of rank
// processes.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "exec/communicator.h"
#include "exec/evaluator.h"
#include "exec/host_profile.h"
#include "exec/reference.h"
#include "ir/timeline.h"
#include "ir/host_ir.h"

namespace braid::exec {

struct CheckOptions {
  uint64_t seed = 0;
  InputValues inputValues = InputValues::kIntegers;  // what the seeded inputs hold (ir/input_values.h)
  int64_t numberOfStreams = 4;
  Bindings bindings;
  bool check = true;                 // compare with the reference (when one is given)
  std::optional<double> tolerance;   // default: per dtype (defaultTolerance)
  std::vector<std::pair<std::string, std::string>> inputFiles;  // "T0" or input index -> .npy
  std::string saveOutputs;           // rank 0 writes DIR/T<n>.npy
  std::function<void(const Stmt&, int64_t)> onStatement;
  // Called with the program's bindings (the given ones, plus the symbols the inputs determine)
  // before anything runs; may throw to refuse the run (`braid run` verifies the program here).
  std::function<void(const Bindings&)> beforeRun;
  std::atomic<Evaluator*>* current = nullptr;  // set while the evaluator runs (watchdogs)
  Device* device = nullptr;  // where the rank runs (null: CPU); inputs are moved there
  bool poison = true;        // NaN-fill fresh buffers (EvalOptions::poison)
  bool timeline = false;     // time every statement of one run (Device::setTiming)
  int64_t repeat = 0;        // timed runs after the checked one (CheckResult::timings)
  // Untimed runs between the checked run and the timed ones (clocks, lazily created library and
  // communication state); with `graph`, untimed replays.
  int64_t warmup = 0;
  // Idle milliseconds before every warm-up and timed run (after the previous one finished), so
  // each starts at an idle GPU's clocks: back-to-back runs on an H200 slow by 15-17% once the
  // power cap engages, 40-100 ms into the load (docs/EXEC.md, "Power state").
  double coolDownMs = 0;
  // Inputs drawn from the seed are kept here by (seed, index, shape) and reused by the next call
  // (a sweep's configurations share their full inputs, which take a second or more to draw at
  // benchmark sizes); the cache holds the last call's inputs only. Null: drawn every time.
  std::map<std::string, at::Tensor>* inputCache = nullptr;
  // False: stop after the runs, without gathering the outputs or reporting on them (a warm-up
  // pass; CheckResult::report stays empty and ok true).
  bool gather = true;
  // Which run `timeline` records: 0 the checked run (cold: it creates communicators and library
  // handles), K in [1, repeat] the K-th timed run (warm, what benchmarks compare with a model).
  // Not with `graph` (nothing is timed inside a replay).
  int64_t timelineRun = 0;
  // CUDA graph: after one interpreted run (which creates communicators and library handles),
  // capture the program once and replay it; the outputs checked are the replay's.
  bool graph = false;
  // Profile the timed runs' host time per statement kind (RunTimings::hostProfile); warm-up and
  // checked runs are left out. Not with `graph` (a replay issues no statements).
  bool hostProfile = false;
};

// Host and wall times of the timed runs, in microseconds. Every timed run starts right after a
// barrier. `issueUs`: host time to issue the run (interpreted: the evaluator's walk of the
// program; graph: the replay call); `wallUs`: until the device was idle again.
struct RunTimings {
  int64_t statements = 0;  // host instructions executed per run
  bool graph = false;
  int64_t warmupRuns = 0;  // untimed runs made before the timed ones (CheckOptions::warmup)
  std::vector<double> issueUs;
  std::vector<double> wallUs;
  HostProfile hostProfile;  // summed over the timed runs (CheckOptions::hostProfile)
};

struct CheckResult {
  bool ok = true;        // on every rank: rank 0's verdict, broadcast
  int64_t failures = 0;  // outputs that differ (rank 0's count)
  std::string report;    // rank 0: one line per output ("T3 [4, 8]: max abs err 0 ...: ok")
  bool checked = false;  // a reference was compared
  Timeline timeline;     // this rank's measured ops (CheckOptions::timeline)
  RunTimings timings;    // this rank's timed runs (CheckOptions::repeat)
};

// Every rank of `comm` calls this with the same program, reference and options. Inputs are full
// tensors from the seed (or files), sliced per rank; outputs are gathered to rank 0.
// `reference` (may be null) is the unlowered fusion whose inputs/outputs match the program's by
// position.
CheckResult runAndCheck(const HostProgram& program, const Fusion* reference, Communicator& comm,
                        const CheckOptions& options);

}  // namespace braid::exec
