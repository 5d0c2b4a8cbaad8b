// Validation (viz/validation.h) on small hand-made timelines whose errors and overlaps are known.
#include "viz/validation.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "ir/error.h"

namespace braid::viz {
namespace {

// One rank: two allgather chunks on the communicator, two matmuls on a worker stream, a Wait
// marker. `ag` and `mm` are the (start, end) of each op.
Timeline pipeline(const std::string& source, const std::string& worker, std::array<std::pair<double, double>, 2> ag,
                  std::array<std::pair<double, double>, 2> mm) {
  Timeline t;
  t.source = source;
  t.program = "ag_matmul";
  t.ranks = 2;
  t.streams = {{0, 0, TimelineStreamKind::kWorker, worker}, {1, 0, TimelineStreamKind::kCommunicator, "NCCL team (0 1)"}};
  auto add = [&](int32_t stream, TimelineOpKind kind, const std::string& name, int line, int it, double s, double e) {
    TimelineOp op;
    op.id = static_cast<int32_t>(t.ops.size());
    op.rank = 0;
    op.stream = stream;
    op.kind = kind;
    op.name = name;
    op.line = line;
    op.iteration = "StreamIdx=" + std::to_string(it);
    op.startUs = s;
    op.endUs = e;
    t.ops.push_back(op);
  };
  for (int i = 0; i < 2; ++i) {
    add(1, TimelineOpKind::kCommunication, "Allgather", 12, i, ag[i].first, ag[i].second);
    add(0, TimelineOpKind::kWait, "Wait Communication 1", 13, i, mm[i].first, mm[i].first);
    add(0, TimelineOpKind::kCompute, "matmul", 16, i, mm[i].first, mm[i].second);
  }
  t.edges = {{0, 1, TimelineEdgeKind::kWait}};
  return t;
}

Timeline predicted() { return pipeline("predicted", "Stream 0", {{{0, 10}, {10, 20}}}, {{{10, 30}, {30, 50}}}); }
Timeline measured() { return pipeline("measured", "Stream 0", {{{0, 12}, {12, 30}}}, {{{12, 34}, {34, 56}}}); }

const OpComparison& find(const Validation& v, const std::string& name, const std::string& it) {
  for (const auto& o : v.ops)
    if (o.name == name && o.iteration == it) return o;
  ADD_FAILURE() << "no comparison of " << name << " " << it;
  static OpComparison none;
  return none;
}

TEST(Validation, ErrorArithmetic) {
  Validation v = compareTimelines(measured(), predicted());
  EXPECT_DOUBLE_EQ(v.measuredMakespanUs, 56);
  EXPECT_DOUBLE_EQ(v.predictedMakespanUs, 50);
  EXPECT_NEAR(v.makespanError(), -6.0 / 56, 1e-12);
  ASSERT_EQ(v.ops.size(), 4u);
  EXPECT_EQ(v.matchedMarkers, 2u);
  EXPECT_TRUE(v.unmatchedMeasured.empty());
  EXPECT_TRUE(v.unmatchedPredicted.empty());
  EXPECT_NEAR(find(v, "Allgather", "StreamIdx=0").error(), (10.0 - 12) / 12, 1e-12);
  EXPECT_NEAR(find(v, "Allgather", "StreamIdx=1").error(), (10.0 - 18) / 18, 1e-12);
  EXPECT_NEAR(find(v, "matmul", "StreamIdx=1").error(), (20.0 - 22) / 22, 1e-12);
  EXPECT_DOUBLE_EQ(find(v, "matmul", "StreamIdx=1").startErrorUs(), 30 - 34);
  EXPECT_NEAR(v.maxAbsOpError(), 8.0 / 18, 1e-12);
  // |errors| 1/6, 4/9, 1/11, 1/11: the median is the mean of the middle two.
  EXPECT_NEAR(v.medianAbsOpError(), 0.5 * (1.0 / 11 + 1.0 / 6), 1e-12);
  // Per statement: the allgathers lose 10 us of 30, the matmuls 4 of 44; allgather first.
  ASSERT_EQ(v.groups.size(), 2u);
  EXPECT_EQ(v.groups[0].name, "Allgather");
  EXPECT_EQ(v.groups[0].count, 2u);
  EXPECT_NEAR(v.groups[0].error(), (20.0 - 30) / 30, 1e-12);
  EXPECT_NEAR(v.groups[1].error(), (40.0 - 44) / 44, 1e-12);
}

TEST(Validation, OverlapOnBothSides) {
  Validation v = compareTimelines(measured(), predicted());
  ASSERT_EQ(v.overlap.size(), 2u);  // all ranks, then rank 0
  const OverlapComparison& all = v.overlap[0];
  EXPECT_EQ(all.rank, -1);
  // Predicted: communication [0, 20], work [10, 50]: 10 of 20 hidden. Measured: [0, 30] and
  // [12, 56]: 18 of 30.
  EXPECT_DOUBLE_EQ(all.predictedCommUs, 20);
  EXPECT_DOUBLE_EQ(all.predictedFraction(), 0.5);
  EXPECT_DOUBLE_EQ(all.measuredCommUs, 30);
  EXPECT_DOUBLE_EQ(all.measuredFraction(), 0.6);
  EXPECT_EQ(v.overlap[1].rank, 0);
}

TEST(Validation, MatchesAcrossDifferentlyNamedStreamsAndListsTheRest) {
  Timeline m = pipeline("measured", "worker stream 0", {{{0, 12}, {12, 30}}}, {{{12, 34}, {34, 56}}});
  TimelineOp extra = m.ops.back();
  extra.id = static_cast<int32_t>(m.ops.size());
  extra.name = "add";
  extra.line = 20;
  m.ops.push_back(extra);
  Validation v = compareTimelines(m, predicted());
  EXPECT_EQ(v.ops.size(), 4u);
  ASSERT_EQ(v.unmatchedMeasured.size(), 1u);
  EXPECT_EQ(v.unmatchedMeasured[0], "rank 0, worker stream 0: add (line 20, StreamIdx=1)");
  std::string text = validationReport(v, 3);
  EXPECT_NE(text.find("end to end: measured 56.0 us, predicted 50.0 us, error -10.7%"), std::string::npos) << text;
  EXPECT_NE(text.find("unmatched measured operations (1)"), std::string::npos) << text;
  auto j = nlohmann::json::parse(validationJson(v));
  EXPECT_EQ(j["ops"].size(), 4u);
  EXPECT_NEAR(j["makespan_error"].get<double>(), -6.0 / 56, 1e-12);
}

TEST(Validation, RefusesRanksTheSimulationDoesNotHave) {
  Timeline m = measured();
  m.ops[0].rank = 5;
  m.streams[1].rank = 5;
  EXPECT_THROW(compareTimelines(m, predicted()), Error);
  Timeline empty = measured();
  empty.ops.clear();
  empty.edges.clear();
  EXPECT_THROW(compareTimelines(empty, predicted()), Error);
}

TEST(Validation, SideBySideKeepsBothTimelinesApart) {
  Timeline both = sideBySide(measured(), predicted());
  ASSERT_EQ(both.streams.size(), 4u);
  EXPECT_EQ(both.streams[0].name, "measured: Stream 0");
  EXPECT_EQ(both.streams[3].name, "predicted: NCCL team (0 1)");
  ASSERT_EQ(both.ops.size(), 12u);
  EXPECT_EQ(both.ops[6].stream, 3);  // the predicted first allgather, on its renumbered stream
  ASSERT_EQ(both.edges.size(), 2u);
  EXPECT_EQ(both.edges[1].from, 6);
  EXPECT_EQ(both.edges[1].to, 7);
  // A valid timeline: it survives the JSON round trip.
  EXPECT_EQ(timelineFromJson(timelineToJson(both)).ops.size(), 12u);
}

}  // namespace
}  // namespace braid::viz

