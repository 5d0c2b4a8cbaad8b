// Sweeps: simulate every combination of a few settings (`streams=1,2,4,8 protocol=A,B`) in
// parallel and rank them by makespan. What a setting means (a workload flag, a binding, the
// machine) is the caller's business: it passes a function that simulates one configuration.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "sim/simulate.h"

namespace braid::sim {

struct SweepAxis {
  std::string key;
  std::vector<std::string> values;
};

// "streams=1,2,4" -> {streams, [1, 2, 4]}; throws Error for a malformed spec.
SweepAxis parseSweepAxis(const std::string& spec);

// One value per axis, in axis order.
using SweepConfig = std::vector<std::pair<std::string, std::string>>;
std::string configStr(const SweepConfig& c);  // "streams=4 protocol=A"

// Every combination (the last axis varies fastest); throws Error above `limit` configurations.
std::vector<SweepConfig> sweepConfigs(const std::vector<SweepAxis>& axes, size_t limit = 4096);

struct SweepOutcome {
  SweepConfig config;
  std::string error;  // bad input for this configuration ("" when it simulated)
  bool deadlocked = false;
  double makespanUs = 0;
  double exposedCommUs = 0;  // max over ranks
  double hostUs = 0;         // max over ranks
  double overlapFraction = 0;
  int32_t peakConcurrency = 0;
  bool ok() const { return error.empty() && !deadlocked; }
};

SweepOutcome summarize(const SimResult& r, SweepConfig c);

// Runs `one` for every configuration on `threads` threads (0: the hardware's). `progress` is
// called from the calling thread with (done, total) while it waits, and once at the end.
std::vector<SweepOutcome> runSweep(const std::vector<SweepConfig>& configs,
                                   const std::function<SweepOutcome(const SweepConfig&)>& one, unsigned threads,
                                   const std::function<void(size_t, size_t)>& progress);

// Configurations that simulated, fastest first, then the failed ones in their order.
std::vector<SweepOutcome> rankSweep(std::vector<SweepOutcome> outcomes);

std::string sweepTable(const std::vector<SweepOutcome>& ranked);
std::string sweepJson(const std::vector<SweepOutcome>& ranked);

}  // namespace braid::sim
