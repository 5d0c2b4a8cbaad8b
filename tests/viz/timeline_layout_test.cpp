// The timeline picture's layout, before any rendering: lanes, op order, aggregation of identical
// ranks, dense runs, arrows, overlap arithmetic, and that nothing overlaps that should not.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

#include "tests/support/error_of.h"
#include "tests/viz/synthetic_timeline.h"
#include "viz/overlap.h"
#include "viz/rank_groups.h"
#include "viz/text_metrics.h"
#include "viz/timeline_draw.h"

namespace braid::viz {
namespace {

using testing::errorOf;

// One rank: an allgather on the communicator stream [0, 10), a matmul on a worker [5, 20) after a
// Wait at 10 (so the comm is half hidden), the default stream's Synchronize at 20.
Timeline smallTimeline(int64_t ranks = 1) {
  Timeline t;
  t.program = "small";
  t.ranks = ranks;
  for (int64_t r = 0; r < ranks; ++r) {
    int32_t base = static_cast<int32_t>(t.streams.size());
    // Listed out of drawing order on purpose: communicator first.
    t.streams.push_back({base, r, TimelineStreamKind::kCommunicator, "NCCL team (0)"});
    t.streams.push_back({base + 1, r, TimelineStreamKind::kWorker, "Stream 1"});
    t.streams.push_back({base + 2, r, TimelineStreamKind::kDefault, "default stream"});
    int32_t op = static_cast<int32_t>(t.ops.size());
    t.ops.push_back({op, r, base, TimelineOpKind::kCommunication, "Allgather", 9, "i=0", 0, 10, 4096, 0});
    t.ops.push_back({op + 1, r, base + 1, TimelineOpKind::kCompute, "add", 8, "i=0", 5, 9, 0, 1e6});
    t.ops.push_back({op + 2, r, base + 1, TimelineOpKind::kWait, "Wait Allgather", 10, "i=0", 10, 10, 0, 0});
    t.ops.push_back({op + 3, r, base + 1, TimelineOpKind::kCompute, "matmul", 11, "i=0", 10, 20, 0, 1e9});
    t.ops.push_back({op + 4, r, base + 2, TimelineOpKind::kSync, "Synchronize Stream 1", 12, "", 20, 20, 0, 0});
    t.edges.push_back({op, op + 2, TimelineEdgeKind::kWait});
    t.edges.push_back({op + 3, op + 4, TimelineEdgeKind::kSync});
  }
  return t;
}

TEST(Overlap, SpanArithmetic) {
  std::vector<Span> u = unionOf({{5, 7}, {0, 2}, {1, 3}, {9, 9}, {6, 8}});
  EXPECT_EQ(u, (std::vector<Span>{{0, 3}, {5, 8}}));
  std::vector<Span> w = unionOf({{2, 6}, {7, 10}});
  EXPECT_EQ(intersectionOf(u, w), (std::vector<Span>{{2, 3}, {5, 6}, {7, 8}}));
  EXPECT_EQ(differenceOf(u, w), (std::vector<Span>{{0, 2}, {6, 7}}));
  EXPECT_DOUBLE_EQ(totalLength(u), 6);
}

TEST(Overlap, HiddenAndExposedCommunication) {
  OverlapSummary s = overlapOf(smallTimeline());
  ASSERT_EQ(s.ranks.size(), 1u);
  EXPECT_EQ(s.ranks[0].hidden, (std::vector<Span>{{5, 9}}));
  EXPECT_EQ(s.ranks[0].exposed, (std::vector<Span>{{0, 5}, {9, 10}}));
  EXPECT_DOUBLE_EQ(s.communicationUs, 10);
  EXPECT_DOUBLE_EQ(s.hiddenFraction(), 0.4);
}

TEST(RankGroups, IdenticalRanksWithinTolerance) {
  testing::SyntheticSpec spec;
  spec.iterations = 4;
  Timeline t = testing::syntheticTimeline(spec);  // ranks 0-3 identical, 4-7 each skewed by 3 us more
  std::vector<RankGroup> groups = groupIdenticalRanks(t, 0.5);
  ASSERT_EQ(groups.size(), 5u);
  EXPECT_EQ(groups[0].ranks, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(groups[4].ranks, (std::vector<int64_t>{7}));
  EXPECT_EQ(groupIdenticalRanks(t, 100).size(), 1u);  // everything within 100 us
  EXPECT_EQ(groupIdenticalRanks(t, -1).size(), 8u);
  EXPECT_EQ(rankListStr({0, 1, 2, 3, 5, 7, 8}), "0-3, 5, 7, 8");
}

TEST(TimelineLayout, LanesInDrawingOrderWithOpsInStartOrder) {
  TimelinePicture p = layoutTimelines({smallTimeline()}, {});
  ASSERT_EQ(p.panels.size(), 1u);
  const auto& lanes = p.panels[0].lanes;
  ASSERT_EQ(lanes.size(), 3u);
  EXPECT_EQ(lanes[0].stream, 2);  // default, worker, communicator
  EXPECT_EQ(lanes[1].stream, 1);
  EXPECT_EQ(lanes[2].stream, 0);
  EXPECT_EQ(lanes[1].ops, (std::vector<int32_t>{1, 2, 3}));
  for (size_t i = 1; i < lanes.size(); ++i) EXPECT_GE(lanes[i].y0, lanes[i - 1].y1);
  // The Wait crosses from the communicator lane to the worker, the Synchronize from the worker to
  // the default stream; both point forward in time from their source's end.
  int drawn = 0;
  for (const PlacedArrow& a : p.arrows) {
    if (a.from < 0) continue;  // legend samples
    ++drawn;
    EXPECT_LE(a.x0, a.x1 + 1e-9);
  }
  EXPECT_EQ(drawn, 2);
}

TEST(TimelineLayout, BoxesSitAtTheirTimesOnOneScale) {
  Timeline a = smallTimeline();
  Timeline b = smallTimeline();
  for (TimelineOp& op : b.ops) {  // b takes twice as long
    op.startUs *= 2;
    op.endUs *= 2;
  }
  TimelinePicture p = layoutTimelines({a, b}, {});
  ASSERT_EQ(p.panels.size(), 2u);
  std::map<std::string, const PlacedBox*> byId;
  for (const PlacedBox& box : p.boxes)
    if (!box.id.empty()) byId[box.id] = &box;
  // matmul: a [10, 20), b [20, 40): same scale in both panels.
  const PlacedBox* ma = byId.at("p0_op3");
  const PlacedBox* mb = byId.at("p1_op3");
  EXPECT_NEAR(mb->x0 - byId.at("p1_op0")->x0, 2 * (ma->x0 - byId.at("p0_op0")->x0), 1e-6);
  EXPECT_NEAR(mb->x1 - mb->x0, 2 * (ma->x1 - ma->x0), 1e-6);
  EXPECT_NEAR(byId.at("p0_op0")->x0, byId.at("p1_op0")->x0, 1e-9);
  EXPECT_NEAR(p.timeScale, 1000.0 / 40, 1e-9);
}

TEST(TimelineLayout, IdenticalRanksDrawnOnceAndSaidSo) {
  Timeline t = smallTimeline(4);
  TimelinePicture p = layoutTimelines({t}, {});
  EXPECT_EQ(p.panels[0].lanes.size(), 3u);
  EXPECT_EQ(p.panels[0].lanes[0].ranks, (std::vector<int64_t>{0, 1, 2, 3}));
  ASSERT_FALSE(p.panels[0].notes.empty());
  EXPECT_NE(p.panels[0].notes[0].find("identical ranks are drawn once"), std::string::npos);
  EXPECT_NE(p.panels[0].notes[0].find("0-3"), std::string::npos);

  TimelineDrawOptions all;
  all.aggregateRanks = false;
  EXPECT_EQ(layoutTimelines({t}, all).panels[0].lanes.size(), 12u);

  TimelineDrawOptions some;
  some.ranks = {2};
  TimelinePicture one = layoutTimelines({t}, some);
  ASSERT_EQ(one.panels[0].lanes.size(), 3u);
  EXPECT_EQ(one.panels[0].lanes[0].rank, 2);
  EXPECT_NE(one.panels[0].notes[0].find("showing ranks 2 of the 4"), std::string::npos);
}

TEST(TimelineLayout, ThinOpsWidenedAndDenseRunsMerged) {
  testing::SyntheticSpec spec;  // 8 ranks x 8 streams x 32 steps: 2880 ops
  Timeline t = testing::syntheticTimeline(spec);
  TimelineDrawOptions o;
  TimelinePicture p = layoutTimelines({t}, o);
  const TimelinePanel& panel = p.panels[0];
  // Ranks 0-3 are drawn once, 4..7 each: 5 groups of default + 8 workers + communicator, of
  // which 4 in full: the first three and rank 7, which ends last. Rank 6 gets a summary row.
  EXPECT_EQ(panel.lanes.size(), 4u * 10u);
  EXPECT_EQ(panel.summaryRows, (std::vector<std::vector<int64_t>>{{6}}));
  EXPECT_EQ(panel.lanes.back().rank, 7);
  EXPECT_GT(panel.denseRuns, 0);
  EXPECT_EQ(panel.denseRunOps, panel.denseRuns * spec.smallOps);
  bool said = false;
  for (const auto& n : panel.notes) said |= n.find("dense run") != std::string::npos;
  EXPECT_TRUE(said);
  // Every op of a drawn rank is on its lane exactly once, in start order.
  for (const PlacedLane& lane : panel.lanes) {
    std::vector<int32_t> expected;
    for (const TimelineOp& op : t.ops)
      if (op.rank == lane.rank && op.stream == lane.stream) expected.push_back(op.id);
    std::stable_sort(expected.begin(), expected.end(),
                     [&](int32_t a, int32_t b) { return t.ops[size_t(a)].startUs < t.ops[size_t(b)].startUs; });
    EXPECT_EQ(lane.ops, expected);
  }
  // Nothing is thinner than the minimum, except the markers (ticks) and the shading.
  for (const PlacedBox& b : p.boxes)
    if (b.role == ShapeRole::kOp || b.role == ShapeRole::kRun) EXPECT_GE(b.x1 - b.x0, o.minBoxPt - 1e-9) << b.id;
}

int64_t drawnArrows(const TimelinePicture& p, TimelineEdgeKind* only = nullptr) {
  int64_t n = 0;
  for (const PlacedArrow& a : p.arrows) n += a.from >= 0 && (!only || a.kind == *only);  // from < 0: legend
  return n;
}

bool noted(const TimelinePanel& p, const std::string& text) {
  for (const auto& n : p.notes)
    if (n.find(text) != std::string::npos) return true;
  return false;
}

TEST(TimelineLayout, ArrowsCappedPostFirstThenByRankGroup) {
  testing::SyntheticSpec spec;
  spec.ranks = 2;
  spec.skewFrom = 1;  // two different ranks: two groups
  spec.smallOps = 0;  // no dense runs
  Timeline t = testing::syntheticTimeline(spec);
  TimelineDrawOptions o;
  TimelinePicture full = layoutTimelines({t}, o);
  TimelineEdgeKind post = TimelineEdgeKind::kPost;
  int64_t all = drawnArrows(full), posts = drawnArrows(full, &post);
  EXPECT_EQ(full.panels[0].arrowsDropped, 0);
  ASSERT_GT(posts, 0);
  EXPECT_EQ(all, static_cast<int64_t>(t.edges.size()));

  o.maxArrows = static_cast<int>(all - posts);
  TimelinePicture capped = layoutTimelines({t}, o);
  EXPECT_EQ(capped.panels[0].arrowsDropped, posts);
  EXPECT_EQ(drawnArrows(capped, &post), 0);

  o.maxArrows = static_cast<int>((all - posts) / 2);  // room for one rank's arrows
  TimelinePicture half = layoutTimelines({t}, o);
  EXPECT_EQ(drawnArrows(half), (all - posts) / 2);
  for (const PlacedArrow& a : half.arrows)
    if (a.from >= 0) EXPECT_EQ(t.ops[size_t(a.to)].rank, 0);
  EXPECT_TRUE(noted(half.panels[0], "then drawn for ranks 0 only")) << half.panels[0].notes.back();
}

TEST(TimelineLayout, ArrowsIntoTheMiddleOfDenseRunsAreLeftOut) {
  testing::SyntheticSpec spec;  // the matmul's trailing small ops merge into runs; syncs leave from them
  spec.ranks = 1;
  Timeline t = testing::syntheticTimeline(spec);
  // Iteration 0 is: allgather, Wait, matmul, 6 small ops (a run), Synchronize. An ordering from the
  // second small op cannot be drawn.
  ASSERT_EQ(t.ops[9].kind, TimelineOpKind::kSync);
  t.edges.push_back({4, 9, TimelineEdgeKind::kSync});
  TimelinePicture p = layoutTimelines({t}, {});
  ASSERT_GT(p.panels[0].denseRuns, 0);
  // Ops drawn only inside runs, and each run's first and last op (by start time on its lane).
  std::set<int32_t> merged, firsts, lasts;
  for (const PlacedLane& lane : p.panels[0].lanes)
    for (int32_t id : lane.ops) merged.insert(id);
  for (const PlacedBox& b : p.boxes)
    if (b.role == ShapeRole::kOp || b.role == ShapeRole::kMarker) merged.erase(std::stoi(b.id.substr(b.id.find("op") + 2)));
  ASSERT_FALSE(merged.empty());
  for (const PlacedLane& lane : p.panels[0].lanes)
    for (size_t k = 0; k < lane.ops.size(); ++k) {
      bool in = merged.count(lane.ops[k]);
      if (in && (k == 0 || !merged.count(lane.ops[k - 1]))) firsts.insert(lane.ops[k]);
      if (in && (k + 1 == lane.ops.size() || !merged.count(lane.ops[k + 1]))) lasts.insert(lane.ops[k]);
    }
  int64_t fromRunEnds = 0;
  for (const PlacedArrow& a : p.arrows) {
    if (a.from < 0) continue;
    EXPECT_TRUE(!merged.count(a.from) || lasts.count(a.from)) << a.from;
    EXPECT_TRUE(!merged.count(a.to) || firsts.count(a.to)) << a.to;
    fromRunEnds += lasts.count(a.from) > 0;
  }
  EXPECT_GT(fromRunEnds, 0);  // the Synchronize after each iteration's last small op
  EXPECT_EQ(p.panels[0].arrowsDropped, 1);
  EXPECT_TRUE(noted(p.panels[0], "1 of " + std::to_string(t.edges.size()) + " ordering arrows not drawn (1 lead into dense runs)"))
      << p.panels[0].notes.back();
}

bool intersects(const PlacedText& a, const PlacedText& b) {
  return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
}

// What a reader would find ugly: labels on top of each other, labels that overflow their box.
TEST(TimelineLayout, TextsDoNotOverlapAndLabelsFit) {
  testing::SyntheticSpec spec;
  Timeline a = testing::syntheticTimeline(spec);
  spec.serialized = true;
  Timeline b = testing::syntheticTimeline(spec);
  TimelinePicture p = layoutTimelines({a, b}, {});
  for (size_t i = 0; i < p.texts.size(); ++i)
    for (size_t j = i + 1; j < p.texts.size(); ++j)
      EXPECT_FALSE(intersects(p.texts[i], p.texts[j])) << p.texts[i].text << " | " << p.texts[j].text;
  for (const PlacedText& t : p.texts) {
    EXPECT_LE(textWidth(t.text, t.fontSize), t.x1 - t.x0 + 1e-9) << t.text;
    EXPECT_GE(t.x0, 0);
    EXPECT_LE(t.x1, p.width);
  }
  for (const PlacedBox& box : p.boxes)
    if (!box.label.empty()) EXPECT_LE(textWidth(box.label, 8), box.x1 - box.x0) << box.label;
}

TEST(TimelineLayout, BadRequestsAreErrors) {
  EXPECT_EQ(errorOf([] { layoutTimelines({}, {}); }), "no timeline to draw");
  Timeline empty;
  EXPECT_EQ(errorOf([&] { layoutTimelines({empty}, {}); }), "the timeline has no ops to draw");
  TimelineDrawOptions o;
  o.ranks = {5, 6};
  EXPECT_EQ(errorOf([&] { layoutTimelines({smallTimeline()}, o); }),
            "the timeline has no ops on the ranks asked for (5, 6)");
  TimelineDrawOptions narrow;
  narrow.widthPt = 10;
  EXPECT_NE(errorOf([&] { layoutTimelines({smallTimeline()}, narrow); }), "");
}

TEST(TextMetrics, FitTextShortensWithAnEllipsis) {
  EXPECT_EQ(fitText("Stream 1", 200, 9), "Stream 1");
  std::string cut = fitText("a rather long stream name that cannot fit", 60, 9);
  EXPECT_LT(cut.size(), 40u);
  EXPECT_EQ(cut.substr(cut.size() - 3), "…");
  EXPECT_LE(textWidth(cut, 9), 60);
  EXPECT_EQ(fitText("abc", 1, 9), "");
}

}  // namespace
}  // namespace braid::viz
