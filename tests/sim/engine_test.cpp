// Analytic cases of the engine: each expected time is computed by hand from the cost models and
// the machine's constants, then compared with the schedule.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tests/sim/sim_test_util.h"

namespace braid {
namespace {

using testing::bareMachine;
using testing::onlyOp;
using testing::opsNamed;
using testing::simulateFile;
using testing::simulateText;
using testing::twoAllgathers;

constexpr double kEps = 1e-6;

const char* kOneMatmul = testing::kOneMatmulHir;

// Two matmuls on two worker streams, forked from and joined to the caller's stream.
const char* kTwoStreams = R"(%HostIrContainer { (T0_g___bfloat[iS0{i0}, iS1{i1}], T1_g___bfloat[iS2{i1}, iS3{i2}]) -> (T2_g___bfloat[iS4{i0}, iS5{i2}], T3_g___bfloat[iS6{i0}, iS7{i2}]) :
  GetCurrentStream into Stream 0
  SetCurrentStream to Stream 1
  Synchronize Stream 0
  T2_g___bfloat[iS4{i0}, iS5{i2}]
     = matmul(T0_g___bfloat[iS0{i0}, iS1{i1}],
              T1_g___bfloat[iS2{i1}, iS3{i2}])
  SetCurrentStream to Stream 2
  Synchronize Stream 0
  T3_g___bfloat[iS6{i0}, iS7{i2}]
     = matmul(T0_g___bfloat[iS0{i0}, iS1{i1}],
              T1_g___bfloat[iS2{i1}, iS3{i2}])
  SetCurrentStream to Stream 0
  Synchronize Stream 1
  Synchronize Stream 2
} // %HostIrContainer
)";

sim::KernelCost matmulCost(const sim::Machine& m, int64_t i0, int64_t i1, int64_t i2) {
  double flops = 2.0 * static_cast<double>(i0 * i1 * i2);
  double bytes = 2.0 * static_cast<double>(i0 * i1 + i1 * i2 + i0 * i2);
  return sim::gemmCost(m, flops, bytes, DataType::kBFloat16, 1, i0, i2);
}

TEST(SimEngine, OneOpTakesItsCostModelTimeAfterHostIssueAndLaunch) {
  sim::Machine m = bareMachine();
  m.host.atenOpUs = 7;
  m.gpu.launchLatencyUs = 3;
  auto run = simulateText(kOneMatmul, m, {{"i0", 4096}, {"i1", 2048}, {"i2", 1024}});
  double cost = matmulCost(m, 4096, 2048, 1024).totalUs();
  const TimelineOp& mm = onlyOp(run.timeline, "matmul");
  EXPECT_NEAR(mm.startUs, 7 + 3, kEps);
  EXPECT_NEAR(mm.durationUs(), cost, kEps);
  EXPECT_NEAR(run.result.makespanUs, 10 + cost, kEps);
  EXPECT_EQ(run.result.peakConcurrency, 1);
  // The critical path: the host issues it, then the matmul runs.
  ASSERT_EQ(run.result.criticalPath.size(), 2u);
  EXPECT_EQ(run.result.criticalPath[0].kind, "host");
  EXPECT_EQ(run.result.criticalPath[1].kind, "compute");
}

TEST(SimEngine, IndependentStreamsOverlapWithoutContention) {
  sim::Machine m = bareMachine();
  auto run = simulateText(kTwoStreams, m, {{"i0", 8192}, {"i1", 8192}, {"i2", 8192}});
  double cost = matmulCost(m, 8192, 8192, 8192).totalUs();
  EXPECT_NEAR(run.result.makespanUs, cost, kEps);
  EXPECT_EQ(run.result.peakConcurrency, 2);
}

TEST(SimEngine, ConcurrentKernelsShareTheSms) {
  sim::Machine m = bareMachine();
  m.contention.smSharing = true;
  // Big GEMMs each want every SM: sharing them takes as long as running them one after the other.
  auto big = simulateText(kTwoStreams, m, {{"i0", 8192}, {"i1", 8192}, {"i2", 8192}});
  EXPECT_NEAR(big.result.makespanUs, 2 * matmulCost(m, 8192, 8192, 8192).totalUs(), 1e-3);
  EXPECT_EQ(big.result.peakConcurrency, 2);
  // Small GEMMs with fewer tiles than half the SMs do not get in each other's way.
  sim::KernelCost small = matmulCost(m, 256, 4096, 512);
  ASSERT_LE(2 * small.tiles, m.gpu.sms);
  auto run = simulateText(kTwoStreams, m, {{"i0", 256}, {"i1", 4096}, {"i2", 512}});
  EXPECT_NEAR(run.result.makespanUs, small.totalUs(), kEps);
}

