// Running a host program on every rank of a communicator and checking its gathered outputs
// against the unlowered fusion in float64: the library form of `braid run` (its driver is in
// cli/exec_module/), used by the CLI and by tests that run many programs in one set of rank
// processes.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "exec/communicator.h"
#include "exec/evaluator.h"
#include "ir/host_ir.h"

namespace braid::exec {

struct CheckOptions {
  uint64_t seed = 0;
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
};

struct CheckResult {
  bool ok = true;        // on every rank: rank 0's verdict, broadcast
  int64_t failures = 0;  // outputs that differ (rank 0's count)
  std::string report;    // rank 0: one line per output ("T3 [4, 8]: max abs err 0 ...: ok")
  bool checked = false;  // a reference was compared
};

// Every rank of `comm` calls this with the same program, reference and options. Inputs are full
// tensors from the seed (or files), sliced per rank; outputs are gathered to rank 0.
// `reference` (may be null) is the unlowered fusion whose inputs/outputs match the program's by
// position.
CheckResult runAndCheck(const HostProgram& program, const Fusion* reference, Communicator& comm,
                        const CheckOptions& options);

}  // namespace braid::exec
