// braid's simulator, end to end: a host program + bindings + a machine -> when every operation
// runs on every rank and stream, and what that means (makespan, exposed communication, overlap,
// critical path, utilization). docs/SIM.md describes the model and its outputs.
//
// Ranks that provably do the same thing (ir/semantics/rank_symmetry.h) are simulated once: the
// event graph is built for one representative per class, and every member of a class gets its
// representative's results. SimResult::classes says when that happened.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/host_ir.h"
#include "ir/semantics/event_graph.h"
#include "ir/semantics/host_trace.h"
#include "ir/semantics/interpreter.h"
#include "ir/semantics/rank_symmetry.h"
#include "sim/engine.h"
#include "sim/machine.h"
#include "sim/sim_graph.h"

namespace braid::sim {

// The power state a program starts in, under a machine's power cap (Machine::gpu.power; docs/SIM.md,
// "Power state"). A program run once from an idle GPU (kIdle) never reaches the cap unless it
// computes for tens of milliseconds; the same program run back to back, as a training loop or a
// benchmark's timed runs do, starts each run with the power its predecessors left.
struct PowerStart {
  enum class Kind { kIdle, kAfterRuns, kSteady };
  Kind kind = Kind::kIdle;
  int64_t runs = 0;  // kAfterRuns: how many runs of the same program went before, back to back
  // Idle time between consecutive runs (kAfterRuns, kSteady): it lowers the power level, and the
  // host issues the run later after it (Machine::host.afterIdle; kAfterRuns with runs = 0 is one
  // run after the gap). kIdle has no gap: a GPU at an idle power level, its host awake.
  double gapUs = 0;
};

struct SimOptions {
  // Bindings, number of ranks (0: from the program), numberOfStreams. `ranks` is ignored: the
  // simulator runs every rank, or one per class when folding.
  sem::SemanticsOptions semantics;
  bool fold = true;                // simulate one rank per class of equivalent ranks
  bool recordSmCounters = false;   // keep busy-SM time series (for traces)
  // When each rank's host thread starts, by rank id (empty: all at 0). Ranks that start at
  // different times are not folded.
  std::vector<double> rankStartUs;
  bool copyEngines = false;  // communications on the copy engines (SimGraphOptions::copyEngines)
  // A CUDA-graph replay (`braid run --graph`): the whole program is submitted at once, so no
  // instruction waits for the host thread: every operation is ready the machine's launch latency
  // after the start and runs once its dependencies (stream order, events, rendezvous) are met.
  bool graphReplay = false;
  PowerStart power;
};

// What the power cap did to the simulated run (SimResult::power; empty without a cap), and how
// much later its host started after the gap.
struct PowerSummary {
  bool modelled = false;     // the machine has a power cap
  std::string start;         // "idle", "after 20 back-to-back runs 0 us apart", "in the steady state of ..."
  int64_t runsSimulated = 0; // runs simulated to find the start (the run reported not counted)
  bool converged = true;     // kSteady: the start level is a fixed point (to 1e-6)
  double startLevel = 0;     // max over GPUs, in units of a full GEMM load (sim/power_state.h)
  double endLevel = 0;
  double cappedFraction = 0; // max over GPUs: time at the cap's clocks / makespan
  double hostDelayUs = 0;    // the run's host starts this much later after its gap (Machine::host.afterIdle)
};

// One rank's figures, all in microseconds from the program's start.
struct RankStats {
  int64_t rank = 0;
  double makespanUs = 0;     // its last operation ends
  double computeUs = 0;      // time some kernel, copy or memset runs (union over streams)
  double commUs = 0;         // time some communication runs
  double overlapUs = 0;      // time both run
  double exposedCommUs = 0;  // communication not hidden under computation: commUs - overlapUs
  double hostUs = 0;         // its host thread's issue time for the whole program
  int32_t peakConcurrency = 0;  // most operations running at once (streams busy together)
  double smUtilization = 0;     // busy SM-time / (SMs x makespan)
  double nvlinkUtilization = 0;  // bytes over NVLink / (bandwidth x makespan)
  double nicUtilization = 0;     // bytes over the NICs / (bandwidth x makespan)
};

// One step of the critical path, in time order; the steps tile [0, makespan].
struct CriticalStep {
  int32_t event = -1;     // -1 for the host step
  std::string kind;       // "host", "compute", "copy", "memset", "communication"
  std::string via;        // how the previous step released this one: "stream", "sync", "wait",
                          // "post", "communicator order", "rendezvous with rank R"; "" first
  double startUs = 0;
  double endUs = 0;
};

struct SimResult {
  Machine machine;           // as simulated (topology grown to fit the ranks, if it had to be)
  sem::RankClasses classes;  // which ranks were folded onto which representative
  sem::EventGraph graph;     // of the simulated ranks
  std::vector<sem::HostTrace> hostTraces;
  SimGraph sim;
  EngineResult engine;

  std::vector<RankStats> stats;  // per simulated rank (EventGraph::ranks order)
  double makespanUs = 0;         // max over ranks
  double overlapFraction = 0;    // communication time hidden under computation / communication time
  int32_t peakConcurrency = 0;   // max over ranks
  std::vector<CriticalStep> criticalPath;
  int64_t simulatedEvents = 0;   // events of the simulated ranks
  int64_t representedEvents = 0; // events of all ranks (each class counted once per member)
  std::vector<std::string> notes;  // what the reader should know: folding, grown topology, ...
  PowerSummary power;

  // The stats of any rank (folded ranks share their representative's).
  RankStats rankStats(int64_t rank) const;
  int64_t numRanks() const { return classes.numRanks; }
};

// Throws Error for bad input (unbound symbols, a program the interpreter cannot run). A program
// that cannot complete is not an error here: engine.deadlocked says so (see describeDeadlock).
SimResult simulate(const HostProgram& p, const Machine& machine, const SimOptions& o);

// "deadlock: ... waits for ... (Wait), which waits for ..." with each step's statement and rank.
std::string describeDeadlock(const SimResult& r);

}  // namespace braid::sim
