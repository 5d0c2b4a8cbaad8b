// Measured timelines (exec/measured_timeline.h): a rank's part names only the ranks it has, so it
// reads back from its file (how `braid run --timeline` merges several ranks' parts), and the merge
// has every rank of its parts.
#ifdef BRAID_WITH_TORCH

#include "exec/measured_timeline.h"

#include <gtest/gtest.h>

#include "ir/host_ir_text.h"
#include "ir/timeline.h"
#include "tests/support/temp_dir.h"

namespace braid::exec {
namespace {

constexpr const char* kMatmul = R"(%HostIrContainer { (T0_g_float[iS0{4}, iS1{4}], T1_g_float[iS2{4}, iS3{4}]) -> (T2_g_float[iS4{4}, iS5{4}]) :
  T2_g_float[iS4{4}, iS5{4}]
     = matmul(T0_g_float[iS0{4}, iS1{4}],
              T1_g_float[iS2{4}, iS3{4}])
} // %HostIrContainer
)";

TEST(MeasuredTimeline, EachRanksPartReadsBackAndTheMergeHasEveryRank) {
  HostProgram p = parseHostProgram(kMatmul, "m.hir");
  ASSERT_FALSE(p.body().empty());
  const std::vector<TimedStatement> timed = {{p.body().front().get(), 0, "", ""}, {p.body().front().get(), 1, "", "nccl"}};
  const std::vector<DeviceSpan> spans = {{0, 1, 5}, {-1, 2, 9}};
  testing::TempDir dir("braid_measured_timeline_");
  Timeline all;
  for (int64_t rank : {0, 1, 2}) {
    Timeline part = measuredTimeline(timed, spans, rank);
    EXPECT_EQ(part.ranks, rank + 1);
    ASSERT_EQ(part.streams.size(), 2u);
    EXPECT_EQ(part.streams[1].rank, rank);
    const std::string file = dir.file("part" + std::to_string(rank) + ".json");
    writeTimelineFile(part, file);
    appendTimeline(all, readTimelineFile(file));  // as the run driver merges the parts
  }
  EXPECT_EQ(all.ranks, 3);
  EXPECT_EQ(all.streams.size(), 6u);
  EXPECT_EQ(all.ops.size(), 6u);
  EXPECT_EQ(all.ops.back().rank, 2);
}

}  // namespace
}  // namespace braid::exec

#endif