// Rank 1 computes before the collective; rank 0 does not.
const char* kSlowRank = R"(%HostIrContainer { (T0_g___bfloat[iS0{i0}, iS1{i1}], T1_g___bfloat[iS2{i1}, iS3{i2}], T4_g___bfloat[ideviceIdx.x6{2}, iS7{i3}] (DeviceMesh{0 1})) -> (T5_g___bfloat[iS8{2}, iS9{i3}] (DeviceMesh{0 1})) :
  IF Manual ( rank == 1 ):
    T2_g___bfloat[iS4{i0}, iS5{i2}]
       = matmul(T0_g___bfloat[iS0{i0}, iS1{i1}],
                T1_g___bfloat[iS2{i1}, iS3{i2}])
  T5_g___bfloat[iS8{2}, iS9{i3}] (DeviceMesh{0 1}) = ALLOCATE(mem_type=global, zero_init=false)
  Communication 3 (type=Allgather, team=(0 1), input=T4_g___bfloat[ideviceIdx.x6{2}, iS7{i3}] (DeviceMesh{0 1}), output=T5_g___bfloat[iS8{2}, iS9{i3}] (DeviceMesh{0 1}), backend=NCCL)
  Wait Communication 3
} // %HostIrContainer
)";

TEST(SimEngine, ACollectiveWaitsForItsSlowestRank) {
  sim::Machine m = bareMachine();
  auto run = simulateText(kSlowRank, m, {{"i0", 4096}, {"i1", 4096}, {"i2", 4096}, {"i3", 1 << 20}}, 2);
  EXPECT_FALSE(run.result.classes.folded());  // the branch depends on the rank
  const TimelineOp& mm = onlyOp(run.timeline, "matmul", 1);
  const TimelineOp& ag0 = onlyOp(run.timeline, "Allgather", 0);
  const TimelineOp& ag1 = onlyOp(run.timeline, "Allgather", 1);
  double ag = sim::collectiveCost(m, CommunicationType::kAllgather, 2, 1, 2.0 * 2 * (1 << 20)).us;
  EXPECT_NEAR(ag0.startUs, mm.endUs, kEps);  // rank 0 was ready at 0 but waits for rank 1
  EXPECT_NEAR(ag1.startUs, mm.endUs, kEps);
  EXPECT_NEAR(ag0.endUs, mm.endUs + ag, kEps);
  EXPECT_NEAR(ag1.endUs, ag0.endUs, kEps);
  // Rank 0's communication is exposed for its whole length: nothing runs beside it.
  EXPECT_NEAR(run.result.rankStats(0).exposedCommUs, ag, kEps);
  // The critical path goes through rank 1's matmul and the rendezvous.
  bool through_matmul = false;
  for (const auto& s : run.result.criticalPath) through_matmul |= s.kind == "compute";
  EXPECT_TRUE(through_matmul);
}

TEST(SimEngine, OneCommunicatorRunsItsOperationsOneAfterTheOther) {
  sim::Machine m = bareMachine();
  auto run = simulateText(twoAllgathers("NCCL"), m, {{"i0", 1 << 24}});
  auto ags = opsNamed(run.timeline, "Allgather");
  ASSERT_EQ(ags.size(), 2u);
  double one = sim::collectiveCost(m, CommunicationType::kAllgather, 2, 1, 2.0 * 2 * (1 << 24)).us;
  EXPECT_NEAR(ags[0].durationUs(), one, kEps);
  EXPECT_NEAR(ags[1].startUs, ags[0].endUs, kEps);  // the second waits for the first
  EXPECT_NEAR(run.result.rankStats(0).commUs, 2 * one, kEps);
  EXPECT_EQ(run.result.peakConcurrency, 1);
}

