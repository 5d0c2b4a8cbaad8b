// The shared view rules (ir/semantics/symbolic_rules.h): a box view names exactly the elements of
// the strided Region the interpreter builds, with the same contiguity and overlap; the rules
// written over Scalar evaluate to the rules over int64_t; over Z3 terms they agree with both.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "ir/semantics/region.h"
#include "ir/semantics/symbolic_rules.h"
#if BRAID_HAVE_Z3
#include "verify/parametric/z3_terms.h"
#endif

namespace braid::sem {
namespace {

using Box = BoxView<int64_t>;

// One view step applied to both representations.
struct Step {
  int kind = 0;  // 0 select, 1 narrow, 2 permute (reverse), 3 unsqueeze
  int dim = 0;
  int64_t a = 0, b = 0;
};

bool apply(const Step& s, Box& box, Region& r) {
  if (box.rank() == 0) return false;
  int dim = s.dim % box.rank();
  int64_t size = box.size(dim);
  switch (s.kind) {
    case 0: {
      if (size == 0) return false;
      int64_t i = s.a % size;
      box = box.select(dim, i);
      r = r.select(dim, i);
      return true;
    }
    case 1: {
      if (size == 0) return false;
      int64_t start = s.a % size;
      int64_t len = s.b % (size - start + 1);
      box = box.narrow(dim, start, len);
      r = r.narrow(dim, start, len);
      return true;
    }
    case 2: {
      std::vector<int64_t> perm;
      for (int i = box.rank(); i-- > 0;) perm.push_back(i);
      box = box.permute(perm);
      r = r.permute(perm);
      return true;
    }
    default:
      box = box.unsqueeze(dim);
      r = r.unsqueeze(dim);
      return true;
  }
}

std::vector<int64_t> genShape() {
  auto n = *rc::gen::inRange<size_t>(1, 4);
  return *rc::gen::container<std::vector<int64_t>>(n, rc::gen::inRange<int64_t>(1, 5));
}

std::vector<Step> genSteps() {
  auto n = *rc::gen::inRange<size_t>(0, 5);
  std::vector<Step> steps;
  for (size_t i = 0; i < n; ++i)
    steps.push_back({*rc::gen::inRange(0, 4), *rc::gen::inRange(0, 4), *rc::gen::inRange<int64_t>(0, 6),
                     *rc::gen::inRange<int64_t>(0, 6)});
  return steps;
}

RC_GTEST_PROP(ViewRules, BoxIsTheInterpretersRegion, ()) {
  std::vector<int64_t> shape = genShape();
  Box box = Box::whole(shape);
  Region r = Region::contiguous(0, shape);
  for (const Step& s : genSteps()) apply(s, box, r);
  Region b = toRegion(box, 0);
  RC_ASSERT(b.numel() == r.numel());
  RC_ASSERT(box.numel() == r.numel());
  RC_ASSERT(b.sameElements(r));
  RC_ASSERT(box.contiguous() == r.isContiguous());
}

RC_GTEST_PROP(ViewRules, BoxOverlapIsExact, ()) {
  std::vector<int64_t> shape = genShape();
  Box x = Box::whole(shape), y = Box::whole(shape);
  Region rx = Region::contiguous(0, shape), ry = rx;
  for (const Step& s : genSteps()) apply(s, x, rx);
  for (const Step& s : genSteps()) apply(s, y, ry);
  RC_ASSERT(x.overlaps(y) == rx.overlaps(ry));
}

TEST(ViewRules, ShardRuleOverScalarEvaluatesToTheIntegerRule) {
  Scalar n = Scalar::symbol("n"), chunks = Scalar::symbol("c"), index = Scalar::symbol("k");
  auto symbolic = shardByStreamRule(BoxView<Scalar>::whole({n, Scalar(3)}), 0, chunks, index, false);
  for (int64_t nv = 1; nv <= 9; ++nv) {
    for (int64_t cv = 1; cv <= 4; ++cv) {
      for (int64_t kv = 0; kv <= 4; ++kv) {
        Bindings b{{"n", nv}, {"c", cv}, {"k", kv}};
        auto concrete = shardByStreamRule(Box::whole({nv, 3}), 0, cv, kv, false);
        ASSERT_EQ(symbolic.inBounds.evaluate(b) != 0, concrete.inBounds) << nv << " " << cv << " " << kv;
        if (!concrete.inBounds) continue;
        EXPECT_EQ(symbolic.view.lo[0].evaluate(b), concrete.view.lo[0]);
        EXPECT_EQ(symbolic.view.len[0].evaluate(b), concrete.view.len[0]);
      }
    }
  }
}

TEST(ViewRules, SelectTakesIndexZeroOnASizeOneDimension) {
  auto r = aliasSelectRule(Box::whole({1, 4}), 0, false, int64_t{3});
  EXPECT_TRUE(r.inBounds);
  EXPECT_EQ(r.view.lo[0], 0);
  // Out of bounds, the interpreter binds in.narrow(dim, 0, 0).select(dim, 0): the same as a box.
  auto out = aliasSelectRule(Box::whole({2, 4}), 0, false, int64_t{2});
  EXPECT_FALSE(out.inBounds);
  Region expected = Region::contiguous(0, {2, 4}).narrow(0, 0, 0).select(0, 0);
  EXPECT_TRUE(toRegion(out.outside, 0).sameElements(expected));
}

#if BRAID_HAVE_Z3
// The Z3 translation of Scalars follows Scalar::evaluate: truncating division and remainder,
// exact ceilDiv, also for negative operands.
TEST(ViewRules, Z3TermsFollowScalarEvaluation) {
  z3::context c;
  verify::parametric::Z3ContextScope scope(c);
  verify::parametric::ScalarTranslator tr(c);
  z3::expr a = c.int_const("a"), b = c.int_const("b");
  verify::parametric::ScalarTranslator::Env env;
  env.insert_or_assign("a", a);
  env.insert_or_assign("b", b);
  Scalar sa = Scalar::symbol("a"), sb = Scalar::symbol("b");
  std::vector<Scalar> exprs = {Scalar::binary(ScalarOp::kDiv, sa, sb), Scalar::binary(ScalarOp::kMod, sa, sb),
                               Scalar::binary(ScalarOp::kCeilDiv, sa, sb),
                               Scalar::binary(ScalarOp::kMul, lt(sa, sb), sa)};
  for (const Scalar& e : exprs) {
    z3::expr t = tr.integer(e, env);
    for (int64_t av = -7; av <= 7; ++av) {
      for (int64_t bv : {-3, -2, -1, 1, 2, 5}) {
        z3::expr_vector from(c), to(c);
        from.push_back(a);
        from.push_back(b);
        to.push_back(c.int_val(av));
        to.push_back(c.int_val(bv));
        int64_t got = 0;
        ASSERT_TRUE(t.substitute(from, to).simplify().is_numeral_i64(got)) << e.str();
        EXPECT_EQ(got, e.evaluate({{"a", av}, {"b", bv}})) << e.str() << " a=" << av << " b=" << bv;
      }
    }
  }
}

#endif

}  // namespace
}  // namespace braid::sem
