// The table `braid demo` prints: one row per protocol with the simulated makespan, how much of
// the communication hides under computation, the exposed communication, the peak concurrency and
// the verifier's verdict, then how much longer the slower protocol takes.
#pragma once

#include <string>
#include <vector>

#include "sim/simulate.h"
#include "verify/checker.h"

namespace braid::cli {

struct DemoRow {
  std::string protocol;      // "A"
  double makespanUs = 0;
  bool communicates = false;  // some rank communicates
  double hiddenFraction = 0;  // communication time hidden under computation / communication time
  double exposedCommUs = 0;   // max over ranks
  int32_t peakConcurrency = 0;
  bool deadlocked = false;    // the simulation could not complete
  std::string verdict;        // "clean", "clean, 1 warning (lost-parallelism)", "2 errors (race)"
  bool clean = true;          // no error, and the simulation completed
};

DemoRow demoRow(const std::string& protocol, const sim::SimResult& r, const verify::VerifyResult& v);

// What the protocol does with its worker streams, in a few words ("fork once, join per iteration").
std::string protocolGist(const std::string& protocol);

// The table, then a line comparing the slower protocol with the faster.
std::string formatDemoTable(const std::vector<DemoRow>& rows);

}  // namespace braid::cli
