// The `braid run` driver that runs inside the run module (see run_driver.cpp).
#pragma once

#include "cli/run_config.h"

namespace braid::cli {

// Runs `braid run` and returns the exit code: 0 all outputs match (or --no-check), 1 a mismatch,
// a timeout, or a program that `braid verify` rejects (without --unsafe), 2 bad input, 3 an
// internal failure. Prints the summary on stdout (rank 0).
int runCommand(const RunConfig& config);

}  // namespace braid::cli
