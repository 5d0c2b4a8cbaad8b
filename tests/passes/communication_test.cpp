// Resharding -> communication: the classifier on small fusions, and the communications the
// pipeline emits (teams, roots, waits, layout errors).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/error.h"
#include "lowering_test_util.h"
#include "passes/communication_classifier.h"

namespace braid {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace testing_util;

const DeviceMesh kMesh = DeviceMesh::range(4);

TensorView* meshed(TensorView* tv, const DeviceMesh& m = kMesh) {
  tv->setDeviceMesh(m);
  return tv;
}

TEST(ClassifierTest, SetFromShardedIsAllgather) {
  Fusion f;
  TensorView* a = meshed(f.makeTensor({4, 8}));
  a->parallelize(0, ParallelType::kDIDx);
  TensorView* b = meshed(set(a));
  const Expr& e = *b->definition();
  EXPECT_TRUE(isResharding(e));
  CommunicationInfo info = classifyCommunication(e);
  EXPECT_EQ(info.type, CommunicationType::kAllgather);
  EXPECT_THAT(info.team, ElementsAre(0, 1, 2, 3));
  EXPECT_FALSE(info.root.has_value());
}

TEST(ClassifierTest, SumOverShardedIsAllreduceOrReduceScatter) {
  Fusion f;
  TensorView* a = meshed(f.makeTensor({4, 4, 8}));
  a->parallelize(0, ParallelType::kDIDx);
  TensorView* ar = meshed(sum(a, {0}));
  EXPECT_EQ(classifyCommunication(*ar->definition()).type, CommunicationType::kAllreduce);
  EXPECT_EQ(classifyCommunication(*ar->definition()).redOp, ReductionOpType::kAdd);
  TensorView* rs = meshed(sum(a, {0}));
  rs->parallelize(1, ParallelType::kDIDx);
  CommunicationInfo info = classifyCommunication(*rs->definition());
  EXPECT_EQ(info.type, CommunicationType::kReduceScatter);
  EXPECT_EQ(info.producerAxis, 1);
}

TEST(ClassifierTest, MeshChangesAreRootedCommunications) {
  Fusion f;
  TensorView* a = meshed(f.makeTensor({4, 8}), DeviceMesh({0}));
  TensorView* bc = meshed(set(a), kMesh);
  CommunicationInfo info = classifyCommunication(*bc->definition());
  EXPECT_EQ(info.type, CommunicationType::kBroadcast);
  EXPECT_EQ(info.root, 0);
  TensorView* sr = meshed(set(a), DeviceMesh({2}));
  EXPECT_EQ(classifyCommunication(*sr->definition()).type, CommunicationType::kSendRecv);
  TensorView* sc = meshed(set(a), kMesh);
  sc->parallelize(0, ParallelType::kDIDx);
  EXPECT_EQ(classifyCommunication(*sc->definition()).type, CommunicationType::kScatter);

  TensorView* s = meshed(f.makeTensor({4, 8}), kMesh);
  s->parallelize(0, ParallelType::kDIDx);
  TensorView* g = meshed(set(s), DeviceMesh({1}));
  CommunicationInfo gi = classifyCommunication(*g->definition());
  EXPECT_EQ(gi.type, CommunicationType::kGather);
  EXPECT_EQ(gi.root, 1);
  TensorView* r = meshed(sum(s, {0}), DeviceMesh({3}));
  EXPECT_EQ(classifyCommunication(*r->definition()).type, CommunicationType::kReduce);
}

TEST(ClassifierTest, ChangingTheShardedAxisIsAllToAll) {
  Fusion f;
  TensorView* a = meshed(f.makeTensor({4, 4}));
  a->parallelize(0, ParallelType::kDIDx);
  TensorView* b = meshed(set(a));
  b->parallelize(1, ParallelType::kDIDx);
  EXPECT_EQ(classifyCommunication(*b->definition()).type, CommunicationType::kAllToAll);
}

TEST(ClassifierTest, DidToStreamIsAStreamIndexedBroadcast) {
  Fusion f;
  TensorView* a = meshed(f.makeTensor({4, 8}));
  a->parallelize(0, ParallelType::kDIDx);
  TensorView* b = meshed(set(a));
  b->parallelize(0, ParallelType::kStream);
  CommunicationInfo info = classifyCommunication(*b->definition());
  EXPECT_TRUE(info.didToStream);
  EXPECT_EQ(info.type, CommunicationType::kBroadcast);
}

TEST(ClassifierTest, ReshardingMatmulIsNotLowerable) {
  Fusion f;
  TensorView* a = meshed(f.makeTensor({4, 8}));
  TensorView* b = meshed(f.makeTensor({8, 4}));
  a->parallelize(0, ParallelType::kDIDx);
  TensorView* c = meshed(matmul(a, b));
  EXPECT_TRUE(isResharding(*c->definition()));
  try {
    classifyCommunication(*c->definition());
    FAIL();
  } catch (const NotLowerableError& e) {
    EXPECT_THAT(e.what(), HasSubstr("insert a set"));
  }
}

TEST(ClassifierTest, ConsistentShardingIsNotResharding) {
  Fusion f;
  TensorView* a = meshed(f.makeTensor({4, 8, 16}));
  TensorView* w = meshed(f.makeTensor({4, 16, 2}));
  a->parallelize(0, ParallelType::kDIDx);
  w->parallelize(0, ParallelType::kDIDx);
  TensorView* c = meshed(matmul(a, w));
  c->parallelize(0, ParallelType::kDIDx);
  EXPECT_FALSE(isResharding(*c->definition()));
  // A replicated operand feeding a sharded output is not resharding either.
  TensorView* r = meshed(f.makeTensor({16, 2}));
  TensorView* d = meshed(matmul(a, r));
  d->parallelize(0, ParallelType::kDIDx);
  EXPECT_FALSE(isResharding(*d->definition()));
}

TEST(CommunicationLoweringTest, StreamParallelAllgather) {
  Fusion f;
  TensorView* a = meshed(f.makeTensor({3, 4, 8, 2}));
  a->parallelize(1, ParallelType::kDIDx);
  f.addInput(a);
  TensorView* b = meshed(set(a));
  f.addOutput(b);
  b->parallelize(0, ParallelType::kStream);
  HostProgram p = lower(f, protocolA(), 4);
  EXPECT_EQ(topLevel(p), (std::vector<std::string>{"Allocate", "GetCurrentStream", "ForLoop", "ForLoop"}));
  auto comms = findAll<Communication>(p.body());
  ASSERT_EQ(comms.size(), 1u);
  EXPECT_EQ(comms[0]->type, CommunicationType::kAllgather);
  EXPECT_THAT(comms[0]->team, ElementsAre(0, 1, 2, 3));
  auto waits = findAll<Wait>(p.body());
  ASSERT_EQ(waits.size(), 1u);
  EXPECT_EQ(waits[0]->id, comms[0]->id);
  EXPECT_EQ(roundTrip(p), "");
}

TEST(CommunicationLoweringTest, TopLevelAllreduce) {
  Fusion f;
  TensorView* a = meshed(f.makeTensor({4, 8}));
  a->parallelize(0, ParallelType::kDIDx);
  f.addInput(a);
  TensorView* b = meshed(sum(a, {0}));
  f.addOutput(b);
  HostProgram p = lower(f, protocolA(), 4);
  EXPECT_THAT(topLevel(p), ElementsAre("Allocate", "Communication", "Wait"));
  EXPECT_EQ(p.body()[1]->as<Communication>()->redOp, ReductionOpType::kAdd);
  EXPECT_EQ(roundTrip(p), "");
}

TEST(CommunicationLoweringTest, DidToStreamCollectiveBroadcastsFromTheSliceOwner) {
  Fusion f;
  TensorView* a = meshed(f.makeTensor({4, 8, 2}));
  TensorView* w = meshed(f.makeTensor({2, 6}));
  a->parallelize(0, ParallelType::kDIDx);
  f.addInput(a);
  f.addInput(w);
  TensorView* a2 = meshed(set(a));
  a2->parallelize(0, ParallelType::kStream);
  TensorView* c = meshed(matmul(a2, w));
  c->parallelize(0, ParallelType::kStream);
  f.addOutput(c);
  HostProgram p = lower(f, protocolA(), 4);
  auto comms = findAll<Communication>(p.body());
  ASSERT_EQ(comms.size(), 1u);
  EXPECT_EQ(comms[0]->type, CommunicationType::kBroadcast);
  ASSERT_TRUE(comms[0]->root.has_value());
  EXPECT_EQ(comms[0]->root->str(), "StreamIdx");
  EXPECT_EQ(roundTrip(p), "");
}

// a2 = set(a) turns a's device axis into a Stream axis (D chunks), c = matmul(a2, w): the DID ->
// Stream pipeline of ag_matmul --pipeline p2p. With `keep_gathered`, a2 is an output too.
void p2pAgMatmul(Fusion& f, bool keep_gathered = false) {
  TensorView* a = meshed(f.makeTensor({4, 8, 2}));
  TensorView* w = meshed(f.makeTensor({2, 6}));
  a->parallelize(0, ParallelType::kDIDx);
  f.addInput(a);
  f.addInput(w);
  TensorView* a2 = meshed(set(a));
  a2->parallelize(0, ParallelType::kStream);
  TensorView* c = meshed(matmul(a2, w));
  c->parallelize(0, ParallelType::kStream);
  f.addOutput(c);
  if (keep_gathered) f.addOutput(a2);
}

LoweringOptions withP2P(LoweringOptions o, bool own_shard_in_place = false) {
  o.pipeline = PipelineKind::kP2P;
  o.ownShardInPlace = own_shard_in_place;
  return o;
}

TEST(CommunicationLoweringTest, DidToStreamP2PPairsWithinOneIteration) {
  Fusion f;
  p2pAgMatmul(f);
  HostProgram p = lower(f, withP2P(protocolB()), 4);
  auto ifs = findAll<IfThenElse>(p.body());
  ASSERT_EQ(ifs.size(), 1u);
  EXPECT_EQ(countKind(ifs[0]->thenBody, StmtKind::kHostOp), 1);  // the copy of the own shard
  auto p2p = findAll<P2PCommunication>(ifs[0]->elseBody);
  ASSERT_EQ(p2p.size(), 2u);
  EXPECT_EQ(p2p[0]->type, P2PType::kRecv);
  EXPECT_EQ(p2p[1]->type, P2PType::kSend);
  EXPECT_EQ(countKind(ifs[0]->elseBody, StmtKind::kWait), 1) << "the Wait sits under the same condition as the group";
  // Every rank's send in iteration i is received by its peer in the same iteration.
  const std::string i = findAll<ForLoop>(p.body())[0]->index;
  for (int64_t d = 4, it = 0; it < d; ++it)
    for (int64_t r = 0; r < d; ++r) {
      Bindings b{{i, it}, {"deviceIdx.x", r}};
      int64_t to = p2p[1]->peer.evaluate(b);
      if (to == r) continue;
      Bindings peer{{i, it}, {"deviceIdx.x", to}};
      EXPECT_EQ(p2p[0]->peer.evaluate(peer), r);
    }
  EXPECT_EQ(roundTrip(p), "");
}

// With --own-shard in-place the own shard is read where it lies (forward-own-shard): the THEN branch runs the matmul on the
// input's view that the ELSE branch sends, with no copy and no chunk buffer; the ELSE branch
// allocates the chunk, receives into it, runs the same matmul on it and frees it.
TEST(CommunicationLoweringTest, DidToStreamP2PReadsTheOwnShardInPlace) {
  for (LoweringOptions o : {protocolA(), protocolB()}) {
    Fusion f;
    p2pAgMatmul(f);
    HostProgram p = lower(f, withP2P(o, true), 4);
    EXPECT_EQ(ownShardCopies(p), 0) << print(p);
    auto ifs = findAll<IfThenElse>(p.body());
    ASSERT_EQ(ifs.size(), 1u);
    const Scope& then_body = ifs[0]->thenBody;
    const Scope& else_body = ifs[0]->elseBody;
    auto sends = findAll<P2PCommunication>(else_body);
    ASSERT_EQ(sends.size(), 2u);
    const TensorView* own = sends[1]->buffer;
    const TensorView* chunk = sends[0]->buffer;
    auto matmuls = [](const Scope& sc) {
      std::vector<const Expr*> v;
      for (const HostOp* h : findAll<HostOp>(sc))
        if (h->op->type() == OpType::kMatmul) v.push_back(h->op);
      return v;
    };
    ASSERT_EQ(matmuls(then_body).size(), 1u) << print(p);
    EXPECT_EQ(matmuls(then_body)[0]->input(0), own);
    EXPECT_EQ(countKind(then_body, StmtKind::kAllocate), 0);
    EXPECT_EQ(countKind(then_body, StmtKind::kDeallocate), 0);
    ASSERT_EQ(matmuls(else_body).size(), 1u);
    EXPECT_EQ(matmuls(else_body)[0]->input(0), chunk);
    ASSERT_EQ(findAll<Allocate>(else_body).size(), 1u);
    EXPECT_EQ(findAll<Allocate>(else_body)[0]->tv, chunk);
    ASSERT_EQ(findAll<Deallocate>(else_body).size(), 1u);
    EXPECT_EQ(findAll<Deallocate>(else_body)[0]->tv, chunk);
    // Nothing of the iteration is left after the branch but the join.
    for (const ForLoop* loop : findAll<ForLoop>(p.body())) {
      bool after = false;
      for (const StmtPtr& s : loop->body) {
        if (after) EXPECT_TRUE(s->is<SetCurrentStream>() || s->is<Synchronize>()) << stmtKindName(s->kind());
        after = after || s.get() == ifs[0];
      }
    }
    EXPECT_EQ(roundTrip(p), "");
  }
}

// Where the gathered tensor is kept in full (an output here; a prefetched chunk is the other case,
// tests/passes/golden_test.cpp), its buffer must hold every shard: the own one is copied in, even
// with --own-shard in-place.
TEST(CommunicationLoweringTest, DidToStreamP2PCopiesTheOwnShardIntoAGatheredOutput) {
  Fusion f;
  p2pAgMatmul(f, true);
  HostProgram p = lower(f, withP2P(protocolA(), true), 4);
  EXPECT_EQ(ownShardCopies(p), 1) << print(p);
  auto ifs = findAll<IfThenElse>(p.body());
  ASSERT_EQ(ifs.size(), 1u);
  EXPECT_EQ(countKind(ifs[0]->thenBody, StmtKind::kHostOp), 1);
  EXPECT_EQ(roundTrip(p), "");
}

TEST(CommunicationLoweringTest, InnerAxisAllgatherIsRejected) {
  Fusion f;
  TensorView* a = meshed(f.makeTensor({8, 4}));
  a->parallelize(1, ParallelType::kDIDx);
  f.addInput(a);
  TensorView* b = meshed(set(a));
  f.addOutput(b);
  try {
    lower(f, protocolA(), 4);
    FAIL();
  } catch (const NotLowerableError& e) {
    EXPECT_THAT(e.what(), HasSubstr("inner axis"));
  }
}

TEST(CommunicationLoweringTest, NonContiguousSliceIsStagedThroughACopy) {
  // Stream on axis 1 behind a non-trivial axis 0: the slice is strided, so the allreduce goes
  // through contiguous buffers.
  Fusion f;
  TensorView* a = meshed(f.makeTensor({4, 2, 3, 8}));
  a->parallelize(0, ParallelType::kDIDx);
  f.addInput(a);
  TensorView* b = meshed(sum(a, {0}));
  f.addOutput(b);
  b->parallelize(2, ParallelType::kStream);
  HostProgram p = lower(f, protocolA(), 4);
  auto comms = findAll<Communication>(p.body());
  ASSERT_EQ(comms.size(), 1u);
  for (const auto* v : findAll<AliasSelect>(p.body())) {
    EXPECT_NE(comms[0]->input, v->out);
    EXPECT_NE(comms[0]->output, v->out);
  }
  EXPECT_EQ(roundTrip(p), "");
}

}  // namespace
}  // namespace braid

