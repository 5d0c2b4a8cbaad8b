#include "ir/scalar.h"

#include <algorithm>
#include <vector>

#include "ir/checked_math.h"
#include "ir/error.h"

namespace braid {

struct Scalar::Node {
  ScalarOp op = ScalarOp::kConst;
  int64_t value = 0;
  std::string name;
  // Operands; empty for atoms. Optional, not plain Scalars: a default Scalar is itself a Node, so
  // plain members would recurse without end on construction.
  std::optional<Scalar> a, b;

  Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  // Frees a deep tree without recursion (the default destructor would recurse once per level):
  // operands this node alone owns are detached onto a work list first.
  ~Node() {
    std::vector<std::shared_ptr<const Node>> pending;
    auto detach = [&](std::optional<Scalar>& s) {
      if (s && s->node_ && s->node_.use_count() == 1) pending.push_back(std::move(s->node_));
    };
    detach(a);
    detach(b);
    while (!pending.empty()) {
      std::shared_ptr<const Node> n = std::move(pending.back());
      pending.pop_back();
      auto& m = const_cast<Node&>(*n);  // sole owner: nobody else can see it
      detach(m.a);
      detach(m.b);
    }  // `n` dies here with its operands detached: no recursion
  }
};

namespace {

const Scalar& nullScalar() {
  static const Scalar zero;
  return zero;
}

// Checked (ir/checked_math.h): an extent near 2^62 times 4 is an error naming the values, never a
// wrapped size.
int64_t apply(ScalarOp op, int64_t a, int64_t b) {
  switch (op) {
    case ScalarOp::kAdd: return checkedAdd(a, b, "in a scalar expression");
    case ScalarOp::kSub: return checkedSub(a, b, "in a scalar expression");
    case ScalarOp::kMul: return checkedMul(a, b, "in a scalar expression");
    case ScalarOp::kDiv:
      if (b == 0) throw Error("scalar expression divides by zero: " + std::to_string(a) + " / 0");
      return checkedDiv(a, b, "in a scalar expression");
    case ScalarOp::kMod:
      if (b == 0) throw Error("scalar expression takes a remainder modulo zero: " + std::to_string(a) + " % 0");
      return checkedMod(a, b);
    case ScalarOp::kCeilDiv: {
      if (b == 0) throw Error("scalar expression divides by zero in ceilDiv(" + std::to_string(a) + ", 0)");
      // The exact ceiling of a / b. For a >= 0, b > 0 (every extent) this is nvFuser's
      // (a + b - 1) / b; unlike that formula it is also right for negative operands, which keeps
      // the rewrite ceilDiv(k * x, k) -> x valid for every x.
      int64_t q = checkedDiv(a, b, "in ceilDiv"), r = checkedMod(a, b);
      return (r != 0 && ((r > 0) == (b > 0))) ? checkedAdd(q, 1, "in ceilDiv") : q;
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

Scalar simplifyNode(ScalarOp op, const Scalar& a, const Scalar& b);
Scalar simplifyOneNode(ScalarOp op, const Scalar& a, const Scalar& b) { return simplifyNode(op, a, b); }

int arityOf(ScalarOp op) {
  if (op == ScalarOp::kConst || op == ScalarOp::kSymbol) return 0;
  return op == ScalarOp::kNot ? 1 : 2;
}

// Post-order fold over a scalar tree without recursion: a file may hold a sum of 25,000 terms,
// a left-leaning tree as deep as that, and no walk over it may use the call stack.
// f(node, operands) gets the values of the node's 0, 1 or 2 operands (it may move from them).
template <class T, class F>
T foldScalar(const Scalar& root, F&& f) {
  // A leaf (most extents and indices are one) needs no stacks.
  if (arityOf(root.op()) == 0) return f(root, nullptr);
  struct Frame {
    const Scalar* s;
    int next;
  };
  std::vector<Frame> stack{{&root, 0}};
  std::vector<T> values;
  while (!stack.empty()) {
    Frame& fr = stack.back();
    int arity = arityOf(fr.s->op());
    if (fr.next < arity) {
      const Scalar* child = fr.next == 0 ? &fr.s->lhs() : &fr.s->rhs();
      ++fr.next;
      stack.push_back({child, 0});
      continue;
    }
    const Scalar* s = fr.s;
    stack.pop_back();
    size_t first = values.size() - static_cast<size_t>(arity);
    T v = f(*s, values.data() + first);
    values.resize(first);
    values.push_back(std::move(v));
  }
  return std::move(values.back());
}

// Precedence levels of the scalar parser (scalar_parser.cpp), loosest first; atoms (constants,
// symbols, ceilDiv(..), !x) bind tightest.
constexpr int kAtomLevel = 100;
int levelOf(ScalarOp op) {
  switch (op) {
    case ScalarOp::kOr: return 0;
    case ScalarOp::kAnd: return 1;
    case ScalarOp::kEq:
    case ScalarOp::kNe: return 2;
    case ScalarOp::kLt:
    case ScalarOp::kLe:
    case ScalarOp::kGt:
    case ScalarOp::kGe: return 3;
    case ScalarOp::kAdd:
    case ScalarOp::kSub: return 4;
    case ScalarOp::kMul:
    case ScalarOp::kDiv:
    case ScalarOp::kMod: return 5;
    default: return kAtomLevel;
  }
}

bool isInfix(ScalarOp op) { return levelOf(op) != kAtomLevel; }

// How deep the scalar parser nests to read nvFuser's spelling of `s` (every infix operation in
// parentheses): one level per parenthesis, ceilDiv, `!` and operand.
int fullDepth(const Scalar& s) {
  return foldScalar<int>(s, [](const Scalar& n, int* ops) {
    switch (arityOf(n.op())) {
      case 0: return 1;
      case 1: return 1 + ops[0];
      default: return 1 + std::max(ops[0], ops[1]);
    }
  });
}

std::string fullStr(const Scalar& s) {
  return foldScalar<std::string>(s, [](const Scalar& n, std::string* ops) -> std::string {
    switch (n.op()) {
      case ScalarOp::kConst: return std::to_string(*n.constValue());
      case ScalarOp::kSymbol: return n.name();
      case ScalarOp::kCeilDiv: return "ceilDiv(" + ops[0] + ", " + ops[1] + ")";
      case ScalarOp::kNot: return "!" + ops[0];
      default: {
        std::string out = "( ";
        out += ops[0];
        out += ' ';
        out += scalarOpSpelling(n.op());
        out += ' ';
        out += ops[1];
        out += " )";
        return out;
      }
    }
  });
}

// The spelling with only the parentheses precedence needs (`( i0 + i1 + i2 )` for a chain), for
// expressions whose nvFuser spelling would nest deeper than the parser accepts.
struct Printed {
  std::string text;
  int level = kAtomLevel;  // precedence of the outermost unparenthesized operator
  int depth = 1;           // parser nesting, as fullDepth counts it
};

Printed wrap(Printed p) {
  p.text = "( " + p.text + " )";
  p.level = kAtomLevel;
  p.depth += 1;
  return p;
}

Printed minimalPrinted(const Scalar& s) {
  return foldScalar<Printed>(s, [](const Scalar& n, Printed* ops) -> Printed {
    switch (n.op()) {
      case ScalarOp::kConst: return {std::to_string(*n.constValue())};
      case ScalarOp::kSymbol: return {n.name()};
      case ScalarOp::kCeilDiv:
        return {"ceilDiv(" + ops[0].text + ", " + ops[1].text + ")", kAtomLevel,
                1 + std::max(ops[0].depth, ops[1].depth)};
      case ScalarOp::kNot: {
        Printed a = ops[0].level == kAtomLevel ? std::move(ops[0]) : wrap(std::move(ops[0]));
        return {"!" + a.text, kAtomLevel, 1 + a.depth};
      }
      default: {
        int level = levelOf(n.op());
        // Left-associative: the left operand needs parentheses only when it binds looser, the
        // right one when it binds no tighter.
        Printed a = ops[0].level >= level ? std::move(ops[0]) : wrap(std::move(ops[0]));
        Printed b = ops[1].level > level ? std::move(ops[1]) : wrap(std::move(ops[1]));
        Printed out;
        out.text = std::move(a.text);
        out.text += ' ';
        out.text += scalarOpSpelling(n.op());
        out.text += ' ';
        out.text += b.text;
        out.level = level;
        out.depth = std::max(a.depth, b.depth);
        return out;
      }
    }
  });
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
  // nvFuser's spelling, unless it would nest deeper than the parser reads (kMaxScalarNesting):
  // then only the parentheses precedence needs, so parse(print(p)) holds for long sums too.
  if (fullDepth(*this) <= kMaxScalarNesting) return fullStr(*this);
  // The outer parentheses are nvFuser's style, not needed to read it back: left out where they
  // would nest one level deeper than the parser reads (a chain of 199 negations parsed at the
  // limit would print one level past it).
  Printed p = minimalPrinted(*this);
  if (p.level == kAtomLevel || p.depth + 1 > kMaxScalarNesting) return std::move(p.text);
  return "( " + p.text + " )";
}

std::string Scalar::extentStr() const {
  if (op() == ScalarOp::kCeilDiv || op() == ScalarOp::kNot) return "( " + str() + " )";
  return str();
}

std::optional<int64_t> Scalar::tryEvaluate(const Bindings& b) const {
  using V = std::optional<int64_t>;
  return foldScalar<V>(*this, [&](const Scalar& n, V* ops) -> V {
    switch (n.op()) {
      case ScalarOp::kConst: return n.constValue();
      case ScalarOp::kSymbol: {
        auto it = b.find(n.name());
        if (it == b.end()) return std::nullopt;
        return it->second;
      }
      case ScalarOp::kNot:
        if (!ops[0]) return std::nullopt;
        return *ops[0] == 0 ? 1 : 0;
      default:
        if (!ops[0] || !ops[1]) return std::nullopt;
        return apply(n.op(), *ops[0], *ops[1]);
    }
  });
}

int64_t Scalar::evaluate(const Bindings& b) const {
  if (auto v = tryEvaluate(b)) return *v;
  for (const auto& s : freeSymbols()) {
    if (!b.count(s)) throw Error("scalar '" + str() + "' needs a value for '" + s + "'");
  }
  throw Error("cannot evaluate scalar '" + str() + "'");
}

Scalar Scalar::substitute(const Bindings& b) const {
  return foldScalar<Scalar>(*this, [&](const Scalar& n, Scalar* ops) -> Scalar {
    switch (n.op()) {
      case ScalarOp::kConst: return n;
      case ScalarOp::kSymbol: {
        auto it = b.find(n.name());
        return it == b.end() ? n : Scalar(it->second);
      }
      case ScalarOp::kNot:
        if (auto c = ops[0].constValue()) return Scalar(*c == 0 ? 1 : 0);
        return logicalNot(std::move(ops[0]));
      default: return simplifyOneNode(n.op(), ops[0], ops[1]);
    }
  });
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
      // (not when c1 + c2 overflows: then the sum is left as written, and evaluating it reports
      // the overflow)
      if (int64_t sum = 0; cb && a.op() == ScalarOp::kAdd && a.rhs().isConst() &&
                           !__builtin_add_overflow(*a.rhs().constValue(), *cb, &sum))
        return simplifyNode(ScalarOp::kAdd, a.lhs(), Scalar(sum));
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
      // (not when c1 * c2 overflows: the product is left as written, and evaluating it reports
      // the overflow)
      if (int64_t prod = 0; ca && b.op() == ScalarOp::kMul && b.lhs().isConst() &&
                            !__builtin_mul_overflow(*ca, *b.lhs().constValue(), &prod))
        return simplifyNode(ScalarOp::kMul, Scalar(prod), b.rhs());
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

Scalar Scalar::simplify() const { return substitute(Bindings{}); }

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
  // Iterative, like every walk here: two 25,000-term sums compare without deep recursion.
  std::vector<std::pair<const Scalar*, const Scalar*>> work{{this, &other}};
  while (!work.empty()) {
    auto [x, y] = work.back();
    work.pop_back();
    if (x->node_ == y->node_) continue;
    if (x->op() != y->op()) return false;
    switch (x->op()) {
      case ScalarOp::kConst:
        if (x->node_->value != y->node_->value) return false;
        break;
      case ScalarOp::kSymbol:
        if (x->node_->name != y->node_->name) return false;
        break;
      case ScalarOp::kNot: work.emplace_back(&*x->node_->a, &*y->node_->a); break;
      default:
        work.emplace_back(&*x->node_->a, &*y->node_->a);
        work.emplace_back(&*x->node_->b, &*y->node_->b);
    }
  }
  return true;
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
