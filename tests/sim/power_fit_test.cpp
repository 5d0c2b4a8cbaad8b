// Fitting the power cap (sim/power_fit.h): synthetic power benchmarks made by the model itself
// with known constants come back to those constants; a GPU that never slows gets no cap; bad
// series are refused; the measurement file keeps the runs.
#include <gtest/gtest.h>

#include <cmath>

#include "ir/error.h"
#include "sim/calibrate.h"
#include "sim/power_fit.h"
#include "sim/power_state.h"

namespace braid {
namespace {

const sim::GemmShape kGemm{8192, 8192, 8192, 1, DataType::kBFloat16};

// A series as the benchmark records it: bursts of `perBurst` runs `gapUs` apart, each run followed
// by idle time at `duty` < 1; each run's time is what `m` gives from the state the runs before it
// left.
sim::PowerMeasurement series(const sim::PowerModel& m, double baseUs, int bursts, int perBurst, double gapUs,
                             double duty = 1, double load = 1, sim::GemmShape gemm = kGemm) {
  sim::PowerMeasurement s;
  s.gemm = gemm;
  s.bursts = bursts;
  s.gapMs = gapUs / 1e3;
  s.duty = duty;
  s.loadMs = perBurst * baseUs / duty / 1e3;
  sim::PowerState st(m, 0);
  double t = 0;
  auto idle = [&](double us) {
    st.setLoad(0);
    st.advance(us);
    t += us;
  };
  for (int b = 0; b < bursts; ++b) {
    if (b > 0) idle(gapUs);
    for (int i = 0; i < perBurst; ++i) {
      double us = sim::runFullLoad(st, baseUs, load);
      s.runs.push_back({t, us});
      t += us;
      if (duty < 1) idle(baseUs * (1 - duty) / duty);
    }
  }
  return s;
}

std::vector<sim::PowerMeasurement> benchmark(const sim::PowerModel& m, double base) {
  return {series(m, base, 1, 300, 0), series(m, base, 8, 15, 5000), series(m, base, 8, 15, 20000),
          series(m, base, 1, 200, 0, 0.9), series(m, base, 1, 200, 0, 0.8)};
}

TEST(PowerFit, RecoversTheConstantsOfASyntheticGpu) {
  const sim::PowerModel truth{0.78, 22000, 1.17};
  sim::PowerFit f = sim::fitPowerCap(benchmark(truth, 1400));
  EXPECT_NEAR(f.baseUs, 1400, 1e-6);
  EXPECT_NEAR(f.model.capLoad, truth.capLoad, 0.01);
  EXPECT_NEAR(f.model.timeConstantUs, truth.timeConstantUs, 0.05 * truth.timeConstantUs);
  EXPECT_NEAR(f.model.cappedSlowdown, truth.cappedSlowdown, 0.005);
  EXPECT_LT(f.rmsError, 0.002);
  EXPECT_GT(f.rmsWithout, 0.05);
  EXPECT_NE(f.summary.find("cap_load 0.78"), std::string::npos) << f.summary;
}

TEST(PowerFit, AGpuThatNeverSlowsGetsNoCap) {
  std::vector<sim::PowerMeasurement> flat = benchmark(sim::PowerModel{}, 900);
  sim::PowerFit f = sim::fitPowerCap(flat);
  EXPECT_FALSE(f.model.enabled());
  EXPECT_NE(f.summary.find("no power cap"), std::string::npos);
}

TEST(PowerFit, RefusesSeriesItCannotFit) {
  const sim::PowerModel truth{0.8, 20000, 1.15};
  std::vector<sim::PowerMeasurement> b = benchmark(truth, 1000);
  std::vector<sim::PowerMeasurement> burstsOnly(b.begin() + 1, b.end());
  EXPECT_THROW(sim::fitPowerCap(burstsOnly), Error);
  EXPECT_THROW(sim::fitPowerCap({}), Error);
  // A series of another GEMM without a sustained one of its own tells nothing about its power.
  b[1].gemm.m = 4096;
  EXPECT_TRUE(sim::fitPowerCap(b).model.gemmPower.points.empty());
}

TEST(PowerFit, ASmallerGemmsPowerComesFromItsSustainedSlowdown) {
  const sim::PowerModel truth{0.75, 30000, 1.17};
  std::vector<sim::PowerMeasurement> b = benchmark(truth, 1200);
  const sim::GemmShape small{4096, 4096, 4096, 1, DataType::kBFloat16};
  b.push_back(series(truth, 160, 1, 2000, 0, 1, 0.88, small));
  sim::PowerFit f = sim::fitPowerCap(b);
  EXPECT_EQ(f.reference, kGemm);
  ASSERT_EQ(f.model.gemmPower.points.size(), 2u);
  EXPECT_DOUBLE_EQ(f.model.gemmPower.points[0].first, 2.0 * 4096 * 4096 * 4096);
  EXPECT_NEAR(f.model.gemmPower.points[0].second, 0.88, 0.01);
  EXPECT_EQ(f.model.gemmPower.points[1].second, 1.0);
  EXPECT_NE(f.summary.find("4096x4096x4096 0.88"), std::string::npos) << f.summary;
  // In the simulator that GEMM then slows by what it measured, not by the full load's 17%.
  sim::PowerState st(f.model, f.model.capLoad);
  EXPECT_NEAR(sim::runFullLoad(st, 160, f.model.gemmPowerAt(2.0 * 4096 * 4096 * 4096)) / 160,
              series(truth, 160, 1, 2000, 0, 1, 0.88, small).runs.back().us / 160, 0.01);
}

TEST(PowerFit, CalibrateWritesTheCapIntoTheMachineAndTheFileKeepsTheRuns) {
  const sim::PowerModel truth{0.8, 15000, 1.16};
  sim::Measurements m;
  m.gpu = "synthetic";
  m.power = benchmark(truth, 1200);
  sim::Measurements back = sim::measurementsFromJson(sim::measurementsToJson(m), "m.json");
  ASSERT_EQ(back.power.size(), 5u);
  EXPECT_EQ(back.power[4].duty, 0.8);
  EXPECT_EQ(back.power[1].runs.size(), m.power[1].runs.size());
  EXPECT_DOUBLE_EQ(back.power[1].runs[20].us, m.power[1].runs[20].us);
  sim::CalibrationResult r = sim::calibrate(sim::loadMachine("h200-datasheet"), back);
  EXPECT_NEAR(r.machine.gpu.power.capLoad, 0.8, 0.01);
  EXPECT_NEAR(r.machine.gpu.power.cappedSlowdown, 1.16, 0.005);
  sim::Machine again = sim::machineFromJson(sim::machineToJson(r.machine), "out.json");
  EXPECT_EQ(again.gpu.power, r.machine.gpu.power);
  r.machine.gpu.power.gemmPower.points = {{1e11, 0.85}, {1e12, 1.0}};
  again = sim::machineFromJson(sim::machineToJson(r.machine), "out.json");
  EXPECT_EQ(again.gpu.power, r.machine.gpu.power);
}

TEST(PowerFit, AMeasurementFileWithBrokenRunsNamesTheRun) {
  const std::string head = R"({"schema": "braid-measurements/1", "gpu": "x", "power": [)"
                           R"({"gemm": {"m": 8, "n": 8, "k": 8, "dtype": "bf16"}, "load_ms": 1, "gap_ms": 0, )"
                           R"("bursts": 1, "runs": )";
  try {
    sim::measurementsFromJson(head + R"([[0, 10], [10, 10], [5, 10]]}]})", "p.json");
    FAIL() << "accepted a run that starts before the one before it ended";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("p.json: power[0].runs[2]"), std::string::npos) << e.what();
  }
  EXPECT_THROW(sim::measurementsFromJson(head + R"([[0, 10], [10, -1], [20, 10]]}]})", "p.json"), Error);
  EXPECT_THROW(sim::measurementsFromJson(head + R"([[0, 10]]}]})", "p.json"), Error);
}

}  // namespace
}  // namespace braid

namespace braid {
namespace {

TEST(PowerFit, AMachineFileWithABadCapNamesTheField) {
  std::string text = sim::machineToJson(sim::loadMachine("h200"));
  const std::string from = "\"cap_load\": 0.724";
  size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << text.substr(0, 200);
  text.replace(at, from.size(), "\"cap_load\": 1.0");
  try {
    sim::machineFromJson(text, "m.json");
    FAIL() << "a cap a full load never reaches was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("m.json: gpu.power_cap.cap_load"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace braid
