// The Chrome / Perfetto trace writer: processes per rank, threads per stream, slices with args,
// instants for markers, flow arrows bound inside slices, counters.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "viz/trace_writer.h"

namespace braid {
namespace {

using json = nlohmann::json;

// Rank 0: `matmul` on the default stream, then a worker stream synchronizes with it and copies.
Timeline twoStreams() {
  Timeline t;
  t.program = "test";
  t.machine = "h200";
  t.ranks = 1;
  t.streams = {{0, 0, TimelineStreamKind::kDefault, "default stream"}, {1, 0, TimelineStreamKind::kWorker, "Stream 1"}};
  t.ops.push_back({0, 0, 0, TimelineOpKind::kCompute, "matmul", 4, "", 0.0, 10.0, 4096, 1e9});
  t.ops.push_back({1, 0, 1, TimelineOpKind::kSync, "Synchronize default stream", 5, "i=0", 10.0, 10.0, 0, 0});
  t.ops.push_back({2, 0, 1, TimelineOpKind::kCopy, "Set", 6, "i=0", 10.0, 25.5, 8192, 0});
  t.edges.push_back({0, 1, TimelineEdgeKind::kSync});
  return t;
}

std::vector<json> eventsWith(const json& doc, const std::string& ph) {
  std::vector<json> out;
  for (const auto& e : doc["traceEvents"])
    if (e["ph"] == ph) out.push_back(e);
  return out;
}

TEST(TraceWriter, SlicesPerRankAndStreamWithTheirArgs) {
  json doc = json::parse(viz::chromeTraceJson(twoStreams()));
  EXPECT_EQ(doc["displayTimeUnit"], "ns");
  auto slices = eventsWith(doc, "X");
  ASSERT_EQ(slices.size(), 2u);
  EXPECT_EQ(slices[0]["name"], "matmul");
  EXPECT_EQ(slices[0]["pid"], 0);
  EXPECT_EQ(slices[0]["tid"], 0);
  EXPECT_EQ(slices[0]["dur"], 10.0);
  EXPECT_EQ(slices[0]["args"]["bytes"], 4096);
  EXPECT_EQ(slices[0]["args"]["flops"], 1e9);
  EXPECT_EQ(slices[0]["args"]["line"], 4);
  EXPECT_EQ(slices[1]["args"]["iteration"], "i=0");
  // The zero-length Synchronize is an instant on its stream.
  auto instants = eventsWith(doc, "i");
  ASSERT_EQ(instants.size(), 1u);
  EXPECT_EQ(instants[0]["tid"], 1);
  // Names of the process and its threads.
  int names = 0;
  for (const auto& m : eventsWith(doc, "M")) {
    if (m["name"] == "process_name") EXPECT_EQ(m["args"]["name"], "rank 0 (predicted, h200)");
    if (m["name"] == "thread_name" && m["tid"] == 1) {
      EXPECT_EQ(m["args"]["name"], "Stream 1 [worker]");
      ++names;
    }
  }
  EXPECT_EQ(names, 1);
}

TEST(TraceWriter, FlowsBindInsideTheSlicesThatWaitedAndWereWaitedFor) {
  json doc = json::parse(viz::chromeTraceJson(twoStreams()));
  auto starts = eventsWith(doc, "s");
  auto ends = eventsWith(doc, "f");
  ASSERT_EQ(starts.size(), 1u);
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_EQ(starts[0]["id"], ends[0]["id"]);
  EXPECT_EQ(starts[0]["cat"], "sync");
  // Out of the matmul, strictly inside it; into the copy after the marker, strictly inside it.
  EXPECT_EQ(starts[0]["tid"], 0);
  EXPECT_GT(starts[0]["ts"].get<double>(), 0.0);
  EXPECT_LT(starts[0]["ts"].get<double>(), 10.0);
  EXPECT_EQ(ends[0]["tid"], 1);
  EXPECT_EQ(ends[0]["bp"], "e");
  EXPECT_GT(ends[0]["ts"].get<double>(), 10.0);
  EXPECT_LT(ends[0]["ts"].get<double>(), 25.5);
  viz::TraceOptions no_flows;
  no_flows.flows = false;
  EXPECT_TRUE(eventsWith(json::parse(viz::chromeTraceJson(twoStreams(), no_flows)), "s").empty());
}

TEST(TraceWriter, CounterTracks) {
  viz::TraceOptions o;
  o.counters.push_back({0, "busy SMs", {{0.0, 0.0}, {1.0, 132.0}, {10.0, 24.0}}});
  json doc = json::parse(viz::chromeTraceJson(twoStreams(), o));
  auto counters = eventsWith(doc, "C");
  ASSERT_EQ(counters.size(), 3u);
  EXPECT_EQ(counters[1]["args"]["busy SMs"], 132.0);
  EXPECT_EQ(counters[2]["ts"], 10.0);
}

}  // namespace
}  // namespace braid
