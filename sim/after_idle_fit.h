// Fitting the host's slowdown after idle (Machine::host.afterIdle) to the after-idle benchmark
// (AfterIdleMeasurement: the host's issue time of a run of host operations after idle gaps of several
// lengths, and right after back-to-back work). The delay after a gap is how much longer the issue
// took than back to back, median against median; a longer idle never wakes the host faster, so
// the curve is made non-decreasing (adjacent violators pooled).
#pragma once

#include <string>
#include <vector>

#include "sim/machine.h"
#include "sim/measurements.h"

namespace braid::sim {

struct AfterIdleFit {
  AfterIdle curve;       // empty when no gap slowed the host by a microsecond
  double awakeUs = 0;    // the issue time back to back (idle 0), median
  std::string summary;   // one line for the calibration report
};

// Throws Error when no run was timed back to back (idle 0: the reference) or the runs issue
// different numbers of operations.
AfterIdleFit fitAfterIdle(const std::vector<AfterIdleMeasurement>& runs);

}  // namespace braid::sim
