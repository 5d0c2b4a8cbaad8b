// Tuning: which stream count (= number of chunks), stream protocol and pipeline kind runs a
// workload fastest, by simulating every candidate (docs/TUNE.md). The library only builds the
// candidates and ranks what the caller's simulation of each returned; lowering a workload for a
// candidate is the caller's business (cli/tune_command.cpp), as in sweeps (sweep.h).
//
// Serial is the one-chunk program: streams = 1 with a collective pipeline (a p2p pipeline has a
// chunk per rank whatever the stream count). It is always a candidate, so every ranking can say
// how much pipelining buys, or that it buys nothing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/sweep.h"

namespace braid::sim {

struct TuneSpace {
  std::vector<int64_t> streams{1, 2, 4, 8};
  std::vector<std::string> protocols{"A", "B", "C"};
  std::vector<std::string> pipelines{"collective", "p2p"};
  // Schedules (docs/LOWERING.md): worker pools (0: one stream per chunk), deferred waits, prefetch.
  std::vector<int64_t> pools{0};
  std::vector<bool> deferWaits{false};
  std::vector<bool> prefetch{false};
  // Transports (docs/LOWERING.md, pass select-comm-backend): "nccl", "cuda" (the copy engines).
  std::vector<std::string> commBackends{"nccl"};
};

// Every combination as sweep configurations with keys `streams`, `protocol`, `pipeline`, streams
// varying slowest, then `pool` (when not 0), `defer-waits=on` and `prefetch=on` (when on) and
// `comm-backend` (when not nccl); the serial configurations (streams = 1, collective pipeline, every
// protocol and transport, no schedule) are added when missing. Left out as pointless or refused: a pool of at least the chunk count (and any
// pool with p2p, whose streams already are its pool), deferred waits under protocol B, and
// schedules of the one-chunk collective program. Throws Error for an empty axis, a non-positive or repeated stream
// count, a repeated value, or a transport other than nccl and cuda.
std::vector<SweepConfig> tuneCandidates(const TuneSpace& space);

struct TuneResult {
  std::vector<SweepOutcome> ranked;  // fastest first (ties: fewer streams first), failed last
  std::optional<size_t> serial;      // the fastest serial configuration, in `ranked`
  // The fastest other configuration beats serial (false also when there is none).
  bool pipelinedWins = false;

  // serial time / this configuration's time; 0 without a serial configuration or for a failure.
  double speedup(const SweepOutcome& o) const;
};

// The number of streams of a tune configuration (its `streams` key; 0 when absent).
int64_t streamsOf(const SweepConfig& c);
// One chunk: streams = 1 and a pipeline other than p2p.
bool isSerial(const SweepConfig& c);

TuneResult rankTune(std::vector<SweepOutcome> outcomes);

// The `top` fastest configurations with predicted times and speedup vs serial, the serial
// baseline, what failed (grouped by reason), and the verdict.
std::string tuneTable(const TuneResult& r, size_t top);
// {"configurations": [... up to top, with "speedup_vs_serial"], "serial": {...} | null,
//  "best": {...} | null, "pipelined_beats_serial": bool, "failed": [...]}
std::string tuneJson(const TuneResult& r, size_t top);

}  // namespace braid::sim
