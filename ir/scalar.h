// Scalar expressions: the integers a host program computes with. Extents (`i0`, `( ceilDiv(i0, 4) )`),
// loop indices (`StreamIdx`, `i17`), `numberOfStreams`, `deviceIdx.x` / `rank`, stream keys
// (`( StreamIdx % numberOfStreams )`), peers and predicates (`( StreamIdx == deviceIdx.x )`).
//
// A Scalar is an immutable value (a shared, never-mutated tree), cheap to copy. Booleans are the
// integers 0 and 1, as in nvFuser's host evaluator. `/` and `%` truncate toward zero (C++);
// `ceilDiv(a, b)` is the exact ceiling of a / b (nvFuser's `(a + b - 1) / b` for a >= 0, b > 0).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

namespace braid {

enum class ScalarOp {
  kConst,
  kSymbol,
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMod,
  kCeilDiv,
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kAnd,
  kOr,
  kNot,
};

// The infix spelling of a binary operator ("+", "==", "&&"); "ceilDiv" for kCeilDiv.
const char* scalarOpSpelling(ScalarOp op);
bool isBinary(ScalarOp op);

// Values for free symbols: extents ("i0"), "numberOfStreams", "rank"/"deviceIdx.x", loop indices.
using Bindings = std::map<std::string, int64_t, std::less<>>;

class Scalar {
 public:
  Scalar();  // the constant 0
  Scalar(int64_t value);  // NOLINT: implicit, so `ceilDiv(i0, 4)` reads naturally
  Scalar(int value) : Scalar(static_cast<int64_t>(value)) {}  // NOLINT
  static Scalar symbol(std::string name);
  // Builds `a op b` without simplifying (the parser keeps what the file says).
  static Scalar binary(ScalarOp op, Scalar a, Scalar b);
  static Scalar logicalNot(Scalar a);

  ScalarOp op() const;
  bool isConst() const { return op() == ScalarOp::kConst; }
  bool isSymbol() const { return op() == ScalarOp::kSymbol; }
  std::optional<int64_t> constValue() const;  // set iff isConst()
  const std::string& name() const;             // the symbol's name; "" otherwise
  const Scalar& lhs() const;                   // operands of binary ops (and kNot's operand)
  const Scalar& rhs() const;

  // nvFuser's inline spelling: `i0`, `4`, `( i0 * i2 )`, `ceilDiv(i0, 4)`, `( i == rank )`. An
  // expression that would nest deeper than kMaxScalarNesting that way (a long sum) is written
  // with only the parentheses precedence needs: `( i0 + i1 + ... + i300 )`.
  std::string str() const;
  // Spelling inside an IterDomain's braces: anything that is not an atom is parenthesized,
  // e.g. `( ceilDiv(i0, 3) )`.
  std::string extentStr() const;

  // Value under `b`, or nullopt when a free symbol is unbound. Throws Error on division by zero
  // and on int64 overflow (naming the operands). Every walk over a Scalar is iterative.
  std::optional<int64_t> tryEvaluate(const Bindings& b) const;
  // Value under `b`; throws Error naming the first unbound symbol.
  int64_t evaluate(const Bindings& b) const;
  // Replaces bound symbols by their values, then simplifies.
  Scalar substitute(const Bindings& b) const;
  // Constant folding and algebraic identities (x+0, x*1, x*0, x/1, x%1, ceilDiv(x,1),
  // (x+c1)+c2, c1*(c2*x), ceilDiv(c*k,k), comparisons and logic of constants, x==x, ...).
  Scalar simplify() const;
  std::set<std::string> freeSymbols() const;

  // Structural equality (same tree), not semantic equality.
  bool operator==(const Scalar& other) const;
  bool operator!=(const Scalar& other) const { return !(*this == other); }

  struct Node;

 private:
  explicit Scalar(std::shared_ptr<const Node> node) : node_(std::move(node)) {}
  std::shared_ptr<const Node> node_;
};

// Builders that simplify as they build (for passes and the builder API).
Scalar operator+(const Scalar& a, const Scalar& b);
Scalar operator-(const Scalar& a, const Scalar& b);
Scalar operator*(const Scalar& a, const Scalar& b);
Scalar operator/(const Scalar& a, const Scalar& b);
Scalar operator%(const Scalar& a, const Scalar& b);
Scalar ceilDiv(const Scalar& a, const Scalar& b);
Scalar eq(const Scalar& a, const Scalar& b);
Scalar ne(const Scalar& a, const Scalar& b);
Scalar lt(const Scalar& a, const Scalar& b);
Scalar le(const Scalar& a, const Scalar& b);
Scalar gt(const Scalar& a, const Scalar& b);
Scalar ge(const Scalar& a, const Scalar& b);
Scalar logicalAnd(const Scalar& a, const Scalar& b);
Scalar logicalOr(const Scalar& a, const Scalar& b);

// Limits of the scalar parser, which the printer respects (parse(print(s)) == s for every parsed
// s): nesting of parentheses, ceilDiv, `!` and unary `-`; and operations in one expression, which
// bounds the depth of every tree read from a file (a 25,000-term sum is refused, located).
inline constexpr int kMaxScalarNesting = 200;
inline constexpr int64_t kMaxScalarOperations = 4096;

// Well-known symbol names.
inline constexpr const char* kNumberOfStreams = "numberOfStreams";
inline constexpr const char* kRank = "rank";
inline constexpr const char* kDeviceIdxX = "deviceIdx.x";
inline constexpr const char* kDeviceIdxY = "deviceIdx.y";

}  // namespace braid
