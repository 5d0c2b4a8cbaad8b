// Scalar expressions: nvFuser spelling, simplification, evaluation, and a property test that
// simplification never changes a value.
#include "ir/scalar.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <ostream>

#include "ir/error.h"

namespace braid {
namespace {

Scalar sym(const char* n) { return Scalar::symbol(n); }
Scalar raw(ScalarOp op, Scalar a, Scalar b) { return Scalar::binary(op, std::move(a), std::move(b)); }

// ---- printing ----

TEST(ScalarPrint, AtomsAndBinaryOps) {
  EXPECT_EQ(Scalar(4).str(), "4");
  EXPECT_EQ(Scalar(-3).str(), "-3");
  EXPECT_EQ(Scalar().str(), "0");
  EXPECT_EQ(sym("i0").str(), "i0");
  EXPECT_EQ(raw(ScalarOp::kMul, sym("i0"), sym("i2")).str(), "( i0 * i2 )");
  EXPECT_EQ(raw(ScalarOp::kMod, sym("StreamIdx"), sym(kNumberOfStreams)).str(), "( StreamIdx % numberOfStreams )");
  EXPECT_EQ(raw(ScalarOp::kEq, sym("StreamIdx"), sym(kDeviceIdxX)).str(), "( StreamIdx == deviceIdx.x )");
  EXPECT_EQ(raw(ScalarOp::kCeilDiv, sym("i0"), 4).str(), "ceilDiv(i0, 4)");
  EXPECT_EQ(raw(ScalarOp::kAdd, raw(ScalarOp::kAdd, sym("i"), 1), sym("rank")).str(), "( ( i + 1 ) + rank )");
  EXPECT_EQ(raw(ScalarOp::kAnd, raw(ScalarOp::kLt, sym("i"), 4), raw(ScalarOp::kNe, sym("i"), 0)).str(),
            "( ( i < 4 ) && ( i != 0 ) )");
  EXPECT_EQ(Scalar::logicalNot(raw(ScalarOp::kEq, sym("i"), sym("rank"))).str(), "!( i == rank )");
}

TEST(ScalarPrint, ExtentSpellingParenthesizesNonAtoms) {
  EXPECT_EQ(sym("i0").extentStr(), "i0");
  EXPECT_EQ(Scalar(3).extentStr(), "3");
  EXPECT_EQ(ceilDiv(sym("i0"), 3).extentStr(), "( ceilDiv(i0, 3) )");
  EXPECT_EQ(raw(ScalarOp::kMul, sym("i0"), sym("i2")).extentStr(), "( i0 * i2 )");
}

TEST(ScalarPrint, OpSpellings) {
  EXPECT_STREQ(scalarOpSpelling(ScalarOp::kAdd), "+");
  EXPECT_STREQ(scalarOpSpelling(ScalarOp::kGe), ">=");
  EXPECT_STREQ(scalarOpSpelling(ScalarOp::kOr), "||");
  EXPECT_STREQ(scalarOpSpelling(ScalarOp::kCeilDiv), "ceilDiv");
  EXPECT_TRUE(isBinary(ScalarOp::kMod));
  EXPECT_FALSE(isBinary(ScalarOp::kNot));
  EXPECT_FALSE(isBinary(ScalarOp::kSymbol));
}

// ---- structure ----

TEST(ScalarStructure, AccessorsAndEquality) {
  Scalar e = raw(ScalarOp::kSub, sym("a"), 2);
  EXPECT_EQ(e.op(), ScalarOp::kSub);
  EXPECT_EQ(e.lhs(), sym("a"));
  EXPECT_EQ(e.rhs(), Scalar(2));
  EXPECT_FALSE(e.isConst());
  EXPECT_EQ(e.constValue(), std::nullopt);
  EXPECT_EQ(Scalar(7).constValue(), 7);
  EXPECT_EQ(sym("a").name(), "a");
  EXPECT_EQ(Scalar(7).name(), "");
  EXPECT_EQ(e, raw(ScalarOp::kSub, sym("a"), 2));
  EXPECT_NE(e, raw(ScalarOp::kSub, 2, sym("a")));
  EXPECT_NE(sym("a"), Scalar(0));
  // Structural, not semantic: a + 1 and 1 + a built raw are different trees.
  EXPECT_NE(raw(ScalarOp::kAdd, sym("a"), 1), raw(ScalarOp::kAdd, 1, sym("a")));
}

TEST(ScalarStructure, FreeSymbols) {
  Scalar e = raw(ScalarOp::kMod, raw(ScalarOp::kAdd, sym("i"), sym("rank")), sym(kNumberOfStreams));
  EXPECT_EQ(e.freeSymbols(), (std::set<std::string>{"i", "numberOfStreams", "rank"}));
  EXPECT_TRUE(Scalar(3).freeSymbols().empty());
  EXPECT_EQ(Scalar::logicalNot(sym("p")).freeSymbols(), (std::set<std::string>{"p"}));
}

// ---- simplification ----

TEST(ScalarSimplify, Identities) {
  Scalar x = sym("x");
  EXPECT_EQ(raw(ScalarOp::kAdd, x, 0).simplify(), x);
  EXPECT_EQ(raw(ScalarOp::kAdd, 0, x).simplify(), x);
  EXPECT_EQ(raw(ScalarOp::kSub, x, 0).simplify(), x);
  EXPECT_EQ(raw(ScalarOp::kSub, x, x).simplify(), Scalar(0));
  EXPECT_EQ(raw(ScalarOp::kMul, x, 1).simplify(), x);
  EXPECT_EQ(raw(ScalarOp::kMul, 0, x).simplify(), Scalar(0));
  EXPECT_EQ(raw(ScalarOp::kDiv, x, 1).simplify(), x);
  EXPECT_EQ(raw(ScalarOp::kMod, x, 1).simplify(), Scalar(0));
  EXPECT_EQ(raw(ScalarOp::kCeilDiv, x, 1).simplify(), x);
  EXPECT_EQ(raw(ScalarOp::kEq, x, x).simplify(), Scalar(1));
  EXPECT_EQ(raw(ScalarOp::kLt, x, x).simplify(), Scalar(0));
}

TEST(ScalarSimplify, ConstantsFoldAndCollect) {
  Scalar x = sym("x");
  EXPECT_EQ(raw(ScalarOp::kCeilDiv, 10, 4).simplify(), Scalar(3));
  EXPECT_EQ(raw(ScalarOp::kMod, 10, 4).simplify(), Scalar(2));
  EXPECT_EQ(raw(ScalarOp::kGe, 3, 4).simplify(), Scalar(0));
  EXPECT_EQ(raw(ScalarOp::kAdd, raw(ScalarOp::kAdd, x, 1), 2).simplify().str(), "( x + 3 )");
  EXPECT_EQ(raw(ScalarOp::kAdd, 2, x).simplify().str(), "( x + 2 )");
  EXPECT_EQ(raw(ScalarOp::kMul, 2, raw(ScalarOp::kMul, 3, x)).simplify().str(), "( 6 * x )");
  EXPECT_EQ(raw(ScalarOp::kMul, x, 3).simplify().str(), "( 3 * x )");
  EXPECT_EQ(raw(ScalarOp::kCeilDiv, raw(ScalarOp::kMul, 4, x), 4).simplify(), x);
  EXPECT_EQ(raw(ScalarOp::kDiv, raw(ScalarOp::kMul, x, sym("k")), sym("k")).simplify(), x);
  EXPECT_EQ(raw(ScalarOp::kMod, raw(ScalarOp::kMul, 4, x), 4).simplify(), Scalar(0));
  EXPECT_EQ(raw(ScalarOp::kSub, raw(ScalarOp::kAdd, x, sym("y")), sym("y")).simplify(), x);
  // Nested: simplification works bottom-up.
  EXPECT_EQ(raw(ScalarOp::kMul, raw(ScalarOp::kAdd, x, 0), raw(ScalarOp::kSub, 5, 4)).simplify(), x);
}

TEST(ScalarSimplify, KeepsWhatIsNotAlwaysTrue) {
  Scalar x = sym("x");
  // x / x is 1 only for x != 0.
  EXPECT_EQ(raw(ScalarOp::kDiv, x, x).simplify(), raw(ScalarOp::kDiv, x, x));
  // Constant division by zero is not folded (evaluation reports it).
  EXPECT_EQ(raw(ScalarOp::kDiv, 4, 0).simplify(), raw(ScalarOp::kDiv, 4, 0));
  // `1 && x` is 0 or 1, not x, unless x is a predicate.
  EXPECT_EQ(raw(ScalarOp::kAnd, 1, x).simplify(), raw(ScalarOp::kAnd, 1, x));
  Scalar p = raw(ScalarOp::kLt, x, 4);
  EXPECT_EQ(raw(ScalarOp::kAnd, 1, p).simplify(), p);
  EXPECT_EQ(raw(ScalarOp::kOr, p, 0).simplify(), p);
  EXPECT_EQ(raw(ScalarOp::kOr, x, 0).simplify(), raw(ScalarOp::kOr, x, 0));
  EXPECT_EQ(raw(ScalarOp::kAnd, x, 0).simplify(), Scalar(0));
  EXPECT_EQ(raw(ScalarOp::kOr, 3, x).simplify(), Scalar(1));
  EXPECT_EQ(Scalar::logicalNot(raw(ScalarOp::kEq, 2, 2)).simplify(), Scalar(0));
}

TEST(ScalarSimplify, BuildersSimplifyAsTheyBuild) {
  Scalar i0 = sym("i0");
  EXPECT_EQ((i0 * 1).str(), "i0");
  EXPECT_EQ((i0 + 0), i0);
  EXPECT_EQ(ceilDiv(i0, 4).str(), "ceilDiv(i0, 4)");
  EXPECT_EQ(ceilDiv(Scalar(12), 4), Scalar(3));
  EXPECT_EQ((Scalar(6) / 4), Scalar(1));
  EXPECT_EQ((i0 % 1), Scalar(0));
  EXPECT_EQ(eq(i0, i0), Scalar(1));
  EXPECT_EQ(ne(Scalar(1), 2), Scalar(1));
  EXPECT_EQ(logicalAnd(lt(i0, 4), 1).str(), "( i0 < 4 )");
  EXPECT_EQ(logicalOr(gt(Scalar(3), 1), le(i0, 2)), Scalar(1));
  EXPECT_EQ(ge(i0, 2).str(), "( i0 >= 2 )");
  EXPECT_EQ((i0 - 2).str(), "( i0 - 2 )");
}

// ---- evaluation ----

TEST(ScalarEvaluate, Values) {
  Bindings b{{"i0", 10}, {"i", 3}, {kNumberOfStreams, 4}, {kRank, 2}};
  EXPECT_EQ(raw(ScalarOp::kMul, sym("i0"), 3).evaluate(b), 30);
  EXPECT_EQ(raw(ScalarOp::kCeilDiv, sym("i0"), 4).evaluate(b), 3);
  EXPECT_EQ(raw(ScalarOp::kMod, raw(ScalarOp::kAdd, sym("i"), sym(kRank)), sym(kNumberOfStreams)).evaluate(b), 1);
  EXPECT_EQ(raw(ScalarOp::kEq, sym("i"), 3).evaluate(b), 1);
  EXPECT_EQ(Scalar::logicalNot(raw(ScalarOp::kEq, sym("i"), 3)).evaluate(b), 0);
  EXPECT_EQ(raw(ScalarOp::kAnd, 5, 7).evaluate(b), 1);
  EXPECT_EQ(raw(ScalarOp::kOr, 0, 0).evaluate(b), 0);
  // Truncation toward zero for / and %, exact ceiling for ceilDiv.
  EXPECT_EQ(raw(ScalarOp::kDiv, -7, 2).evaluate({}), -3);
  EXPECT_EQ(raw(ScalarOp::kMod, -7, 2).evaluate({}), -1);
  EXPECT_EQ(raw(ScalarOp::kCeilDiv, 7, 2).evaluate({}), 4);
  EXPECT_EQ(raw(ScalarOp::kCeilDiv, 8, 2).evaluate({}), 4);
  EXPECT_EQ(raw(ScalarOp::kCeilDiv, -7, 2).evaluate({}), -3);
  EXPECT_EQ(raw(ScalarOp::kCeilDiv, 7, -2).evaluate({}), -3);
  EXPECT_EQ(raw(ScalarOp::kCeilDiv, -7, -2).evaluate({}), 4);
}

TEST(ScalarEvaluate, UnboundSymbolIsAnErrorNamingIt) {
  Scalar e = raw(ScalarOp::kAdd, sym("i0"), sym("i2"));
  EXPECT_EQ(e.tryEvaluate({{"i0", 1}}), std::nullopt);
  try {
    e.evaluate({{"i0", 1}});
    FAIL() << "expected an error";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("'i2'"), std::string::npos) << err.what();
  }
}

TEST(ScalarEvaluate, DivisionByZeroIsAnError) {
  EXPECT_THROW(raw(ScalarOp::kDiv, sym("x"), 0).evaluate({{"x", 3}}), Error);
  EXPECT_THROW(raw(ScalarOp::kMod, 3, sym("y")).evaluate({{"y", 0}}), Error);
  EXPECT_THROW(raw(ScalarOp::kCeilDiv, 3, 0).evaluate({}), Error);
  EXPECT_THROW(raw(ScalarOp::kDiv, 3, 0).tryEvaluate({}), Error);
}

TEST(ScalarEvaluate, Substitute) {
  Scalar e = raw(ScalarOp::kMul, sym("i0"), sym("i2"));
  EXPECT_EQ(e.substitute({{"i0", 4}}).str(), "( 4 * i2 )");
  EXPECT_EQ(e.substitute({{"i0", 4}, {"i2", 8}}), Scalar(32));
  EXPECT_EQ(e.substitute({{"other", 1}}), e);
  EXPECT_EQ(e.substitute({{"i0", 1}}), sym("i2"));
  EXPECT_EQ(Scalar::logicalNot(raw(ScalarOp::kLt, sym("i"), 4)).substitute({{"i", 5}}), Scalar(1));
}

// ---- property: simplification preserves values ----

// A test-local wrapper so rapidcheck can print counterexamples.
struct RandomScalar {
  Scalar s;
};
std::ostream& operator<<(std::ostream& os, const RandomScalar& r) { return os << r.s.str(); }

const std::vector<ScalarOp>& binaryOps() {
  static const std::vector<ScalarOp> ops{ScalarOp::kAdd, ScalarOp::kSub, ScalarOp::kMul, ScalarOp::kDiv,
                                         ScalarOp::kMod, ScalarOp::kCeilDiv, ScalarOp::kEq, ScalarOp::kNe,
                                         ScalarOp::kLt, ScalarOp::kLe, ScalarOp::kGt, ScalarOp::kGe,
                                         ScalarOp::kAnd, ScalarOp::kOr};
  return ops;
}

// Random expressions over x, y, z and small constants (small so nothing overflows), with
// repeated subterms likely enough to exercise the x - x, (k*x)/k, ... rules.
rc::Gen<Scalar> genScalar(int depth) {
  rc::Gen<Scalar> leaf = rc::gen::oneOf(
      rc::gen::map(rc::gen::inRange<int64_t>(-4, 5), [](int64_t v) { return Scalar(v); }),
      rc::gen::map(rc::gen::elementOf(std::vector<std::string>{"x", "y", "z"}),
                   [](const std::string& n) { return Scalar::symbol(n); }));
  if (depth == 0) return leaf;
  rc::Gen<Scalar> sub = genScalar(depth - 1);
  rc::Gen<Scalar> bin = rc::gen::apply(
      [](ScalarOp op, const Scalar& a, const Scalar& b, int shape) {
        // Sometimes reuse an operand, to hit the rules that need equal subterms.
        switch (shape) {
          case 0: return Scalar::binary(op, a, a);
          case 1: return Scalar::binary(op, Scalar::binary(ScalarOp::kMul, b, a), b);
          default: return Scalar::binary(op, a, b);
        }
      },
      rc::gen::elementOf(binaryOps()), sub, sub, rc::gen::inRange(0, 6));
  rc::Gen<Scalar> neg = rc::gen::map(sub, [](const Scalar& a) { return Scalar::logicalNot(a); });
  return rc::gen::weightedOneOf<Scalar>({{2, leaf}, {6, bin}, {1, neg}});
}

RC_GTEST_PROP(ScalarProperty, SimplifyNeverChangesTheValue, ()) {
  const RandomScalar e = *rc::gen::map(genScalar(3), [](const Scalar& s) { return RandomScalar{s}; });
  Bindings b{{"x", *rc::gen::inRange<int64_t>(-5, 6)},
             {"y", *rc::gen::inRange<int64_t>(-5, 6)},
             {"z", *rc::gen::inRange<int64_t>(-5, 6)}};
  std::optional<int64_t> before;
  try {
    before = e.s.tryEvaluate(b);
  } catch (const Error&) {
    RC_DISCARD("the expression divides by zero");
  }
  RC_ASSERT(before.has_value());
  Scalar simplified = e.s.simplify();
  RC_ASSERT(simplified.evaluate(b) == *before);
  // Substituting every symbol gives the same value too (a constant unless a division by a
  // constant zero was kept, which cannot happen here since the original evaluated).
  Scalar folded = e.s.substitute(b);
  RC_ASSERT(folded.isConst());
  RC_ASSERT(*folded.constValue() == *before);
  // Simplifying twice changes nothing more than once.
  RC_ASSERT(simplified.simplify().evaluate(b) == *before);
}

}  // namespace
}  // namespace braid
