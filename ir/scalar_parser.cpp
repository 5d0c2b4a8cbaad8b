#include "ir/scalar_parser.h"

#include <charconv>
#include <optional>
#include <string>
#include <vector>

namespace braid {

namespace {


// Precedence climbing, loosest first: || && (== !=) (< <= > >=) (+ -) (* / %) unary primary.
struct Level {
  std::initializer_list<std::pair<std::string_view, ScalarOp>> ops;
};

const Level kLevels[] = {
    {{{"||", ScalarOp::kOr}}},
    {{{"&&", ScalarOp::kAnd}}},
    {{{"==", ScalarOp::kEq}, {"!=", ScalarOp::kNe}}},
    {{{"<", ScalarOp::kLt}, {"<=", ScalarOp::kLe}, {">", ScalarOp::kGt}, {">=", ScalarOp::kGe}}},
    {{{"+", ScalarOp::kAdd}, {"-", ScalarOp::kSub}}},
    {{{"*", ScalarOp::kMul}, {"/", ScalarOp::kDiv}, {"%", ScalarOp::kMod}}},
};
constexpr int kNumLevels = static_cast<int>(sizeof(kLevels) / sizeof(kLevels[0]));

class ScalarParser {
 public:
  explicit ScalarParser(TokenStream& ts) : ts_(ts) {}

  Scalar expr(int level = 0) {
    if (level == kNumLevels) return unary();
    Scalar lhs = expr(level + 1);
    while (true) {
      const Token& t = ts_.peek();
      if (t.kind != TokenKind::kPunct) return lhs;
      std::optional<ScalarOp> op;
      for (const auto& [spelling, o] : kLevels[level].ops)
        if (t.text == spelling) op = o;
      if (!op) return lhs;
      const Token& op_token = ts_.next();
      Scalar rhs = expr(level + 1);
      lhs = Scalar::binary(*op, lhs, rhs);
      countOperation(op_token);
    }
  }

 private:
  struct DepthGuard {
    explicit DepthGuard(ScalarParser& p) : p_(p) {
      if (++p_.depth_ > kMaxScalarNesting)
        p_.ts_.fail(p_.ts_.peek(), "scalar expression is nested too deeply (more than " +
                                       std::to_string(kMaxScalarNesting) + " levels)");
    }
    ~DepthGuard() { --p_.depth_; }
    ScalarParser& p_;
  };

  // Every operation counts toward kMaxScalarOperations: the tree (and any walk over it) stays
  // small whatever the file holds, e.g. a sum of 25,000 terms is refused here, not later.
  void countOperation(const Token& at) {
    if (++operations_ > kMaxScalarOperations)
      ts_.fail(at, "scalar expression has more than " + std::to_string(kMaxScalarOperations) +
                       " operations (braid's limit on one expression)");
  }

  Scalar unary() {
    DepthGuard guard(*this);
    const Token& t = ts_.peek();
    if (t.is("!")) {
      const Token& op = ts_.next();
      countOperation(op);
      return Scalar::logicalNot(unary());
    }
    if (t.is("-")) {
      const Token& op = ts_.next();
      if (ts_.peek().kind == TokenKind::kNumber) return Scalar(number(ts_.next(), /*negative=*/true));
      countOperation(op);
      return Scalar::binary(ScalarOp::kSub, Scalar(0), unary());
    }
    return primary();
  }

  // A literal, read with its sign so that -9223372036854775808 (which the printer writes for
  // INT64_MIN) reads back.
  int64_t number(const Token& t, bool negative = false) {
    std::string text = (negative ? "-" : "") + std::string(t.text);
    int64_t v = 0;
    auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || p != text.data() + text.size())
      ts_.fail(t, "integer " + (negative ? std::string("-") : std::string()) + t.describe() +
                      " is out of range (int64)");
    return v;
  }