// A collective over a team of one: NCCL copies the input into the output when they are different
// buffers (at HBM speed) and does nothing in place.
TEST(SimEngine, ALoneRanksCollectiveIsALocalCopyOutOfPlaceAndNothingInPlace) {
  const std::string text = R"(%HostIrContainer { (T0_g___bfloat[iS0{i0}] (DeviceMesh{0})) -> (T1_g___bfloat[iS1{i0}] (DeviceMesh{0})) :
  T1_g___bfloat[iS1{i0}] (DeviceMesh{0}) = ALLOCATE(mem_type=global, zero_init=false)
  Communication 1 (type=Allreduce, team=(0), red_op=add, input=T0_g___bfloat[iS0{i0}] (DeviceMesh{0}), output=T1_g___bfloat[iS1{i0}] (DeviceMesh{0}), backend=NCCL)
  Wait Communication 1
  Communication 2 (type=Allreduce, team=(0), red_op=add, input=T1_g___bfloat[iS1{i0}] (DeviceMesh{0}), output=T1_g___bfloat[iS1{i0}] (DeviceMesh{0}), backend=NCCL)
  Wait Communication 2
} // %HostIrContainer
)";
  sim::Machine m = bareMachine();
  auto run = simulateText(text, m, {{"i0", 1 << 26}}, 1);
  auto ars = opsNamed(run.timeline, "Allreduce");
  ASSERT_EQ(ars.size(), 2u);
  EXPECT_NEAR(ars[0].durationUs(), sim::copyCost(m, 2.0 * 2 * (1 << 26)).totalUs(), kEps);
  EXPECT_GT(ars[0].durationUs(), 50);  // 128 MiB read and written
  EXPECT_NEAR(ars[1].durationUs(), 0, kEps);
}

// NCCL launches no kernel for a team of one: its copy holds none of the SMs its channels would,
// and a GEMM beside it keeps every SM.
TEST(SimEngine, ALoneRanksCopyLeavesAGemmBesideItEverySm) {
  const std::string text = R"(%HostIrContainer { (T0_g___bfloat[iS0{i0}, iS1{i1}] (DeviceMesh{0}), T1_g___bfloat[iS2{i1}, iS3{i2}] (DeviceMesh{0}), T5_g___bfloat[iS8{i3}] (DeviceMesh{0})) -> (T2_g___bfloat[iS4{i0}, iS5{i2}] (DeviceMesh{0}), T6_g___bfloat[iS9{i3}] (DeviceMesh{0})) :
  GetCurrentStream into Stream 0
  SetCurrentStream to Stream 1
  Synchronize Stream 0
  T2_g___bfloat[iS4{i0}, iS5{i2}] (DeviceMesh{0})
     = matmul(T0_g___bfloat[iS0{i0}, iS1{i1}] (DeviceMesh{0}),
              T1_g___bfloat[iS2{i1}, iS3{i2}] (DeviceMesh{0}))
  SetCurrentStream to Stream 2
  Synchronize Stream 0
  T6_g___bfloat[iS9{i3}] (DeviceMesh{0}) = ALLOCATE(mem_type=global, zero_init=false)
  Communication 1 (type=Allreduce, team=(0), red_op=add, input=T5_g___bfloat[iS8{i3}] (DeviceMesh{0}), output=T6_g___bfloat[iS9{i3}] (DeviceMesh{0}), backend=NCCL)
  Wait Communication 1
  SetCurrentStream to Stream 0
  Synchronize Stream 1
  Synchronize Stream 2
} // %HostIrContainer
)";
  sim::Machine m = bareMachine();
  m.contention.smSharing = true;
  auto run = simulateText(text, m, {{"i0", 8192}, {"i1", 8192}, {"i2", 8192}, {"i3", 1 << 26}}, 1);
  EXPECT_NEAR(onlyOp(run.timeline, "matmul").durationUs(), matmulCost(m, 8192, 8192, 8192).totalUs(), 1e-3);
  EXPECT_GT(onlyOp(run.timeline, "Allreduce").durationUs(), 50);
}

TEST(SimEngine, TwoCommunicatorsRunTogetherAndShareTheLinks) {
  sim::Machine m = bareMachine();
  auto apart = simulateText(twoAllgathers("UCC"), m, {{"i0", 1 << 24}});
  auto ags = opsNamed(apart.timeline, "Allgather");
  ASSERT_EQ(ags.size(), 2u);
  double one = ags[0].durationUs();
  EXPECT_NEAR(ags[1].startUs, ags[0].startUs, kEps);
  EXPECT_NEAR(ags[1].durationUs(), one, kEps);
  EXPECT_EQ(apart.result.peakConcurrency, 2);
  // Sharing the links, each runs at half speed.
  m.contention.linkSharing = true;
  auto shared = simulateText(twoAllgathers("UCC"), m, {{"i0", 1 << 24}});
  auto both = opsNamed(shared.timeline, "Allgather");
  EXPECT_NEAR(both[0].durationUs(), 2 * one, 1e-3);
  EXPECT_NEAR(both[1].durationUs(), 2 * one, 1e-3);
}

