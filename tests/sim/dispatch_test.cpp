// CTA dispatch order (contention.comm_waits_for_dispatch, docs/SIM.md "Contention"): a
// communication kernel that starts behind a multi-wave GEMM on its GPU gets SMs only when the
// GEMM's last wave is out. Hand-built schedules with hand-computed times.
#include <gtest/gtest.h>

#include "sim/calibrate.h"
#include "sim/engine.h"
#include "sim/overlap_model.h"
#include "sim/sim_graph.h"
#include "tests/sim/sim_test_util.h"

namespace braid {
namespace {

// One GPU: a GEMM of `tiles` CTAs that takes `gemmUs` alone, ready at 0, and a one-member
// collective of `commUs`, ready at `commReady`, whose kernel holds `held` SMs.
struct Pair {
  sim::SimGraph g;
  Pair(int64_t tiles, double gemmUs, double commUs, double commReady, int64_t held) {
    g.numGpus = 1;
    g.kind = {sim::NodeKind::kKernel, sim::NodeKind::kComm};
    g.gpu = {0, 0};
    g.stream = {0, 1};
    g.hostReady = {0, commReady};
    g.kernel = {0, -1};
    g.rendezvous = {-1, 0};
    g.predBegin = {0, 0, 0};
    g.succBegin = {0, 0, 0};
    sim::KernelCost k;
    k.computeUs = gemmUs;
    k.tiles = tiles;
    g.kernels = {k};
    sim::Rendezvous r;
    r.members = {1};
    r.cost.us = commUs;
    r.smsHeld = held;
    g.rendezvousSets = {r};
    g.streams = {{0, TimelineStreamKind::kWorker, "gemm"}, {0, TimelineStreamKind::kCommunicator, "comm"}};
    g.hostEnd = {0};
  }
};

sim::Machine machine(bool dispatch) {
  sim::Machine m = testing::bareMachine();
  m.contention.smSharing = true;
  m.contention.smSharingWaves = false;
  m.contention.commWaitsForDispatch = dispatch;
  return m;
}

TEST(SimDispatch, ACommunicationBehindAMultiWaveGemmWaitsForItsLastWave) {
  // 4 x 132 tiles: 4 waves of 100 us on the H200's 132 SMs; the last is out at 300 us.
  Pair p(4 * 132, 400, 100, 50, 32);
  sim::EngineResult on = sim::runEngine(p.g, machine(true));
  EXPECT_NEAR(on.start[1], 50, 1e-6);  // it is on its stream at 50 (as a CUDA event would say)...
  EXPECT_NEAR(on.end[1], 300 + 100, 1e-6);  // ...but runs only from the last wave on
  EXPECT_GT(on.end[0], 400);  // its last wave lost the SMs (next test)
  sim::EngineResult off = sim::runEngine(p.g, machine(false));
  EXPECT_NEAR(off.end[1], 150, 1e-6);
}

TEST(SimDispatch, OnceItHasSmsTheGemmsLastWaveSharesTheRest) {
  // Holding 32 SMs from 300 to 400 us, the GEMM's last quarter runs on 100 of its 132 SMs
  // (1.32x slower) and gets all of them back for what is left after 400.
  Pair p(4 * 132, 400, 100, 50, 32);
  sim::EngineResult r = sim::runEngine(p.g, machine(true));
  EXPECT_NEAR(r.end[1], 400, 1e-6);
  double done = 100 / (400 * 1.32);  // of the GEMM's work, from 300 to 400
  EXPECT_NEAR(r.end[0], 400 + (0.25 - done) * 400, 1e-6);
}

TEST(SimDispatch, AOneWaveGemmAndAGemmStartedAfterTheCommunicationDoNotBlockIt) {
  Pair one(100, 400, 100, 50, 32);  // 100 tiles: one wave, nothing left to dispatch
  EXPECT_NEAR(sim::runEngine(one.g, machine(true)).end[1], 150, 1e-6);
  Pair later(4 * 132, 400, 100, 0, 32);
  later.g.hostReady = {50, 0};  // the communication is first on the GPU
  EXPECT_NEAR(sim::runEngine(later.g, machine(true)).end[1], 100, 1e-6);
}

TEST(SimDispatch, CopyEngineTransfersHoldNoSmsAndNeverQueue) {
  Pair p(4 * 132, 400, 100, 50, 0);  // what buildSimGraph gives with copyEngines
  sim::EngineResult r = sim::runEngine(p.g, machine(true));
  EXPECT_NEAR(r.end[1], 150, 1e-6);
  EXPECT_NEAR(r.end[0], 400, 1e-6);
}

TEST(SimDispatch, TheOverlapMicrobenchmarkSeesCollectivesPacedByTheGemms) {
  // Back to back, each collective waits for the running GEMM's last wave: one per GEMM period
  // when the collective is shorter than a GEMM (the two-H100 measurement: 254 us alone, 786 us
  // beside 780 us GEMMs).
  sim::Machine m = machine(true);
  m.nccl.channels = 16;
  m.nccl.smsPerChannel = 1;
  sim::GemmShape g{8192, 8192, 8192, 1, DataType::kBFloat16};
  sim::CollectiveMeasurement c{CommunicationType::kAllreduce, 2, 1, 64e6, 0};
  sim::OverlapPrediction p = sim::simulateOverlap(m, g, c);
  ASSERT_LT(p.commAloneUs, p.gemmAloneUs);
  EXPECT_NEAR(p.commBesideUs, p.gemmBesideUs, 0.15 * p.gemmBesideUs);
  EXPECT_GT(p.gemmBesideUs, p.gemmAloneUs);  // the NCCL kernel's SMs, part of each period
  m.contention.commWaitsForDispatch = false;
  EXPECT_NEAR(sim::simulateOverlap(m, g, c).commBesideUs, p.commAloneUs, 1e-6);
}

// One GPU's nodes of `kinds`, each on its own worker stream, issued at `ready`, the kernels among
// them costing `kernels` in order; no dependencies (a test adds its own).
sim::SimGraph oneGpu(const std::vector<sim::NodeKind>& kinds, const std::vector<double>& ready,
                     const std::vector<sim::KernelCost>& kernels) {
  sim::SimGraph g;
  g.numGpus = 1;
  g.kind = kinds;
  g.hostReady = ready;
  const size_t n = kinds.size();
  g.gpu.assign(n, 0);
  g.rendezvous.assign(n, -1);
  g.predBegin.assign(n + 1, 0);
  g.succBegin.assign(n + 1, 0);
  for (size_t i = 0, k = 0; i < n; ++i) {
    g.stream.push_back(static_cast<int32_t>(i));
    g.streams.push_back({0, TimelineStreamKind::kWorker, std::string(1, static_cast<char>('a' + i))});
    g.kernel.push_back(kinds[i] == sim::NodeKind::kKernel ? static_cast<int32_t>(k++) : -1);
  }
  g.kernels = kernels;
  g.hostEnd = {0};
  return g;
}

// A GEMM of 4 waves of 100 us on the H200's 132 SMs: the last is out at 300 us.
sim::KernelCost fourWaveGemm() {
  sim::KernelCost big;
  big.computeUs = 400;
  big.tiles = 4 * 132;
  return big;
}

// contention.kernels_wait_for_dispatch: a kernel on another stream, started while a multi-wave
// GEMM still dispatches, gets SMs at that GEMM's last wave (a second GEMM, and a small kernel of
// no tiles alike); off, they share the SMs at once. In launch order: a third kernel waits for the
// second.
TEST(SimDispatch, AKernelBehindAMultiWaveGemmWaitsForItsLastWaveWhenAsked) {
  sim::KernelCost small;
  small.computeUs = 10;  // no tiles: never holds the queue itself
  const sim::NodeKind kernel = sim::NodeKind::kKernel;
  sim::SimGraph g = oneGpu({kernel, kernel, kernel}, {0, 50, 60}, {fourWaveGemm(), fourWaveGemm(), small});
  sim::Machine m = machine(false);
  m.contention.kernelsWaitForDispatch = true;
  sim::EngineResult on = sim::runEngine(g, m);
  EXPECT_NEAR(on.start[1], 50, 1e-6);  // on its stream at 50, as its event would say
  EXPECT_GT(on.end[1], 300 + 400 - 1e-6);  // no progress before 300: it ends past 700
  EXPECT_GT(on.end[2], 600);  // behind the second GEMM's dispatch too (its last wave: 600 at the soonest)
  m.contention.kernelsWaitForDispatch = false;
  sim::EngineResult off = sim::runEngine(g, m);
  EXPECT_GT(off.end[0], on.end[0] + 100);  // the first GEMM shared its SMs from 50 on
  EXPECT_LT(off.end[2], 300);
}

// Two multi-wave GEMMs that start at the same instant on two streams (a graph replay's chunks):
// the one the program launched first dispatches first, whichever the simulation reaches first.
// Here the first (event 1) waits for a marker (event 0) that ends at that instant too, so the
// engine reaches the second GEMM (event 2) before it.
TEST(SimDispatch, KernelsStartingAtOneInstantDispatchInLaunchOrder) {
  sim::SimGraph g = oneGpu({sim::NodeKind::kMarker, sim::NodeKind::kKernel, sim::NodeKind::kKernel}, {0, 0, 0},
                           {fourWaveGemm(), fourWaveGemm()});
  g.preds = {0};  // event 1 follows the marker
  g.predKind = {sim::DepKind::kStream};
  g.predBegin = {0, 0, 1, 1};
  g.succs = {1};
  g.succBegin = {0, 1, 1, 1};
  sim::Machine m = machine(false);
  m.contention.kernelsWaitForDispatch = true;
  sim::EngineResult r = sim::runEngine(g, m);
  EXPECT_NEAR(r.start[1], 0, 1e-6);
  EXPECT_NEAR(r.start[2], 0, 1e-6);
  EXPECT_LT(r.end[1], r.end[2]);  // the first launched runs first...
  EXPECT_GT(r.end[2], 300 + 400 - 1e-6);  // ...and the second gets SMs only at its last wave
}

}  // namespace
}  // namespace braid
