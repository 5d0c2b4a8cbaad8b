// The power cap (sim/power_state.h, Machine::gpu.power; docs/SIM.md "Power state"): the level's
// dynamics against their closed forms, the engine slowing compute once a GPU's level reaches the
// cap, and simulate()'s start after back-to-back runs.
#include <gtest/gtest.h>

#include <cmath>

#include "catalog/workload.h"
#include "passes/lower.h"
#include "sim/engine.h"
#include "sim/power_state.h"
#include "sim/sim_graph.h"
#include "tests/sim/sim_test_util.h"

namespace braid {
namespace {

sim::PowerModel cap(double load, double tauUs, double slowdown) {
  sim::PowerModel m;
  m.capLoad = load;
  m.timeConstantUs = tauUs;
  m.cappedSlowdown = slowdown;
  return m;
}

TEST(PowerState, AFullLoadReachesTheCapAfterTheTimeConstantsLogarithm) {
  sim::PowerState s(cap(0.8, 1000, 1.2), 0);
  s.setLoad(1);
  EXPECT_NEAR(s.usUntilCap(), 1000 * std::log(5.0), 1e-6);  // 1 - e^(-t/tau) = 0.8
  EXPECT_FALSE(s.capped());
  EXPECT_EQ(s.computeFactor(), 1);
  s.advance(s.usUntilCap());
  EXPECT_TRUE(s.capped());
  EXPECT_NEAR(s.level(), 0.8, 1e-9);
  EXPECT_NEAR(s.computeFactor(), 1.2, 1e-12);
  s.advance(1e6);  // held at the cap while the load stays above it
  EXPECT_NEAR(s.level(), 0.8, 1e-12);
}

TEST(PowerState, ALoadAtOrUnderTheCapNeverReachesIt) {
  sim::PowerState s(cap(0.8, 1000, 1.2), 0);
  s.setLoad(0.8);
  EXPECT_TRUE(std::isinf(s.usUntilCap()));
  s.advance(1e7);
  EXPECT_FALSE(s.capped());
  EXPECT_NEAR(s.level(), 0.8, 1e-9);
}

TEST(PowerState, AtTheCapAPartialLoadSlowsLessThanAFullOne) {
  sim::PowerState s(cap(0.8, 1000, 1.2), 0.8);
  double last = 1;
  for (double load : {0.85, 0.9, 0.95, 1.0}) {
    s.setLoad(load);
    ASSERT_TRUE(s.capped());
    EXPECT_GT(s.computeFactor(), last);
    last = s.computeFactor();
  }
  EXPECT_NEAR(last, 1.2, 1e-12);
}

TEST(PowerState, IdleTimeLowersTheLevelExponentially) {
  sim::PowerModel m = cap(0.8, 1000, 1.2);
  EXPECT_NEAR(sim::idleLevel(m, 0.8, 1000), 0.8 / std::exp(1.0), 1e-12);
  EXPECT_EQ(sim::idleLevel(m, 0.8, 0), 0.8);
  // Without a cap there is no level.
  EXPECT_EQ(sim::PowerState(sim::PowerModel{}, 0.7).level(), 0);
}

TEST(PowerState, AGemmLongerThanTheTimeToTheCapRunsItsRestAtTheCapsClocks) {
  sim::PowerModel m = cap(0.8, 1000, 1.25);
  sim::PowerState s(m, 0);
  const double until = 1000 * std::log(5.0);
  EXPECT_NEAR(sim::runFullLoad(s, 5000), until + (5000 - until) * 1.25, 1e-6);
  EXPECT_NEAR(sim::runFullLoad(s, 100), 125, 1e-9);  // starts capped
  sim::PowerState cold(m, 0);
  EXPECT_NEAR(sim::runFullLoad(cold, 100), 100, 1e-12);  // over before the cap
}

// One GPU, one stream: `n` kernels of `us` each, back to back, each with `tiles` CTAs.
sim::SimGraph chain(int n, double us, int64_t tiles, double memoryUs = 0) {
  sim::SimGraph g;
  g.numGpus = 1;
  g.predBegin = {0};
  g.succBegin.assign(static_cast<size_t>(n) + 1, 0);
  for (int i = 0; i < n; ++i) {
    g.kind.push_back(sim::NodeKind::kKernel);
    g.gpu.push_back(0);
    g.stream.push_back(0);
    g.hostReady.push_back(0);
    g.kernel.push_back(i);
    g.rendezvous.push_back(-1);
    if (i > 0) {
      g.preds.push_back(i - 1);
      g.predKind.push_back(sim::DepKind::kStream);
    }
    g.predBegin.push_back(static_cast<uint32_t>(g.preds.size()));
    sim::KernelCost k;
    k.computeUs = us;
    k.memoryUs = memoryUs;
    k.tiles = tiles;
    g.kernels.push_back(k);
  }
  for (int i = 0; i + 1 < n; ++i) g.succs.push_back(i + 1);
  for (int i = 0; i < n; ++i) g.succBegin[static_cast<size_t>(i) + 1] = static_cast<uint32_t>(std::min(i + 1, n - 1));
  g.streams = {{0, TimelineStreamKind::kWorker, "s"}};
  g.hostEnd = {0};
  return g;
}

sim::Machine capped(double load, double tauUs, double slowdown) {
  sim::Machine m = testing::bareMachine();
  m.gpu.power = cap(load, tauUs, slowdown);
  return m;
}

TEST(PowerEngine, BackToBackGemmsSlowOnceTheLevelReachesTheCap) {
  // 40 GEMMs of 1 ms: full clocks for tau ln 5 = 16.09 ms, the rest 1.2x slower.
  sim::SimGraph g = chain(40, 1000, 4 * 132);
  sim::EngineResult plain = sim::runEngine(g, testing::bareMachine());
  EXPECT_NEAR(plain.end.back(), 40000, 1e-6);
  sim::EngineResult r = sim::runEngine(g, capped(0.8, 10000, 1.2));
  const double until = 10000 * std::log(5.0);
  EXPECT_NEAR(r.end.back(), until + (40000 - until) * 1.2, 1e-3);
  EXPECT_NEAR(r.end[0], 1000, 1e-9);  // the first GEMMs at full clocks
  EXPECT_NEAR(r.end[39] - r.start[39], 1200, 1e-6);  // the last at the cap's
  EXPECT_NEAR(r.cappedUs[0], r.end.back() - until, 1e-3);
  EXPECT_NEAR(r.finalPowerLevel[0], 0.8, 1e-9);
}

TEST(PowerEngine, AStartAtTheCapSlowsTheFirstGemmToo) {
  sim::SimGraph g = chain(3, 1000, 4 * 132);
  sim::EngineOptions o;
  o.initialPowerLevel = {0.8};
  sim::EngineResult r = sim::runEngine(g, capped(0.8, 10000, 1.2), o);
  EXPECT_NEAR(r.end.back(), 3600, 1e-6);
}

TEST(PowerEngine, HalfTheSmsOrAMemoryBoundKernelDrawLessThanTheCap) {
  sim::Machine m = capped(0.8, 1000, 1.2);
  // 66 tiles: half of the 132 SMs busy, a load of 0.5.
  sim::EngineResult half = sim::runEngine(chain(40, 1000, 66), m);
  EXPECT_NEAR(half.end.back(), 40000, 1e-6);
  EXPECT_EQ(half.cappedUs[0], 0);
  EXPECT_NEAR(half.finalPowerLevel[0], 0.5, 1e-6);
  // Compute 100 us of a 1000 us kernel bound by memory: load 0.1.
  sim::EngineResult mem = sim::runEngine(chain(40, 100, 0, 1000), m);
  EXPECT_NEAR(mem.end.back(), 40000, 1e-6);
  EXPECT_EQ(mem.cappedUs[0], 0);
}

TEST(PowerEngine, AGemmThatDrawsLessThanTheCapNeverReachesIt) {
  sim::SimGraph g = chain(40, 1000, 4 * 132);
  for (auto& k : g.kernels) k.power = 0.7;  // KernelCost::power: 0.7 of a full load per SM
  sim::EngineResult r = sim::runEngine(g, capped(0.8, 1000, 1.2));
  EXPECT_NEAR(r.end.back(), 40000, 1e-6);
  EXPECT_NEAR(r.finalPowerLevel[0], 0.7, 1e-6);
  EXPECT_EQ(r.cappedUs[0], 0);
}

TEST(PowerEngine, WithoutACapNothingChanges) {
  sim::SimGraph g = chain(40, 1000, 4 * 132);
  sim::EngineOptions o;
  o.initialPowerLevel = {0.9};
  sim::EngineResult r = sim::runEngine(g, testing::bareMachine(), o);
  EXPECT_NEAR(r.end.back(), 40000, 1e-6);
  EXPECT_EQ(r.finalPowerLevel[0], 0);
}

const char* kOneMatmul = testing::kOneMatmulHir;

double makespan(const sim::Machine& m, sim::PowerStart start, sim::SimResult* out = nullptr) {
  HostProgram p = parseHostProgram(kOneMatmul, "test.hir");
  sim::SimOptions o;
  o.semantics.bindings = {{"i0", 8192}, {"i1", 8192}, {"i2", 8192}};
  o.power = start;
  sim::SimResult r = sim::simulate(p, m, o);
  if (out) *out = r;
  return r.makespanUs;
}

TEST(PowerSimulate, BackToBackRunsStartWhereTheRunBeforeLeftThePower) {
  const double full = makespan(testing::bareMachine(), {});
  // tau = 100 us: one run from idle reaches the cap after 161 us; every later run is capped
  // throughout (no gap: the level is still at the cap).
  sim::Machine m = capped(0.8, 100, 1.25);
  const double until = 100 * std::log(5.0);
  EXPECT_NEAR(makespan(m, {}), until + (full - until) * 1.25, 1e-3);
  sim::PowerStart after{sim::PowerStart::Kind::kAfterRuns, 3, 0};
  EXPECT_NEAR(makespan(m, after), full * 1.25, 1e-3);
  sim::SimResult r;
  sim::PowerStart steady{sim::PowerStart::Kind::kSteady, 0, 0};
  EXPECT_NEAR(makespan(m, steady, &r), full * 1.25, 1e-3);
  EXPECT_TRUE(r.power.modelled);
  EXPECT_TRUE(r.power.converged);
  EXPECT_NEAR(r.power.startLevel, 0.8, 1e-6);
  EXPECT_NEAR(r.power.cappedFraction, 1, 1e-6);
  // 10 ms idle between runs (100 time constants) cools each run back to an idle start.
  sim::PowerStart cooled{sim::PowerStart::Kind::kSteady, 0, 10000};
  EXPECT_NEAR(makespan(m, cooled), makespan(m, {}), 1e-3);
}

TEST(PowerSimulate, TheSteadyStateIsWhereManyRunsSettle) {
  // A time constant of 20 runs: a gap of 200 us lets it fall back part of the way each time.
  const double full = makespan(testing::bareMachine(), {});
  sim::Machine m = capped(0.8, 20 * full, 1.2);
  sim::PowerStart steady{sim::PowerStart::Kind::kSteady, 0, 200};
  sim::SimResult s;
  const double settled = makespan(m, steady, &s);
  sim::SimResult many;
  makespan(m, {sim::PowerStart::Kind::kAfterRuns, 2000, 200}, &many);
  EXPECT_NEAR(s.power.startLevel, many.power.startLevel, 1e-5);
  EXPECT_LT(s.power.runsSimulated, 60);  // the secant steps, not thousands of runs
  EXPECT_GT(settled, makespan(m, {})) << "start level " << s.power.startLevel;
}

TEST(PowerSimulate, AMachineWithoutACapSaysSoWhenAskedForAStart) {
  sim::SimResult r;
  makespan(testing::bareMachine(), {sim::PowerStart::Kind::kSteady, 0, 0}, &r);
  EXPECT_FALSE(r.power.modelled);
  bool said = false;
  for (const std::string& n : r.notes) said = said || n.find("models no power cap") != std::string::npos;
  EXPECT_TRUE(said);
}

}  // namespace
}  // namespace braid

