// The `braid calibrate --measure` driver that runs inside the run module (see measure_driver.cpp).
#pragma once

#include "cli/measure_config.h"

namespace braid::cli {

// Runs the microbenchmarks on every rank (launching the ranks, or joining torchrun / mpirun's)
// and has rank 0 write the measurement file. Returns the exit code: 0 written, 1 a rank failed
// or timed out, 2 bad input, 3 an internal failure.
int measureCommand(const MeasureConfig& config);

}  // namespace braid::cli
