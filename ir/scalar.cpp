#include "ir/scalar.h"

#include <vector>

#include "ir/error.h"

namespace braid {

struct Scalar::Node {
  ScalarOp op = ScalarOp::kConst;
  int64_t value = 0;
  std::string name;
  // Operands; empty for atoms. Optional, not plain Scalars: a default Scalar is itself a Node, so
  // plain members would recurse without end on construction.
  std::optional<Scalar> a, b;
};

namespace {

const Scalar& nullScalar() {
  static const Scalar zero;
  return zero;
}

int64_t truncDiv(int64_t a, int64_t b) {
  if (b == 0) throw Error("scalar expression divides by zero");
  return a / b;
}

int64_t apply(ScalarOp op, int64_t a, int64_t b) {
  switch (op) {
    case ScalarOp::kAdd: return a + b;
    case ScalarOp::kSub: return a - b;
    case ScalarOp::kMul: return a * b;
    case ScalarOp::kDiv: return truncDiv(a, b);
    case ScalarOp::kMod:
      if (b == 0) throw Error("scalar expression takes a remainder modulo zero");
      return a % b;
    case ScalarOp::kCeilDiv: {
      if (b == 0) throw Error("scalar expression divides by zero in ceilDiv");
      // The exact ceiling of a / b. For a >= 0, b > 0 (every extent) this is nvFuser's
      // (a + b - 1) / b; unlike that formula it is also right for negative operands, which keeps
      // the rewrite ceilDiv(k * x, k) -> x valid for every x.
      int64_t q = a / b, r = a % b;
      return (r != 0 && ((r > 0) == (b > 0))) ? q + 1 : q;
    }
    case ScalarOp::kEq: return a == b;
    case ScalarOp::kNe: return a != b;
    case ScalarOp::kLt: return a < b;
    case ScalarOp::kLe: return a <= b;
    case ScalarOp::kGt: return a > b;
    case ScalarOp::kGe: return a >= b;
    case ScalarOp::kAnd: return (a != 0) && (b != 0);
    case ScalarOp::kOr: return (a != 0) || (b != 0);
    default: return 0;
  }
}

}  // namespace

const char* scalarOpSpelling(ScalarOp op) {
  switch (op) {
    case ScalarOp::kAdd: return "+";
    case ScalarOp::kSub: return "-";
    case ScalarOp::kMul: return "*";
    case ScalarOp::kDiv: return "/";
    case ScalarOp::kMod: return "%";
    case ScalarOp::kCeilDiv: return "ceilDiv";
    case ScalarOp::kEq: return "==";
    case ScalarOp::kNe: return "!=";
    case ScalarOp::kLt: return "<";
    case ScalarOp::kLe: return "<=";
    case ScalarOp::kGt: return ">";
    case ScalarOp::kGe: return ">=";
    case ScalarOp::kAnd: return "&&";
    case ScalarOp::kOr: return "||";
    case ScalarOp::kNot: return "!";
    case ScalarOp::kConst: return "const";
    case ScalarOp::kSymbol: return "symbol";
  }
  return "?";
}

bool isBinary(ScalarOp op) {
  return op != ScalarOp::kConst && op != ScalarOp::kSymbol && op != ScalarOp::kNot;
}

Scalar::Scalar() : Scalar(int64_t{0}) {}

Scalar::Scalar(int64_t value) {
  auto n = std::make_shared<Node>();
  n->op = ScalarOp::kConst;
  n->value = value;
  node_ = std::move(n);
}

Scalar Scalar::symbol(std::string name) {
  auto n = std::make_shared<Node>();
  n->op = ScalarOp::kSymbol;
  n->name = std::move(name);
  return Scalar(std::move(n));
}

Scalar Scalar::binary(ScalarOp op, Scalar a, Scalar b) {
  auto n = std::make_shared<Node>();
  n->op = op;
  n->a = std::move(a);
  n->b = std::move(b);
  return Scalar(std::move(n));
}

Scalar Scalar::logicalNot(Scalar a) {
  auto n = std::make_shared<Node>();
  n->op = ScalarOp::kNot;
  n->a = std::move(a);
  return Scalar(std::move(n));
}

ScalarOp Scalar::op() const { return node_->op; }

std::optional<int64_t> Scalar::constValue() const {
  if (isConst()) return node_->value;
  return std::nullopt;
}

const std::string& Scalar::name() const { return node_->name; }
const Scalar& Scalar::lhs() const { return isBinary(op()) || op() == ScalarOp::kNot ? *node_->a : nullScalar(); }
const Scalar& Scalar::rhs() const { return isBinary(op()) ? *node_->b : nullScalar(); }

std::string Scalar::str() const {
  switch (op()) {
    case ScalarOp::kConst: return std::to_string(node_->value);
    case ScalarOp::kSymbol: return node_->name;
    case ScalarOp::kCeilDiv: return "ceilDiv(" + node_->a->str() + ", " + node_->b->str() + ")";
    case ScalarOp::kNot: return "!" + node_->a->str();
    default:
      return "( " + node_->a->str() + " " + scalarOpSpelling(op()) + " " + node_->b->str() + " )";
  }
}

std::string Scalar::extentStr() const {
  if (op() == ScalarOp::kCeilDiv || op() == ScalarOp::kNot) return "( " + str() + " )";
  return str();
}

std::optional<int64_t> Scalar::tryEvaluate(const Bindings& b) const {
  switch (op()) {
    case ScalarOp::kConst: return node_->value;
    case ScalarOp::kSymbol: {
      auto it = b.find(node_->name);
      if (it == b.end()) return std::nullopt;
      return it->second;
    }
    case ScalarOp::kNot: {
      auto v = node_->a->tryEvaluate(b);
      if (!v) return std::nullopt;
      return *v == 0 ? 1 : 0;
    }
    default: {
      auto x = node_->a->tryEvaluate(b);
      auto y = node_->b->tryEvaluate(b);
      if (!x || !y) return std::nullopt;
      return apply(op(), *x, *y);
    }
  }
}

int64_t Scalar::evaluate(const Bindings& b) const {
  if (auto v = tryEvaluate(b)) return *v;
  for (const auto& s : freeSymbols()) {
    if (!b.count(s)) throw Error("scalar '" + str() + "' needs a value for '" + s + "'");
  }
  throw Error("cannot evaluate scalar '" + str() + "'");
}

Scalar Scalar::substitute(const Bindings& b) const {
  switch (op()) {
    case ScalarOp::kConst: return *this;
    case ScalarOp::kSymbol: {
      auto it = b.find(node_->name);
      return it == b.end() ? *this : Scalar(it->second);
    }
    case ScalarOp::kNot: return logicalNot(node_->a->substitute(b)).simplify();
    default: return binary(op(), node_->a->substitute(b), node_->b->substitute(b)).simplify();
  }
}

namespace {

// Whether `s` always evaluates to 0 or 1.
bool isBoolValued(const Scalar& s) {
  switch (s.op()) {
    case ScalarOp::kConst: return *s.constValue() == 0 || *s.constValue() == 1;
    case ScalarOp::kEq:
    case ScalarOp::kNe:
    case ScalarOp::kLt:
    case ScalarOp::kLe:
    case ScalarOp::kGt:
    case ScalarOp::kGe:
    case ScalarOp::kAnd:
    case ScalarOp::kOr:
    case ScalarOp::kNot: return true;
    default: return false;
  }
}

// One level of simplification, assuming both operands are already simplified.
Scalar simplifyNode(ScalarOp op, const Scalar& a, const Scalar& b) {
  auto ca = a.constValue();
  auto cb = b.constValue();
  if (ca && cb) {
    bool div_like = op == ScalarOp::kDiv || op == ScalarOp::kMod || op == ScalarOp::kCeilDiv;
    if (!(div_like && *cb == 0)) return Scalar(apply(op, *ca, *cb));
  }
  switch (op) {
    case ScalarOp::kAdd:
      if (ca == 0) return b;
      if (cb == 0) return a;
      // (x + c1) + c2 -> x + (c1 + c2)
      if (cb && a.op() == ScalarOp::kAdd && a.rhs().isConst())
        return simplifyNode(ScalarOp::kAdd, a.lhs(), Scalar(*a.rhs().constValue() + *cb));
      if (ca && !cb) return simplifyNode(ScalarOp::kAdd, b, a);  // constants go right
      break;
    case ScalarOp::kSub:
      if (cb == 0) return a;
      if (a == b) return Scalar(0);
      // (x + y) - y -> x
      if (a.op() == ScalarOp::kAdd && a.rhs() == b) return a.lhs();
      if (a.op() == ScalarOp::kAdd && a.lhs() == b) return a.rhs();
      break;
    case ScalarOp::kMul:
      if (ca == 0 || cb == 0) return Scalar(0);
      if (ca == 1) return b;
      if (cb == 1) return a;
      // c1 * (c2 * x) and (x * c2) * c1 -> (c1*c2) * x
      if (ca && b.op() == ScalarOp::kMul && b.lhs().isConst())
        return simplifyNode(ScalarOp::kMul, Scalar(*ca * *b.lhs().constValue()), b.rhs());
      if (cb && !ca) return simplifyNode(ScalarOp::kMul, b, a);  // constants go left
      break;
    case ScalarOp::kDiv:
      if (cb == 1) return a;
      if (ca == 0) return Scalar(0);
      if (a == b) break;  // x / x is 1 only for x != 0: keep it
      // (k * x) / k -> x
      if (a.op() == ScalarOp::kMul && (a.lhs() == b || a.rhs() == b))
        return a.lhs() == b ? a.rhs() : a.lhs();
      break;
    case ScalarOp::kCeilDiv:
      if (cb == 1) return a;
      if (ca == 0) return Scalar(0);
      if (a.op() == ScalarOp::kMul && (a.lhs() == b || a.rhs() == b))
        return a.lhs() == b ? a.rhs() : a.lhs();
      break;
    case ScalarOp::kMod:
      if (cb == 1 || ca == 0) return Scalar(0);
      if (a.op() == ScalarOp::kMul && (a.lhs() == b || a.rhs() == b)) return Scalar(0);
      break;
    case ScalarOp::kEq:
    case ScalarOp::kLe:
    case ScalarOp::kGe:
      if (a == b) return Scalar(1);
      break;
    case ScalarOp::kNe:
    case ScalarOp::kLt:
    case ScalarOp::kGt:
      if (a == b) return Scalar(0);
      break;
    case ScalarOp::kAnd:
      if (ca == 0 || cb == 0) return Scalar(0);
      // `1 && x` is x only when x is already 0 or 1 (a comparison or a logical op).
      if (ca && isBoolValued(b)) return b;  // nonzero constant
      if (cb && isBoolValued(a)) return a;
      break;
    case ScalarOp::kOr:
      if ((ca && *ca != 0) || (cb && *cb != 0)) return Scalar(1);
      if (ca == 0 && isBoolValued(b)) return b;
      if (cb == 0 && isBoolValued(a)) return a;
      break;
    default:
      break;
  }
  return Scalar::binary(op, a, b);
}

}  // namespace

Scalar Scalar::simplify() const {
  switch (op()) {
    case ScalarOp::kConst:
    case ScalarOp::kSymbol: return *this;
    case ScalarOp::kNot: {
      Scalar a = node_->a->simplify();
      if (auto c = a.constValue()) return Scalar(*c == 0 ? 1 : 0);
      return logicalNot(a);
    }
    default: return simplifyNode(op(), node_->a->simplify(), node_->b->simplify());
  }
}

std::set<std::string> Scalar::freeSymbols() const {
  std::set<std::string> out;
  std::vector<const Scalar*> work{this};
  while (!work.empty()) {
    const Scalar* s = work.back();
    work.pop_back();
    if (s->isSymbol()) out.insert(s->name());
    else if (s->op() == ScalarOp::kNot) work.push_back(&*s->node_->a);
    else if (isBinary(s->op())) {
      work.push_back(&*s->node_->a);
      work.push_back(&*s->node_->b);
    }
  }
  return out;
}

bool Scalar::operator==(const Scalar& other) const {
  if (node_ == other.node_) return true;
  if (op() != other.op()) return false;
  switch (op()) {
    case ScalarOp::kConst: return node_->value == other.node_->value;
    case ScalarOp::kSymbol: return node_->name == other.node_->name;
    case ScalarOp::kNot: return node_->a == other.node_->a;
    default: return node_->a == other.node_->a && node_->b == other.node_->b;
  }
}

Scalar operator+(const Scalar& a, const Scalar& b) { return simplifyNode(ScalarOp::kAdd, a, b); }
Scalar operator-(const Scalar& a, const Scalar& b) { return simplifyNode(ScalarOp::kSub, a, b); }
Scalar operator*(const Scalar& a, const Scalar& b) { return simplifyNode(ScalarOp::kMul, a, b); }
Scalar operator/(const Scalar& a, const Scalar& b) { return simplifyNode(ScalarOp::kDiv, a, b); }
Scalar operator%(const Scalar& a, const Scalar& b) { return simplifyNode(ScalarOp::kMod, a, b); }
Scalar ceilDiv(const Scalar& a, const Scalar& b) { return simplifyNode(ScalarOp::kCeilDiv, a, b); }
Scalar eq(const Scalar& a, const Scalar& b) { return simplifyNode(ScalarOp::kEq, a, b); }
Scalar ne(const Scalar& a, const Scalar& b) { return simplifyNode(ScalarOp::kNe, a, b); }
Scalar lt(const Scalar& a, const Scalar& b) { return simplifyNode(ScalarOp::kLt, a, b); }
Scalar le(const Scalar& a, const Scalar& b) { return simplifyNode(ScalarOp::kLe, a, b); }
Scalar gt(const Scalar& a, const Scalar& b) { return simplifyNode(ScalarOp::kGt, a, b); }
Scalar ge(const Scalar& a, const Scalar& b) { return simplifyNode(ScalarOp::kGe, a, b); }
Scalar logicalAnd(const Scalar& a, const Scalar& b) { return simplifyNode(ScalarOp::kAnd, a, b); }
Scalar logicalOr(const Scalar& a, const Scalar& b) { return simplifyNode(ScalarOp::kOr, a, b); }

}  // namespace braid
