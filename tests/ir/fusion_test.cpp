// Building fusions with every op of ir/ops.h: output shapes and kinds, attributes, meshes,
// def-use links, and the shape errors.
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

// Extents of the logical domain, spelled: "i0, 8, r:4" (r: marks reduction, b: broadcast).
std::string shape(const TensorView* tv) {
  std::string s;
  for (const IterDomain* id : tv->logical()) {
    if (!s.empty()) s += ", ";
    if (id->isReduction()) s += "r:";
    if (id->isBroadcast()) s += "b:";
    s += id->extent().str();
  }
  return s;
}

using testing::errorOf;

bool allSerialAndFresh(const TensorView* out, const TensorView* in) {
  for (const IterDomain* id : out->logical()) {
    if (id->parallelType() != ParallelType::kSerial || id->isRFactor()) return false;
    for (const IterDomain* x : in->logical())
      if (x == id) return false;
  }
  return true;
}

TEST(FusionBuild, MakeTensorAndIo) {
  Fusion f;
  TensorView* t0 = f.makeTensor({sym("i0"), 8});
  TensorView* t1 = f.makeTensor({4}, DataType::kBFloat16);
  f.addInput(t0);
  f.addInput(t0);  // once only
  f.addOutput(t1);
  EXPECT_EQ(t0->name(), 0);
  EXPECT_EQ(t1->name(), 1);
  EXPECT_EQ(shape(t0), "i0, 8");
  EXPECT_EQ(t1->dtype(), DataType::kBFloat16);
  EXPECT_EQ(f.inputs().size(), 1u);
  EXPECT_TRUE(f.isInput(t0));
  EXPECT_TRUE(f.isOutput(t1));
  EXPECT_FALSE(f.isOutput(t0));
  EXPECT_EQ(f.findTensor(1), t1);
  EXPECT_EQ(f.findTensor(9), nullptr);
  EXPECT_EQ(t0->str(), "T0_g_float[iS0{i0}, iS1{8}]");
  EXPECT_EQ(t1->str(), "T1_g___bfloat[iS2{4}]");
}

TEST(FusionBuild, SetMakesFreshSerialAxesAndCopiesTheMesh) {
  Fusion f;
  TensorView* t0 = f.makeTensor({4, sym("i0")}, DataType::kHalf);
  t0->setDeviceMesh(DeviceMesh::range(4));
  t0->parallelize(0, ParallelType::kDIDx);
  TensorView* t1 = set(t0);
  EXPECT_EQ(shape(t1), "4, i0");
  EXPECT_EQ(t1->dtype(), DataType::kHalf);
  EXPECT_TRUE(allSerialAndFresh(t1, t0));
  ASSERT_TRUE(t1->hasDeviceMesh());
  EXPECT_EQ(*t1->deviceMesh(), DeviceMesh::range(4));
  ASSERT_NE(t1->definition(), nullptr);
  EXPECT_EQ(t1->definition()->type(), OpType::kSet);
  EXPECT_EQ(t1->definition()->input(0), t0);
  EXPECT_THAT(t0->uses(), ::testing::ElementsAre(t1->definition()));
  EXPECT_EQ(f.exprs().size(), 1u);
  EXPECT_EQ(t1->str(), "T1_g___half[iS2{4}, iS3{i0}] (DeviceMesh{0 1 2 3})");
}

TEST(FusionBuild, NoMeshStaysNoMesh) {
  Fusion f;
  TensorView* t1 = set(f.makeTensor({2}));
  EXPECT_FALSE(t1->hasDeviceMesh());
}

TEST(FusionBuild, Permute) {
  Fusion f;
  TensorView* t0 = f.makeTensor({2, 3, 4});
  TensorView* t1 = permute(t0, {2, 0, -2});
  EXPECT_EQ(shape(t1), "4, 2, 3");
  EXPECT_EQ(t1->definition()->type(), OpType::kPermute);
  EXPECT_EQ(t1->definition()->permutation, (std::vector<int64_t>{2, 0, 1}));
  // The root domain is in the input's order; the logical domain permutes the same axes.
  ASSERT_EQ(t1->root().size(), 3u);
  EXPECT_EQ(t1->root()[0]->extent(), Scalar(2));
  EXPECT_EQ(t1->logical()[0], t1->root()[2]);
  EXPECT_EQ(t1->logical()[1], t1->root()[0]);
  EXPECT_EQ(t1->loop(), t1->logical());
  EXPECT_THAT(errorOf([&] { permute(t0, {0, 1}); }), HasSubstr("T0 has 3 axes"));
  EXPECT_THAT(errorOf([&] { permute(t0, {0, 1, 1}); }), HasSubstr("twice"));
  EXPECT_THAT(errorOf([&] { permute(t0, {0, 1, 3}); }), HasSubstr("out of range"));
}

