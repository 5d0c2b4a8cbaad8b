// Happens-before on event graphs of small programs: stream order, Synchronize chains, Wait, the
// two stream-assignment protocols, and a join loop that reuses the work loop's index.
#include "ir/semantics/happens_before.h"

#include <gtest/gtest.h>

#include "tests/verify/verify_test_util.h"

namespace braid::sem {
namespace {

using braid::testing::loadVerifyProgram;

struct Built {
  HostProgram program;
  EventGraph graph;
};

Built build(const std::string& file, Bindings b, int64_t streams) {
  Built out;
  out.program = loadVerifyProgram(file);
  SemanticsOptions o;
  o.bindings = std::move(b);
  o.numberOfStreams = streams;
  out.graph = buildEventGraph(out.program, o);
  return out;
}

// The copy (Set) event of loop iteration `i`.
int32_t copyAt(const EventGraph& g, int64_t i) {
  for (const Event& e : g.events)
    if (e.kind == EventKind::kCopy && !e.loops.empty() && e.loops.back().value == i) return e.id;
  return -1;
}

int32_t exitOf(const EventGraph& g) {
  return g.exitEvent.at(0);
}
int32_t entryOf(const EventGraph& g) {
  return g.entryEvent.at(0);
}

TEST(HappensBefore, SameStreamIsFifo) {
  // numberOfStreams = 1: every iteration runs on the same worker stream.
  Built b = build("copy_sync_loop.hir", {{"i0", 4}, {"i2", 3}}, 1);
  HappensBefore hb(b.graph);
  EXPECT_TRUE(hb.ordered(copyAt(b.graph, 0), copyAt(b.graph, 1)));
  EXPECT_FALSE(hb.ordered(copyAt(b.graph, 1), copyAt(b.graph, 0)));
  EXPECT_FALSE(hb.ordered(copyAt(b.graph, 0), copyAt(b.graph, 0)));
}

TEST(HappensBefore, ProtocolAOverlapsAndJoins) {
  Built b = build("copy_sync_loop.hir", {{"i0", 4}, {"i2", 3}}, 4);
  HappensBefore hb(b.graph);
  EXPECT_FALSE(hb.deadlocked());
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_TRUE(hb.ordered(entryOf(b.graph), copyAt(b.graph, i))) << i;  // initial sync
    EXPECT_TRUE(hb.ordered(copyAt(b.graph, i), exitOf(b.graph))) << i;   // join
  }
  EXPECT_TRUE(hb.concurrent(copyAt(b.graph, 0), copyAt(b.graph, 1)));
  EXPECT_TRUE(hb.concurrent(copyAt(b.graph, 1), copyAt(b.graph, 3)));
}

TEST(HappensBefore, SynchronizeChainsSerializeHostIrExample) {
  // HOSTIR.md's example: iteration i+1's worker waits on the default stream, which waited on
  // iteration i's worker.
  Built b = build("copy_serialized.hir", {{"i0", 4}, {"i2", 3}}, 4);
  HappensBefore hb(b.graph);
  for (int64_t i = 0; i + 1 < 4; ++i) EXPECT_TRUE(hb.ordered(copyAt(b.graph, i), copyAt(b.graph, i + 1))) << i;
  auto chain = hb.chain(copyAt(b.graph, 0), copyAt(b.graph, 1));
  ASSERT_GE(chain.size(), 3u);
  EXPECT_EQ(chain.front().event, copyAt(b.graph, 0));
  EXPECT_EQ(chain.back().event, copyAt(b.graph, 1));
  bool has_sync = false;
  for (const auto& s : chain) has_sync |= s.via == LinkKind::kSync;
  EXPECT_TRUE(has_sync);
}

TEST(HappensBefore, ProtocolBJoinLoopReusesTheIndex) {
  Built b = build("protocol_b.hir", {{"i0", 5}, {"i2", 3}}, 4);
  HappensBefore hb(b.graph);
  // Raw indexing: one stream per iteration, plus the default stream.
  EXPECT_EQ(b.graph.streams.size(), 6u);
  for (int64_t i = 0; i < 5; ++i) {
    EXPECT_TRUE(hb.ordered(entryOf(b.graph), copyAt(b.graph, i)));
    EXPECT_TRUE(hb.ordered(copyAt(b.graph, i), exitOf(b.graph)));
  }
  EXPECT_TRUE(hb.concurrent(copyAt(b.graph, 0), copyAt(b.graph, 4)));
}

TEST(HappensBefore, PartialJoinLeavesWorkersUnordered) {
  Built b = build("protocol_b_partial_join.hir", {{"i0", 3}, {"i2", 3}}, 4);
  HappensBefore hb(b.graph);
  EXPECT_TRUE(hb.ordered(copyAt(b.graph, 0), exitOf(b.graph)));
  EXPECT_FALSE(hb.ordered(copyAt(b.graph, 1), exitOf(b.graph)));
}

TEST(HappensBefore, WaitOrdersTheCommunication) {
  Built b = build("p2p_deadlock_fixed.hir", {}, 4);
  HappensBefore hb(b.graph);
  EXPECT_FALSE(hb.deadlocked());
  int32_t group = -1;
  for (const Event& e : b.graph.events)
    if (e.kind == EventKind::kP2P && e.rank == 0) group = e.id;
  ASSERT_GE(group, 0);
  EXPECT_TRUE(hb.ordered(group, b.graph.exitEvent[0]));
  EXPECT_EQ(b.graph.groups.size(), 2u);  // two matched send/recv pairs
}

TEST(HappensBefore, DeadlockIsACycle) {
  Built b = build("p2p_deadlock.hir", {}, 4);
  HappensBefore hb(b.graph);
  ASSERT_TRUE(hb.deadlocked());
  EXPECT_GE(hb.cycle().size(), 4u);
}

TEST(EventGraph, CostInputsAndRegions) {
  Built b = build("copy_sync_loop.hir", {{"i0", 4}, {"i2", 3}}, 2);
  const Event& e = b.graph.events[static_cast<size_t>(copyAt(b.graph, 2))];
  ASSERT_EQ(e.reads.size(), 1u);
  ASSERT_EQ(e.writes.size(), 1u);
  EXPECT_EQ(e.reads[0].region.offset, 6);
  EXPECT_EQ(e.writes[0].region.sizes, std::vector<int64_t>{3});
  EXPECT_EQ(e.bytesRead, 12);
  EXPECT_EQ(e.bytesWritten, 12);
  EXPECT_EQ(b.graph.streamName(e.stream), "worker stream 0");  // (2 % 2)
  EXPECT_TRUE(e.stmt && e.stmt->loc.known());
}

}  // namespace
}  // namespace braid::sem

