// Rank skew of a measured run: the ranks of a launch do not start the program at the same moment
// (the previous run's end and the host's wake-up differ per rank), and each rank's measured
// timeline counts from its own start. A collective ends at the same moment on every member, so
// the difference of a collective's end times between two ranks is the difference of their starts.
// `braid validate` simulates the measured run with these starts (SimOptions::rankStartUs) and
// compares each rank on its own clock.
#pragma once

#include <vector>

#include "ir/timeline.h"

namespace braid::sim {

// Each rank's start, in microseconds after the earliest rank's (index: rank id; 0 for a rank
// with no collective matched on rank 0 and itself): the median, over the collectives both ran
// (same statement line, iteration and occurrence, on a communicator stream), of rank 0's end
// minus this rank's end, shifted so the earliest start is 0. P2P transfers (EndCoalescing, Send,
// Recv) do not end together on both sides and are not used.
std::vector<double> rankStartOffsets(const Timeline& measured);

}  // namespace braid::sim