TEST(FusionBuild, UnaryOpsAndCast) {
  Fusion f;
  TensorView* t0 = f.makeTensor({sym("i0"), 8});
  std::vector<std::pair<TensorView*, UnaryOpType>> cases{
      {neg(t0), UnaryOpType::kNeg},   {exp(t0), UnaryOpType::kExp},   {relu(t0), UnaryOpType::kRelu},
      {gelu(t0), UnaryOpType::kGelu}, {tanh(t0), UnaryOpType::kTanh}, {unaryOp(UnaryOpType::kSilu, t0), UnaryOpType::kSilu}};
  for (auto [tv, op] : cases) {
    EXPECT_EQ(shape(tv), "i0, 8");
    EXPECT_EQ(tv->dtype(), DataType::kFloat);
    EXPECT_EQ(tv->definition()->type(), OpType::kUnary);
    EXPECT_EQ(tv->definition()->unaryOp, op);
  }
  TensorView* c = castOp(DataType::kBFloat16, t0);
  EXPECT_EQ(c->dtype(), DataType::kBFloat16);
  EXPECT_EQ(c->definition()->unaryOp, UnaryOpType::kCast);
  EXPECT_EQ(shape(c), "i0, 8");
}

TEST(FusionBuild, BinaryOpsSameShape) {
  Fusion f;
  TensorView* a = f.makeTensor({sym("i0"), sym("i2")});
  TensorView* b = f.makeTensor({sym("i0"), sym("i2")});
  a->setDeviceMesh(DeviceMesh::range(2));
  std::vector<std::pair<TensorView*, BinaryOpType>> cases{{add(a, b), BinaryOpType::kAdd},
                                                         {sub(a, b), BinaryOpType::kSub},
                                                         {mul(a, b), BinaryOpType::kMul},
                                                         {div(a, b), BinaryOpType::kDiv}};
  for (auto [tv, op] : cases) {
    EXPECT_EQ(shape(tv), "i0, i2");
    EXPECT_EQ(tv->definition()->type(), OpType::kBinary);
    EXPECT_EQ(tv->definition()->binaryOp, op);
    EXPECT_THAT(tv->definition()->inputs(), ::testing::ElementsAre(a, b));
    EXPECT_EQ(*tv->deviceMesh(), DeviceMesh::range(2));  // the first input's mesh
  }
}

TEST(FusionBuild, BinaryOpsBroadcastSizeOneAxes) {
  Fusion f;
  TensorView* a = f.makeTensor({8, sym("n")});
  TensorView* row = broadcast(f.makeTensor({sym("n")}), {true, false});  // [b1, n]
  TensorView* one = f.makeTensor({8, 1});
  EXPECT_EQ(shape(add(a, row)), "8, n");
  EXPECT_EQ(shape(add(row, a)), "8, n");
  EXPECT_EQ(shape(mul(a, one)), "8, n");
  EXPECT_EQ(shape(add(row, row)), "b:1, n");
  // Symbolic extents that are not provably different are accepted.
  TensorView* other = f.makeTensor({8, sym("k")});
  EXPECT_EQ(shape(add(a, other)), "8, n");
}

TEST(FusionBuild, BinaryOpErrors) {
  Fusion f;
  TensorView* a = f.makeTensor({8, 4});     // T0
  TensorView* b = f.makeTensor({8, 5});     // T1
  TensorView* c = f.makeTensor({8});        // T2
  TensorView* d = f.makeTensor({8, 4}, DataType::kDouble);  // T3
  TensorView* s1 = f.makeTensor({sym("i0")});               // T4
  TensorView* s2 = f.makeTensor({sym("i0") + 1});           // T5
  EXPECT_THAT(errorOf([&] { add(a, b); }), HasSubstr("axis 1 of T0 has extent 4 but T1 has 5"));
  EXPECT_THAT(errorOf([&] { add(a, c); }), HasSubstr("different ranks"));
  EXPECT_THAT(errorOf([&] { add(a, d); }), HasSubstr("T0 is float but T3 is double"));
  EXPECT_THAT(errorOf([&] { add(s1, s2); }), HasSubstr("T4 has extent i0 but T5 has ( i0 + 1 )"));
  EXPECT_THAT(errorOf([&] { add(a, nullptr); }), HasSubstr("null"));
  Fusion g;
  TensorView* e = g.makeTensor({8, 4});
  EXPECT_THAT(errorOf([&] { add(a, e); }), HasSubstr("different fusions"));
}

