// Rendered timeline pictures: the SVG parses and holds the lanes and boxes of the timeline in the
// right order, the PNG is a whole PNG of the expected size, DOT needs no Graphviz. Set
// BRAID_VIZ_KEEP=DIR to keep the pictures for looking at them.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "ir/semantics/interpreter.h"
#include "passes/lower.h"
#include "catalog/workload.h"
#include "tests/support/error_of.h"
#include "tests/support/temp_dir.h"
#include "tests/viz/picture_check.h"
#include "tests/viz/synthetic_timeline.h"
#include "tests/viz/timeline_from_graph.h"
#include "viz/render.h"
#include "viz/timeline_draw.h"

namespace braid::viz {
namespace {

using testing::errorOf;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

// Renders into a temporary file (or BRAID_VIZ_KEEP/name) and returns the bytes.
std::string render(const std::vector<Timeline>& ts, const TimelineDrawOptions& o, const std::string& name) {
  static testing::TempDir dir("braid_viz_");
  const char* keep = std::getenv("BRAID_VIZ_KEEP");
  std::string path = (keep && *keep ? std::string(keep) : dir.path()) + "/" + name;
  renderTimelines(ts, o, path);
  return slurp(path);
}

#define REQUIRE_GRAPHVIZ()                                                        \
  if (!graphvizAvailable()) GTEST_SKIP() << "braid was built without Graphviz"; \
  if (!testing::canParseSvg()) GTEST_SKIP() << "the tests were built without Expat"

Timeline workloadTimeline(const std::string& name, int64_t devices, int64_t streams, StreamProtocol protocol) {
  WorkloadParams p;
  p.devices = devices;
  p.streams = streams;
  p.lowering.streams = streams;
  p.lowering.protocol = protocol;
  p.m = 8192;
  p.k = p.n = 1024;
  Workload w = makeWorkload(name, p);
  HostProgram program = lower(*w.fusion, w.params.lowering, w.params.devices);
  sem::SemanticsOptions so;
  so.numRanks = devices;
  so.numberOfStreams = streams;
  Timeline t = testing::timelineFromGraph(sem::buildEventGraph(program, so), name);
  t.meta["protocol"] = streamProtocolName(protocol);
  return t;
}

// The lanes of panel `panel` in the SVG, and each lane's op boxes ordered by their x position,
// compared with the timeline: same lanes, and boxes in start-time order.
void expectLanesAndOrder(const testing::SvgDoc& svg, const Timeline& t, const TimelinePanel& laid, int panel) {
  std::string prefix = "p" + std::to_string(panel) + "_";
  std::vector<testing::SvgGroup> lanes;
  for (const auto& g : svg.withClass("lane"))
    if (g.id.rfind(prefix, 0) == 0) lanes.push_back(g);
  ASSERT_EQ(lanes.size(), laid.lanes.size());
  for (size_t i = 0; i < lanes.size(); ++i) {
    const PlacedLane& lane = laid.lanes[i];
    EXPECT_EQ(lanes[i].id, prefix + "lane_r" + std::to_string(lane.rank) + "_s" + std::to_string(lane.stream));
    // Ops of this lane drawn one by one, by their left edge in the SVG.
    std::vector<std::pair<double, int32_t>> drawn;
    for (const auto& g : svg.withClass("op")) {
      if (g.id.rfind(prefix + "op", 0) != 0) continue;
      int32_t id = std::stoi(g.id.substr(prefix.size() + 2));
      const TimelineOp& op = t.ops[static_cast<size_t>(id)];
      if (op.rank != lane.rank || op.stream != lane.stream) continue;
      // Inside the lane's stripe vertically.
      EXPECT_GE(g.y0, lanes[i].y0 - 1.5) << g.id;
      EXPECT_LE(g.y1, lanes[i].y1 + 1.5) << g.id;
      drawn.emplace_back(g.x0, id);
    }
    std::stable_sort(drawn.begin(), drawn.end());
    std::vector<int32_t> byX, byStart;
    for (auto& [x, id] : drawn) byX.push_back(id);
    for (int32_t id : lane.ops)
      if (std::find(byX.begin(), byX.end(), id) != byX.end()) byStart.push_back(id);
    EXPECT_EQ(byX, byStart) << lanes[i].id;
  }
}

TEST(TimelineRender, SvgOfARealWorkloadHasItsLanesAndBoxesInOrder) {
  REQUIRE_GRAPHVIZ();
  Timeline t = workloadTimeline("ag_matmul", 4, 4, StreamProtocol::kSeparateSyncLoop);
  TimelineDrawOptions o;
  o.aggregateRanks = false;
  testing::SvgDoc svg = testing::parseSvg(render({t}, o, "ag_matmul.svg"));
  ASSERT_TRUE(svg.wellFormed) << svg.error;
  EXPECT_EQ(svg.rootName, "svg");
  TimelinePicture p = layoutTimelines({t}, o);
  // Every stream with an op is a lane: 4 ranks x (default + 4 workers + the communicator).
  EXPECT_EQ(p.panels[0].lanes.size(), 24u);
  expectLanesAndOrder(svg, t, p.panels[0], 0);
  // Every op of the timeline is a box (nothing here is thin enough to merge).
  EXPECT_EQ(svg.withClass("op").size(), t.ops.size());
  EXPECT_EQ(svg.withClass("run").size(), 0u);
  // Boxes carry the op's name when it fits and a tooltip always.
  std::vector<std::string> labels;
  for (const auto& g : svg.withClass("compute"))
    if (!g.texts.empty()) labels.push_back(g.texts[0]);
  ASSERT_FALSE(labels.empty());
  EXPECT_EQ(labels[0].rfind("matmul", 0), 0u);
}

TEST(TimelineRender, BigTimelineStaysReadable) {
  REQUIRE_GRAPHVIZ();
  testing::SyntheticSpec spec;  // 8 ranks x 8 streams x hundreds of ops
  Timeline a = testing::syntheticTimeline(spec);
  spec.serialized = true;
  Timeline b = testing::syntheticTimeline(spec);
  TimelineDrawOptions o;
  o.labels = {"pipelined", "serialized"};
  std::string text = render({a, b}, o, "synthetic_8x8.svg");
  testing::SvgDoc svg = testing::parseSvg(text);
  ASSERT_TRUE(svg.wellFormed) << svg.error;
  TimelinePicture p = layoutTimelines({a, b}, o);
  expectLanesAndOrder(svg, a, p.panels[0], 0);
  expectLanesAndOrder(svg, b, p.panels[1], 1);
  EXPECT_EQ(svg.withClass("run").size(), static_cast<size_t>(p.panels[0].denseRuns + p.panels[1].denseRuns));
  // The notes say what was aggregated and merged.
  EXPECT_NE(text.find("identical ranks are drawn once"), std::string::npos);
  EXPECT_NE(text.find("dense run"), std::string::npos);
  // Not a wall: a few thousand points tall at most.
  EXPECT_LT(p.height, 2500);
  testing::PngInfo png = testing::checkPng(render({a, b}, o, "synthetic_8x8.png"));
  EXPECT_TRUE(png.wellFormed) << png.error;
}

TEST(TimelineRender, PngIsAWholePngOfThePictureSize) {
  REQUIRE_GRAPHVIZ();
  Timeline t = workloadTimeline("ag_matmul", 8, 4, StreamProtocol::kSeparateSyncLoop);
  Timeline u = workloadTimeline("ag_matmul", 8, 4, StreamProtocol::kInLoopSync);
  TimelineDrawOptions o;
  o.labels = {"protocol A", "protocol B"};
  testing::PngInfo png = testing::checkPng(render({t, u}, o, "ag_matmul_ab.png"));
  ASSERT_TRUE(png.wellFormed) << png.error;
  TimelinePicture p = layoutTimelines({t, u}, o);
  // Graphviz renders PNG at 96 dpi, with a pad of 0.1 inch on each side.
  EXPECT_NEAR(png.width, (p.width + 14.4) * 96 / 72, 3);
  EXPECT_NEAR(png.height, (p.height + 14.4) * 96 / 72, 3);
}

TEST(TimelineRender, DotNeedsNoGraphviz) {
  std::string dot = render({testing::syntheticTimeline({})}, {}, "synthetic.dot");
  EXPECT_EQ(dot.rfind("digraph timeline {", 0), 0u);
  EXPECT_NE(dot.find("pos="), std::string::npos);
  EXPECT_NE(dot.find("class=\"lane\""), std::string::npos);
}

TEST(TimelineRender, FormatsComeFromTheExtension) {
  EXPECT_EQ(pictureFormatOf("a/b.SVG"), PictureFormat::kSvg);
  EXPECT_EQ(pictureFormatOf("x.png"), PictureFormat::kPng);
  EXPECT_EQ(pictureFormatOf("x.gv"), PictureFormat::kDot);
  EXPECT_EQ(errorOf([] { pictureFormatOf("out.jpeg"); }),
            "out.jpeg: unknown picture format \"jpeg\" (expected a file ending in .svg, .png or .dot)");
  std::string err = errorOf([] { renderDot("digraph { a }", "dot", PictureFormat::kSvg); });
  if (graphvizAvailable()) {
    EXPECT_EQ(err, "");
    EXPECT_NE(errorOf([] { renderDot("digraph { a -> }", "dot", PictureFormat::kSvg); }).find("Graphviz could not read"),
              std::string::npos);
  } else {
    EXPECT_NE(err.find("braid was built without Graphviz"), std::string::npos);
  }
}

}  // namespace
}  // namespace braid::viz
