// Rank starts estimated from a measured timeline (sim/rank_skew.h).
#include "sim/rank_skew.h"

#include <gtest/gtest.h>

namespace braid::sim {
namespace {

TimelineOp op(int64_t rank, TimelineOpKind kind, const std::string& name, int line, const std::string& it, double s,
              double e) {
  TimelineOp o;
  o.rank = rank;
  o.kind = kind;
  o.name = name;
  o.line = line;
  o.iteration = it;
  o.startUs = s;
  o.endUs = e;
  return o;
}

TEST(RankSkew, CollectivesEndTogetherSoTheirEndsGiveTheStarts) {
  Timeline t;
  t.ranks = 3;
  // Rank 1 started 80 us before rank 0 (its clock reads 80 more at every common end), rank 2
  // 10 us after. One collective's ends are off by a few us (the median ignores it).
  for (int i = 0; i < 3; ++i) {
    std::string it = "i=" + std::to_string(i);
    double end = 100.0 + 50 * i;
    t.ops.push_back(op(0, TimelineOpKind::kCommunication, "Allgather 0", 9, it, end - 40, end));
    t.ops.push_back(op(1, TimelineOpKind::kCommunication, "Allgather 0", 9, it, end + 20, end + 80 + (i == 2 ? 7 : 0)));
    t.ops.push_back(op(2, TimelineOpKind::kCommunication, "Allgather 0", 9, it, end - 50, end - 10));
  }
  t.ops.push_back(op(1, TimelineOpKind::kCompute, "matmul", 12, "i=0", 0, 500));  // not a collective
  t.ops.push_back(op(0, TimelineOpKind::kCommunication, "EndCoalescing", 20, "", 0, 900));  // P2P: left out
  std::vector<double> s = rankStartOffsets(t);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_NEAR(s[1], 0, 1e-9);  // the earliest
  EXPECT_NEAR(s[0], 80, 1e-9);
  EXPECT_NEAR(s[2], 90, 1e-9);
}

TEST(RankSkew, WithoutCommonCollectivesEveryRankStartsAtZero) {
  Timeline t;
  t.ranks = 2;
  t.ops.push_back(op(0, TimelineOpKind::kCompute, "matmul", 3, "", 0, 10));
  EXPECT_EQ(rankStartOffsets(t), (std::vector<double>{0, 0}));
}

}  // namespace
}  // namespace braid::sim