TEST(FusionBuild, Reductions) {
  Fusion f;
  TensorView* t0 = f.makeTensor({4, sym("i0"), 8});
  TensorView* s = sum(t0, {1});
  EXPECT_EQ(shape(s), "4, r:i0, 8");
  EXPECT_EQ(s->definition()->type(), OpType::kReduction);
  EXPECT_EQ(s->definition()->reductionOp, ReductionOpType::kAdd);
  EXPECT_EQ(s->definition()->initValue, "float(0)");
  TensorView* mx = max(t0, {-1, 0});
  EXPECT_EQ(shape(mx), "r:4, i0, r:8");
  EXPECT_EQ(mx->definition()->initValue, "float(-inf)");
  TensorView* mn = min(t0, {0});
  EXPECT_EQ(mn->definition()->reductionOp, ReductionOpType::kMin);
  EXPECT_EQ(mn->definition()->initValue, "float(inf)");
  // Axes count the input's non-reduction axes: s is [4, r(i0), 8], so axis 1 is 8.
  TensorView* s2 = sum(s, {1});
  EXPECT_EQ(shape(s2), "4, r:8");
  EXPECT_EQ(sum(s, {-1})->logical().size(), 2u);
  EXPECT_THAT(errorOf([&] { sum(t0, {3}); }), HasSubstr("axis 3 is out of range for T0"));
  EXPECT_THAT(errorOf([&] { sum(t0, {1, -2}); }), HasSubstr("named twice"));
  EXPECT_THAT(errorOf([&] { sum(t0, {}); }), HasSubstr("no axis to reduce"));
}

TEST(FusionBuild, ReductionInitValuesFollowTheDtype) {
  Fusion f;
  EXPECT_EQ(sum(f.makeTensor({4}, DataType::kDouble), {0})->definition()->initValue, "double(0)");
  EXPECT_EQ(sum(f.makeTensor({4}, DataType::kBFloat16), {0})->definition()->initValue, "float(0)");
  EXPECT_EQ(sum(f.makeTensor({4}, DataType::kInt64), {0})->definition()->initValue, "int64_t(0)");
  EXPECT_EQ(max(f.makeTensor({4}, DataType::kInt32), {0})->definition()->initValue, "int(-2147483648)");
}

TEST(FusionBuild, BroadcastAndSqueeze) {
  Fusion f;
  TensorView* t0 = f.makeTensor({sym("D"), 16, 32});
  TensorView* b = broadcast(t0, {false, true, false, false});
  EXPECT_EQ(shape(b), "D, b:1, 16, 32");
  EXPECT_EQ(b->definition()->broadcastFlags, (std::vector<bool>{false, true, false, false}));
  EXPECT_EQ(b->logical()[1]->str(), "bS4{1}");
  TensorView* q = squeeze(b, {false, true, false, false});
  EXPECT_EQ(shape(q), "D, 16, 32");
  EXPECT_EQ(q->definition()->squeezeFlags, (std::vector<bool>{false, true, false, false}));
  TensorView* one = f.makeTensor({1, 4});
  EXPECT_EQ(shape(squeeze(one, {true, false})), "4");
  EXPECT_THAT(errorOf([&] { broadcast(t0, {true, false}); }), HasSubstr("the flags keep 1"));
  EXPECT_THAT(errorOf([&] { squeeze(t0, {true, false, false}); }), HasSubstr("axis 0 of T0 has extent D, not 1"));
  EXPECT_THAT(errorOf([&] { squeeze(t0, {true}); }), HasSubstr("1 flags"));
}

