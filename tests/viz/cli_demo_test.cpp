// End-to-end: `braid demo` writes the programs, reports, timelines, traces and the picture of
// protocols A and C on one time scale, and says which is faster; `braid sim --draw` pictures one
// simulated timeline, or a sweep's fastest and slowest configurations.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "ir/timeline.h"
#include "tests/support/cli_runner.h"
#include "tests/support/temp_dir.h"
#include "tests/viz/picture_check.h"
#include "viz/render.h"

namespace braid::viz {
namespace {

using testing::runBraid;
namespace fs = std::filesystem;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

// Every `text` of the SVG's groups, joined.
std::string svgTexts(const testing::SvgDoc& svg) {
  std::string all;
  for (const auto& g : svg.groups)
    for (const auto& t : g.texts) all += t + "\n";
  return all;
}

TEST(CliDemo, WritesEveryFileAndSaysProtocolAIsFaster) {
  testing::TempDir dir("braid_cli_demo_");
  std::string out = dir.file("out");
  auto r = runBraid("demo --out '" + out + "'");
  ASSERT_EQ(r.rc, 0) << r.out << r.err;

  std::vector<std::string> files;
  for (const char* p : {"A", "C"})
    for (const char* ext : {".hir", ".verify.json", ".timeline.json", ".trace.json"})
      files.push_back(out + "/ag_matmul_" + p + ext);
  if (graphvizAvailable()) {
    files.push_back(out + "/ag_matmul_A_vs_C.svg");
    files.push_back(out + "/ag_matmul_A_vs_C.png");
  } else {
    files.push_back(out + "/ag_matmul_A_vs_C.dot");
    EXPECT_NE(r.out.find("pictures skipped: braid was built without Graphviz"), std::string::npos) << r.out;
  }
  for (const std::string& f : files) {
    EXPECT_TRUE(fs::is_regular_file(f)) << f;
    EXPECT_GT(fs::file_size(f), 0u) << f;
    EXPECT_NE(r.out.find("  " + f + "\n"), std::string::npos) << "the summary does not list " << f;
  }

  // Both timelines hold all 8 ranks (the demo does not fold), and both programs verified clean.
  for (const char* p : {"A", "C"}) {
    Timeline t = readTimelineFile(out + "/ag_matmul_" + p + ".timeline.json");
    EXPECT_EQ(t.ranks, 8);
    std::set<int64_t> ranks;
    for (const auto& op : t.ops) ranks.insert(op.rank);
    EXPECT_EQ(ranks.size(), 8u) << p;
    EXPECT_EQ(t.meta.count("folded"), 0u);
    EXPECT_EQ(t.meta["protocol"], p);
    EXPECT_NE(slurp(out + "/ag_matmul_" + p + ".verify.json").find("\"errors\": 0"), std::string::npos);
  }

  // The summary: one row per protocol, then how much longer C takes.
  EXPECT_TRUE(std::regex_search(r.out, std::regex("\nA +[0-9.]+ (µs|ms) +[0-9]+% +[0-9.]+ (µs|ms) +[0-9]+ +clean")))
      << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex("\nC +[0-9.]+ (µs|ms) +[0-9]+% +[0-9.]+ (µs|ms) +1 +clean")))
      << r.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex("protocol C takes ([0-9.]+)x as long as protocol A"))) << r.out;
  EXPECT_GT(std::stod(m[1]), 1.05);

  if (!graphvizAvailable()) return;
  testing::PngInfo png = testing::checkPng(slurp(out + "/ag_matmul_A_vs_C.png"));
  EXPECT_TRUE(png.wellFormed) << png.error;
  if (!testing::canParseSvg()) return;
  testing::SvgDoc svg = testing::parseSvg(slurp(out + "/ag_matmul_A_vs_C.svg"));
  ASSERT_TRUE(svg.wellFormed) << svg.error;
  std::string texts = svgTexts(svg);
  // Two panels, each drawing its 8 identical ranks once.
  EXPECT_NE(texts.find("[1] protocol A"), std::string::npos) << texts;
  EXPECT_NE(texts.find("[2] protocol C"), std::string::npos) << texts;
  EXPECT_NE(texts.find("ranks 0-7"), std::string::npos) << texts;
  EXPECT_FALSE(svg.withClass("lane").empty());
  EXPECT_FALSE(svg.withClass("compute").empty());
  EXPECT_FALSE(svg.withClass("communication").empty());
}

