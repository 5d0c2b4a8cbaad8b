// End-to-end tests of `braid calibrate --measure` and `braid tune --confirm` on CPU (the only
// backend this machine has): a tiny measurement grid written, read back by sim's loader and fitted
// by `calibrate --from`; measure-and-fit in one go; bad flags; tune confirming its ranking with
// CPU runs, and refusing GPU runs without CUDA. Builds without libtorch skip them.
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "sim/machine.h"
#include "sim/measurements.h"
#include "tests/support/cli_runner.h"
#include "tests/support/temp_dir.h"

namespace braid {
namespace {

using json = nlohmann::json;
using testing::runBraid;

bool withoutTorch(const testing::CliResult& r) {
  return r.err.find("built without libtorch") != std::string::npos;
}

// A grid small enough for a second: one GEMM shape, small copies and messages, two runs each.
const char* kTiny = "--backend cpu --quick --reps 2 --warmup 1 --max-gemm-flops 2e8 --max-bytes 131072";

TEST(MeasureCli, WritesAFileThatLoadsAndFits) {
  testing::TempDir dir("braid_measure_cli_");
  std::string m = dir.file("m.json"), out = dir.file("cpu-calibrated.json");
  auto r = runBraid(std::string("calibrate --measure -o ") + m + " " + kTiny);
  if (withoutTorch(r)) GTEST_SKIP() << "built without libtorch";
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("wrote"), std::string::npos) << r.err;
  sim::Measurements got = sim::readMeasurementsFile(m);
  EXPECT_NE(got.gpu.find("CPU"), std::string::npos) << got.gpu;
  EXPECT_EQ(got.meta.at("clock"), "host wall clock");
  EXPECT_EQ(got.meta.at("backend"), "cpu");
  EXPECT_EQ(got.meta.at("ranks"), "1");
  EXPECT_EQ(got.meta.at("gemm_operands"), "integers");  // what braid run seeds by default
  EXPECT_FALSE(got.meta.at("date").empty());
  // 2e8 flops at most: the smallest knot of h200's curve (1e8), fp32 only.
  ASSERT_EQ(got.gemms.size(), 1u);
  for (const auto& g : got.gemms) {
    EXPECT_EQ(g.shape.dtype, DataType::kFloat);
    EXPECT_GT(g.us, 0);
  }
  EXPECT_FALSE(got.copies.empty());
  for (const auto& c : got.copies) EXPECT_GT(c.us, 0);
  // One rank: no collectives; the host clock measures every host cost but the device's two.
  EXPECT_TRUE(got.collectives.empty());
  EXPECT_EQ(got.host.size(), std::size(sim::kHostCalls) - 2);
  for (const auto& h : got.host) EXPECT_GT(h.us, 0) << sim::hostCallName(h.call);

