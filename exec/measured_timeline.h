// Measured timelines: the device spans of one rank's timed statements (Evaluator::timed(),
// Device::spans()) as a braid::Timeline in the simulator's schema (ir/timeline.h,
// docs/TIMELINE.md), so `braid viz` draws measured and predicted runs the same way; and the merge
// of the ranks' parts into one file.
#pragma once

#ifdef BRAID_WITH_TORCH

#include <string>
#include <vector>

#include "exec/device.h"
#include "exec/evaluator.h"
#include "ir/timeline.h"

namespace braid::exec {

// One rank's ops, times in microseconds since the run's start event on that rank (ranks start
// their runs right after a barrier, so the clocks agree to within the barrier's skew). Its
// `ranks` is rank + 1, so that the part, written and read back for the merge, names only ranks
// it has (ir/timeline.h refuses a stream of a rank the timeline does not have).
Timeline measuredTimeline(const std::vector<TimedStatement>& timed, const std::vector<DeviceSpan>& spans,
                          int64_t rank);

// Appends `part`'s streams and ops (and edges) to `into`, renumbering their ids; `into` then has
// as many ranks as the larger of the two.
void appendTimeline(Timeline& into, const Timeline& part);

}  // namespace braid::exec

#endif