TEST(FusionBuild, Reshape) {
  Fusion f;
  TensorView* t0 = f.makeTensor({4, 6});
  TensorView* r = reshape(t0, {2, 12});
  EXPECT_EQ(shape(r), "2, 12");
  EXPECT_EQ(r->definition()->type(), OpType::kReshape);
  EXPECT_EQ(shape(reshape(t0, {-1, 3})), "8, 3");
  TensorView* s = f.makeTensor({sym("i0"), 4});
  EXPECT_EQ(shape(reshape(s, {-1})), "( 4 * i0 )");
  EXPECT_THAT(errorOf([&] { reshape(t0, {5, 5}); }), HasSubstr("has 24 elements but the new shape has 25"));
  EXPECT_THAT(errorOf([&] { reshape(t0, {-1, 5}); }), HasSubstr("not divisible by 5"));
  EXPECT_THAT(errorOf([&] { reshape(t0, {-1, -1}); }), HasSubstr("more than one -1"));
}

TEST(FusionBuild, MatmulTwoD) {
  Fusion f;
  TensorView* a = f.makeTensor({sym("m"), sym("k")});
  TensorView* b = f.makeTensor({sym("k"), sym("n")});
  TensorView* c = matmul(a, b);
  EXPECT_EQ(c->str(), "T2_g_float[iS4{m}, iS5{n}, rS6{k}]");
  EXPECT_EQ(c->definition()->type(), OpType::kMatmul);
  EXPECT_THAT(c->definition()->inputs(), ::testing::ElementsAre(a, b));
}

TEST(FusionBuild, MatmulBroadcastsBatchesRightAligned) {
  Fusion f;
  // [S, D, m/S, k/D] @ [D, k/D, n] -> [S, D, m/S, n, r(k/D)] (matmul_ar).
  TensorView* a = f.makeTensor({4, 2, 64, 16});
  TensorView* b = f.makeTensor({2, 16, 32});
  EXPECT_EQ(shape(matmul(a, b)), "4, 2, 64, 32, r:16");
  // [S, D, D, m, k] @ [D, b1, k, n] (matmul_rs through a broadcast).
  TensorView* a5 = f.makeTensor({4, 2, 2, 8, 16});
  TensorView* bb = broadcast(b, {false, true, false, false});
  EXPECT_EQ(shape(matmul(a5, bb)), "4, 2, 2, 8, 32, r:16");
  // Size-1 batch axes broadcast either way.
  TensorView* a1 = f.makeTensor({1, 8, 16});
  TensorView* b3 = f.makeTensor({5, 16, 2});
  EXPECT_EQ(shape(matmul(a1, b3)), "5, 8, 2, r:16");
  // 1-D operands drop their m or n axis, as torch.matmul.
  TensorView* v = f.makeTensor({16});
  EXPECT_EQ(shape(matmul(v, b)), "2, 32, r:16");
  EXPECT_EQ(shape(matmul(a, v)), "4, 2, 64, r:16");
  EXPECT_EQ(shape(matmul(v, v)), "r:16");
}

TEST(FusionBuild, MatmulErrors) {
  Fusion f;
  TensorView* a = f.makeTensor({8, 64});     // T0
  TensorView* b = f.makeTensor({32, 16});    // T1
  EXPECT_EQ(errorOf([&] { matmul(a, b); }), "matmul: T0 has k = 64 but T1 has k = 32");
  TensorView* a3 = f.makeTensor({3, 8, 32});  // T2
  TensorView* b3 = f.makeTensor({4, 32, 16}); // T3
  EXPECT_THAT(errorOf([&] { matmul(a3, b3); }), HasSubstr("batch axis 0 (right-aligned) does not broadcast: T2 has 3 but T3 has 4"));
  TensorView* d = f.makeTensor({32, 16}, DataType::kHalf);
  EXPECT_THAT(errorOf([&] { matmul(a3, d); }), HasSubstr("cast one of them first"));
  // Symbolic k: equal or not provably different is accepted; i0 vs i0 + 1 is not.
  TensorView* s1 = f.makeTensor({8, sym("k")});
  TensorView* s2 = f.makeTensor({sym("k2"), 4});
  EXPECT_EQ(shape(matmul(s1, s2)), "8, 4, r:k");
  TensorView* s3 = f.makeTensor({sym("k") + 1, 4});  // T8 (T7 is the matmul above)
  EXPECT_EQ(errorOf([&] { matmul(s1, s3); }), "matmul: T5 has k = k but T8 has k = ( k + 1 )");
}