  auto f = runBraid("calibrate --from " + m + " --machine h200 -o " + out);
  ASSERT_EQ(f.rc, 0) << f.err;
  EXPECT_NE(f.out.find("wrote " + out), std::string::npos) << f.out;
  EXPECT_NE(testing::slurpFile(out).find("host wall clock"), std::string::npos);
  EXPECT_EQ(sim::loadMachine(out).gpu.gemmOperands, InputValues::kIntegers);
}

// --gemm-operands normal times the GEMMs on normal values and says so in the file; another name
// is refused before anything runs.
TEST(MeasureCli, GemmOperandsAreChosenAndRecorded) {
  testing::TempDir dir("braid_measure_cli_");
  std::string m = dir.file("m.json");
  auto r = runBraid(std::string("calibrate --measure --only gemm --gemm-operands normal -o ") + m + " " + kTiny);
  if (withoutTorch(r)) GTEST_SKIP() << "built without libtorch";
  ASSERT_EQ(r.rc, 0) << r.err;
  sim::Measurements got = sim::readMeasurementsFile(m);
  EXPECT_EQ(got.meta.at("gemm_operands"), "normal");
  EXPECT_EQ(got.gemms.size(), 1u);
  r = runBraid(std::string("calibrate --measure --gemm-operands ones -o ") + m + " " + kTiny);
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_NE(r.err.find("--gemm-operands"), std::string::npos) << r.err;
}

TEST(MeasureCli, MeasuresCollectivesOnTwoRanksAndFitsInOneGo) {
  testing::TempDir dir("braid_measure_cli_");
  std::string out = dir.file("m2.json");
  auto r = runBraid(std::string("calibrate --measure --fit --machine h100 --ranks 2 -o ") + out + " " + kTiny +
                    " --only collective,p2p --json");
  if (withoutTorch(r)) GTEST_SKIP() << "built without libtorch";
  if (r.err.find("without Gloo") != std::string::npos) GTEST_SKIP() << "built without Gloo";
  ASSERT_EQ(r.rc, 0) << r.err << r.out;
  sim::Measurements got = sim::readMeasurementsFile(dir.file("m2.measurements.json"));
  EXPECT_EQ(got.meta.at("ranks"), "2");
  EXPECT_EQ(got.meta.at("communicator"), "gloo");
  EXPECT_TRUE(got.gemms.empty());
  // 8 kinds x (64 KiB, 128 KiB... quick steps x4: 64 KiB only) on a team of 2.
  ASSERT_EQ(got.collectives.size(), 8u);
  for (const auto& c : got.collectives) {
    EXPECT_EQ(c.team, 2);
    EXPECT_EQ(c.bytes, 65536);
    EXPECT_GT(c.us, 0);
  }
  ASSERT_EQ(got.p2p.size(), 1u);
  EXPECT_FALSE(got.p2p[0].interNode);
  // --fit wrote the machine file and printed the fit as JSON.
  EXPECT_NO_THROW(json::parse(r.out)) << r.out;
  EXPECT_NE(testing::slurpFile(out).find("braid-machine/1"), std::string::npos);
}

struct BadFlags {
  std::string args, error;
};

void expectRefused(const std::vector<BadFlags>& cases) {
  for (const BadFlags& c : cases) {
    auto r = runBraid(c.args);
    if (withoutTorch(r)) continue;  // the flags the run module checks cannot be checked without it
    EXPECT_EQ(r.rc, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.error), std::string::npos) << c.args << "\n" << r.err;
  }
}

TEST(MeasureCli, ContradictoryFlagsAreRefused) {
  testing::TempDir dir("braid_measure_cli_");
  std::string m = dir.file("m.json");
  std::ofstream(m) << R"({"schema": "braid-measurements/1", "gpu": "x", "copy": [{"bytes": 10, "us": 1}]})";
  expectRefused({
      {"calibrate --measure --from x.json -o " + m, "--measure and --from contradict"},
      {"calibrate --measure --backend cpu", "-o is required"},
      {"calibrate --measure --fit --backend cpu -o " + m, "--fit needs --machine"},
      {"calibrate --measure --backend cpu --name x -o " + m, "--name needs --fit"},
      {"calibrate --from x.json --machine h200 -o " + m + " --quick", "--quick needs --measure"},
      {"calibrate --measure --backend tpu -o " + m, "--backend"},
      {"calibrate --measure --backend cpu -o " + m + " --reps 0", "--reps"},
      {"calibrate --measure --backend cpu -o " + m + " --cool-down nan", "'nan' is not a number in [0, 10000]"},
      {"calibrate --measure --backend cpu -o " + m + " --only ''", "--only: expected a non-empty list"},
      {"calibrate --measure --backend cpu -o " + m + " --dtypes ''", "--dtypes: expected a non-empty list"},
      {"calibrate --measure --backend cpu -o " + dir.file("no/such/m.json"), "no folder"},
      {"calibrate --from " + m + " --machine h200 -o " + m, "is the --from file"},
  });
}

TEST(MeasureCli, BadPlansAreRefusedBeforeAnythingRuns) {
  testing::TempDir dir("braid_measure_cli_");
  std::string m = dir.file("m.json");
  expectRefused({
      {"calibrate --measure --backend cpu -o " + m + " --dtypes bf16,fp8", "unknown dtype 'fp8'"},
      {"calibrate --measure --backend cpu -o " + m + " --only gemm,disk", "unknown part 'disk'"},
      {"calibrate --measure --backend cpu -o " + m + " --min-bytes 1e6 --max-bytes 1e5", "--max-bytes"},
      {"calibrate --measure --backend cpu -o " + m + " --machine nosuch", "nosuch"},
      {"calibrate --measure --backend cpu -o " + m + " --only copy_engine", "nothing to measure with --only copy_engine"},
      {"calibrate --measure --backend cpu -o " + m + " --only overlap", "overlap needs 2 or more ranks on CUDA"},
  });
}

