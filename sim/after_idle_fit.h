// Fitting the host's slow start after idle (Machine::host.afterIdle, afterIdleGraph) to the
// after-idle benchmark (AfterIdleMeasurement: a run of host operations after idle gaps of several
// lengths and right after back-to-back work, launched and replayed as a CUDA graph). The delay
// after a gap is how much longer the run took than back to back (the median of the differences
// between its reps and the back-to-back ones), per way of issuing it; a longer idle never wakes
// the host faster, so each curve is made non-decreasing (adjacent violators pooled).
#pragma once

#include <string>
#include <vector>

#include "sim/machine.h"
#include "sim/measurements.h"

namespace braid::sim {

struct AfterIdleFit {
  AfterIdle launched;             // empty when no gap delayed it by a microsecond, or not measured
  AfterIdle graph;
  bool launchedMeasured = false;  // the measurements had entries of that way of issuing
  bool graphMeasured = false;
  std::vector<std::string> notes;  // one per way measured, for the calibration report
};

// Throws Error when a way of issuing has no run timed back to back (idle 0: the reference) or its
// runs issue different numbers of operations.
AfterIdleFit fitAfterIdle(const std::vector<AfterIdleMeasurement>& runs);

}  // namespace braid::sim
