// Helpers of the simulator tests: machines with round numbers, small host programs, running them.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ir/host_ir_text.h"
#include "sim/cost_model.h"
#include "sim/report.h"
#include "sim/simulate.h"

namespace braid::testing {

inline std::string simDataPath(const std::string& name) { return std::string(BRAID_TEST_DATA_DIR) + "/sim/data/" + name; }

inline std::string examplePath(const std::string& name) { return std::string(BRAID_SOURCE_DIR) + "/examples/" + name; }

// The h200 preset with nothing but the cost models left: no host cost, no launch latency, no
// minimum kernel time, no NCCL call overhead, no contention. Tests switch parts back on.
inline sim::Machine bareMachine() {
  sim::Machine m = sim::loadMachine("h200");
  m.name = "bare";
  m.host = {};
  m.gpu.launchLatencyUs = 0;
  m.gpu.kernelMinUs = 0;
  m.nccl.callOverheadUs = 0;
  m.contention.smSharing = false;
  m.contention.hbmSharing = false;
  m.contention.linkSharing = false;
  m.contention.commRateUnderCompute = 1.0;
  return m;
}

struct SimRun {
  HostProgram program;
  sim::SimResult result;
  Timeline timeline;
};

inline SimRun simulateText(const std::string& text, const sim::Machine& m, Bindings b = {}, int64_t ranks = 0,
                           int64_t streams = 4, bool fold = true) {
  SimRun r;
  r.program = parseHostProgram(text, "test.hir");
  sim::SimOptions o;
  o.semantics.bindings = std::move(b);
  o.semantics.numRanks = ranks;
  o.semantics.numberOfStreams = streams;
  o.fold = fold;
  r.result = sim::simulate(r.program, m, o);
  r.timeline = sim::toTimeline(r.result, "test");
  return r;
}

inline SimRun simulateFile(const std::string& path, const sim::Machine& m, Bindings b = {}, int64_t ranks = 0,
                           int64_t streams = 4, bool fold = true) {
  SimRun r;
  r.program = parseHostProgramFile(path);
  sim::SimOptions o;
  o.semantics.bindings = std::move(b);
  o.semantics.numRanks = ranks;
  o.semantics.numberOfStreams = streams;
  o.fold = fold;
  r.result = sim::simulate(r.program, m, o);
  r.timeline = sim::toTimeline(r.result, path);
  return r;
}

// The ops of the timeline named `name` (rank `rank`), in time order.
inline std::vector<TimelineOp> opsNamed(const Timeline& t, const std::string& name, int64_t rank = 0) {
  std::vector<TimelineOp> out;
  for (const auto& op : t.ops)
    if (op.name == name && op.rank == rank) out.push_back(op);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.startUs < b.startUs; });
  return out;
}

inline const TimelineOp& onlyOp(const Timeline& t, const std::string& name, int64_t rank = 0) {
  static TimelineOp none;
  for (const auto& op : t.ops)
    if (op.name == name && op.rank == rank) return op;
  ADD_FAILURE() << "no op named " << name << " on rank " << rank;
  return none;
}

}  // namespace braid::testing
