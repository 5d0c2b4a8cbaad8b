// Structural tests of the lowering pipeline on small fusions: the cases nvFuser's
// test_host_ir_stream_lowering.cpp and test_multidevice_stream_parallel_type.cpp cover.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "ir/error.h"
#include "lowering_test_util.h"
#include "tests/support/error_of.h"

namespace braid {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace testing_util;
using testing::errorOf;

const std::vector<std::string> kStreamRegionA = {"Allocate", "GetCurrentStream", "ForLoop", "ForLoop"};

const ForLoop& workLoop(const HostProgram& p) {
  const ForLoop* last = nullptr;
  for (const auto& s : p.body())
    if (s->is<ForLoop>()) last = s->as<ForLoop>();
  return *last;
}

TEST(StreamLoweringTest, SingleSetOp) {
  Fusion f;
  TensorView* tv0 = f.makeTensor({8, 32});
  f.addInput(tv0);
  TensorView* tv1 = set(tv0);
  f.addOutput(tv1);
  tv1->parallelize(0, ParallelType::kStream);
  HostProgram p = lower(f, protocolA(), 1);
  EXPECT_EQ(topLevel(p), kStreamRegionA);
  const ForLoop& loop = workLoop(p);
  EXPECT_EQ(loop.index, "StreamIdx");
  ASSERT_NE(loop.domain, nullptr);
  EXPECT_EQ(loop.domain->extent(), Scalar(8));
  EXPECT_EQ(countKind(loop.body, StmtKind::kAliasSelect), 2);
  EXPECT_EQ(countKind(loop.body, StmtKind::kHostOp), 1);
  // The sync loop: every worker waits on the main stream.
  const ForLoop& sync = *p.body()[2]->as<ForLoop>();
  EXPECT_THAT(topLevel(p), ElementsAre("Allocate", "GetCurrentStream", "ForLoop", "ForLoop"));
  ASSERT_EQ(sync.body.size(), 2u);
  EXPECT_TRUE(sync.body[0]->is<SetCurrentStream>());
  EXPECT_TRUE(sync.body[1]->is<Synchronize>());
  EXPECT_EQ(sync.body[1]->as<Synchronize>()->stream, StreamRef::named("0"));
  // The work loop joins each worker back.
  EXPECT_TRUE(loop.body.back()->is<Synchronize>());
  EXPECT_EQ(roundTrip(p), "");
}

TEST(StreamLoweringTest, SingleSetOpNonOutermost) {
  Fusion f;
  TensorView* tv0 = f.makeTensor({4, 8, 2});
  f.addInput(tv0);
  TensorView* tv1 = set(tv0);
  f.addOutput(tv1);
  tv1->parallelize(1, ParallelType::kStream);
  HostProgram p = lower(f, protocolA(), 1);
  EXPECT_EQ(topLevel(p), kStreamRegionA);
  auto selects = findAll<AliasSelect>(workLoop(p).body);
  ASSERT_EQ(selects.size(), 2u);
  for (const AliasSelect* s : selects) {
    EXPECT_EQ(s->axis, s->in->logical()[1]);
    EXPECT_EQ(s->out->logical().size(), 2u);
  }
  EXPECT_EQ(roundTrip(p), "");
}

TEST(StreamLoweringTest, SingleBinaryOpAndReduction) {
  Fusion f;
  TensorView* a = f.makeTensor({4, 8, 16});
  TensorView* b = f.makeTensor({4, 8, 16});
  f.addInput(a);
  f.addInput(b);
  TensorView* c = add(a, b);
  TensorView* d = sum(c, {2});
  f.addOutput(d);
  d->parallelize(0, ParallelType::kStream);
  HostProgram p = lower(f, protocolA(), 1);
  // c gets Stream by backward propagation; both ops share one loop, and c lives per iteration.
  EXPECT_EQ(topLevel(p), kStreamRegionA);
  const ForLoop& loop = workLoop(p);
  EXPECT_EQ(countKind(loop.body, StmtKind::kHostOp), 2);
  auto allocs = findAll<Allocate>(loop.body);
  ASSERT_EQ(allocs.size(), 1u);
  EXPECT_FALSE(allocs[0]->legacy) << "a per-iteration buffer needs the always-fresh ALLOCATE";
  EXPECT_EQ(countKind(loop.body, StmtKind::kDeallocate), 1);
  EXPECT_EQ(roundTrip(p), "");
}

struct MatmulCase {
  const char* name;
  std::vector<Scalar> a, b;
  int stream_axis;
};

void PrintTo(const MatmulCase& c, std::ostream* os) { *os << c.name << ", Stream on axis " << c.stream_axis; }

class StreamMatmulTest : public ::testing::TestWithParam<MatmulCase> {};

TEST_P(StreamMatmulTest, LowersToOneLoop) {
  const MatmulCase& c = GetParam();
  Fusion f;
  TensorView* a = f.makeTensor(c.a);
  TensorView* b = f.makeTensor(c.b);
  f.addInput(a);
  f.addInput(b);
  TensorView* out = matmul(a, b);
  f.addOutput(out);
  out->parallelize(c.stream_axis, ParallelType::kStream);
  HostProgram p = lower(f, protocolA(), 1);
  EXPECT_EQ(topLevel(p), kStreamRegionA);
  const ForLoop& loop = workLoop(p);
  auto ops = findAll<HostOp>(loop.body);
  ASSERT_EQ(ops.size(), 1u);
  EXPECT_EQ(ops[0]->op->type(), OpType::kMatmul);
  // Exactly the operands with an axis mapped to the Stream axis are sliced, plus the output.
  int sliced_inputs = 0;
  for (const TensorView* in : ops[0]->op->inputs())
    sliced_inputs += std::count(p.inputs().begin(), p.inputs().end(), in) ? 0 : 1;
  EXPECT_EQ(sliced_inputs, 1);
  EXPECT_EQ(roundTrip(p), "");
}

INSTANTIATE_TEST_SUITE_P(, StreamMatmulTest,
                         ::testing::Values(MatmulCase{"M", {8, 4}, {4, 6}, 0},
                                           MatmulCase{"N", {8, 4}, {4, 6}, 1},
                                           MatmulCase{"Batch", {3, 8, 4}, {4, 6}, 0}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(StreamLoweringTest, TwoSetOpsShareOneLoop) {
  Fusion f;
  TensorView* tv0 = f.makeTensor({4, 8});
  f.addInput(tv0);
  TensorView* tv1 = set(tv0);
  TensorView* tv2 = set(tv1);
  f.addOutput(tv2);
  tv1->parallelize(0, ParallelType::kStream);
  tv2->parallelize(0, ParallelType::kStream);
  HostProgram p = lower(f, protocolA(), 1);
  EXPECT_EQ(topLevel(p), kStreamRegionA);
  EXPECT_EQ(countKind(workLoop(p).body, StmtKind::kHostOp), 2);
  EXPECT_EQ(roundTrip(p), "");
}

TEST(StreamLoweringTest, ThreeSetOpsWithDisjointLoops) {
  // tv2 is a fusion output without a Stream axis: it separates the two stream loops, and tv1
  // (consumed by the non-stream op) is allocated in full. tv2 gets its mesh from the user, which
  // keeps propagation from giving it tv1's Stream axis (nvFuser's rule: a tensor with a mesh is
  // scheduled by the user).
  Fusion f;
  TensorView* tv0 = f.makeTensor({4, 8});
  tv0->setDeviceMesh(DeviceMesh::range(1));
  f.addInput(tv0);
  TensorView* tv1 = set(tv0);
  TensorView* tv2 = set(tv1);
  tv2->setDeviceMesh(DeviceMesh::range(1));
  TensorView* tv3 = set(tv2);
  f.addOutput(tv2);
  f.addOutput(tv3);
  tv1->parallelize(0, ParallelType::kStream);
  tv3->parallelize(0, ParallelType::kStream);
  HostProgram p = lower(f, protocolA(), 1);
  EXPECT_THAT(topLevel(p), ElementsAre("Allocate", "GetCurrentStream", "ForLoop", "ForLoop", "Allocate", "HostOp",
                                       "Deallocate", "Allocate", "GetCurrentStream", "ForLoop", "ForLoop"));
  EXPECT_EQ(roundTrip(p), "");
}

TEST(StreamLoweringTest, KernelInsideStreamLoop) {
  Fusion f;
  TensorView* tv0 = f.makeTensor({4, 8});
  f.addInput(tv0);
  TensorView* tv1 = gelu(tv0);
  TensorView* tv2 = relu(tv1);
  f.addOutput(tv2);
  tv2->parallelize(0, ParallelType::kStream);
  HostProgram p = lower(f, protocolA(), 1);
  EXPECT_EQ(topLevel(p), kStreamRegionA);
  auto posts = findAll<PostOnStream>(workLoop(p).body);
  ASSERT_EQ(posts.size(), 1u) << "gelu and relu merge into one kernel";
  const HostUnit& unit = p.hostUnits().at(posts[0]->hostUnit);
  EXPECT_EQ(unit.fusion->exprs().size(), 2u);
  EXPECT_EQ(unit.fusion->inputs().at(0)->logical().size(), 1u) << "the kernel sees one stream slice";
  EXPECT_EQ(roundTrip(p), "");
}

// nvFuser's users split the Stream axis off (out->outer_split(0, S)): the output is allocated
// whole and each iteration writes its chunk through a ShardByStream view of the buffer's rank.
TEST(StreamLoweringTest, SplitStreamAxisIsChunkedByShardByStream) {
  Fusion f;
  TensorView* tv0 = f.makeTensor({32, 8});
  f.addInput(tv0);
  TensorView* tv1 = set(tv0);
  f.addOutput(tv1);
  tv1->outerSplit(0, 4)->parallelize(0, ParallelType::kStream);
  HostProgram p = lower(f, protocolB(), 1);
  EXPECT_THAT(topLevel(p), ElementsAre("Allocate", "GetCurrentStream", "ForLoop", "SetCurrentStream", "ForLoop"));
  const ForLoop& work = *p.body()[2]->as<ForLoop>();
  EXPECT_EQ(work.stop, Scalar(4));
  auto views = findAll<ShardByStream>(work.body);
  ASSERT_EQ(views.size(), 2u);  // the input's chunk and the output's
  for (const ShardByStream* v : views) {
    EXPECT_EQ(v->in->logical().size(), v->out->logical().size()) << "a chunk keeps the buffer's rank";
    EXPECT_TRUE(v->out->logical()[0]->isStream());
    EXPECT_EQ(v->out->logical()[0]->extent(), Scalar(4)) << "the chunked axis prints the chunk count";
    EXPECT_EQ(v->streamIndex, Scalar::symbol(work.index));
  }
  // The whole buffers keep their logical shape [32, 8].
  EXPECT_EQ(p.outputs()[0]->logical()[0]->extent(), Scalar(32));
  EXPECT_EQ(roundTrip(p), "");
}

// A Stream axis split from a merge of two logical axes chunks the merged (flattened) buffer.
TEST(StreamLoweringTest, MergedThenSplitStreamAxisChunksTheMergedBuffer) {
  Fusion f;
  TensorView* tv0 = f.makeTensor({4, 8, 3});
  f.addInput(tv0);
  TensorView* tv1 = set(tv0);
  f.addOutput(tv1);
  tv1->merge(0)->outerSplit(0, 2)->parallelize(0, ParallelType::kStream);  // [Stream{2}, 16, 3]
  HostProgram p = lower(f, protocolB(), 1);
  EXPECT_EQ(p.outputs()[0]->logical().size(), 2u) << "the output's buffer is [32, 3]";
  EXPECT_EQ(p.outputs()[0]->logical()[0]->extent(), Scalar(32));
  EXPECT_EQ(findAll<ShardByStream>(p.body()).size(), 2u);
  EXPECT_EQ(roundTrip(p), "");
}

TEST(StreamLoweringTest, StreamOnAnInnerSplitIsRejected) {
  Fusion f;
  TensorView* tv0 = f.makeTensor({32, 8});
  f.addInput(tv0);
  TensorView* tv1 = set(tv0);
  f.addOutput(tv1);
  tv1->outerSplit(0, 4)->parallelize(1, ParallelType::kStream);
  EXPECT_THAT(errorOf([&] { lower(f, protocolA(), 1); }), HasSubstr("inner output of a split"));
  Fusion g;
  TensorView* u0 = g.makeTensor({32, 8});
  g.addInput(u0);
  TensorView* u1 = set(u0);
  g.addOutput(u1);
  u1->innerSplit(0, 4)->parallelize(0, ParallelType::kStream);
  EXPECT_THAT(errorOf([&] { lower(g, protocolA(), 1); }), HasSubstr("use an outer split"));
}

// ShardByStream takes ceilDiv(e, S) elements per chunk: 6 rows in 4 chunks of 2 leave the last
// chunk empty, which the lowering refuses when it can see it.
TEST(StreamLoweringTest, EmptyLastChunkIsRejected) {
  Fusion f;
  TensorView* tv0 = f.makeTensor({6, 8});
  f.addInput(tv0);
  TensorView* tv1 = set(tv0);
  f.addOutput(tv1);
  tv1->outerSplit(0, 4)->parallelize(0, ParallelType::kStream);
  EXPECT_THAT(errorOf([&] { lower(f, protocolA(), 1); }), HasSubstr("leaves the last chunk empty"));
}

TEST(StreamLoweringTest, MergeOfNonAdjacentAxesIsRejected) {
  Fusion f;
  TensorView* tv0 = f.makeTensor({4, 8, 3});
  f.addInput(tv0);
  TensorView* tv1 = set(tv0);
  f.addOutput(tv1);
  tv1->reorder({{0, 1}})->merge(0)->parallelize(0, ParallelType::kStream);  // merges axes 1 and 0
  EXPECT_THAT(errorOf([&] { lower(f, protocolA(), 1); }), HasSubstr("not adjacent and in order"));
}

TEST(StreamLoweringTest, ProtocolBJoinsInATrailingLoop) {
  Fusion f;
  singleStreamSet(f);
  HostProgram p = lower(f, protocolB(), 1);
  EXPECT_THAT(topLevel(p), ElementsAre("Allocate", "GetCurrentStream", "ForLoop", "SetCurrentStream", "ForLoop"));
  const ForLoop& work = *p.body()[2]->as<ForLoop>();
  EXPECT_EQ(work.domain, nullptr);
  EXPECT_EQ(work.stop, Scalar(4));
  ASSERT_TRUE(work.body[0]->is<SetCurrentStream>());
  EXPECT_EQ(work.body[0]->as<SetCurrentStream>()->stream, StreamRef::indexed(Scalar::symbol(work.index)));
  EXPECT_TRUE(work.body[1]->is<Synchronize>());
  const ForLoop& join = *p.body()[4]->as<ForLoop>();
  EXPECT_EQ(join.index, work.index);
  ASSERT_EQ(join.body.size(), 1u);
  EXPECT_TRUE(join.body[0]->is<Synchronize>());
  EXPECT_FALSE(p.body()[0]->as<Allocate>()->legacy);
  EXPECT_EQ(roundTrip(p), "");
}

TEST(StreamLoweringTest, ProtocolCJoinsEveryIterationInsideTheLoop) {
  Fusion f;
  singleStreamSet(f);
  LoweringOptions o;
  o.protocol = StreamProtocol::kPerIterationJoin;
  HostProgram p = lower(f, o, 1);
  // One loop, no separate sync loop and no join loop: fork and join are both in the body.
  EXPECT_THAT(topLevel(p), ElementsAre("Allocate", "GetCurrentStream", "ForLoop"));
  EXPECT_TRUE(p.body()[0]->as<Allocate>()->legacy);  // pipeline A's top-level ALLOCATE
  const ForLoop& work = *p.body()[2]->as<ForLoop>();
  ASSERT_NE(work.domain, nullptr);  // FOR StreamIdx in iStreamIdx{4}
  std::vector<std::string> kinds;
  for (const auto& s : work.body) kinds.push_back(stmtKindName(s->kind()));
  EXPECT_THAT(kinds, ElementsAre("SetCurrentStream", "Synchronize", "HirAliasSelect", "HirAliasSelect", "HostOp",
                                 "SetCurrentStream", "Synchronize"));
  const StreamRef worker = StreamRef::indexed(Scalar::binary(ScalarOp::kMod, Scalar::symbol(work.index),
                                                             Scalar::symbol(kNumberOfStreams)));
  EXPECT_EQ(work.body[0]->as<SetCurrentStream>()->stream, worker);
  EXPECT_EQ(work.body[1]->as<Synchronize>()->stream, StreamRef::named("0"));
  EXPECT_EQ(work.body[5]->as<SetCurrentStream>()->stream, StreamRef::named("0"));
  EXPECT_EQ(work.body[6]->as<Synchronize>()->stream, worker);
  EXPECT_EQ(roundTrip(p), "");
}

TEST(StreamLoweringTest, ModuloIndexingWithProtocolB) {
  Fusion f;
  singleStreamSet(f);
  LoweringOptions o = protocolB();
  o.indexing = StreamIndexing::kModulo;
  HostProgram p = lower(f, o, 1);
  const ForLoop& work = *p.body()[2]->as<ForLoop>();
  EXPECT_EQ(printStmt(*work.body[0]), "SetCurrentStream to Stream ( " + work.index + " % numberOfStreams )\n");
}

TEST(StreamLoweringTest, RingBuffersNeedModuloIndexing) {
  Fusion f;
  singleStreamSet(f);
  LoweringOptions o = protocolA();
  o.ringBuffers = true;
  o.indexing = StreamIndexing::kRaw;
  EXPECT_THROW(lower(f, o, 1), Error);
}

TEST(StreamLoweringTest, RingBufferReplacesPerIterationAllocation) {
  Fusion f;
  TensorView* tv0 = f.makeTensor({6, 8});
  f.addInput(tv0);
  TensorView* tv1 = gelu(tv0);
  TensorView* tv2 = sum(tv1, {1});
  f.addOutput(tv2);
  tv2->parallelize(0, ParallelType::kStream);
  LoweringOptions o = protocolA();
  o.ringBuffers = true;
  HostProgram p = lower(f, o, 1);
  // No allocation inside the loop: the ring is allocated once, before it, and freed after it.
  EXPECT_EQ(countKind(workLoop(p).body, StmtKind::kAllocate), 0);
  EXPECT_THAT(topLevel(p), ElementsAre("Allocate", "Allocate", "GetCurrentStream", "ForLoop", "ForLoop", "Deallocate"));
  bool ring_slot = false;
  for (const AliasSelect* s : findAll<AliasSelect>(workLoop(p).body))
    if (s->axis->extent() == Scalar::symbol(kNumberOfStreams)) {
      ring_slot = true;
      EXPECT_EQ(s->index.str(), "( StreamIdx % numberOfStreams )");
    }
  EXPECT_TRUE(ring_slot);
  EXPECT_EQ(roundTrip(p), "");
}

TEST(StreamLoweringTest, ReshapeInsideStreamLoopIsRejected) {
  Fusion f;
  TensorView* tv0 = f.makeTensor({4, 8});
  f.addInput(tv0);
  TensorView* tv1 = reshape(tv0, {4, 2, 4});
  f.addOutput(tv1);
  tv1->parallelize(0, ParallelType::kStream);
  EXPECT_THROW(lower(f, protocolA(), 1), NotLowerableError);
}

TEST(StreamLoweringTest, OutputsAreNeverDeallocated) {
  Fusion f;
  TensorView* tv0 = f.makeTensor({4, 8});
  f.addInput(tv0);
  TensorView* tv1 = set(tv0);
  TensorView* tv2 = add(tv1, tv1);
  f.addOutput(tv1);
  f.addOutput(tv2);
  tv2->parallelize(0, ParallelType::kStream);
  for (const LoweringOptions& o : {protocolA(), protocolB()}) {
    HostProgram p = lower(f, o, 1);
    for (const Deallocate* d : findAll<Deallocate>(p.body()))
      for (const TensorView* out : p.outputs()) EXPECT_NE(d->tv, out);
  }
}

}  // namespace
}  // namespace braid

namespace braid {
namespace {

TEST(ScheduleCheckTest, DeviceAxisExtentMustMatchTheMesh) {
  Fusion f;
  TensorView* tv0 = f.makeTensor({3, 8});
  tv0->setDeviceMesh(DeviceMesh::range(2));
  tv0->parallelize(0, ParallelType::kDIDx);
  f.addInput(tv0);
  TensorView* tv1 = set(tv0);
  f.addOutput(tv1);
  try {
    lower(f, LoweringOptions{}, 2);
    FAIL();
  } catch (const NotLowerableError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("one shard per device"));
  }
}

TEST(ScheduleCheckTest, StreamOnABroadcastAxisIsRejected) {
  Fusion f;
  TensorView* tv0 = f.makeTensor({8});
  f.addInput(tv0);
  TensorView* tv1 = broadcast(tv0, {true, false});
  f.addOutput(tv1);
  tv1->parallelize(0, ParallelType::kStream);
  EXPECT_THROW(lower(f, LoweringOptions{}, 1), NotLowerableError);
}

}  // namespace
}  // namespace braid

namespace braid {
namespace {

TEST(StreamLoweringTest, TwoMatmulsNotInlinableNeedSeparateLoops) {
  // As nvFuser's test_two_matmuls_not_inlinable: the second matmul contracts the first one's
  // Stream axis (N), so it needs the whole intermediate: two loops, a full intermediate.
  Fusion f;
  TensorView* a = f.makeTensor({4, 6});
  TensorView* w = f.makeTensor({6, 6});
  f.addInput(a);
  f.addInput(w);
  TensorView* t1 = matmul(a, w);  // [4, 6, r6]
  TensorView* t2 = matmul(t1, w);
  f.addOutput(t2);
  t1->parallelize(1, ParallelType::kStream);
  t2->parallelize(1, ParallelType::kStream);
  HostProgram p = lower(f, testing_util::protocolA(), 1);
  EXPECT_THAT(testing_util::topLevel(p),
              ::testing::ElementsAre("Allocate", "GetCurrentStream", "ForLoop", "ForLoop", "Allocate", "GetCurrentStream",
                                     "ForLoop", "ForLoop", "Deallocate"));
  EXPECT_EQ(testing_util::roundTrip(p), "");
}

}  // namespace
}  // namespace braid
