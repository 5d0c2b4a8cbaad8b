#include "ir/scalar_parser.h"

#include <charconv>

namespace braid {

namespace {

constexpr int kMaxDepth = 200;

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
      ts_.next();
      Scalar rhs = expr(level + 1);
      lhs = Scalar::binary(*op, lhs, rhs);
    }
  }

 private:
  struct DepthGuard {
    explicit DepthGuard(ScalarParser& p) : p_(p) {
      if (++p_.depth_ > kMaxDepth) p_.ts_.fail(p_.ts_.peek(), "scalar expression is nested too deeply");
    }
    ~DepthGuard() { --p_.depth_; }
    ScalarParser& p_;
  };

  Scalar unary() {
    DepthGuard guard(*this);
    const Token& t = ts_.peek();
    if (t.is("!")) {
      ts_.next();
      return Scalar::logicalNot(unary());
    }
    if (t.is("-")) {
      ts_.next();
      if (ts_.peek().kind == TokenKind::kNumber) return Scalar(-number(ts_.next()));
      return Scalar::binary(ScalarOp::kSub, Scalar(0), unary());
    }
    return primary();
  }

  int64_t number(const Token& t) {
    int64_t v = 0;
    auto [p, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (ec != std::errc() || p != t.text.data() + t.text.size())
      ts_.fail(t, "integer " + t.describe() + " is out of range");
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
      return Scalar::binary(ScalarOp::kCeilDiv, a, b);
    }
    if (t.kind == TokenKind::kWord && t.text.front() != '%') return Scalar::symbol(std::string(ts_.next().text));
    ts_.failExpected("a scalar expression");
  }

  TokenStream& ts_;
  int depth_ = 0;
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
