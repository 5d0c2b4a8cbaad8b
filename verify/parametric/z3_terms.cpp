#include "verify/parametric/z3_terms.h"

#include <set>

#include "ir/error.h"

namespace braid::verify::parametric {

namespace {
thread_local z3::context* g_context = nullptr;

bool positiveNumeral(const z3::expr& e, int64_t* v) {
  int64_t x = 0;
  if (!e.is_numeral_i64(x) || x <= 0) return false;
  *v = x;
  return true;
}
}  // namespace

Z3ContextScope::Z3ContextScope(z3::context& c) : previous_(g_context) { g_context = &c; }
Z3ContextScope::~Z3ContextScope() { g_context = previous_; }
z3::context& Z3ContextScope::current() {
  if (!g_context) throw Error("internal error: no Z3 context is active");
  return *g_context;
}

z3::expr simplified(const z3::expr& e) { return e.simplify(); }
bool isTrue(const z3::expr& e) { return e.is_true(); }
bool isFalse(const z3::expr& e) { return e.is_false(); }

namespace {
template <class F>
void walk(const z3::expr& e, std::set<unsigned>& seen, F&& f) {
  if (!seen.insert(e.id()).second) return;
  f(e);
  if (e.is_app())
    for (unsigned i = 0; i < e.num_args(); ++i) walk(e.arg(i), seen, f);
}
}  // namespace

bool mentions(const z3::expr& e, const z3::expr& var) {
  bool found = false;
  std::set<unsigned> seen;
  walk(e, seen, [&](const z3::expr& x) {
    if (z3::eq(x, var)) found = true;
  });
  return found;
}

std::vector<z3::expr> equalitiesOf(const z3::expr& e, const z3::expr& var) {
  std::vector<z3::expr> out;
  std::set<unsigned> seen;
  walk(e, seen, [&](const z3::expr& x) {
    if (!x.is_app() || x.decl().decl_kind() != Z3_OP_EQ || x.num_args() != 2) return;
    if (z3::eq(x.arg(0), var) && !mentions(x.arg(1), var)) out.push_back(x.arg(1));
    if (z3::eq(x.arg(1), var) && !mentions(x.arg(0), var)) out.push_back(x.arg(0));
  });
  return out;
}

z3::expr conj(const z3::expr& a, const z3::expr& b) {
  if (a.is_true()) return b;
  if (b.is_true()) return a;
  if (a.is_false()) return a;
  if (b.is_false()) return b;
  return a && b;
}

z3::expr disj(const z3::expr& a, const z3::expr& b) {
  if (a.is_false()) return b;
  if (b.is_false()) return a;
  if (a.is_true()) return a;
  if (b.is_true()) return b;
  return a || b;
}

// Z3's integer division is Euclidean (floor for positive divisors); C++ truncates toward zero:
// trunc(a / b) = sign(a) sign(b) floor(|a| / |b|).
z3::expr truncDiv(const z3::expr& a, const z3::expr& b) {
  int64_t bv = 0;
  if (positiveNumeral(b, &bv)) {
    int64_t av = 0;
    if (a.is_numeral_i64(av)) return a.ctx().int_val(av / bv);
    return z3::ite(a >= 0, a / b, -((-a) / b));
  }
  z3::expr absA = z3::ite(a >= 0, a, -a);
  z3::expr absB = z3::ite(b >= 0, b, -b);
  z3::expr q = absA / absB;
  return z3::ite((a >= 0) == (b > 0), q, -q);
}

z3::expr truncMod(const z3::expr& a, const z3::expr& b) { return a - b * truncDiv(a, b); }

z3::expr exactCeilDiv(const z3::expr& a, const z3::expr& b) {
  int64_t bv = 0;
  // For b > 0 the exact ceiling is -floor(-a / b), and Z3's division floors there.
  if (positiveNumeral(b, &bv)) return -((-a) / b);
  z3::expr q = truncDiv(a, b);
  z3::expr r = a - b * q;
  return z3::ite(r != 0 && ((r > 0) == (b > 0)), q + 1, q);
}

std::vector<z3::expr> iteVariants(const z3::expr& e, size_t limit) {
  if (!e.is_app()) return {e};
  if (e.decl().decl_kind() == Z3_OP_ITE) {
    auto a = iteVariants(e.arg(1), limit);
    auto b = iteVariants(e.arg(2), limit);
    a.insert(a.end(), b.begin(), b.end());
    if (a.size() > limit) a.erase(a.begin() + static_cast<long>(limit), a.end());
    return a;
  }
  Z3_decl_kind k = e.decl().decl_kind();
  if (k != Z3_OP_ADD && k != Z3_OP_SUB && k != Z3_OP_MUL && k != Z3_OP_UMINUS) return {e};
  std::vector<std::vector<z3::expr>> args;
  size_t total = 1;
  for (unsigned i = 0; i < e.num_args(); ++i) {
    args.push_back(iteVariants(e.arg(i), limit));
    total *= args.back().size();
  }
  if (total == 1) return {e};
  std::vector<z3::expr> out;
  std::vector<size_t> pick(args.size(), 0);
  while (out.size() < limit) {
    z3::expr_vector v(e.ctx());
    for (size_t i = 0; i < args.size(); ++i) v.push_back(args[i][pick[i]]);
    out.push_back(e.decl()(v).simplify());
    size_t i = 0;
    while (i < pick.size() && ++pick[i] == args[i].size()) pick[i++] = 0;
    if (i == pick.size()) break;
  }
  return out;
}

bool ScalarTranslator::knownPositive(const z3::expr& e) const {
  int64_t v = 0;
  if (e.is_numeral_i64(v)) return v > 0;
  for (const auto& p : positive_)
    if (z3::eq(p, e)) return true;
  return false;
}

z3::expr ScalarTranslator::div(const z3::expr& a, const z3::expr& b) const {
  if (knownPositive(b)) {
    int64_t av = 0, bv = 0;
    if (a.is_numeral_i64(av) && b.is_numeral_i64(bv)) return c_.int_val(av / bv);
    return z3::ite(a >= 0, a / b, -((-a) / b));
  }
  return truncDiv(a, b);
}

z3::expr ScalarTranslator::mod(const z3::expr& a, const z3::expr& b) const { return a - b * div(a, b); }

z3::expr ScalarTranslator::ceil(const z3::expr& a, const z3::expr& b) const {
  if (knownPositive(b)) return -((-a) / b);
  return exactCeilDiv(a, b);
}

bool ScalarTranslator::isBooleanOp(ScalarOp op) const {
  switch (op) {
    case ScalarOp::kEq:
    case ScalarOp::kNe:
    case ScalarOp::kLt:
    case ScalarOp::kLe:
    case ScalarOp::kGt:
    case ScalarOp::kGe:
    case ScalarOp::kAnd:
    case ScalarOp::kOr:
    case ScalarOp::kNot:
      return true;
    default:
      return false;
  }
}

z3::expr ScalarTranslator::boolean(const Scalar& s, const Env& env) {
  switch (s.op()) {
    case ScalarOp::kEq:
      return integer(s.lhs(), env) == integer(s.rhs(), env);
    case ScalarOp::kNe:
      return integer(s.lhs(), env) != integer(s.rhs(), env);
    case ScalarOp::kLt:
      return integer(s.lhs(), env) < integer(s.rhs(), env);
    case ScalarOp::kLe:
      return integer(s.lhs(), env) <= integer(s.rhs(), env);
    case ScalarOp::kGt:
      return integer(s.lhs(), env) > integer(s.rhs(), env);
    case ScalarOp::kGe:
      return integer(s.lhs(), env) >= integer(s.rhs(), env);
    case ScalarOp::kAnd:
      return boolean(s.lhs(), env) && boolean(s.rhs(), env);
    case ScalarOp::kOr:
      return boolean(s.lhs(), env) || boolean(s.rhs(), env);
    case ScalarOp::kNot:
      return !boolean(s.lhs(), env);
    default:
      return integer(s, env) != 0;
  }
}

z3::expr ScalarTranslator::integer(const Scalar& s, const Env& env) {
  switch (s.op()) {
    case ScalarOp::kConst:
      return c_.int_val(static_cast<int64_t>(*s.constValue()));
    case ScalarOp::kSymbol: {
      auto it = env.find(s.name());
      if (it == env.end()) throw Error("the symbol " + s.name() + " has no meaning here");
      return it->second;
    }
    case ScalarOp::kAdd:
      return integer(s.lhs(), env) + integer(s.rhs(), env);
    case ScalarOp::kSub:
      return integer(s.lhs(), env) - integer(s.rhs(), env);
    case ScalarOp::kMul:
      // A boolean factor (Scalar booleans are 0 / 1) selects: keeps the term linear.
      if (isBooleanOp(s.lhs().op())) return z3::ite(boolean(s.lhs(), env), integer(s.rhs(), env), c_.int_val(0));
      if (isBooleanOp(s.rhs().op())) return z3::ite(boolean(s.rhs(), env), integer(s.lhs(), env), c_.int_val(0));
      return integer(s.lhs(), env) * integer(s.rhs(), env);
    case ScalarOp::kDiv: {
      z3::expr b = integer(s.rhs(), env);
      divisors_.push_back(b);
      return div(integer(s.lhs(), env), b);
    }
    case ScalarOp::kMod: {
      z3::expr b = integer(s.rhs(), env);
      divisors_.push_back(b);
      return mod(integer(s.lhs(), env), b);
    }
    case ScalarOp::kCeilDiv: {
      z3::expr b = integer(s.rhs(), env);
      divisors_.push_back(b);
      return ceil(integer(s.lhs(), env), b);
    }
    default:
      return z3::ite(boolean(s, env), c_.int_val(1), c_.int_val(0));
  }
}

}  // namespace braid::verify::parametric
