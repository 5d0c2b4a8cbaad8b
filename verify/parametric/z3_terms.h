// Z3 terms for the semantics' rules: ExprOps<z3::expr> (so ir/semantics/symbolic_rules.h runs on Z3
// terms) and the translation of braid's Scalar expressions into Z3 integer terms with the
// semantics of Scalar::evaluate (C++ truncating `/` and `%`, exact ceilDiv, booleans as 0 / 1).
#pragma once

#include <map>
#include <string>
#include <vector>

#include <z3++.h>

#include "ir/scalar.h"
#include "ir/semantics/symbolic_rules.h"

namespace braid::verify::parametric {

// ExprOps<z3::expr> makes numerals without a context argument (the rules are written for types
// that need none), so the context they use is set for the duration of a check by this guard.
class Z3ContextScope {
 public:
  explicit Z3ContextScope(z3::context& c);
  ~Z3ContextScope();
  Z3ContextScope(const Z3ContextScope&) = delete;
  Z3ContextScope& operator=(const Z3ContextScope&) = delete;
  static z3::context& current();

 private:
  z3::context* previous_;
};

// Integer division and remainder as C++ (truncating) and Scalar's exact ceilDiv. A divisor that
// may be zero makes the result meaningless: callers record `b != 0` as a definedness condition.
z3::expr truncDiv(const z3::expr& a, const z3::expr& b);
z3::expr truncMod(const z3::expr& a, const z3::expr& b);
z3::expr exactCeilDiv(const z3::expr& a, const z3::expr& b);

// Simplified term, and whether it is the literal true / false.
z3::expr simplified(const z3::expr& e);
bool isTrue(const z3::expr& e);
bool isFalse(const z3::expr& e);

// Whether `e` contains the constant `var`; the right-hand sides t of atoms `var == t` in `e`.
bool mentions(const z3::expr& e, const z3::expr& var);
std::vector<z3::expr> equalitiesOf(const z3::expr& e, const z3::expr& var);

// The ite-free variants of an integer term (each if-then-else resolved both ways), at most
// `limit` of them; used to find the linear pieces of an offset such as
// `ite(size == 1, 0, k)`.
std::vector<z3::expr> iteVariants(const z3::expr& e, size_t limit = 8);

// Conjunction / disjunction that fold literals.
z3::expr conj(const z3::expr& a, const z3::expr& b);
z3::expr disj(const z3::expr& a, const z3::expr& b);

// Translates Scalars. Symbols are looked up in an environment (loop indices, rank, stream count,
// extents); an unknown symbol throws Error naming it. Every divisor met is recorded in
// `divisors()` so the caller can require it to be nonzero.
class ScalarTranslator {
 public:
  using Env = std::map<std::string, z3::expr, std::less<>>;
  explicit ScalarTranslator(z3::context& c) : c_(c) {}
  // Terms known to be positive in the whole domain (numberOfStreams, extents): division by them
  // needs no case on the divisor's sign.
  void setPositive(std::vector<z3::expr> terms) { positive_ = std::move(terms); }

  z3::expr integer(const Scalar& s, const Env& env);
  z3::expr boolean(const Scalar& s, const Env& env);
  const std::vector<z3::expr>& divisors() const { return divisors_; }
  void clearDivisors() { divisors_.clear(); }

 private:
  bool isBooleanOp(ScalarOp op) const;
  bool knownPositive(const z3::expr& e) const;
  z3::expr div(const z3::expr& a, const z3::expr& b) const;
  z3::expr mod(const z3::expr& a, const z3::expr& b) const;
  z3::expr ceil(const z3::expr& a, const z3::expr& b) const;
  z3::context& c_;
  std::vector<z3::expr> positive_;
  std::vector<z3::expr> divisors_;
};

}  // namespace braid::verify::parametric

namespace braid::sem {

template <>
struct ExprOps<z3::expr> {
  using Bool = z3::expr;
  static z3::expr num(int64_t v) { return verify::parametric::Z3ContextScope::current().int_val(v); }
  static z3::expr ite(const z3::expr& c, const z3::expr& a, const z3::expr& b) {
    if (verify::parametric::isTrue(c)) return a;
    if (verify::parametric::isFalse(c)) return b;
    return z3::ite(c, a, b);
  }
  static z3::expr lt(const z3::expr& a, const z3::expr& b) { return a < b; }
  static z3::expr le(const z3::expr& a, const z3::expr& b) { return a <= b; }
  static z3::expr eq(const z3::expr& a, const z3::expr& b) { return a == b; }
  static z3::expr both(const z3::expr& a, const z3::expr& b) { return verify::parametric::conj(a, b); }
  static z3::expr either(const z3::expr& a, const z3::expr& b) { return verify::parametric::disj(a, b); }
  static z3::expr negate(const z3::expr& a) { return !a; }
  static z3::expr truth(bool v) { return verify::parametric::Z3ContextScope::current().bool_val(v); }
  static z3::expr ceilDiv(const z3::expr& a, const z3::expr& b) { return verify::parametric::exactCeilDiv(a, b); }
};

}  // namespace braid::sem
