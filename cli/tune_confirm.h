// `braid tune --confirm N`: after the simulated ranking, run the N best configurations and the
// serial one with `braid run --backend B --repeat R --no-check` (subprocesses of this same
// `braid`, one rank per device) and set what they measured beside what was predicted
// (docs/TUNE.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/tune.h"

namespace braid::cli {

struct ConfirmOptions {
  int64_t count = 0;             // the N best simulated configurations
  std::string backend = "cuda";  // braid run's --backend
  int64_t repeat = 10;           // braid run's --repeat
  int64_t ranks = 2;             // braid run's --ranks (the workload's devices)
  std::string target;            // the workload
  std::vector<std::string> workloadArgs;  // the workload flags given to tune, as arguments
  int64_t timeoutSec = 120;      // braid run's --timeout, per configuration
  bool graph = false;            // braid run --graph: measure CUDA-graph replays
};

struct ConfirmRow {
  sim::SweepConfig config;
  size_t predictedRank = 0;  // 1-based position in the simulated ranking
  double predictedUs = 0;
  double measuredUs = 0;     // max over ranks of each rank's median wall time
  bool serial = false;
  std::string command;       // the braid run command line (after the executable)
};

struct ConfirmResult {
  std::string backend;
  int64_t repeat = 0;
  bool graph = false;            // the runs replayed CUDA graphs (braid run --graph)
  std::vector<ConfirmRow> rows;  // in predicted order
  // The configuration measured fastest is the one predicted fastest (among those run).
  bool bestConfirmed() const;
  const ConfirmRow* measuredBest() const;
  const ConfirmRow* serialRow() const;  // nullptr when the serial configuration was not run
};

// Which configurations --confirm runs: the `count` best that simulated, then the serial one if
// it is not among them. Positions in r.ranked.
std::vector<size_t> confirmCandidates(const sim::TuneResult& r, int64_t count);

// The `braid run` arguments of one configuration (after the executable).
std::vector<std::string> confirmRunArgs(const ConfirmOptions& o, const sim::SweepConfig& c);

// The time `braid run --repeat` printed: the largest over its ranks of each rank's median wall
// time ("rank R timing (...): wall X us"). Throws Error when no rank printed one.
double measuredWallUs(const std::string& output);

// Runs them (prints one line per configuration on stderr as it goes). Throws Error, with the
// run's own output, when a run fails.
ConfirmResult confirmTune(const sim::TuneResult& r, const ConfirmOptions& o);

// "choice: CONFIG (...)": the configuration measured fastest, or "choice: serial (...)" with the
// reason when no pipelined one beat the serial program. Ends with a newline; empty without rows.
std::string choiceLine(const ConfirmResult& c);
std::string confirmTable(const ConfirmResult& c);
// {"backend", "repeat", "rows": [{"config", "predicted_rank", "predicted_us", "measured_us",
//  "error", "serial", "command"}], "measured_best", "best_confirmed", "choice_is_serial",
//  "speedup_over_serial"}
std::string confirmJson(const ConfirmResult& c);

}  // namespace braid::cli
