// End-to-end tests of `braid validate`: a prediction validated against itself, against a
// measurement 10% slower everywhere, the files it writes, and bad input.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "ir/timeline.h"
#include "tests/support/bad_input.h"
#include "tests/support/cli_runner.h"
#include "tests/support/temp_dir.h"

namespace braid {
namespace {

using json = nlohmann::json;
using testing::runBraid;

const std::string kProgram = "ag_matmul --machine h200 --devices 2 --streams 2 --m 4096";

std::string predictedTimeline(const testing::TempDir& dir) {
  std::string path = dir.file("predicted.json");
  auto r = runBraid("sim " + kProgram + " --no-fold --timeline " + path);
  EXPECT_EQ(r.rc, 0) << r.err;
  return path;
}

TEST(ValidateCli, APredictionAgreesWithItself) {
  testing::TempDir dir("braid_validate_cli_");
  std::string measured = predictedTimeline(dir);
  auto r = runBraid("validate --measured " + measured + " " + kProgram + " --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_DOUBLE_EQ(j["makespan_error"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(j["max_abs_op_error"].get<double>(), 0);
  EXPECT_FALSE(j["ops"].empty());
  EXPECT_TRUE(j["unmatched_measured"].empty());
  EXPECT_TRUE(j["unmatched_predicted"].empty());
  EXPECT_DOUBLE_EQ(j["overlap"][0]["measured_hidden_fraction"].get<double>(),
                   j["overlap"][0]["predicted_hidden_fraction"].get<double>());
}

TEST(ValidateCli, AMeasurementTenPercentSlowerEverywhere) {
  testing::TempDir dir("braid_validate_cli_");
  Timeline t = readTimelineFile(predictedTimeline(dir));
  t.source = "measured";
  for (auto& op : t.ops) {
    op.startUs *= 1.1;
    op.endUs *= 1.1;
  }
  std::string measured = dir.file("measured.json");
  writeTimelineFile(t, measured);
  std::string trace = dir.file("trace.json"), picture = dir.file("side_by_side.dot");
  auto r = runBraid("validate --measured " + measured + " " + kProgram + " --trace " + trace + " --picture " + picture);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("error -9.1%"), std::string::npos) << r.out;  // 1 / 1.1 - 1
  EXPECT_NE(r.out.find("by statement"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("overlap"), std::string::npos) << r.out;
  json tr = json::parse(testing::slurpFile(trace));
  bool both = false;
  for (const auto& e : tr["traceEvents"])
    if (e.contains("args") && e["args"].contains("name") && e["args"]["name"].is_string())
      both |= e["args"]["name"].get<std::string>().rfind("predicted: ", 0) == 0;
  EXPECT_TRUE(both) << "no predicted stream in the trace";
  EXPECT_NE(testing::slurpFile(picture).find("digraph"), std::string::npos);
}

// A machine whose GEMMs were timed on other operand values than the run seeded gets a note (a
// measured timeline without meta.inputs seeded integers); matching values get none.
TEST(ValidateCli, NotesGemmOperandsOtherThanTheRunsInputs) {
  testing::TempDir dir("braid_validate_cli_");
  Timeline t = readTimelineFile(predictedTimeline(dir));
  t.source = "measured";
  t.meta.erase("inputs");
  std::string measured = dir.file("measured.json"), machine = dir.file("m.json");
  writeTimelineFile(t, measured);
  auto preset = runBraid("sim --machine h200 --print-machine");
  ASSERT_EQ(preset.rc, 0) << preset.err;
  auto write = [&](const std::string& operands) {
    json j = json::parse(preset.out);
    j["gpu"]["gemm_operands"] = operands;
    std::ofstream(machine) << j.dump();
  };
  const std::string program = "ag_matmul --devices 2 --streams 2 --m 4096 --machine " + machine;
  write("normal");
  auto r = runBraid("validate --measured " + measured + " " + program);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("note: h200's GEMM constants were measured on normal operands, but the run's inputs were "
                       "integers"),
            std::string::npos)
      << r.out;
  r = runBraid("validate --measured " + measured + " " + program + " --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["notes"].size(), 1u);
  write("integers");
  r = runBraid("validate --measured " + measured + " " + program);
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out.find("note:"), std::string::npos) << r.out;
  t.meta["inputs"] = "normal";
  writeTimelineFile(t, measured);
  r = runBraid("validate --measured " + measured + " " + program);
  EXPECT_NE(r.out.find("the run's inputs were normal"), std::string::npos) << r.out;
}

// The power state (docs/SIM.md): by default the run starts where its timeline's meta says it
// stood (run_index runs before it, cool_down_ms apart); without that meta, idle; --power overrides.
TEST(ValidateCli, StartsThePowerStateWhereTheMeasuredRunStood) {
  testing::TempDir dir("braid_validate_cli_");
  Timeline t = readTimelineFile(predictedTimeline(dir));
  t.source = "measured";
  std::string measured = dir.file("measured.json");
  auto start = [&](const std::string& extra) {
    writeTimelineFile(t, measured);
    auto r = runBraid("validate --measured " + measured + " " + kProgram + " --json" + extra);
    EXPECT_EQ(r.rc, 0) << r.err;
    return json::parse(r.out)["power"]["start"].get<std::string>();
  };
  t.meta.erase("run_index");
  EXPECT_EQ(start(""), "idle");
  t.meta["run_index"] = "21";
  t.meta["cool_down_ms"] = "20";
  EXPECT_EQ(start(""), "after 21 back-to-back runs 20 ms apart");
  EXPECT_EQ(start(" --power steady --power-gap 0"), "in the steady state of back-to-back runs 0 us apart");
  t.meta["cool_down_ms"] = "soon";
  writeTimelineFile(t, measured);
  auto bad = runBraid("validate --measured " + measured + " " + kProgram);
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.err.find(measured + ": meta.cool_down_ms: expected milliseconds in [0, 1e9], got 'soon'"), std::string::npos)
      << bad.err;
  // Bad meta is the file's fault: the error names the file and its field, not a flag.
  for (const auto& [field, value] : {std::pair{"cool_down_ms", "5abc"}, std::pair{"cool_down_ms", "-5"},
                                     std::pair{"cool_down_ms", "nan"}, std::pair{"run_index", "-4"},
                                     std::pair{"run_index", "abc"}, std::pair{"inputs", "gaussian"}}) {
    Timeline b = t;
    b.meta["cool_down_ms"] = "20";
    b.meta[field] = value;
    writeTimelineFile(b, measured);
    auto r = runBraid("validate --measured " + measured + " " + kProgram);
    EXPECT_EQ(r.rc, 2) << field << " " << value;
    EXPECT_NE(r.err.find(measured + ": meta." + field + ": expected"), std::string::npos) << r.err;
  }
}

TEST(ValidateCli, RankStartsComeFromTheMeasuredCollectivesEnds) {
  // Rank 1's clock reads 50 us more at every event: it started 50 us before rank 0.
  testing::TempDir dir("braid_validate_cli_");
  Timeline t = readTimelineFile(predictedTimeline(dir));
  for (auto& op : t.ops)
    if (op.rank == 1) op.startUs += 50, op.endUs += 50;
  std::string measured = dir.file("skewed.json");
  writeTimelineFile(t, measured);
  auto r = runBraid("validate --measured " + measured + " " + kProgram + " --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  json j = json::parse(r.out);
  ASSERT_EQ(j["rank_start_us"].size(), 2u);
  EXPECT_NEAR(j["rank_start_us"][0].get<double>(), 50, 1e-6);
  EXPECT_NEAR(j["rank_start_us"][1].get<double>(), 0, 1e-6);
  auto none = runBraid("validate --measured " + measured + " " + kProgram + " --json --no-skew --transport cuda");
  ASSERT_EQ(none.rc, 0) << none.err;
  EXPECT_TRUE(json::parse(none.out)["rank_start_us"].empty());
  auto text = runBraid("validate --measured " + measured + " " + kProgram);
  EXPECT_NE(text.out.find("rank starts (from the measured collectives' ends): rank 0 +50.0 us rank 1 +0.0 us"),
            std::string::npos)
      << text.out;
}

TEST(ValidateCli, BadInputIsExitCodeTwo) {
  testing::TempDir dir("braid_validate_cli_");
  std::string measured = predictedTimeline(dir);
  std::string broken = dir.file("broken.json");
  std::ofstream(broken) << R"({"schema": "braid-timeline/1"})";
  testing::expectBadInput({
      {"validate " + kProgram, "--measured TIMELINE.json is required"},
      {"validate --measured " + measured + " --machine h200", "the measured program is required"},
      {"validate --measured " + broken + " " + kProgram, broken + ": "},
      {"validate --measured " + measured + " " + kProgram + " --picture out.gif", "gif"},
      {"validate --measured " + measured + " ag_matmul --machine h200 --devices 1 --m 4096",
       "does not run; simulate as many ranks as were measured"},
      {"validate --measured " + measured + " ag_matmul --devices 2", "--machine is required"},
      {"validate --measured " + measured + " " + kProgram + " --transport ucx", "--transport: expected nccl or cuda"},
      {"validate --measured " + measured + " " + kProgram + " --trace " + dir.file("no/such/t.json"),
       "--trace " + dir.file("no/such/t.json") + ": no folder"},
  });
  // Every output's folder is checked before any is written: the timeline asked for beside a trace
  // that cannot be written is left as it was.
  std::string kept = dir.file("kept.json");
  std::ofstream(kept) << "mine";
  auto r = runBraid("validate --measured " + measured + " " + kProgram + " --timeline " + kept + " --trace " +
                    dir.file("no/such/t.json"));
  EXPECT_EQ(r.rc, 2) << r.err;
  std::ifstream in(kept);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(content, "mine");
  // A timeline whose streams name ranks it does not have.
  Timeline t = readTimelineFile(measured);
  t.ranks = 1;
  std::string lying = dir.file("lying.json");
  writeTimelineFile(t, lying);
  auto l = runBraid("validate --measured " + lying + " " + kProgram);
  EXPECT_EQ(l.rc, 2);
  EXPECT_NE(l.err.find(lying + ": streams["), std::string::npos) << l.err;
  EXPECT_NE(l.err.find("in a timeline of 1 ranks"), std::string::npos) << l.err;
}

}  // namespace
}  // namespace braid
