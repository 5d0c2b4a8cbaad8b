#include "ir/scalar_parser.h"

#include <charconv>
#include <optional>
#include <vector>

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
    if (name == "where") return where(args[0], args[1], args[2]);
    if (name == "abs")
      return where(Scalar::binary(ScalarOp::kLt, args[0], Scalar(0)), Scalar::binary(ScalarOp::kSub, Scalar(0), args[0]),
                   args[0]);
    bool is_max = name == "fmax" || name == "max";
    return where(Scalar::binary(is_max ? ScalarOp::kGe : ScalarOp::kLe, args[0], args[1]), args[0], args[1]);
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
