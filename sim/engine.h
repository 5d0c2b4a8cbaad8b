// The discrete-event engine: schedules a SimGraph on its machine and returns when every node
// started and ended.
//
// A node may start once every predecessor completed and its rank's host thread issued it; a
// communication starts when every member of its rendezvous can (the last to arrive decides for
// all) and its members complete together. Running work progresses at a rate that changes
// whenever what runs beside it on its GPU changes (docs/SIM.md, "Contention"): kernels share the
// SMs that running NCCL kernels leave free (GEMMs in whole waves of tiles), memory-bound work
// shares HBM bandwidth, communications of one GPU share its links and slow down while a kernel
// runs beside them; under a power cap (Machine::gpu.power) compute slows once the GPU's averaged
// power reaches it (sim/power_state.h). Without those effects (ContentionModel all off) every node simply runs for
// its cost model's time.
//
// A program that cannot finish is reported with the chain of waits that blocks it, never hangs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/sim_graph.h"

namespace braid::sim {

struct EngineOptions {
  bool recordSmCounters = false;  // keep the busy-SM time series of every GPU (for traces)
  // Per GPU: the power level it starts at (sim/power_state.h; empty: every GPU idle). Used only
  // when the machine models a power cap.
  std::vector<double> initialPowerLevel;
};

struct CounterPoint {
  double us = 0;
  double value = 0;
};

struct EngineResult {
  std::vector<double> start;  // per event; -1 for events that never ran (deadlock)
  std::vector<double> end;
  // What released each node: the predecessor whose completion came last (-1: its host issue, or
  // the rendezvous for a communication member that arrived before the others).
  std::vector<int32_t> binding;
  std::vector<DepKind> bindingKind;
  std::vector<int32_t> lastArrival;  // per rendezvous: the member whose arrival started it
  std::vector<double> smBusyUs;      // per GPU: integral of busy SMs over time (SM x us)
  std::vector<std::vector<CounterPoint>> busySms;  // per GPU, with recordSmCounters
  // Per GPU, with a power cap (Machine::gpu.power): the power level when the program ends (the
  // next run starts from it), and how long its compute ran at the cap's lower clocks.
  std::vector<double> finalPowerLevel;
  std::vector<double> cappedUs;

  // A program that cannot complete: `blocked` lists a chain of events, each waiting for the next;
  // with `cycle` the last waits for the first again, otherwise the last waits for a communication
  // partner that never posts.
  bool deadlocked = false;
  bool cycle = false;
  std::vector<int32_t> blocked;
  int64_t unfinished = 0;

  bool ran(int32_t e) const { return end[static_cast<size_t>(e)] >= 0; }
};

EngineResult runEngine(const SimGraph& g, const Machine& mc, const EngineOptions& o = {});

}  // namespace braid::sim