namespace braid {
namespace {

// matmul_rs on one GPU: chunked GEMMs and a team of one's copies, so its load dips below a full
// one each run. Whatever the cap, the steady state is a fixed point found in a few dozen runs, and
// it slows the program more the lower the cap.
TEST(PowerSimulate, TheSteadyStateOfAChunkedProgramSettlesForEveryCap) {
  WorkloadParams p;
  p.m = 16384, p.k = 4096, p.n = 4096, p.devices = 1, p.dtype = DataType::kBFloat16;
  Workload w = makeWorkload("matmul_rs", p);
  HostProgram prog = lower(*w.fusion, w.params.lowering, w.params.devices);
  sim::SimOptions o;
  o.graphReplay = true;
  o.semantics.numberOfStreams = 4;
  sim::Machine m = capped(0.99, 16000, 1.18);
  m.contention.smSharing = true;
  m.contention.kernelsWaitForDispatch = true;
  m.contention.commWaitsForDispatch = true;
  o.power = {sim::PowerStart::Kind::kSteady, 0, 0};
  double last = 0;
  for (double cap : {0.95, 0.9, 0.88, 0.86, 0.8, 0.7}) {
    m.gpu.power.capLoad = cap;
    const sim::SimResult r = sim::simulate(prog, m, o);
    EXPECT_TRUE(r.power.converged) << cap;
    EXPECT_LT(r.power.runsSimulated, 60) << cap;
    EXPECT_GE(r.makespanUs, last - 1e-6) << cap;
    // Its GEMMs keep the SMs busy nearly all the time: under a cap well below that, most of each
    // run is at the cap's clocks (the level is read where the program ends, not at an event left
    // in the queue after it, which idled the GPUs for nothing and kept them under the cap).
    if (cap <= 0.8) EXPECT_GT(r.power.cappedFraction, 0.5) << cap;
    last = r.makespanUs;
  }
}

}  // namespace
}  // namespace braid