Bindings gemmBesideAllgather(int64_t gemm, int64_t ag_rows) {
  return {{"i0", gemm}, {"i1", gemm}, {"i2", gemm}, {"i3", ag_rows}, {"i4", 8192}};
}

TEST(SimEngine, AnNcclKernelsSmsSlowAGemmByTheConfiguredFactor) {
  sim::Machine m = bareMachine();
  m.contention.smSharing = true;
  m.nccl.channels = 20;
  m.nccl.smsPerChannel = 2;  // 40 of 132 SMs
  // The all-gather outlasts the GEMM, so the GEMM runs beside it from start to end.
  auto run = testing::simulateFile(testing::simDataPath("gemm_beside_allgather.hir"), m, gemmBesideAllgather(4096, 65536));
  const TimelineOp& mm = onlyOp(run.timeline, "matmul");
  const TimelineOp& ag = onlyOp(run.timeline, "Allgather");
  ASSERT_GT(ag.endUs, mm.endUs);
  sim::KernelCost cost = matmulCost(m, 4096, 4096, 4096);
  EXPECT_NEAR(mm.durationUs(), cost.totalUs() * 132.0 / (132.0 - 40.0), 1e-3);
  // In whole waves of tiles instead.
  m.contention.smSharingWaves = true;
  auto waves = testing::simulateFile(testing::simDataPath("gemm_beside_allgather.hir"), m, gemmBesideAllgather(4096, 65536));
  double factor = std::ceil(static_cast<double>(cost.tiles) / 92.0) / std::ceil(static_cast<double>(cost.tiles) / 132.0);
  EXPECT_NEAR(onlyOp(waves.timeline, "matmul").durationUs(), cost.totalUs() * factor, 1e-3);
}

TEST(SimEngine, ACommunicationSlowsWhileAKernelRunsBesideIt) {
  sim::Machine m = bareMachine();
  m.contention.commRateUnderCompute = 0.5;
  auto run = testing::simulateFile(testing::simDataPath("gemm_beside_allgather.hir"), m, gemmBesideAllgather(4096, 65536));
  const TimelineOp& mm = onlyOp(run.timeline, "matmul");
  const TimelineOp& ag = onlyOp(run.timeline, "Allgather");
  double a = sim::collectiveCost(m, CommunicationType::kAllgather, 2, 1, 2.0 * 2 * 65536 * 8192).us;
  ASSERT_GT(ag.endUs, mm.endUs);
  // Half speed while the GEMM runs, full speed after: a - 0.5 * (overlap) remains at the end.
  double overlap = mm.endUs - ag.startUs;
  EXPECT_NEAR(ag.durationUs(), overlap + (a - 0.5 * overlap), 1e-3);
}

// A loop of tiny kernels: the host thread, not the GPU, decides the makespan.
const char* kTinyLoop = R"(%HostIrContainer { (T0_g_float[iS0{i0}]) -> (T1_g_float[iS1{i0}]) :
  FOR i from 0 to 100:
    T1_g_float[iS1{i0}]
       = T0_g_float[iS0{i0}]
       + T0_g_float[iS0{i0}];
} // %HostIrContainer
)";

TEST(SimEngine, HostIssueLimitsTinyChunks) {
  sim::Machine m = bareMachine();
  m.gpu.kernelMinUs = 2;
  m.host.atenOpUs = 10;
  auto slow = simulateText(kTinyLoop, m, {{"i0", 1024}});
  const sim::RankStats& s = slow.result.stats.front();
  EXPECT_NEAR(s.hostUs, 1000, kEps);
  EXPECT_NEAR(slow.result.makespanUs, 1000 + 2, kEps);  // the last add starts when it is issued
  EXPECT_NEAR(s.computeUs, 100 * 2, kEps);              // the GPU is idle most of the time
  m.host.atenOpUs = 20;
  auto slower = simulateText(kTinyLoop, m, {{"i0", 1024}});
  EXPECT_NEAR(slower.result.makespanUs, 2000 + 2, kEps);
  // With a fast host, the GPU decides again.
  m.host.atenOpUs = 0.5;
  auto fast = simulateText(kTinyLoop, m, {{"i0", 1024}});
  EXPECT_NEAR(fast.result.makespanUs, 0.5 + 100 * 2, kEps);
}