TEST(CliDemo, BadInputIsExitCode2) {
  testing::TempDir dir("braid_cli_demo_");
  std::string file = dir.file("in_the_way");
  std::ofstream(file) << "x";
  auto blocked = runBraid("demo --out '" + file + "'");
  EXPECT_EQ(blocked.rc, 2);
  EXPECT_NE(blocked.err.find("--out " + file + ": exists and is not a folder"), std::string::npos) << blocked.err;
  EXPECT_EQ(slurp(file), "x");

  auto same = runBraid("demo --protocols A,A --out '" + dir.file("o") + "'");
  EXPECT_EQ(same.rc, 2);
  EXPECT_NE(same.err.find("compare two different protocols"), std::string::npos) << same.err;
  EXPECT_FALSE(fs::exists(dir.file("o")));  // nothing written before the input is checked
  auto protocol = runBraid("demo --protocols A,D --out '" + dir.file("o") + "'");
  EXPECT_EQ(protocol.rc, 2);
  EXPECT_NE(protocol.err.find("--protocol must be A, B or C, got 'D'"), std::string::npos) << protocol.err;
  auto workload = runBraid("demo --workload nope --out '" + dir.file("o") + "'");
  EXPECT_EQ(workload.rc, 2);
  auto sizes = runBraid("demo --m 0 --out '" + dir.file("o") + "'");
  EXPECT_EQ(sizes.rc, 2);
  EXPECT_FALSE(fs::exists(dir.file("o")));
}

TEST(CliSimDraw, OneTimeline) {
  testing::TempDir dir("braid_cli_demo_");
  std::string dot = dir.file("t.dot");
  auto r = runBraid("sim ag_matmul --machine h200 --devices 2 --draw '" + dot + "'");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("wrote " + dot), std::string::npos) << r.err;
  std::string text = slurp(dot);
  EXPECT_EQ(text.rfind("digraph timeline {", 0), 0u);
  // The two ranks do the same work: one is simulated and drawn, and the label says for whom.
  EXPECT_NE(text.find("predicted on h200 (rank 0 drawn for ranks 0-1)"), std::string::npos);
  // A bad extension fails before simulating.
  auto bad = runBraid("sim ag_matmul --machine h200 --draw '" + dir.file("t.jpg") + "'");
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.err.find("unknown picture format \"jpg\""), std::string::npos) << bad.err;
  EXPECT_EQ(bad.out, "");
  if (!graphvizAvailable()) return;
  std::string svgPath = dir.file("t.svg");
  auto svgRun = runBraid("sim ag_matmul --machine h200 --devices 2 --json --draw '" + svgPath + "'");
  ASSERT_EQ(svgRun.rc, 0) << svgRun.err;
  EXPECT_EQ(svgRun.out.rfind("{", 0), 0u);  // --json keeps stdout JSON
  if (!testing::canParseSvg()) return;
  testing::SvgDoc svg = testing::parseSvg(slurp(svgPath));
  ASSERT_TRUE(svg.wellFormed) << svg.error;
  EXPECT_FALSE(svg.withClass("op").empty());
}

TEST(CliSimDraw, SweepDrawsFastestAndSlowest) {
  testing::TempDir dir("braid_cli_demo_");
  std::string dot = dir.file("s.dot");
  auto r = runBraid("sim ag_matmul --machine h200 --devices 4 --sweep protocol=A,C streams=1,4 --draw '" + dot + "'");
  ASSERT_EQ(r.rc, 0) << r.err;
  std::string text = slurp(dot);
  // The table ranks the configurations; the picture's two panels are its first and last rows.
  std::smatch first, last;
  ASSERT_TRUE(std::regex_search(r.out, first, std::regex("\n *1 +(protocol=[ABC] streams=[0-9])"))) << r.out;
  ASSERT_TRUE(std::regex_search(r.out, last, std::regex("\n *4 +(protocol=[ABC] streams=[0-9])"))) << r.out;
  EXPECT_NE(text.find("[1] fastest: " + first[1].str()), std::string::npos) << text.substr(0, 4000);
  EXPECT_NE(text.find("[2] slowest: " + last[1].str()), std::string::npos);
  EXPECT_NE(text.find("fastest and slowest of 4 configurations"), std::string::npos);
  if (graphvizAvailable()) {
    auto png = runBraid("sim ag_matmul --machine h200 --devices 4 --sweep streams=1,4 --draw '" + dir.file("s.png") +
                        "'");
    ASSERT_EQ(png.rc, 0) << png.err;
    testing::PngInfo info = testing::checkPng(slurp(dir.file("s.png")));
    EXPECT_TRUE(info.wellFormed) << info.error;
  }
}

}  // namespace
}  // namespace braid::viz