namespace braid {
namespace {

TEST(ClassifierTest, ReductionAcrossDevicesIsRfactoredIntoPartialsAndAnAllreduce) {
  // c = matmul(a, b) with k sharded and the reduction axis device-parallel (rDIDx, nvFuser's
  // meaning: c sums across the devices). The matmul becomes a local one into partial sums
  // (an iteration DIDx axis, rfactor) and c = sum(partials) an Allreduce.
  Fusion f;
  TensorView* a = meshed(f.makeTensor({8, 4}));
  TensorView* b = meshed(f.makeTensor({4, 6}));
  a->parallelize(1, ParallelType::kDIDx);
  b->parallelize(0, ParallelType::kDIDx);
  f.addInput(a);
  f.addInput(b);
  TensorView* c = meshed(matmul(a, b));  // [8, 6, r4]
  c->parallelize(2, ParallelType::kDIDx);
  f.addOutput(c);
  EXPECT_TRUE(isResharding(*c->definition()));
  HostProgram p = lower(f, protocolA(), 4);
  // The fusion was rewritten in place: c is now the reduction of the partials.
  ASSERT_EQ(c->definition()->type(), OpType::kReduction);
  const TensorView* part = c->definition()->input(0);
  EXPECT_TRUE(isPartialAlong(part, ParallelType::kDIDx));
  EXPECT_EQ(part->definition()->type(), OpType::kMatmul);
  EXPECT_FALSE(isResharding(*part->definition())) << "the partial matmul is local";
  CommunicationInfo info = classifyCommunication(*c->definition());
  EXPECT_EQ(info.type, CommunicationType::kAllreduce);
  auto comms = findAll<Communication>(p.body());
  ASSERT_EQ(comms.size(), 1u);
  EXPECT_EQ(comms[0]->type, CommunicationType::kAllreduce);
  EXPECT_EQ(roundTrip(p), "");
}

TEST(DecomposeTest, ReshardingAddGetsASetInFront) {
  Fusion f;
  TensorView* a = meshed(f.makeTensor({4, 8}));
  a->parallelize(0, ParallelType::kDIDx);
  f.addInput(a);
  TensorView* b = meshed(add(a, a));  // unsharded output of a sharded input
  f.addOutput(b);
  HostProgram p = lower(f, protocolA(), 4);
  auto comms = findAll<Communication>(p.body());
  ASSERT_EQ(comms.size(), 1u);
  EXPECT_EQ(comms[0]->type, CommunicationType::kAllgather);
  EXPECT_EQ(findAll<HostOp>(p.body()).size(), 1u) << "the add runs locally on the gathered copy";
  EXPECT_EQ(roundTrip(p), "");
}

}  // namespace
}  // namespace braid
