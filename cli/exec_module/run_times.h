// `braid run --run-times FILE`: the wall and issue time of every timed run, every rank's, one
// configuration per line of FILE (JSON Lines). A median hides what moves between runs: clocks
// that ramp into the power cap over a configuration's runs, a slow first run, host jitter
// (docs/EXEC.md, "Run times").
#pragma once

#include <string>

#include "exec/check.h"
#include "exec/communicator.h"

namespace braid::cli {

struct RunTimesContext {
  std::string file;       // FILE: rank 0 appends one line per configuration
  std::string program;    // the program's label
  std::string settings;   // the sweep's settings of this configuration ("" without --sweep)
  std::string inputs;     // integers | normal
  double coolDownMs = 0;  // --cool-down
};

// Every rank calls it with its own timings (collective: ranks write a part next to FILE, and
// after a barrier rank 0 appends them as one line).
void appendRunTimes(const RunTimesContext& c, const exec::RunTimings& t, exec::Communicator& comm);

// Rank 0, before the first configuration: start FILE empty.
void startRunTimes(const std::string& file);

}  // namespace braid::cli