namespace braid::viz {
namespace {

TEST(Validation, MeasuredNamesWithIdsMatchByFirstWordAndWaitSpansAreMarkers) {
  // A measured run names its ops "Allgather 0" and "Wait Communication 0", the simulator
  // "Allgather" and "Wait Allgather 0"; a measured Wait spans from post to satisfied.
  Timeline m = pipeline("measured", "stream slot 1", {{{0, 12}, {12, 30}}}, {{{12, 34}, {34, 56}}});
  for (auto& op : m.ops) {
    if (op.kind == TimelineOpKind::kCommunication) op.name = "Allgather 0";
    if (op.kind == TimelineOpKind::kWait) op.name = "Wait Communication 0", op.endUs = op.startUs + 80;
  }
  Timeline p = pipeline("predicted", "worker stream 0", {{{0, 10}, {10, 20}}}, {{{10, 30}, {30, 50}}});
  for (auto& op : p.ops)
    if (op.kind == TimelineOpKind::kWait) op.name = "Wait Allgather 0";
  Validation v = compareTimelines(m, p);
  EXPECT_TRUE(v.unmatchedMeasured.empty());
  EXPECT_TRUE(v.unmatchedPredicted.empty());
  EXPECT_EQ(v.ops.size(), 4u);  // the allgathers and matmuls; the Waits are markers
  EXPECT_EQ(v.matchedMarkers, 2u);
  for (const auto& op : v.ops) EXPECT_NE(op.kind, TimelineOpKind::kWait);
}

}  // namespace
}  // namespace braid::viz