  Scalar primary() {
    const Token& t = ts_.peek();
    if (t.kind == TokenKind::kNumber) return Scalar(number(ts_.next()));
    if (t.is("(")) {
      ts_.next();
      Scalar e = expr();
      ts_.expect(")", "to close the parenthesized expression");
      return e;
    }
    if (t.kind == TokenKind::kWord && t.text == "ceilDiv" && ts_.peek(1).is("(")) {
      ts_.next();
      ts_.next();
      Scalar a = expr();
      ts_.expect(",", "between the operands of ceilDiv");
      Scalar b = expr();
      ts_.expect(")", "after the operands of ceilDiv");
      countOperation(t);
      return Scalar::binary(ScalarOp::kCeilDiv, a, b);
    }
    if (t.kind == TokenKind::kWord && ts_.peek(1).is("(")) {
      if (auto f = function(t.text)) return *f;
    }
    if (t.kind == TokenKind::kWord && t.text.front() != '%') return Scalar::symbol(std::string(ts_.next().text));
    ts_.failExpected("a scalar expression");
  }

  // The functions nvFuser prints in extents and index definitions, written with braid's integer
  // operators (booleans are 0 and 1): where(c, a, b) = c * a + (1 - c) * b, fmax(a, b) =
  // where(a >= b, a, b), abs(a) = where(a < 0, 0 - a, a). Other names are not functions here.
  std::optional<Scalar> function(std::string_view name) {
    int arity = 0;
    if (name == "fmax" || name == "fmin" || name == "max" || name == "min") arity = 2;
    else if (name == "where") arity = 3;
    else if (name == "abs") arity = 1;
    else return std::nullopt;
    const Token& fn = ts_.next();
    ts_.next();  // (
    std::vector<Scalar> args;
    for (int i = 0; i < arity; ++i) {
      if (i) ts_.expect(",", "between the operands of " + std::string(fn.text));
      args.push_back(expr());
    }
    ts_.expect(")", "after the operands of " + std::string(fn.text));
    auto where = [](const Scalar& c, const Scalar& a, const Scalar& b) {
      return Scalar::binary(ScalarOp::kAdd, Scalar::binary(ScalarOp::kMul, c, a),
                            Scalar::binary(ScalarOp::kMul, Scalar::binary(ScalarOp::kSub, Scalar(1), c), b));
    };
    Scalar out;
    if (name == "where") {
      out = where(args[0], args[1], args[2]);
    } else if (name == "abs") {
      out = where(Scalar::binary(ScalarOp::kLt, args[0], Scalar(0)), Scalar::binary(ScalarOp::kSub, Scalar(0), args[0]),
                  args[0]);
    } else {
      bool is_max = name == "fmax" || name == "max";
      out = where(Scalar::binary(is_max ? ScalarOp::kGe : ScalarOp::kLe, args[0], args[1]), args[0], args[1]);
    }
    // The expansion repeats its operands (abs(x) holds x three times): nested, it grows
    // geometrically, so its whole tree counts toward the limit (operands counted again).
    countTree(out, fn);
    return out;
  }

  void countTree(const Scalar& s, const Token& at) {
    std::vector<const Scalar*> work{&s};
    while (!work.empty()) {
      const Scalar* x = work.back();
      work.pop_back();
      if (x->isConst() || x->isSymbol()) continue;
      countOperation(at);
      work.push_back(&x->lhs());
      if (x->op() != ScalarOp::kNot) work.push_back(&x->rhs());
    }
  }

  TokenStream& ts_;
  int depth_ = 0;
  int64_t operations_ = 0;
};

}  // namespace

Scalar parseScalarExpr(TokenStream& ts) { return ScalarParser(ts).expr(); }

Scalar parseScalar(std::string_view text, const std::string& file) {
  TokenStream ts(text, file);
  Scalar s = parseScalarExpr(ts);
  if (!ts.atEnd()) ts.failExpected("end of the expression");
  return s;
}

}  // namespace braid