TEST(FusionBuild, Linear) {
  Fusion f;
  TensorView* x = f.makeTensor({sym("m"), sym("k")});
  TensorView* w = f.makeTensor({sym("n"), sym("k")});
  TensorView* y = linear(x, w);
  EXPECT_EQ(y->str(), "T2_g_float[iS4{m}, iS5{n}, rS6{k}]");
  EXPECT_EQ(y->definition()->type(), OpType::kLinear);
  TensorView* bias = f.makeTensor({sym("n")});
  TensorView* yb = linear(x, w, bias);
  EXPECT_EQ(shape(yb), "m, n, r:k");
  EXPECT_THAT(yb->definition()->inputs(), ::testing::ElementsAre(x, w, bias));
  // A 3-D weight [D, n, k/D] pairs its leading axis with the input's second-to-last batch axis.
  TensorView* x4 = f.makeTensor({4, 2, 64, 16});
  TensorView* w3 = f.makeTensor({2, 32, 16});
  EXPECT_EQ(shape(linear(x4, w3)), "4, 2, 64, 32, r:16");
  // Column-parallel: a broadcast axis of the input takes the weight's D.
  TensorView* xb = broadcast(f.makeTensor({4, 64, 16}), {false, true, false, false});
  EXPECT_EQ(shape(linear(xb, w3)), "4, 2, 64, 32, r:16");
  // A 1-D weight drops n.
  EXPECT_EQ(shape(linear(x4, f.makeTensor({16}))), "4, 2, 64, r:16");
}

TEST(FusionBuild, LinearErrors) {
  Fusion f;
  TensorView* x = f.makeTensor({8, 64});     // T0
  TensorView* w = f.makeTensor({16, 32});    // T1
  EXPECT_EQ(errorOf([&] { linear(x, w); }), "linear: T0 has k = 64 but T1 has k = 32");
  TensorView* w2 = f.makeTensor({16, 64});   // T2
  TensorView* bias = f.makeTensor({17});     // T3
  EXPECT_THAT(errorOf([&] { linear(x, w2, bias); }), HasSubstr("bias T3 [17] does not match T2"));
  TensorView* bias2 = f.makeTensor({2, 3, 16});  // T4
  EXPECT_THAT(errorOf([&] { linear(x, w2, bias2); }), HasSubstr("has more axes"));
  TensorView* bias3 = f.makeTensor({1, 16});
  EXPECT_THAT(errorOf([&] { linear(x, w2, bias3); }), HasSubstr("has more axes"));
  EXPECT_THAT(errorOf([&] { linear(x, nullptr); }), HasSubstr("weight tensor is null"));
}

TEST(FusionBuild, OpsDropTheInputsReductionAxes) {
  Fusion f;
  TensorView* a = f.makeTensor({4, 2, 8, 16});
  TensorView* b = f.makeTensor({2, 16, 32});
  TensorView* p = matmul(a, b);       // [4, 2, 8, 32, r16]
  TensorView* c = sum(p, {1});        // [4, r2, 8, 32]
  EXPECT_EQ(shape(c), "4, r:2, 8, 32");
  TensorView* g = gelu(p);
  EXPECT_EQ(shape(g), "4, 2, 8, 32");
  EXPECT_EQ(shape(set(c)), "4, 8, 32");
}

TEST(FusionBuild, ExprsInCreationOrderWithDefUse) {
  Fusion f;
  TensorView* x = f.makeTensor({4, 8});
  TensorView* w = f.makeTensor({6, 8});
  f.addInput(x);
  f.addInput(w);
  TensorView* h = linear(x, w);
  TensorView* g = gelu(h);
  TensorView* y = sum(g, {0});
  f.addOutput(y);
  std::vector<Expr*> exprs = f.exprs();
  ASSERT_EQ(exprs.size(), 3u);
  EXPECT_EQ(exprs[0]->output(), h);
  EXPECT_EQ(exprs[1]->output(), g);
  EXPECT_EQ(exprs[2]->output(), y);
  EXPECT_THAT(h->uses(), ::testing::ElementsAre(exprs[1]));
  EXPECT_EQ(f.tensors().size(), 5u);
  EXPECT_EQ(y->name(), 4);
}

}  // namespace
}  // namespace braid
