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

// One GEMM, [i0, i1] @ [i1, i2], on the caller's stream.
inline constexpr const char* kOneMatmulHir = R"(%HostIrContainer { (T0_g___bfloat[iS0{i0}, iS1{i1}], T1_g___bfloat[iS2{i1}, iS3{i2}]) -> (T2_g___bfloat[iS4{i0}, iS5{i2}]) :
  T2_g___bfloat[iS4{i0}, iS5{i2}]
     = matmul(T0_g___bfloat[iS0{i0}, iS1{i1}],
              T1_g___bfloat[iS2{i1}, iS3{i2}])
} // %HostIrContainer
)";

// The h200 datasheet preset with nothing but the cost models left: no host cost, no launch
// latency, no minimum kernel time, no NCCL call overhead, no contention. Tests switch parts back on.
// (Not the calibrated h200: its constants move with every calibration, these tests' must not.)
inline sim::Machine bareMachine() {
  sim::Machine m = sim::loadMachine("h200-datasheet");
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

inline SimRun simulateProgram(HostProgram program, const sim::Machine& m, Bindings b, int64_t ranks, int64_t streams,
                              bool fold, const std::string& name) {
  SimRun r;
  r.program = std::move(program);
  sim::SimOptions o;
  o.semantics.bindings = std::move(b);
  o.semantics.numRanks = ranks;
  o.semantics.numberOfStreams = streams;
  o.fold = fold;
  r.result = sim::simulate(r.program, m, o);
  r.timeline = sim::toTimeline(r.result, name);
  return r;
}

inline SimRun simulateText(const std::string& text, const sim::Machine& m, Bindings b = {}, int64_t ranks = 0,
                           int64_t streams = 4, bool fold = true) {
  return simulateProgram(parseHostProgram(text, "test.hir"), m, std::move(b), ranks, streams, fold, "test");
}

inline SimRun simulateFile(const std::string& path, const sim::Machine& m, Bindings b = {}, int64_t ranks = 0,
                           int64_t streams = 4, bool fold = true) {
  return simulateProgram(parseHostProgramFile(path), m, std::move(b), ranks, streams, fold, path);
}

// Two all-gathers of [2, i0] bf16 on two ranks, posted from two worker streams; the second uses
// `second_backend`, so "NCCL" puts both on one communicator and "UCC" on two.
inline std::string twoAllgathers(const std::string& second_backend) {
  return R"(%HostIrContainer { (T0_g___bfloat[ideviceIdx.x0{2}, iS1{i0}] (DeviceMesh{0 1}), T1_g___bfloat[ideviceIdx.x2{2}, iS3{i0}] (DeviceMesh{0 1})) -> (T2_g___bfloat[iS4{2}, iS5{i0}] (DeviceMesh{0 1}), T3_g___bfloat[iS6{2}, iS7{i0}] (DeviceMesh{0 1})) :
  GetCurrentStream into Stream 0
  SetCurrentStream to Stream 1
  Synchronize Stream 0
  T2_g___bfloat[iS4{2}, iS5{i0}] (DeviceMesh{0 1}) = ALLOCATE(mem_type=global, zero_init=false)
  Communication 1 (type=Allgather, team=(0 1), input=T0_g___bfloat[ideviceIdx.x0{2}, iS1{i0}] (DeviceMesh{0 1}), output=T2_g___bfloat[iS4{2}, iS5{i0}] (DeviceMesh{0 1}), backend=NCCL)
  Wait Communication 1
  SetCurrentStream to Stream 2
  Synchronize Stream 0
  T3_g___bfloat[iS6{2}, iS7{i0}] (DeviceMesh{0 1}) = ALLOCATE(mem_type=global, zero_init=false)
  Communication 2 (type=Allgather, team=(0 1), input=T1_g___bfloat[ideviceIdx.x2{2}, iS3{i0}] (DeviceMesh{0 1}), output=T3_g___bfloat[iS6{2}, iS7{i0}] (DeviceMesh{0 1}), backend=)" +
         second_backend + R"()
  Wait Communication 2
  SetCurrentStream to Stream 0
  Synchronize Stream 1
  Synchronize Stream 2
} // %HostIrContainer
)";
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
