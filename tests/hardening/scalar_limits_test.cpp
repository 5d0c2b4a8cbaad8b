// Checked arithmetic and the scalar limits: overflow is an Error naming the values, every walk
// over a scalar is iterative (deep trees built through the API print, evaluate, compare and free
// without recursion), and the printer writes only what the parser reads back.
#include <limits>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "ir/checked_math.h"
#include "ir/error.h"
#include "ir/scalar.h"
#include "ir/scalar_parser.h"

namespace braid {
namespace {

using ::testing::HasSubstr;
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
constexpr int64_t kMin = std::numeric_limits<int64_t>::min();

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(CheckedMath, OverflowThrowsNamingTheValues) {
  EXPECT_EQ(checkedAdd(2, 3), 5);
  EXPECT_EQ(checkedMul(-4, 5), -20);
  EXPECT_THAT(errorOf([] { checkedAdd(kMax, 1, "x"); }), HasSubstr("9223372036854775807 + 1 does not fit"));
  EXPECT_THAT(errorOf([] { checkedSub(kMin, 1); }), HasSubstr("overflow"));
  EXPECT_THAT(errorOf([] { checkedMul(int64_t{1} << 62, 4); }), HasSubstr("4611686018427387904 * 4"));
  EXPECT_THAT(errorOf([] { checkedDiv(kMin, -1); }), HasSubstr("overflow"));
  EXPECT_EQ(checkedMod(kMin, -1), 0);
  EXPECT_EQ(saturatingMul(kMax, 2), kMax);
}

TEST(CheckedMath, ElementCountsAreCappedAt2To50) {
  EXPECT_EQ(checkedElementCount({1 << 20, 1 << 30}, "t"), int64_t{1} << 50);
  EXPECT_EQ(checkedElementCount({kMax, 0}, "t"), 0);  // empty, whatever the other size
  EXPECT_THAT(errorOf([] { checkedElementCount({1 << 20, (int64_t{1} << 30) + 1}, "tensor T0"); }),
              HasSubstr("tensor T0 of shape [1048576, 1073741825] has more than 2^50 elements"));
  EXPECT_THAT(errorOf([] { checkedElementCount({kMax, kMax}, "t"); }), HasSubstr("2^50"));
  EXPECT_THAT(errorOf([] { checkedElementCount({4, -1}, "t"); }), HasSubstr("negative"));
}

TEST(ScalarLimits, EvaluationIsChecked) {
  Bindings b{{"i0", kMax}, {"i1", 0}, {"i2", kMin}, {"m1", -1}};
  EXPECT_THAT(errorOf([&] { parseScalar("i0 + 1").evaluate(b); }), HasSubstr("9223372036854775807 + 1"));
  EXPECT_THAT(errorOf([&] { parseScalar("i0 * 2").evaluate(b); }), HasSubstr("overflow"));
  EXPECT_THAT(errorOf([&] { parseScalar("i2 / m1").evaluate(b); }), HasSubstr("overflow"));
  EXPECT_THAT(errorOf([&] { parseScalar("ceilDiv(i2, m1)").evaluate(b); }), HasSubstr("overflow"));
  EXPECT_THAT(errorOf([&] { parseScalar("ceilDiv(i0, i1)").evaluate(b); }), HasSubstr("ceilDiv(9223372036854775807, 0)"));
  EXPECT_EQ(parseScalar("i2 % m1").evaluate(b), 0);
  // Constant folding is checked too.
  EXPECT_THAT(errorOf([] { (void)(Scalar(kMax) + Scalar(1)); }), HasSubstr("overflow"));
}

// Simplification folds constants of nested sums and products only when the folded constant fits:
// otherwise the expression stays as written and evaluating it reports the overflow (both found by
// fuzz_scalar_parser under UBSan; the inputs are kept in tests/fuzz/inputs/scalar_parser/).
TEST(ScalarLimits, SimplifyDoesNotFoldConstantsThatOverflow) {
  Bindings b{{"x", 1}};
  Scalar sum = parseScalar("(x + 9223372036854775807) + 1").simplify();
  EXPECT_THAT(errorOf([&] { sum.evaluate(b); }), HasSubstr("overflow"));
  Scalar prod = parseScalar("4611686018427387904 * (4 * x)").simplify();
  EXPECT_THAT(errorOf([&] { prod.evaluate(b); }), HasSubstr("overflow"));
  // What fits still folds.
  EXPECT_EQ(parseScalar("3 * (4 * x)").simplify(), parseScalar("12 * x"));
  EXPECT_EQ(parseScalar("(x + 3) + 4").simplify(), parseScalar("x + 7"));
}

TEST(ScalarLimits, MinimumLiteralReadsBack) {
  Scalar s(kMin);
  EXPECT_EQ(s.str(), "-9223372036854775808");
  EXPECT_EQ(parseScalar(s.str()), s);
  EXPECT_THAT(errorOf([] { parseScalar("-9223372036854775809"); }), HasSubstr("out of range"));
}

Scalar chain(int terms) {
  Scalar s = Scalar::symbol("i0");
  for (int i = 1; i < terms; ++i) s = Scalar::binary(ScalarOp::kAdd, s, Scalar::symbol("i" + std::to_string(i % 7)));
  return s;
}

TEST(ScalarLimits, LongSumsPrintFlatAndParseBack) {
  Scalar s = chain(201);
  std::string text = s.str();
  EXPECT_EQ(text.rfind("( i0 + i1 + i2", 0), 0u) << text.substr(0, 40);
  EXPECT_EQ(parseScalar(text), s);
  // Short ones keep nvFuser's spelling.
  EXPECT_EQ(chain(3).str(), "( ( i0 + i1 ) + i2 )");
  Scalar big = chain(4000);
  EXPECT_EQ(parseScalar(big.str()), big);
  EXPECT_THAT(errorOf([] { parseScalar(chain(5000).str()); }), HasSubstr("more than 4096 operations"));
}

TEST(ScalarLimits, DeepTreesFromTheApiNeedNoRecursion) {
  // 150,000 levels, far past what recursion on an 8 MB stack survives: printing, evaluating,
  // simplifying, comparing and freeing are iterative.
  Scalar s = chain(150'000);
  Scalar t = chain(150'000);
  EXPECT_EQ(s, t);
  Bindings b;
  for (int i = 0; i < 7; ++i) b["i" + std::to_string(i)] = 1;
  EXPECT_EQ(s.evaluate(b), 150'000);
  EXPECT_EQ(s.substitute(b), Scalar(150'000));
  EXPECT_GT(s.str().size(), 150'000u);
  Scalar n = Scalar::symbol("x");
  for (int i = 0; i < 150'000; ++i) n = Scalar::logicalNot(n);
  EXPECT_EQ(n.simplify().freeSymbols().size(), 1u);
}

TEST(ScalarLimits, MixedPrecedenceKeepsItsMeaningWhenPrintedFlat) {
  // ((a - b) - (c - d)) * ... nested past the nvFuser spelling's depth: the flat form keeps the
  // parentheses that precedence needs.
  Scalar s = Scalar::symbol("a");
  for (int i = 0; i < 300; ++i) {
    Scalar rhs = Scalar::binary(ScalarOp::kSub, Scalar::symbol("c"), Scalar(i));
    s = Scalar::binary(i % 2 ? ScalarOp::kSub : ScalarOp::kMul, s, rhs);
  }
  EXPECT_EQ(parseScalar(s.str()), s);
}

// Any tree of at most 4096 operations with at most 120 right-nested operations and ceilDivs (the parser reads
// 200 levels of parentheses), prints to text that parses back to the same tree (flat or nvFuser's spelling).
RC_GTEST_PROP(ScalarLimits, PrintParsesBack, ()) {
  const ScalarOp ops[] = {ScalarOp::kAdd, ScalarOp::kSub, ScalarOp::kMul, ScalarOp::kDiv, ScalarOp::kMod,
                          ScalarOp::kEq,  ScalarOp::kLt,  ScalarOp::kAnd, ScalarOp::kOr,  ScalarOp::kCeilDiv};
  int n = *rc::gen::inRange(1, 1500);
  Scalar s = Scalar::symbol("i0");
  int right = 0;  // right-nested operations: each needs a parenthesis in any spelling
  for (int i = 0; i < n; ++i) {
    ScalarOp op = ops[*rc::gen::inRange(0, 10)];
    if (op == ScalarOp::kCeilDiv && ++right > 60) op = ScalarOp::kAdd;  // ceilDiv( nests too
    Scalar leaf = *rc::gen::inRange(0, 3) == 0 ? Scalar(*rc::gen::inRange(-5, 5)) : Scalar::symbol("i" + std::to_string(i % 5));
    if (*rc::gen::inRange(0, 4) == 0) leaf = Scalar::logicalNot(leaf);
    // Mostly left-leaning (as the parser builds chains); now and then a short right operand.
    bool nest_right = right < 60 && *rc::gen::inRange(0, 8) == 0;
    right += nest_right;
    s = nest_right ? Scalar::binary(op, leaf, Scalar::binary(ScalarOp::kAdd, s, Scalar(1))) : Scalar::binary(op, s, leaf);
    if (i > 40 && *rc::gen::inRange(0, 8) == 0) break;
  }
  RC_ASSERT(parseScalar(s.str()) == s);
}

TEST(ScalarLimits, NestedFunctionsCountTheirExpansion) {
  // abs(x) is read as arithmetic that holds x three times: 60 of them would be 3^60 operations.
  std::string text = "i0";
  for (int i = 0; i < 60; ++i) text = "abs(" + text + ")";
  EXPECT_THAT(errorOf([&] { parseScalar(text); }), HasSubstr("more than 4096 operations"));
  EXPECT_EQ(parseScalar("abs(abs(i0))").evaluate({{"i0", -3}}), 3);
}

TEST(ScalarLimits, NestingBeyondTheParserIsRefusedLocated) {
  std::string deep = std::string(250, '(') + "i0" + std::string(250, ')');
  EXPECT_THAT(errorOf([&] { parseScalar(deep, "f.hir"); }), HasSubstr("f.hir:1:"));
  EXPECT_THAT(errorOf([&] { parseScalar(deep); }), HasSubstr("more than 200 levels"));
}

}  // namespace
}  // namespace braid
