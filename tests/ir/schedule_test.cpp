// Scheduling a TensorView: split, merge, reorder, parallelize, meshes, allocation domains,
// logicalOrigin, and the nvFuser spelling of IterDomains and tensors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/error.h"
#include "ir/fusion.h"
#include "ir/ops.h"
#include "tests/support/error_of.h"

namespace braid {
namespace {

using ::testing::HasSubstr;

Scalar sym(const char* n) { return Scalar::symbol(n); }

std::string loopStr(const TensorView* tv) {
  std::string s;
  for (const IterDomain* id : tv->loop()) s += (s.empty() ? "" : ", ") + id->str();
  return s;
}

using testing::errorOf;

TEST(ScheduleSpelling, IterDomainStr) {
  EXPECT_EQ(IterDomain(4, sym("i0"), IterType::kIteration, ParallelType::kStream).str(), "iStreamIdx4{i0}");
  EXPECT_EQ(IterDomain(22, 2, IterType::kIteration, ParallelType::kDIDx, true).str(), "ideviceIdx.x22{2}rf");
  EXPECT_EQ(IterDomain(21, Scalar::binary(ScalarOp::kCeilDiv, sym("i0"), 3)).str(), "iS21{( ceilDiv(i0, 3) )}");
  EXPECT_EQ(IterDomain(23, 4, IterType::kReduction, ParallelType::kSerial, true).str(), "rS23{4}rf");
  EXPECT_EQ(IterDomain(3, 1, IterType::kBroadcast).str(), "bS3{1}");
  EXPECT_EQ(IterDomain(5, sym("i2"), IterType::kIteration, ParallelType::kDIDy).str(), "ideviceIdx.y5{i2}");
  EXPECT_EQ(IterDomain(9, Scalar::binary(ScalarOp::kMul, sym("i0"), sym("i2"))).str(), "iS9{( i0 * i2 )}");
}

TEST(ScheduleSpelling, SameAsIgnoresIds) {
  IterDomain a(1, 4, IterType::kIteration, ParallelType::kStream);
  IterDomain b(7, 4, IterType::kIteration, ParallelType::kStream);
  IterDomain c(7, 4, IterType::kIteration, ParallelType::kSerial);
  EXPECT_TRUE(a.sameAs(b));
  EXPECT_FALSE(a.sameAs(c));
}

TEST(ScheduleSpelling, TensorStrWithMesh) {
  Fusion f;
  TensorView* t = f.makeTensor({4, sym("i0")}, DataType::kBFloat16);
  EXPECT_EQ(t->nameStr(), "T0_g___bfloat");
  t->setDeviceMesh(DeviceMesh::range(2));
  t->parallelize(0, ParallelType::kStream);
  EXPECT_EQ(t->str(), "T0_g___bfloat[iStreamIdx0{4}, iS1{i0}] (DeviceMesh{0 1})");
  t->setMemoryType(MemoryType::kLocal);
  EXPECT_EQ(t->str(), "T0_l___bfloat[iStreamIdx0{4}, iS1{i0}] (DeviceMesh{0 1})");
  t->setDeviceMesh(DeviceMesh({0, 1, 2, 3}, {2, 2}));
  EXPECT_EQ(t->str(), "T0_l___bfloat[iStreamIdx0{4}, iS1{i0}] (DeviceMesh{{0 1} {2 3}})");
}

TEST(ScheduleSplit, InnerSplitSymbolic) {
  Fusion f;
  TensorView* t = f.makeTensor({sym("i0"), 8});
  t->split(0, 4);
  EXPECT_EQ(loopStr(t), "iS2{( ceilDiv(i0, 4) )}, iS3{4}, iS1{8}");
  EXPECT_EQ(t->nDims(), 3);
  // The logical domain is unchanged.
  EXPECT_EQ(t->logical().size(), 2u);
  const IdTransform* def = t->axis(0)->definition();
  ASSERT_NE(def, nullptr);
  EXPECT_EQ(def->kind, IdTransform::Kind::kSplit);
  EXPECT_EQ(def->in, t->logical()[0]);
  EXPECT_TRUE(def->inner_split);
  EXPECT_EQ(def->factor, Scalar(4));
  EXPECT_EQ(t->axis(1)->definition(), def);
}

TEST(ScheduleSplit, OuterSplitGivesTheFactorToTheOuterAxis) {
  Fusion f;
  TensorView* t = f.makeTensor({sym("i0"), 8});
  t->split(0, 3, /*inner_split=*/false);
  EXPECT_EQ(loopStr(t), "iS2{3}, iS3{( ceilDiv(i0, 3) )}, iS1{8}");
  EXPECT_FALSE(t->axis(0)->definition()->inner_split);
}

TEST(ScheduleSplit, ConstantExtentsFold) {
  Fusion f;
  TensorView* t = f.makeTensor({12, 10});
  t->split(0, 4)->split(-1, 4);
  EXPECT_EQ(loopStr(t), "iS2{3}, iS3{4}, iS4{3}, iS5{4}");
  TensorView* r = sum(f.makeTensor({8}), {0});
  r->split(0, 2, false);
  EXPECT_TRUE(r->axis(0)->isReduction());
  EXPECT_TRUE(r->axis(1)->isReduction());
}

TEST(ScheduleSplit, SymbolicFactorAndErrors) {
  Fusion f;
  TensorView* t = f.makeTensor({sym("i0")});
  t->split(0, sym(kNumberOfStreams), false);
  EXPECT_EQ(loopStr(t), "iS1{numberOfStreams}, iS2{( ceilDiv(i0, numberOfStreams) )}");
  EXPECT_THAT(errorOf([&] { t->split(0, 0); }), HasSubstr("must be positive"));
  EXPECT_THAT(errorOf([&] { t->split(0, -2); }), HasSubstr("must be positive"));
  EXPECT_THAT(errorOf([&] { t->split(5, 2); }), HasSubstr("axis 5 is out of range for T0_g_float"));
}

TEST(ScheduleMerge, MergesAdjacentAxes) {
  Fusion f;
  TensorView* t = f.makeTensor({sym("i0"), 8, 2});
  t->merge(0);
  EXPECT_EQ(loopStr(t), "iS3{( 8 * i0 )}, iS2{2}");
  const IdTransform* def = t->axis(0)->definition();
  ASSERT_NE(def, nullptr);
  EXPECT_EQ(def->kind, IdTransform::Kind::kMerge);
  EXPECT_EQ(def->outer, t->logical()[0]);
  EXPECT_EQ(def->inner, t->logical()[1]);
  t->merge(-2);
  EXPECT_EQ(loopStr(t), "iS4{( 16 * i0 )}");
  EXPECT_THAT(errorOf([&] { t->merge(0); }), HasSubstr("needs an axis after"));
}

TEST(ScheduleMerge, KindsOfMergedAxes) {
  Fusion f;
  TensorView* b = broadcast(f.makeTensor({4}), {true, true, false});
  b->merge(0);
  EXPECT_TRUE(b->axis(0)->isBroadcast());
  TensorView* r = sum(f.makeTensor({4, 6, 8}), {1, 2});
  r->merge(1);
  EXPECT_TRUE(r->axis(1)->isReduction());
  EXPECT_THAT(errorOf([&] { r->merge(0); }), HasSubstr("mixes a reduction and an iteration axis"));
}

TEST(ScheduleReorder, MovesNamedAxesAndKeepsTheRestInOrder) {
  Fusion f;
  TensorView* t = f.makeTensor({2, 3, 4, 5});
  IterDomain* a = t->axis(0);
  IterDomain* b = t->axis(1);
  IterDomain* c = t->axis(2);
  IterDomain* d = t->axis(3);
  t->reorder({{0, 2}});
  EXPECT_EQ(t->loop(), (std::vector<IterDomain*>{b, c, a, d}));
  t->reorder({{-1, 0}, {0, -1}});
  EXPECT_EQ(t->loop(), (std::vector<IterDomain*>{d, c, a, b}));
  t->reorder({});
  EXPECT_EQ(t->loop(), (std::vector<IterDomain*>{d, c, a, b}));
  EXPECT_THAT(errorOf([&] { t->reorder({{0, 1}, {2, 1}}); }), HasSubstr("names an axis twice"));
  EXPECT_THAT(errorOf([&] { t->reorder({{4, 0}}); }), HasSubstr("out of range"));
  // The logical domain does not move.
  EXPECT_EQ(t->logical(), (std::vector<IterDomain*>{a, b, c, d}));
}

TEST(ScheduleParallelize, StreamAndDid) {
  Fusion f;
  TensorView* t = f.makeTensor({4, 2, sym("i0")});
  t->parallelize(0, ParallelType::kStream)->parallelize(1, ParallelType::kDIDx);
  EXPECT_TRUE(t->axis(0)->isStream());
  EXPECT_TRUE(t->axis(1)->isDeviceParallel());
  EXPECT_EQ(t->loopAxisOf(ParallelType::kStream), 0);
  EXPECT_EQ(t->loopAxisOf(ParallelType::kDIDx), 1);
  EXPECT_EQ(t->loopAxisOf(ParallelType::kDIDy), -1);
  EXPECT_EQ(t->str(), "T0_g_float[iStreamIdx0{4}, ideviceIdx.x1{2}, iS2{i0}]");
  // Re-parallelizing the same axis is fine; a second axis of the same type is not.
  t->parallelize(0, ParallelType::kStream);
  EXPECT_THAT(errorOf([&] { t->parallelize(2, ParallelType::kStream); }),
              HasSubstr("T0_g_float already has a loop axis parallelized on StreamIdx"));
  EXPECT_THAT(errorOf([&] { t->parallelize(2, ParallelType::kDIDx); }), HasSubstr("deviceIdx.x"));
  // Serial may repeat.
  t->parallelize(0, ParallelType::kSerial);
  EXPECT_EQ(t->loopAxisOf(ParallelType::kStream), -1);
  t->parallelize(2, ParallelType::kStream);
  EXPECT_EQ(t->loopAxisOf(ParallelType::kStream), 2);
}

TEST(ScheduleParallelize, SplitOffAStreamAxisLikeNvFuser) {
  Fusion f;
  TensorView* t = f.makeTensor({sym("i0"), sym("i2")});
  t->split(0, 4, false)->parallelize(0, ParallelType::kStream);
  EXPECT_EQ(t->str(), "T0_g_float[iStreamIdx2{4}, iS3{( ceilDiv(i0, 4) )}, iS1{i2}]");
  // Both halves of a split start serial whatever the input was.
  TensorView* u = f.makeTensor({8});
  u->parallelize(0, ParallelType::kDIDx)->split(0, 2);
  EXPECT_EQ(u->loopAxisOf(ParallelType::kDIDx), -1);
}

TEST(ScheduleOrigin, LogicalOriginThroughSplits) {
  Fusion f;
  TensorView* t = f.makeTensor({sym("i0"), 8});
  IterDomain* l0 = t->logical()[0];
  IterDomain* l1 = t->logical()[1];
  t->split(0, 4)->split(0, 2);  // [ceilDiv(ceilDiv(i0,4),2), 2, 4, 8]
  EXPECT_EQ(t->nDims(), 4);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(t->logicalOrigin(t->axis(i)), l0) << i;
  EXPECT_EQ(t->logicalOrigin(t->axis(3)), l1);
  EXPECT_EQ(t->logicalOrigin(l1), l1);
  t->merge(2);  // 4 * 8 merged: no single origin
  EXPECT_EQ(t->logicalOrigin(t->axis(2)), nullptr);
  TensorView* other = f.makeTensor({3});
  EXPECT_EQ(t->logicalOrigin(other->axis(0)), nullptr);
}

TEST(ScheduleAllocation, ShardTheAllocationLikeTheLoop) {
  Fusion f;
  TensorView* t = f.makeTensor({sym("i0"), 8});
  EXPECT_FALSE(t->hasAllocationDomain());
  EXPECT_EQ(t->allocation(), t->logical());
  t->split(0, 4, false)->parallelize(0, ParallelType::kStream);
  t->setAllocationDomain(t->loop());
  EXPECT_TRUE(t->hasAllocationDomain());
  EXPECT_EQ(t->allocation(), t->loop());
  // A permutation of the logical domain.
  TensorView* u = f.makeTensor({2, 3});
  u->setAllocationDomain({u->logical()[1], u->logical()[0]});
  EXPECT_EQ(u->allocation()[0], u->logical()[1]);
  // Merged axes derive from logical axes too.
  TensorView* v = f.makeTensor({2, 3});
  v->merge(0);
  v->setAllocationDomain(v->loop());
  EXPECT_EQ(v->allocation().size(), 1u);
  // Empty resets to the logical domain.
  v->setAllocationDomain({});
  EXPECT_FALSE(v->hasAllocationDomain());
  EXPECT_EQ(v->allocation(), v->logical());
}

TEST(ScheduleAllocation, Errors) {
  Fusion f;
  TensorView* t = f.makeTensor({4, 8});
  TensorView* other = f.makeTensor({4});
  EXPECT_THAT(errorOf([&] { t->setAllocationDomain({t->logical()[0], other->axis(0)}); }),
              HasSubstr("neither a logical axis of it nor derived from one"));
  EXPECT_THAT(errorOf([&] { t->setAllocationDomain({t->logical()[0], t->logical()[0]}); }), HasSubstr("twice"));
  EXPECT_THAT(errorOf([&] { t->setAllocationDomain({t->logical()[0]}); }),
              HasSubstr("does not cover its logical axis iS1{8}"));
  EXPECT_FALSE(t->hasAllocationDomain());
  // Reduction axes need not be allocated.
  TensorView* r = sum(f.makeTensor({4, 8}), {1});
  r->setAllocationDomain({r->logical()[0]});
  EXPECT_EQ(r->allocation().size(), 1u);
}

TEST(ScheduleAxis, NegativeIndicesAndRange) {
  Fusion f;
  TensorView* t = f.makeTensor({2, 3, 4});
  EXPECT_EQ(t->axis(-1), t->loop()[2]);
  EXPECT_EQ(t->axis(-3), t->loop()[0]);
  EXPECT_THROW(t->axis(3), Error);
  EXPECT_THROW(t->axis(-4), Error);
}

TEST(ScheduleMesh, Meshes) {
  DeviceMesh m = DeviceMesh::range(4);
  EXPECT_EQ(m.str(), "DeviceMesh{0 1 2 3}");
  EXPECT_EQ(m.size(), 4);
  EXPECT_TRUE(m.has(3));
  EXPECT_FALSE(m.has(4));
  EXPECT_EQ(m.indexOf(2), 2);
  EXPECT_EQ(DeviceMesh::range(0).str(), "DeviceMesh{}");
  EXPECT_THROW(DeviceMesh::range(-1), Error);
  DeviceMesh m2({0, 1, 2, 3, 4, 5}, {2, 3});
  EXPECT_EQ(m2.slice(4, 0), (std::vector<int64_t>{3, 4, 5}));
  EXPECT_EQ(m2.slice(4, 1), (std::vector<int64_t>{1, 4}));
  EXPECT_THROW(DeviceMesh({0, 1, 2}, {2, 2}), Error);
  Fusion f;
  TensorView* t = f.makeTensor({2});
  EXPECT_FALSE(t->hasDeviceMesh());
  t->setDeviceMesh(m);
  EXPECT_EQ(*t->deviceMesh(), m);
}

}  // namespace
}  // namespace braid
