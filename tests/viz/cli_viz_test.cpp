// End-to-end: `braid viz` on hand-written timelines, `braid verify --dot`, and their errors.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <fstream>
#include <filesystem>
#include <regex>
#include <sstream>

#include "tests/support/cli_runner.h"
#include "tests/support/temp_dir.h"
#include "tests/viz/picture_check.h"
#include "viz/render.h"

namespace braid::viz {
namespace {

using testing::runBraid;

std::string data(const std::string& name) {
  return std::string(BRAID_TEST_DATA_DIR) + "/viz/data/" + name;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

TEST(CliViz, DrawsPredictedAndMeasuredOnOneScale) {
  testing::TempDir dir("braid_cli_viz_");
  std::string out = dir.file("pm.svg");
  auto r = runBraid("viz '" + data("ag_matmul_2ranks_predicted.json") + "' '" + data("ag_matmul_2ranks_measured.json") +
                    "' -o '" + out + "'");
  if (!graphvizAvailable()) {
    EXPECT_EQ(r.rc, 2);
    EXPECT_NE(r.err.find("built without Graphviz"), std::string::npos) << r.err;
    EXPECT_FALSE(exists(out));
    return;
  }
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("wrote " + out), std::string::npos);
  // The predicted ranks are identical (one group of 4 lanes), the measured ones are not.
  EXPECT_NE(r.out.find("[1] predicted on h200, protocol=A, streams=2: 4 lanes, communication 50% hidden"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("[2] measured on NVIDIA H200, protocol=A, streams=2: 8 lanes"), std::string::npos) << r.out;
  if (!testing::canParseSvg()) return;
  testing::SvgDoc svg = testing::parseSvg(slurp(out));
  ASSERT_TRUE(svg.wellFormed) << svg.error;
  EXPECT_EQ(svg.withClass("lane").size(), 12u);
  EXPECT_EQ(svg.withClass("op").size(), 10u + 20u);  // one rank drawn for the identical pair, then both
}

TEST(CliViz, PngAndDot) {
  testing::TempDir dir("braid_cli_viz_");
  auto dot = runBraid("viz '" + data("ag_matmul_2ranks_predicted.json") + "' -o '" + dir.file("t.dot") + "'");
  ASSERT_EQ(dot.rc, 0) << dot.err;
  EXPECT_EQ(slurp(dir.file("t.dot")).rfind("digraph timeline {", 0), 0u);
  if (!graphvizAvailable()) return;
  auto png = runBraid("viz '" + data("ag_matmul_2ranks_measured.json") + "' --rank 1 --no-arrows -o '" +
                      dir.file("t.png") + "'");
  ASSERT_EQ(png.rc, 0) << png.err;
  EXPECT_NE(png.out.find("note: showing ranks 1 of the 2 ranks with ops"), std::string::npos) << png.out;
  testing::PngInfo info = testing::checkPng(slurp(dir.file("t.png")));
  EXPECT_TRUE(info.wellFormed) << info.error;
}

TEST(CliViz, BadInputIsExitCode2WithWhatAndWhere) {
  testing::TempDir dir("braid_cli_viz_");
  auto bad = runBraid("viz '" + data("bad_end_before_start.json") + "' -o '" + dir.file("x.dot") + "'");
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.err.find("bad_end_before_start.json: ops[0]: ends (1.000000) before it starts (12.500000)"),
            std::string::npos)
      << bad.err;
  auto missing = runBraid("viz '" + dir.file("nope.json") + "' -o '" + dir.file("x.svg") + "'");
  EXPECT_EQ(missing.rc, 2);
  EXPECT_NE(missing.err.find("nope.json: cannot open the timeline file"), std::string::npos) << missing.err;
  auto format = runBraid("viz '" + data("ag_matmul_2ranks_predicted.json") + "' -o '" + dir.file("x.jpg") + "'");
  EXPECT_EQ(format.rc, 2);
  EXPECT_NE(format.err.find("x.jpg: unknown picture format \"jpg\""), std::string::npos) << format.err;
  auto three = runBraid("viz a.json b.json c.json -o x.svg");
  EXPECT_EQ(three.rc, 2);
  auto ranks = runBraid("viz '" + data("ag_matmul_2ranks_predicted.json") + "' --rank 9 -o '" + dir.file("x.dot") + "'");
  EXPECT_EQ(ranks.rc, 2);
  EXPECT_NE(ranks.err.find("no ops on the ranks asked for (9)"), std::string::npos) << ranks.err;
}

TEST(CliVerifyDot, DrawsTheFindingsAndKeepsTheExitCode) {
  testing::TempDir dir("braid_cli_viz_");
  std::string program = std::string(BRAID_SOURCE_DIR) + "/tests/verify/data/race_no_initial_sync.hir";
  std::string flags = " --bind i0=4 --bind i2=8 --ranks 1 --streams 2";
  auto dot = runBraid("verify '" + program + "'" + flags + " --dot '" + dir.file("race.dot") + "'");
  EXPECT_EQ(dot.rc, 1);  // the race is still reported as a bug
  EXPECT_NE(dot.out.find("error[race]"), std::string::npos);
  EXPECT_TRUE(std::regex_search(dot.err, std::regex("wrote .*race\\.dot \\((\\d+) of \\1 events\\)"))) << dot.err;
  std::string text = slurp(dir.file("race.dot"));
  EXPECT_NE(text.find("class=\"finding missing\""), std::string::npos);
  // --json keeps stdout pure JSON.
  auto json = runBraid("verify '" + program + "'" + flags + " --json --dot '" + dir.file("race2.dot") + "'");
  EXPECT_EQ(json.rc, 1);
  EXPECT_EQ(json.out.find("wrote"), std::string::npos);
  if (graphvizAvailable()) {
    auto svg = runBraid("verify '" + program + "'" + flags + " --dot '" + dir.file("race.svg") + "'");
    EXPECT_EQ(svg.rc, 1) << svg.err;
    if (testing::canParseSvg()) EXPECT_TRUE(testing::parseSvg(slurp(dir.file("race.svg"))).wellFormed);
  }
  // A bad extension is refused before any work.
  auto bad = runBraid("verify '" + program + "'" + flags + " --dot '" + dir.file("race.txt") + "'");
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.err.find("unknown picture format"), std::string::npos) << bad.err;
  EXPECT_EQ(bad.out, "");
}

// Parametric mode draws its confirmed counterexample at the bindings it was confirmed with; a
// proof has nothing to draw, and says so without changing the verdict.
TEST(CliVerifyDot, ParametricDrawsTheConfirmedCounterexample) {
  if (runBraid("verify --help").out.find("--mode") == std::string::npos) GTEST_SKIP();
  testing::TempDir dir("braid_cli_viz_");
  std::string broken = std::string(BRAID_SOURCE_DIR) + "/tests/verify/data/parametric_missing_wait.hir";
  auto bug = runBraid("verify '" + broken + "' --mode parametric --dot '" + dir.file("w.dot") + "'");
  if (bug.out.find("without Z3") != std::string::npos || bug.err.find("without Z3") != std::string::npos)
    GTEST_SKIP() << "built without Z3";
  EXPECT_EQ(bug.rc, 1) << bug.err;
  EXPECT_TRUE(std::regex_search(bug.err, std::regex("wrote .*w\\.dot \\((\\d+) of \\1 events\\)"))) << bug.err;
  EXPECT_NE(slurp(dir.file("w.dot")).find("class=\"finding"), std::string::npos);
  std::string fixed = std::string(BRAID_SOURCE_DIR) + "/tests/verify/data/parametric_missing_wait_fixed.hir";
  auto ok = runBraid("verify '" + fixed + "' --mode parametric --dot '" + dir.file("p.dot") + "'");
  EXPECT_EQ(ok.rc, 0) << ok.err;
  EXPECT_NE(ok.err.find("nothing drawn"), std::string::npos) << ok.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("p.dot")));
}

}  // namespace
}  // namespace braid::viz
