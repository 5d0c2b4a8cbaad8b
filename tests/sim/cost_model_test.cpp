// Cost models against numbers computed by hand or published: NCCL's tuning model (the worked
// example of ../shared/reference/simulators.md, section 2.3), roofline and wave quantization.
#include <gtest/gtest.h>

#include "sim/cost_model.h"
#include "tests/sim/sim_test_util.h"

namespace braid {
namespace {

// NCCL's model alone: ring only, bus bandwidth 370 GB/s, no size efficiency, no call overhead.
sim::Machine ncclOnly() {
  sim::Machine m = testing::bareMachine();
  m.nccl.algorithms = {sim::NcclAlgorithm::kRing};
  m.nccl.intraNodeBusGBps = 370;
  m.nccl.bandwidthEfficiency = {{{1.0, 1.0}}};
  return m;
}

sim::CommCost forced(sim::Machine m, sim::NcclProtocol p, CommunicationType t, double bytes) {
  m.nccl.protocols = {p};
  return sim::collectiveCost(m, t, 8, 1, bytes);
}

TEST(SimCostModel, NcclRingLatencyAndBandwidthOfTheWorkedExample) {
  sim::Machine m = ncclOnly();
  using P = sim::NcclProtocol;
  const auto ar = CommunicationType::kAllreduce;
  const auto ag = CommunicationType::kAllgather;
  // AllReduce, 8 ranks: latency / algorithm bandwidth per protocol.
  EXPECT_NEAR(forced(m, P::kLL, ar, 1).latencyUs, 15.0, 0.05);
  EXPECT_NEAR(forced(m, P::kLL, ar, 1).bandwidthGBps, 80.6, 0.05);
  EXPECT_NEAR(forced(m, P::kLL128, ar, 1).latencyUs, 40.6, 0.05);
  EXPECT_NEAR(forced(m, P::kLL128, ar, 1).bandwidthGBps, 194.5, 0.05);
  EXPECT_NEAR(forced(m, P::kSimple, ar, 1).latencyUs, 56.0, 0.05);
  EXPECT_NEAR(forced(m, P::kSimple, ar, 1).bandwidthGBps, 211.4, 0.05);
  // AllGather.
  EXPECT_NEAR(forced(m, P::kLL, ag, 1).latencyUs, 10.8, 0.05);
  EXPECT_NEAR(forced(m, P::kLL, ag, 1).bandwidthGBps, 161.1, 0.1);
  EXPECT_NEAR(forced(m, P::kLL128, ag, 1).latencyUs, 27.3, 0.05);
  EXPECT_NEAR(forced(m, P::kLL128, ag, 1).bandwidthGBps, 389.0, 0.1);
  EXPECT_NEAR(forced(m, P::kSimple, ag, 1).latencyUs, 32.2, 0.05);
  EXPECT_NEAR(forced(m, P::kSimple, ag, 1).bandwidthGBps, 422.9, 0.1);
}

TEST(SimCostModel, AKindsBandwidthFactorScalesOnlyItsBandwidth) {
  sim::Machine m = ncclOnly();
  using P = sim::NcclProtocol;
  const auto ag = CommunicationType::kAllgather;
  sim::CommCost before = forced(m, P::kSimple, ag, 1e9);
  m.nccl.kindBandwidthFactor[static_cast<size_t>(ag)] = 0.5;
  sim::CommCost after = forced(m, P::kSimple, ag, 1e9);
  EXPECT_NEAR(after.bandwidthGBps, 422.9 / 2, 0.1);  // the worked example's Simple Allgather, halved
  EXPECT_NEAR(after.latencyUs, before.latencyUs, 1e-9);
  EXPECT_NEAR(after.us - after.latencyUs, 2 * (before.us - before.latencyUs), 1e-6);
  // Another kind is untouched.
  EXPECT_NEAR(forced(m, P::kSimple, CommunicationType::kAllreduce, 1).bandwidthGBps, 211.4, 0.05);
}

TEST(SimCostModel, NcclPicksTheFastestProtocolLikeTheWorkedExample) {
  sim::Machine m = ncclOnly();
  const auto ar = CommunicationType::kAllreduce;
  auto pick = [&](double bytes) { return sim::collectiveCost(m, ar, 8, 1, bytes); };
  EXPECT_EQ(pick(64 * 1024).protocol, sim::NcclProtocol::kLL);
  EXPECT_NEAR(pick(64 * 1024).us, 15.8, 0.05);
  EXPECT_EQ(pick(1 << 20).protocol, sim::NcclProtocol::kLL);
  EXPECT_NEAR(pick(1 << 20).us, 28.0, 0.05);
  EXPECT_EQ(pick(16 << 20).protocol, sim::NcclProtocol::kLL128);
  EXPECT_NEAR(pick(16 << 20).us, 126.9, 0.1);
  EXPECT_EQ(pick(256.0 * (1 << 20)).protocol, sim::NcclProtocol::kSimple);
  EXPECT_NEAR(pick(256.0 * (1 << 20)).us, 1325.7, 0.5);
}

TEST(SimCostModel, CrossingNodesUsesTheNicsAndTheNetworkLatencies) {
  sim::Machine m = ncclOnly();
  double bytes = 256.0 * (1 << 20);
  sim::CommCost intra = sim::collectiveCost(m, CommunicationType::kAllgather, 16, 1, bytes);
  sim::CommCost inter = sim::collectiveCost(m, CommunicationType::kAllgather, 16, 2, bytes);
  EXPECT_FALSE(intra.interNode);
  EXPECT_TRUE(inter.interNode);
  // The ring runs at the slower NIC rate: 8 NICs of 48.5 GB/s for 8 GPUs, 48.5 GB/s per GPU.
  EXPECT_NEAR(inter.bandwidthGBps, 48.5 * 16 / 15, 1e-6);
  EXPECT_GT(inter.us, 5 * intra.us);
}

TEST(SimCostModel, TreeAllreduceWinsAtScaleWhereTheRingsLatencyGrows) {
  sim::Machine m = testing::bareMachine();
  sim::CommCost c = sim::collectiveCost(m, CommunicationType::kAllreduce, 8192, 1024, 1 << 20);
  EXPECT_EQ(c.algorithm, sim::NcclAlgorithm::kTree);
  EXPECT_EQ(sim::collectiveCost(m, CommunicationType::kAllgather, 8192, 1024, 1 << 20).algorithm,
            sim::NcclAlgorithm::kRing);  // tree is for Allreduce only
}

TEST(SimCostModel, OneRankOnlyPaysTheCall) {
  sim::Machine m = testing::bareMachine();
  m.nccl.callOverheadUs = 9;
  EXPECT_DOUBLE_EQ(sim::collectiveCost(m, CommunicationType::kAllreduce, 1, 1, 1 << 30).us, 9);
}

TEST(SimCostModel, P2PIsLatencyPlusBytesOverTheLink) {
  sim::Machine m = testing::bareMachine();
  m.nccl.bandwidthEfficiency = {{{1.0, 0.8}}};
  sim::CommCost c = sim::p2pCost(m, 1e9, false);
  EXPECT_NEAR(c.us, m.nvlink.latencyUs + 1e9 / (m.nvlink.bandwidthGBps * 0.8 * 1e3), 1e-9);
}

TEST(SimCostModel, GemmsRunInWholeWavesOfTiles) {
  sim::Machine m = testing::bareMachine();
  m.gpu.gemmTiles = {{128, 256, 1.0}};
  m.gpu.matmulEfficiency = {{{1.0, 0.8}}};
  auto gemm = [&](int64_t tiles) {
    int64_t rows = 128 * tiles, cols = 256, k = 4096;
    return sim::gemmCost(m, 2.0 * rows * cols * k, 0, DataType::kBFloat16, 1, rows, cols);
  };
  sim::KernelCost full = gemm(132), one_more = gemm(133);
  EXPECT_EQ(full.tiles, 132);
  EXPECT_EQ(one_more.tiles, 133);
  // One more tile than SMs: a second, nearly empty wave.
  EXPECT_NEAR(one_more.computeUs, 2 * full.computeUs, 1e-9);
  double peak = 989.4e6;  // flops per microsecond
  EXPECT_NEAR(full.computeUs, 2.0 * 128 * 132 * 256 * 4096 / (peak * 0.8), 1e-9);
  // A GEMM with a tenth of the tiles uses a tenth of the SMs for the same time per wave.
  sim::KernelCost small = gemm(13);
  EXPECT_NEAR(small.computeUs, full.computeUs, 1e-9);
}

// Fractional waves (gpu.gemm_waves): the work is spread over every SM, so a partly filled last
// wave costs its share only, and the time is the latency plus the flops at the curve's rate.
TEST(SimCostModel, FractionalWavesFollowTheFlops) {
  sim::Machine m = testing::bareMachine();
  m.gpu.gemmTiles = {{128, 256, 1.0}, {64, 64, 0.6}};
  m.gpu.matmulEfficiency = {{{1.0, 0.8}}};
  m.gpu.gemmWaves = sim::GemmWaves::kFractional;
  m.gpu.gemmLatencyUs = 7;
  auto gemm = [&](int64_t tiles) {
    int64_t rows = 128 * tiles, cols = 256, k = 4096;
    return sim::gemmCost(m, 2.0 * rows * cols * k, 0, DataType::kBFloat16, 1, rows, cols);
  };
  double peak = 989.4e6;  // flops per microsecond
  for (int64_t tiles : {132, 264}) {  // full waves: the big tile
    sim::KernelCost c = gemm(tiles);
    EXPECT_NEAR(c.computeUs, 7 + 2.0 * 128 * tiles * 256 * 4096 / (peak * 0.8), 1e-9) << tiles;
    EXPECT_EQ(c.tiles, tiles);
  }
  // 13 big tiles would leave 119 SMs idle in whole waves: the 64x64 tile is cuBLAS's pick (its
  // count is the SMs the GEMM holds beside other kernels), and its efficiency sets the rate.
  sim::KernelCost small = gemm(13);
  EXPECT_EQ(small.tileM, 64);
  EXPECT_EQ(small.tiles, 26 * 4);
  EXPECT_NEAR(small.computeUs, 7 + 2.0 * 128 * 13 * 256 * 4096 / (peak * 0.8 * 0.6), 1e-9);
  // The latency is added in whole waves too (one tile: no smaller one to fill the last wave).
  m.gpu.gemmWaves = sim::GemmWaves::kWhole;
  m.gpu.gemmTiles = {{128, 256, 1.0}};
  EXPECT_NEAR(gemm(133).computeUs, 7 + 2 * (gemm(132).computeUs - 7), 1e-9);
}

TEST(SimCostModel, TheFastestTileWins) {
  sim::Machine m = testing::bareMachine();
  // 256 x 256: 2 tiles of 128x256 (2 of 132 SMs) or 16 of 64x64; the small tiles fill more SMs.
  sim::KernelCost c = sim::gemmCost(m, 2.0 * 256 * 256 * 65536, 0, DataType::kBFloat16, 1, 256, 256);
  EXPECT_EQ(c.tileM, 64);
  EXPECT_EQ(c.tileN, 64);
}

TEST(SimCostModel, CopiesAreBoundByHbmBandwidth) {
  sim::Machine m = testing::bareMachine();
  sim::KernelCost c = sim::copyCost(m, 2e9);
  EXPECT_NEAR(c.totalUs(), 2e9 / (4800e3 * m.gpu.memoryEfficiency.at(2e9)), 1e-9);
  EXPECT_DOUBLE_EQ(c.computeUs, 0);
}

TEST(SimCostModel, SmSlowdownProportionalOrInWaves) {
  sim::Machine m = testing::bareMachine();  // 132 SMs
  EXPECT_DOUBLE_EQ(sim::smSlowdown(m, 0, 66, false), 2.0);
  EXPECT_DOUBLE_EQ(sim::smSlowdown(m, 2048, 108, false), 132.0 / 108.0);
  EXPECT_DOUBLE_EQ(sim::smSlowdown(m, 2048, 108, true), 19.0 / 16.0);
  EXPECT_DOUBLE_EQ(sim::smSlowdown(m, 132, 108, true), 2.0);  // the tail wave
  EXPECT_DOUBLE_EQ(sim::smSlowdown(m, 40, 108, true), 1.0);   // it never needed more
  EXPECT_DOUBLE_EQ(sim::smSlowdown(m, 40, 20, false), 2.0);
}

// A GEMM whose shape the machine measured takes its measured time; another shape of the same flops
// (or the same m, n with another k) takes the curve's.
TEST(SimCostModel, AMeasuredGemmShapeTakesItsMeasuredTime) {
  sim::Machine m = sim::loadMachine("h200-datasheet");
  const double f = 2.0 * 16384 * 4096 * 4096;
  double curve = sim::gemmCost(m, f, 0, DataType::kBFloat16, 1, 16384, 4096).totalUs();
  m.gpu.measuredGemms = {{{16384, 4096, 4096, 1, DataType::kBFloat16}, 776}};
  EXPECT_DOUBLE_EQ(sim::gemmCost(m, f, 0, DataType::kBFloat16, 1, 16384, 4096).totalUs(), 776);
  EXPECT_DOUBLE_EQ(sim::gemmCost(m, f, 0, DataType::kBFloat16, 1, 4096, 16384).totalUs(), curve);  // n x m
  EXPECT_NE(sim::gemmCost(m, f / 2, 0, DataType::kBFloat16, 1, 16384, 4096).totalUs(), 776);       // k = 2048
  EXPECT_NE(sim::gemmCost(m, f, 0, DataType::kHalf, 1, 16384, 4096).totalUs(), 776);               // another dtype
  EXPECT_GT(sim::gemmCost(m, f, 0, DataType::kBFloat16, 1, 16384, 4096).tiles, 0);  // still fills SMs by tiles
}

// The copy engines as braid's executor runs them: pulls one after the other at the transport's
// rate, then for a reduction the local sum's traffic at its own rate.
TEST(SimCostModel, CopyEnginesPullThenSumLocally) {
  sim::Machine m = testing::bareMachine();
  m.copyEngines = {100, 10, 1000};  // GB/s, us, GB/s: 100 bytes/ns pulled, 1000 bytes/ns summed
  const double s = 1e6;             // 1 MB
  using T = CommunicationType;
  // Allgather on 4 ranks: 3/4 of S pulled.
  EXPECT_DOUBLE_EQ(sim::copyEngineCollectiveCost(m, T::kAllgather, 4, s).us, 10 + 0.75e6 / 100e3);
  // ReduceScatter on 4: rows of S/4, 3 of them pulled, (4 + 3) rows of traffic summed.
  EXPECT_DOUBLE_EQ(sim::copyEngineCollectiveCost(m, T::kReduceScatter, 4, s).us, 10 + 0.75e6 / 100e3 + 7 * 0.25e6 / 1e6);
  // On 2: one row pulled, one elementwise kernel (3 rows).
  EXPECT_DOUBLE_EQ(sim::copyEngineCollectiveCost(m, T::kReduceScatter, 2, s).us, 10 + 0.5e6 / 100e3 + 3 * 0.5e6 / 1e6);
  // Allreduce on 2: two rounds (two latencies), the peer's half pulled in each, 3 half rows summed.
  sim::CommCost ar = sim::copyEngineCollectiveCost(m, T::kAllreduce, 2, s);
  EXPECT_DOUBLE_EQ(ar.us, 2 * 10 + 1e6 / 100e3 + 3 * 0.5e6 / 1e6);
  EXPECT_DOUBLE_EQ(ar.linkBytes, s);
  EXPECT_DOUBLE_EQ(ar.kernelUs, 3 * 0.5e6 / 1e6);
  // On 4: 2 x 3/4 of S pulled, the quarter summed (4 + 3 rows).
  EXPECT_DOUBLE_EQ(sim::copyEngineCollectiveCost(m, T::kAllreduce, 4, s).us, 2 * 10 + 1.5e6 / 100e3 + 7 * 0.25e6 / 1e6);
  // Reduce on 2 (the root): the peer's whole buffer pulled and combined with its own.
  EXPECT_DOUBLE_EQ(sim::copyEngineCollectiveCost(m, T::kReduce, 2, s).us, 10 + 1e6 / 100e3 + 3 * 1e6 / 1e6);
  EXPECT_DOUBLE_EQ(sim::copyEngineCollectiveCost(m, T::kAllreduce, 1, s).us, 0);  // nothing to move
  EXPECT_DOUBLE_EQ(sim::copyEngineP2PCost(m, s).us, 10 + 1e6 / 100e3);
  EXPECT_DOUBLE_EQ(sim::copyEngineP2PCost(m, s).linkBytes, s);
}

}  // namespace
}  // namespace braid
