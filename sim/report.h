// How a simulation is shown: the predicted timeline (ir/timeline.h, docs/TIMELINE.md), the JSON
// object `braid sim --json` prints, and the readable summary it prints otherwise.
#pragma once

#include <string>

#include "ir/timeline.h"
#include "sim/simulate.h"

namespace braid::sim {

// Every operation of the simulated ranks (entry, exit and allocator markers are left out), with
// sync / wait / post edges and rendezvous edges from the member that arrived last to the others.
Timeline toTimeline(const SimResult& r, const std::string& program);

// One JSON object: makespan_us, overlap_fraction, peak_concurrency, ranks (every rank, folded
// ones included), critical_path, folding, events, deadlock, notes (docs/SIM.md).
std::string resultJson(const SimResult& r, const std::string& program);

// A table per rank (one row per class of equivalent ranks), the critical path, the notes.
std::string formatSummary(const SimResult& r, const std::string& program);

// "rank 0, Stream 1" style name of an event's rank and stream.
std::string whereOf(const SimResult& r, int32_t event);

}  // namespace braid::sim