// A CUDA-graph replay has no host issue: the same loop runs back to back on the GPU, each add
// ready from the start (plus the launch latency) and started when the one before it ends.
TEST(SimEngine, AGraphReplayHasNoHostIssue) {
  sim::Machine m = bareMachine();
  m.gpu.kernelMinUs = 2;
  m.gpu.launchLatencyUs = 1;
  m.host.atenOpUs = 10;
  HostProgram p = parseHostProgram(kTinyLoop, "tiny.hir");
  sim::SimOptions o;
  o.semantics.bindings = {{"i0", 1024}};
  o.graphReplay = true;
  sim::SimResult graph = sim::simulate(p, m, o);
  EXPECT_NEAR(graph.makespanUs, 1 + 100 * 2, kEps);
  EXPECT_NEAR(graph.stats.front().hostUs, 0, kEps);
  EXPECT_NEAR(graph.stats.front().computeUs, 100 * 2, kEps);
  EXPECT_TRUE(std::any_of(graph.notes.begin(), graph.notes.end(),
                          [](const std::string& n) { return n.find("CUDA-graph replay") != std::string::npos; }));
  // Interpreted, the host issues one add every 10 us.
  o.graphReplay = false;
  EXPECT_NEAR(sim::simulate(p, m, o).makespanUs, 1000 + 1 + 2, kEps);
}

// Each rank waits for the communication the other posts only after its own wait.
const char* kWaitCycle = R"(%HostIrContainer { (T0_g_float[iS0{4}] (DeviceMesh{0 1})) -> (T1_g_float[iS1{4}] (DeviceMesh{0 1}), T2_g_float[iS2{4}] (DeviceMesh{0 1})) :
  T1_g_float[iS1{4}] (DeviceMesh{0 1}) = ALLOCATE(mem_type=global, zero_init=false)
  T2_g_float[iS2{4}] (DeviceMesh{0 1}) = ALLOCATE(mem_type=global, zero_init=false)
  IF Manual ( deviceIdx.x == 0 ):
    Communication 1 (type=Allreduce, team=(0 1), input=T0_g_float[iS0{4}] (DeviceMesh{0 1}), output=T1_g_float[iS1{4}] (DeviceMesh{0 1}), backend=NCCL)
    Wait Communication 1
    Communication 2 (type=Allreduce, team=(0 1), input=T0_g_float[iS0{4}] (DeviceMesh{0 1}), output=T2_g_float[iS2{4}] (DeviceMesh{0 1}), backend=UCC)
    Wait Communication 2
  ELSE:
    Communication 2 (type=Allreduce, team=(0 1), input=T0_g_float[iS0{4}] (DeviceMesh{0 1}), output=T2_g_float[iS2{4}] (DeviceMesh{0 1}), backend=UCC)
    Wait Communication 2
    Communication 1 (type=Allreduce, team=(0 1), input=T0_g_float[iS0{4}] (DeviceMesh{0 1}), output=T1_g_float[iS1{4}] (DeviceMesh{0 1}), backend=NCCL)
    Wait Communication 1
} // %HostIrContainer
)";

TEST(SimEngine, ADeadlockIsReportedWithItsCycle) {
  auto run = simulateText(kWaitCycle, bareMachine(), {}, 2);
  const sim::EngineResult& e = run.result.engine;
  ASSERT_TRUE(e.deadlocked);
  EXPECT_TRUE(e.cycle);
  EXPECT_GT(e.unfinished, 0);
  std::string msg = sim::describeDeadlock(run.result);
  EXPECT_NE(msg.find("Allreduce"), std::string::npos) << msg;
  EXPECT_NE(msg.find("Wait"), std::string::npos) << msg;
  EXPECT_NE(msg.find("a cycle"), std::string::npos) << msg;
}

// Rank 0 posts an Allreduce that rank 1 never posts.

TEST(SimEngine, ACollectiveWithoutPartnerIsReportedNotHung) {
  auto run = simulateFile(testing::simDataPath("unmatched_allreduce.hir"), bareMachine(), {}, 2);
  ASSERT_TRUE(run.result.engine.deadlocked);
  EXPECT_FALSE(run.result.engine.cycle);
  std::string msg = sim::describeDeadlock(run.result);
  EXPECT_NE(msg.find("never posts"), std::string::npos) << msg;
  // Rank 1 still finishes its own work.
  EXPECT_GE(run.result.rankStats(1).makespanUs, 0);
}

}  // namespace
}  // namespace braid
