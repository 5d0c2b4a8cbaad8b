// The host after idle (Machine::host.afterIdle; docs/SIM.md "After idle"): the curve, the machine
// file's fields, simulate() starting the host of a run that follows a gap later (never of one
// without; a graph replay by its own curve), and calibrate's benchmark and fit.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ir/error.h"
#include "sim/after_idle_fit.h"
#include "sim/calibrate.h"
#include "sim/machine.h"
#include "sim/measure_plan.h"
#include "sim/measurements.h"
#include "sim/median.h"
#include "sim/simulate.h"
#include "tests/sim/sim_test_util.h"
#include "tests/support/error_of.h"

namespace braid {
namespace {

sim::AfterIdle curve() {
  sim::AfterIdle c;
  c.points = {{1000, 40}, {10000, 160}, {20000, 220}};  // (idle us, delay us)
  return c;
}

TEST(AfterIdle, TheDelayIsLinearFromNoIdleThroughThePointsAndFlatBeyond) {
  const sim::AfterIdle c = curve();
  EXPECT_EQ(c.delayUs(0), 0);
  EXPECT_NEAR(c.delayUs(500), 20, 1e-12);     // from (0, 0) to the first point
  EXPECT_NEAR(c.delayUs(5500), 100, 1e-12);   // halfway between 40 and 160
  EXPECT_NEAR(c.delayUs(20000), 220, 1e-12);
  EXPECT_NEAR(c.delayUs(1e9), 220, 1e-12);    // a host idle for long: the last point's
  EXPECT_EQ(sim::AfterIdle{}.delayUs(1e6), 0);  // no curve: no delay
}

std::string withAfterIdle(const std::string& field) {
  nlohmann::json j = nlohmann::json::parse(sim::machineToJson(testing::bareMachine()));
  j["host"]["after_idle"] = nlohmann::json::parse(field);
  return j.dump();
}

TEST(AfterIdle, TheMachineFileCarriesItAndRefusesABadCurveWithItsPlace) {
  sim::Machine m = testing::bareMachine();
  m.host.afterIdle = curve();
  m.host.afterIdleGraph.points = {{20000, 25}};
  const sim::Machine back = sim::machineFromJson(sim::machineToJson(m), "m.json");
  EXPECT_EQ(back.host.afterIdle, m.host.afterIdle);  // milliseconds in the file, microseconds inside
  EXPECT_EQ(back.host.afterIdleGraph, m.host.afterIdleGraph);
  EXPECT_EQ(sim::machineToJson(testing::bareMachine()).find("after_idle"), std::string::npos);
  struct Bad {
    const char* field;
    const char* says;
  };
  for (const Bad& b : {Bad{"[]", "at least one"}, Bad{"[[1, 15], [1, 20]]", "idle times must increase"},
                       Bad{"[[0, 2]]", "idle time must be positive"}, Bad{"[[1, -0.5]]", "in [0, 1e9]"},
                       Bad{"[[0.5, 1e308]]", "in [0, 1e9]"}, Bad{"[[1e307, 5]]", "at most 1e9"},
                       Bad{"[[1]]", "expected [idle ms, delay us]"}, Bad{"{}", "host.after_idle"}}) {
    try {
      sim::machineFromJson(withAfterIdle(b.field), "m.json");
      ADD_FAILURE() << b.field << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(b.says), std::string::npos) << b.field << ": " << e.what();
      EXPECT_NE(std::string(e.what()).find("m.json"), std::string::npos) << e.what();
    }
  }
}

double run(const sim::Machine& m, sim::PowerStart start, sim::SimResult* out = nullptr, bool graph = false) {
  HostProgram p = parseHostProgram(testing::kOneMatmulHir, "test.hir");
  sim::SimOptions o;
  o.graphReplay = graph;
  o.semantics.bindings = {{"i0", 4096}, {"i1", 4096}, {"i2", 4096}};
  o.power = start;
  sim::SimResult r = sim::simulate(p, m, o);
  if (out) *out = r;
  return r.makespanUs;
}

// When the one GEMM of the program starts: everything before it is the host's (and the launch).
double gemmStart(const sim::SimResult& r) {
  double t = r.makespanUs;
  for (size_t e = 0; e < r.sim.numEvents(); ++e)
    if (r.sim.kind[e] == sim::NodeKind::kKernel) t = std::min(t, r.engine.start[e]);
  return t;
}

TEST(AfterIdle, ALaunchedRunAfterAGapIsIssuedLaterByTheCurvesDelayAndSaysSo) {
  sim::Machine m = testing::bareMachine();
  m.host.kernelLaunchUs = 5;
  m.host.atenOpUs = 8;
  m.gpu.launchLatencyUs = 4;
  sim::SimResult a;
  const double awake = run(m, {}, &a);
  const double issued = gemmStart(a);
  ASSERT_GT(issued, 0);
  m.host.afterIdle = curve();
  EXPECT_NEAR(run(m, {}), awake, 1e-9);  // idle: no gap, the host awake
  sim::SimResult r;
  const double after = run(m, {sim::PowerStart::Kind::kAfterRuns, 0, 10000}, &r);
  EXPECT_NEAR(r.power.hostDelayUs, 160, 1e-12);
  EXPECT_NEAR(gemmStart(r), issued + 160, 1e-6);  // the host starts 160 us late: so does the GEMM
  EXPECT_NEAR(after, awake + 160, 1e-6);
  bool said = false;
  for (const std::string& n : r.notes) said = said || n.find("after idle: the run follows 10 ms idle") != std::string::npos;
  EXPECT_TRUE(said);
  // Without a power cap the steady state is the run after the gap too; back to back, awake.
  EXPECT_NEAR(run(m, {sim::PowerStart::Kind::kSteady, 0, 10000}), after, 1e-9);
  EXPECT_NEAR(run(m, {sim::PowerStart::Kind::kAfterRuns, 5, 0}), awake, 1e-9);
  // A graph replay takes its own curve; without one it starts at once and says it is not modelled.
  sim::SimResult ga, g;
  run(m, {}, &ga, true);
  run(m, {sim::PowerStart::Kind::kAfterRuns, 0, 20000}, &g, true);
  EXPECT_NEAR(gemmStart(g), gemmStart(ga), 1e-9);
  said = false;
  for (const std::string& n : g.notes) said = said || n.find("a graph replay's start after idle is not modelled") != std::string::npos;
  EXPECT_TRUE(said);
  m.host.afterIdleGraph.points = {{20000, 25}};
  run(m, {sim::PowerStart::Kind::kAfterRuns, 0, 20000}, &g, true);
  EXPECT_NEAR(g.power.hostDelayUs, 25, 1e-12);
  EXPECT_NEAR(gemmStart(g), gemmStart(ga) + 25, 1e-9);
}

// calibrate's plan for the after-idle part (CUDA: streams) issues the launches at every idle time
// and back to back; measurements made by a machine with a known curve give that curve back.
TEST(AfterIdleFit, CalibrateRecoversAKnownCurveFromItsPlan) {
  sim::Machine truth = sim::loadMachine("h200");
  truth.host.afterIdle.points = {{2000, 90}, {20000, 240}};
  truth.host.afterIdleGraph.points = {{2000, 8}, {20000, 24}};
  sim::MeasurePlanOptions o;
  o.world = 1;
  o.ranksPerNode = 1;
  o.streams = true;
  o.parts = sim::parseMeasureParts("after_idle");
  const sim::Measurements plan = sim::planMeasurements(sim::loadMachine("h200"), o);
  ASSERT_GE(plan.afterIdle.size(), 8u);
  EXPECT_EQ(plan.afterIdle.front().idleMs, 0);
  EXPECT_FALSE(plan.afterIdle.front().graph);
  EXPECT_TRUE(plan.afterIdle.back().graph);
  const sim::Measurements m = sim::predictMeasurements(truth, plan);
  const sim::Measurements back = sim::measurementsFromJson(sim::measurementsToJson(m), "m.json");
  ASSERT_EQ(back.afterIdle.size(), plan.afterIdle.size());
  EXPECT_EQ(back.afterIdle[3].us, m.afterIdle[3].us);
  EXPECT_EQ(back.afterIdle[3].ops, 100);
  EXPECT_TRUE(back.afterIdle.back().graph);
  const sim::CalibrationResult r = sim::calibrate(sim::loadMachine("h200"), back);
  for (bool graph : {false, true}) {
    const sim::AfterIdle& fitted = graph ? r.machine.host.afterIdleGraph : r.machine.host.afterIdle;
    const sim::AfterIdle& known = graph ? truth.host.afterIdleGraph : truth.host.afterIdle;
    ASSERT_FALSE(fitted.empty()) << graph;
    for (const auto& [idleUs, delay] : fitted.points)
      EXPECT_NEAR(delay, known.delayUs(idleUs), 1e-6) << idleUs << " us idle, graph " << graph;
  }
  int noted = 0;
  for (const std::string& n : r.notes) noted += n.rfind("after idle: 100 host operations", 0) == 0;
  EXPECT_EQ(noted, 2);
  o.streams = false;  // no CUDA: not measured
  EXPECT_TRUE(sim::planMeasurements(sim::loadMachine("h200"), o).afterIdle.empty());
}

sim::AfterIdleMeasurement after(double idleMs, std::vector<double> us) { return {idleMs, 100, false, std::move(us)}; }

TEST(AfterIdleFit, MedianDifferenceFromBackToBackNeverFallingWithALongerIdle) {
  // Each delay is the median of the differences between its reps and the back-to-back ones, which
  // one outlier (400, 900) does not move.
  const sim::AfterIdleFit f = sim::fitAfterIdle({after(0, {100, 101, 99, 400}), after(1, {130, 125, 126}),
                                                after(10, {110, 111, 112}), after(50, {300, 301, 900})});
  const sim::AfterIdle& c = f.launched;
  ASSERT_EQ(c.points.size(), 3u);
  // 25.5 after 1 ms, 10.5 after 10: pooled (three reps each) to 18 for both.
  EXPECT_NEAR(c.points[0].second, 18, 1e-12);
  EXPECT_NEAR(c.points[1].second, 18, 1e-12);
  EXPECT_NEAR(c.points[2].second, 201, 1e-12);
  EXPECT_EQ(c.points[2].first, 50000);
  EXPECT_TRUE(f.launchedMeasured);
  EXPECT_FALSE(f.graphMeasured);
  ASSERT_EQ(f.notes.size(), 1u);
  // A host that issues at once however long it idled gets no curve, and the note says so.
  const sim::AfterIdleFit none = sim::fitAfterIdle({after(0, {100, 100.4}), after(20, {100.3, 100.9})});
  EXPECT_TRUE(none.launched.empty());
  EXPECT_NE(none.notes.at(0).find("no delay (host.after_idle left out)"), std::string::npos) << none.notes.at(0);
}

// A host whose issue falls into two modes, both 50 us later after idle: the medians (100 back to
// back, 250 after idle) sit in different modes and differ by 150; the fit finds the 50.
TEST(AfterIdleFit, ARunOfTwoModesShiftedByIdleIsMeasuredByTheShiftNotTheModesGap) {
  const sim::AfterIdleFit f = sim::fitAfterIdle({after(0, {100, 100, 100, 200, 200}), after(20, {150, 150, 250, 250, 250})});
  ASSERT_EQ(f.launched.points.size(), 1u);
  EXPECT_NEAR(f.launched.points[0].second, 50, 1e-12);
  EXPECT_NEAR(sim::medianShift({150, 150, 250, 250, 250}, {100, 100, 100, 200, 200}), 50, 1e-12);
  EXPECT_EQ(sim::medianShift({}, {1, 2}), 0);
}

TEST(AfterIdleFit, RefusesRunsWithoutAReferenceOrOfDifferentLengths) {
  EXPECT_NE(testing::errorOf([] { sim::fitAfterIdle({after(5, {100})}); }).find("no launched run with idle_ms 0"),
            std::string::npos);
  sim::AfterIdleMeasurement other = after(5, {100});
  other.ops = 50;
  EXPECT_NE(testing::errorOf([&] { sim::fitAfterIdle({after(0, {100}), other}); }).find("the same number of host operations"),
            std::string::npos);
  const std::string head = R"({"schema": "braid-measurements/1", "gpu": "x", "after_idle": [{"ops": 100, "idle_ms": )";
  EXPECT_NE(testing::errorOf([&] { sim::measurementsFromJson(head + R"(1, "us": [5, -2]}]})", "w.json"); })
                .find("w.json: after_idle[0].us[1]"),
            std::string::npos);
  EXPECT_NE(testing::errorOf([&] { sim::measurementsFromJson(head + R"(-1, "us": [5]}]})", "w.json"); }).find("idle_ms"),
            std::string::npos);
  EXPECT_NE(testing::errorOf([&] { sim::measurementsFromJson(head + R"(1, "us": []}]})", "w.json"); })
                .find("at least one timed run"),
            std::string::npos);
  EXPECT_NE(testing::errorOf([&] { sim::measurementsFromJson(head + R"(1, "us": [1e300]}]})", "w.json"); })
                .find("w.json: after_idle[0].us[0]: expected a time in microseconds in [0.001, 1e15]"),
            std::string::npos);
  EXPECT_NE(testing::errorOf([&] { sim::measurementsFromJson(head + R"(1e5, "us": [5]}]})", "w.json"); })
                .find("w.json: after_idle[0].idle_ms"),
            std::string::npos);
}

}  // namespace
}  // namespace braid