TEST(TuneConfirm, RunsTheBestAndSerialOnCpuAndComparesThem) {
  auto r = runBraid(
      "tune allreduce --machine h200 --devices 1 --m 64 --k 16 --n 16 --streams 1,2 --protocols A --pipelines "
      "collective --confirm 1 --backend cpu --repeat 2 --json");
  if (r.err.find("built without libtorch") != std::string::npos) GTEST_SKIP() << "built without libtorch";
  ASSERT_EQ(r.rc, 0) << r.err << r.out;
  json j = json::parse(r.out);
  ASSERT_TRUE(j.contains("confirm")) << r.out;
  const json& c = j["confirm"];
  EXPECT_EQ(c["backend"], "cpu");
  EXPECT_EQ(c["repeat"], 2);
  EXPECT_EQ(c["graph"], false);
  // The best configuration, and serial when it is not the best (here it is: one row).
  ASSERT_GE(c["rows"].size(), 1u);
  ASSERT_LE(c["rows"].size(), 2u);
  EXPECT_EQ(c["rows"][0]["predicted_rank"], 1);
  bool serial = false;
  for (const auto& row : c["rows"]) {
    EXPECT_GT(row["measured_us"].get<double>(), 0);
    EXPECT_GT(row["predicted_us"].get<double>(), 0);
    serial = serial || row["serial"].get<bool>();
    // What was simulated is what runs: the sizes given, and sim's dtype (not braid run's default).
    std::string cmd = row["command"];
    EXPECT_NE(cmd.find("braid run allreduce --devices 1 --m 64 --k 16 --n 16 --dtype"), std::string::npos) << cmd;
    EXPECT_NE(cmd.find("--backend cpu --ranks 1 --repeat 2"), std::string::npos) << cmd;
  }
  EXPECT_TRUE(serial);
  EXPECT_TRUE(c["best_confirmed"].is_boolean());
  // The choice is the measured best; serial is among the rows, so it is never slower than serial.
  double serialUs = 0, bestUs = 1e300;
  std::string serialConfig;
  for (const json& row : c["rows"]) {
    bestUs = std::min(bestUs, row["measured_us"].get<double>());
    if (row["serial"].get<bool>()) serialUs = row["measured_us"].get<double>();
  }
  ASSERT_TRUE(c["speedup_over_serial"].is_number()) << c.dump();
  EXPECT_NEAR(c["speedup_over_serial"].get<double>(), serialUs / bestUs, 1e-9);
  EXPECT_GE(c["speedup_over_serial"].get<double>(), 1.0);
  EXPECT_EQ(c["choice_is_serial"].get<bool>(), serialUs == bestUs) << c.dump();

  auto t = runBraid(
      "tune allreduce --machine h200 --devices 1 --m 64 --k 16 --n 16 --streams 1,2 --protocols A --pipelines "
      "collective --confirm 1 --backend cpu --repeat 2");
  ASSERT_EQ(t.rc, 0) << t.err;
  EXPECT_NE(t.out.find("confirmed with braid run --backend cpu --repeat 2 (CPU numbers"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("measured_us"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("predicted best"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("\nchoice: "), std::string::npos) << t.out;
}

TEST(TuneConfirm, GpuRunsNeedCudaAndFlagsNeedConfirm) {
  auto r = runBraid("tune allreduce --machine h200 --devices 1 --m 64 --k 16 --n 16 --streams 1,2 --confirm 1");
  if (r.err.find("built without libtorch") != std::string::npos) GTEST_SKIP() << "built without libtorch";
  if (r.rc == 0) GTEST_SKIP() << "this build has CUDA and a GPU";
  EXPECT_EQ(r.rc, 2) << r.err;
  EXPECT_NE(r.err.find("--confirm: braid run of"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--backend cuda is not available"), std::string::npos) << r.err;
  auto f = runBraid("tune allreduce --machine h200 --devices 1 --backend cpu");
  EXPECT_EQ(f.rc, 2);
  EXPECT_NE(f.err.find("--backend needs --confirm"), std::string::npos) << f.err;
}

}  // namespace
}  // namespace braid
