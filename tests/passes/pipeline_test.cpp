// The pass manager (dumps, well-formedness), segmentation with a plugged predicate, sharding
// propagation and allocation finalization on small fusions.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "ir/error.h"
#include "lowering_test_util.h"
#include "passes/pass_manager.h"

namespace braid {
namespace {

using ::testing::HasSubstr;
using namespace testing_util;

TEST(PassManagerTest, DumpsAfterEveryPass) {
  Fusion f;
  singleStreamSet(f);
  std::ostringstream dump;
  LowerConfig cfg;
  cfg.dumpPasses = true;
  cfg.dumpStream = &dump;
  lower(f, protocolA(), 1, cfg);
  for (const char* pass : {"propagate-sharding", "decompose-reshardings", "finalize-allocation", "segmentation",
                           "classify-communications", "host-lowering", "stream-lowering", "forward-own-shard",
                           "lower-communications", "allocate-and-deallocate", "assign-streams", "select-comm-backend"})
    EXPECT_THAT(dump.str(), HasSubstr(std::string("after pass ") + pass));
  EXPECT_THAT(dump.str(), HasSubstr("%HostIrContainer"));
}

TEST(SegmentationTest, KernelsMergeUnlessThePredicateRefuses) {
  auto build = [](Fusion& f) {
    TensorView* tv0 = f.makeTensor({4, 8});
    f.addInput(tv0);
    TensorView* tv1 = relu(gelu(tv0));
    TensorView* tv2 = add(tv1, tv1);
    f.addOutput(neg(tv2));
  };
  {
    Fusion f;
    build(f);
    HostProgram p = lower(f, protocolA(), 1);
    EXPECT_EQ(countKind(p.body(), StmtKind::kPostOnStream), 2) << "gelu+relu, then neg; add is a host op";
    EXPECT_EQ(countKind(p.body(), StmtKind::kHostOp), 1);
  }
  {
    Fusion f;
    build(f);
    LowerConfig cfg;
    cfg.shouldMerge = [](const Segment&, const Segment&) { return false; };
    HostProgram p = lower(f, protocolA(), 1, cfg);
    EXPECT_EQ(countKind(p.body(), StmtKind::kPostOnStream), 3);
  }
}

TEST(PropagationTest, StreamPropagatesBackwardAndDidForward) {
  Fusion f;
  DeviceMesh mesh = DeviceMesh::range(2);
  TensorView* a = f.makeTensor({4, 2, 8, 6});
  TensorView* b = f.makeTensor({2, 6, 5});
  a->setDeviceMesh(mesh)->parallelize(1, ParallelType::kDIDx);
  b->setDeviceMesh(mesh)->parallelize(0, ParallelType::kDIDx);
  f.addInput(a);
  f.addInput(b);
  TensorView* pr = matmul(a, b);  // [4, 2, 8, 5, r6]
  TensorView* c = sum(pr, {1});
  c->setDeviceMesh(mesh);
  f.addOutput(c);
  c->parallelize(0, ParallelType::kStream);
  HostProgram p = lower(f, protocolA(), 2);
  EXPECT_EQ(pr->logical()[0]->parallelType(), ParallelType::kStream);
  EXPECT_EQ(pr->logical()[1]->parallelType(), ParallelType::kDIDx);
  EXPECT_TRUE(pr->hasDeviceMesh());
  auto comms = findAll<Communication>(p.body());
  ASSERT_EQ(comms.size(), 1u);
  EXPECT_EQ(comms[0]->type, CommunicationType::kAllreduce);
}

// A device axis split off a logical axis propagates through splits and merges of reshapes (the
// outermost axis of each group follows, as in nvFuser) and through reorders: no communication.
TEST(PropagationTest, SplitShardingFollowsReshapesAndReorders) {
  Fusion f;
  DeviceMesh mesh = DeviceMesh::range(2);
  TensorView* x = f.makeTensor({8, 6});
  x->setDeviceMesh(mesh)->outerSplit(0, 2)->parallelize(0, ParallelType::kDIDx);
  x->reorder({{0, 2}});  // loop order does not matter
  f.addInput(x);
  TensorView* y = reshape(x, {8, 2, 3});  // splits the columns
  TensorView* z = reshape(relu(y), {48});  // merges everything
  f.addOutput(z);
  HostProgram p = lower(f, protocolA(), 2);
  for (const TensorView* t : {y, z}) {
    const IterDomain* d = nullptr;
    for (const IterDomain* id : t->loop())
      if (id->isDeviceParallel()) d = id;
    ASSERT_NE(d, nullptr) << t->str();
    EXPECT_EQ(d->extent(), Scalar(2)) << t->str();
  }
  EXPECT_EQ(countKind(p.body(), StmtKind::kCommunication), 0) << print(p);
  EXPECT_EQ(roundTrip(p), "");
}

TEST(AllocationTest, StreamShardsOnlyIntermediatesWhoseConsumersMap) {
  Fusion f;
  TensorView* tv0 = f.makeTensor({4, 8});
  f.addInput(tv0);
  TensorView* tv1 = set(tv0);     // every consumer maps its Stream axis: per iteration
  TensorView* tv2 = add(tv1, tv1);
  f.addOutput(tv2);               // an output: allocated in full
  tv2->parallelize(0, ParallelType::kStream);
  LoweringContext ctx(f, protocolA(), 1);
  PassManager pm;
  pm.add(makePropagateShardingPass());
  pm.add(makeFinalizeAllocationPass());
  pm.run(ctx);
  EXPECT_TRUE(ctx.streamShardedAllocation.count(tv1));
  EXPECT_FALSE(ctx.streamShardedAllocation.count(tv2));
  EXPECT_FALSE(ctx.streamShardedAllocation.count(tv0));
}

TEST(LowerTest, BadOptionsAreErrors) {
  Fusion f;
  TensorView* tv0 = f.makeTensor({4});
  f.addInput(tv0);
  f.addOutput(set(tv0));
  LoweringOptions o;
  o.streams = 0;
  EXPECT_THROW(lower(f, o, 1), Error);
  EXPECT_THROW(lower(f, LoweringOptions{}, 0), Error);
  tv0->setDeviceMesh(DeviceMesh::range(4));
  EXPECT_THROW(lower(f, LoweringOptions{}, 2), Error);
}

}  // namespace
}  // namespace braid