namespace braid::sem {
namespace {

TEST(HappensBefore, CommunicatorOrderIsOptional) {
  HostProgram p = braid::testing::loadVerifyProgram("comm_order.hir");
  SemanticsOptions o;
  EventGraph g = buildEventGraph(p, o);
  std::vector<int32_t> comms;
  for (const Event& e : g.events)
    if (e.kind == EventKind::kCollective && e.rank == 0) comms.push_back(e.id);
  ASSERT_EQ(comms.size(), 2u);
  EXPECT_EQ(g.groups.size(), 2u);
  HappensBefore serialized(g, true);
  HappensBefore free(g, false);
  EXPECT_TRUE(serialized.ordered(comms[0], comms[1]));
  EXPECT_TRUE(free.concurrent(comms[0], comms[1]));
  // Rendezvous: rank 0's first collective starts before rank 1's completes, and the entry of
  // rank 1 (through rank 1's collective) is ordered before rank 0's exit only via the
  // collective's completion, which the hub provides.
  int32_t r1_entry = g.entryEvent.at(1);
  EXPECT_TRUE(free.ordered(r1_entry, g.exitEvent.at(0)));
  EXPECT_TRUE(braid::verify::verifyProgram(p, {}).ok());
}

}  // namespace
}  // namespace braid::sem

namespace braid::sem {
namespace {

TEST(EventGraph, CostInputsOfMatmulAndAllgather) {
  HostProgram p = parseHostProgramFile(std::string(BRAID_SOURCE_DIR) + "/examples/ag_matmul_8ranks.hir");
  SemanticsOptions o;
  o.bindings = {{"i0", 64}, {"i2", 8}, {"i3", 8}};
  EventGraph g = buildEventGraph(p, o);
  EXPECT_EQ(g.numRanks, 8);
  const Event* mm = nullptr;
  const Event* ag = nullptr;
  for (const Event& e : g.events) {
    if (e.rank != 3) continue;
    if (e.op == "matmul" && !mm) mm = &e;
    if (e.kind == EventKind::kCollective && !ag) ag = &e;
  }
  ASSERT_TRUE(mm && ag);
  // [8, 2, 8] @ [8, 8]: 2 * (8 * 2 * 8) * 8 flops.
  EXPECT_EQ(mm->flops, 2.0 * 128 * 8);
  EXPECT_EQ(mm->bytesWritten, 128 * 4);
  EXPECT_EQ(ag->inputCount, 16);
  EXPECT_EQ(ag->outputCount, 128);
  EXPECT_EQ(ag->messageBytes, 512);
  EXPECT_GE(ag->group, 0);
  EXPECT_EQ(g.groups[static_cast<size_t>(ag->group)].members.size(), 8u);
  // Every collective is matched on all 8 ranks.
  for (const Event& e : g.events)
    if (e.kind == EventKind::kCollective) EXPECT_GE(e.group, 0);
}

}  // namespace
}  // namespace braid::sem

namespace braid::sem {
namespace {

TEST(EventGraph, RankSubsetRunsOnlyThoseRanks) {
  HostProgram p = braid::testing::loadVerifyProgram("comm_order.hir");
  SemanticsOptions o;
  o.ranks = {1};
  EventGraph g = buildEventGraph(p, o);
  EXPECT_EQ(g.numRanks, 2);
  for (const Event& e : g.events) EXPECT_EQ(e.rank, 1);
  EXPECT_TRUE(g.issues.empty());
  o.ranks = {2};
  EXPECT_THROW(buildEventGraph(p, o), Error);
}

}  // namespace
}  // namespace braid::sem
