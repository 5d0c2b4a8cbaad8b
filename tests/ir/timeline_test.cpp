// The timeline schema shared by sim (predicted) and exec (measured): round trip and the errors a
// malformed file gets.
#include "ir/timeline.h"

#include <gtest/gtest.h>

#include "tests/support/error_of.h"

namespace braid {
namespace {

using testing::errorOf;

Timeline twoStreams() {
  Timeline t;
  t.source = "predicted";
  t.program = "ag_matmul";
  t.machine = "h200";
  t.ranks = 1;
  t.meta["protocol"] = "A";
  t.streams = {{0, 0, TimelineStreamKind::kDefault, "default stream"},
               {1, 0, TimelineStreamKind::kCommunicator, "NCCL team (0 1)"}};
  t.ops = {{0, 0, 1, TimelineOpKind::kCommunication, "Allgather", 9, "StreamIdx=0", 0.0, 12.5, 4096, 0},
           {1, 0, 0, TimelineOpKind::kWait, "Wait Communication 0", 10, "StreamIdx=0", 12.5, 12.5, 0, 0},
           {2, 0, 0, TimelineOpKind::kCompute, "matmul", 13, "StreamIdx=0", 12.5, 40.25, 0, 2.0e9}};
  t.edges = {{0, 1, TimelineEdgeKind::kWait}};
  return t;
}

TEST(Timeline, RoundTripsThroughJson) {
  Timeline t = twoStreams();
  Timeline u = timelineFromJson(timelineToJson(t));
  EXPECT_EQ(timelineToJson(u), timelineToJson(t));
  ASSERT_EQ(u.ops.size(), 3u);
  EXPECT_EQ(u.ops[2].name, "matmul");
  EXPECT_DOUBLE_EQ(u.ops[2].endUs, 40.25);
  EXPECT_EQ(u.ops[0].kind, TimelineOpKind::kCommunication);
  EXPECT_EQ(u.streams[1].kind, TimelineStreamKind::kCommunicator);
  EXPECT_EQ(u.edges[0].kind, TimelineEdgeKind::kWait);
  EXPECT_EQ(u.meta.at("protocol"), "A");
  EXPECT_DOUBLE_EQ(u.makespanUs(), 40.25);
}

TEST(Timeline, ErrorsNameTheField) {
  std::string good = timelineToJson(twoStreams());
  auto with = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return s.replace(at, from.size(), to);
  };
  EXPECT_EQ(errorOf([&] { timelineFromJson("[1,2", "t.json"); }), "t.json: not valid JSON (byte 5)");
  EXPECT_EQ(errorOf([&] { timelineFromJson(with("\"end_us\":40.25", "\"end_us\":\"late\""), "t.json"); }),
            "t.json: ops[2].end_us: expected a number");
  EXPECT_EQ(errorOf([&] { timelineFromJson(with("\"end_us\":40.25", "\"end_us\":1.0"), "t.json"); }),
            "t.json: ops[2]: ends (1.000000) before it starts (12.500000)");
  EXPECT_EQ(errorOf([&] { timelineFromJson(with("\"stream\":0,\"kind\":\"compute\"", "\"stream\":7,\"kind\":\"compute\""),
                                           "t.json"); }),
            "t.json: ops[2].stream: no stream 7");
  EXPECT_EQ(errorOf([&] { timelineFromJson(with("\"kind\":\"compute\"", "\"kind\":\"gemm\""), "t.json"); }),
            "t.json: ops[2].kind: unknown value \"gemm\" (expected one of compute, communication, copy, memset, "
            "sync, wait, host)");
  EXPECT_EQ(errorOf([&] { timelineFromJson(with("\"to\":1", "\"to\":9"), "t.json"); }), "t.json: edges[0].to: no op 9");
  EXPECT_EQ(errorOf([&] { timelineFromJson(with("braid-timeline/1", "other/2"), "t.json"); }),
            "t.json: schema: \"other/2\" is not braid-timeline/1");
  EXPECT_EQ(errorOf([&] { timelineFromJson(with(" \"source\": \"predicted\",\n", ""), "t.json"); }),
            "t.json: source: missing");
  EXPECT_EQ(errorOf([&] { readTimelineFile("/nonexistent/t.json"); }),
            "/nonexistent/t.json: cannot open the timeline file");
}

}  // namespace
}  // namespace braid
