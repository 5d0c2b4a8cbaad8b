// The parser of the host IR text format (docs/HOSTIR.md): both nvFuser dialects, any base
// indentation, statements split over lines, HostUnit sections, braid's extensions.
//
// Statements are read by their grammar from a token stream in which line breaks are not tokens.
// The layout matters in two places only: a statement starts a line, and the column of that
// first token says which FOR / IF / ELSE body it belongs to (deeper than the header line that
// opens the body; every statement of a body at the same column).
#include <charconv>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "ir/host_ir_lexer.h"
#include "ir/host_ir_printer_util.h"
#include "ir/host_ir_text.h"
#include "ir/scalar_parser.h"

namespace braid {

namespace {

bool startsWith(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

bool isDigits(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (c < '0' || c > '9') return false;
  return true;
}

// A tensor name as printed: `T7`, or `T7_g___bfloat`.
struct TensorName {
  int name = -1;
  bool hasType = false;
  MemoryType mem = MemoryType::kGlobal;
  DataType dtype = DataType::kFloat;
};

// An IterDomain as printed, before it is looked up or created.
struct IdSpec {
  IterType kind = IterType::kIteration;
  ParallelType parallel = ParallelType::kSerial;
  int id = 0;
  Scalar extent;
  bool rf = false;
  std::string str() const {
    return IterDomain(id, extent, kind, parallel, rf).str();
  }
};

// The tensors and IterDomains of one Fusion (the program's, or a HostUnit's), by printed name.
struct FusionScope {
  Fusion* fusion = nullptr;
  std::map<int, TensorView*> tensors;
  std::map<int, std::vector<IterDomain*>> ids;
};

class Parser {
 public:
  Parser(std::string_view text, const std::string& file) : ts_(text, file) {
    prog_.sourceName = file;
    main_.fusion = &prog_.tensors();
  }

  HostProgram run() {
    header();
    while (ts_.peek().kind == TokenKind::kDirective) {
      directive();
      endOfStatement("the alias line");
    }
    const Token& first = ts_.peek();
    if (!endsBody(first)) {
      int col = first.col;
      block(prog_.body(), col);
      const Token& t = ts_.peek();
      if (!endsBody(t))
        ts_.fail(t, "inconsistent indentation: this line is at column " + std::to_string(t.col) +
                        ", left of the program body (column " + std::to_string(col) + ")");
    }
    while (isHostUnitHeader()) hostUnit();
    if (ts_.atEnd()) ts_.fail(ts_.peek(), "unexpected end of file: expected '} // %HostIrContainer' to close the program");
    ts_.expect("}", "to close the program ('} // %HostIrContainer')");
    if (!ts_.atEnd()) ts_.failExpected("end of file after '} // %HostIrContainer'");
    for (const auto& [unit, tok] : post_refs_) {
      if (!prog_.hostUnits().count(unit))
        ts_.fail(tok, "PostOnStream runs HostUnit" + std::to_string(unit) + ", which the file does not define");
    }
    return std::move(prog_);
  }

 private:
  // ---------------------------------------------------------------- structure

  void header() {
    ts_.expect("%HostIrContainer", "at the start of a host program");
    ts_.expect("{", "after '%HostIrContainer'");
    ts_.expect("(", "before the program inputs");
    prog_.inputs() = tensorList(main_, ")", "program inputs");
    ts_.expect(")", "after the program inputs");
    ts_.expect("->", "between the program inputs and outputs");
    ts_.expect("(", "before the program outputs");
    prog_.outputs() = tensorList(main_, ")", "program outputs");
    ts_.expect(")", "after the program outputs");
    ts_.expect(":", "at the end of the '%HostIrContainer' line");
    if (!ts_.atEnd() && !ts_.peek().firstOnLine) ts_.failExpected("a new line after the '%HostIrContainer' header");
  }

  bool isHostUnitHeader() const {
    const Token& t = ts_.peek();
    return t.kind == TokenKind::kWord && startsWith(t.text, "HostUnit") && isDigits(t.text.substr(8)) &&
           ts_.peek(1).is(":");
  }

  bool endsBody(const Token& t) const { return t.kind == TokenKind::kEnd || t.is("}") || isHostUnitHeader(); }

  // Statements of one body, all at column `col`, until a line further left or the end of the body.
  void block(Scope& out, int col) {
    bool after_nested = false;
    while (true) {
      const Token& t = ts_.peek();
      if (endsBody(t) || t.col < col) return;
      if (t.col > col) {
        if (after_nested)
          ts_.fail(t, "inconsistent indentation: column " + std::to_string(t.col) +
                          " matches no enclosing block (this block is at column " + std::to_string(col) + ")");
        ts_.fail(t, "unexpected indentation: expected column " + std::to_string(col) +
                        " like the statements before it, found column " + std::to_string(t.col));
      }
      StmtPtr s = statement();
      after_nested = s && (s->is<ForLoop>() || s->is<IfThenElse>());
      if (s) out.push_back(std::move(s));
    }
  }

  // The body that a FOR / IF / ELSE line at column `owner_col` opens.
  void nestedBody(Scope& out, const Token& owner, std::string_view what) {
    const Token& t = ts_.peek();
    if (endsBody(t) || t.col <= owner.col)
      ts_.fail(t, "expected an indented body for the '" + std::string(what) + "' on line " +
                      std::to_string(owner.line) + ", found " + t.describe() +
                      (t.kind == TokenKind::kEnd ? "" : " at column " + std::to_string(t.col)));
    block(out, t.col);
  }

  void endOfStatement(std::string_view what) {
    const Token& t = ts_.peek();
    if (t.kind != TokenKind::kEnd && !t.firstOnLine)
      ts_.fail(t, "expected the end of the line after " + std::string(what) + ", found " + t.describe());
  }

  // ---------------------------------------------------------------- statements

  // Parses one statement (nullptr for braid directives, which are not statements).
  StmtPtr statement() {
    const Token& t = ts_.peek();
    SourceLoc loc = ts_.loc(t);
    StmtPtr s;
    std::string what = t.describe();
    if (t.kind == TokenKind::kDirective) {
      directive();
      endOfStatement("the alias line");
      return nullptr;
    }
    if (t.kind != TokenKind::kWord) ts_.fail(t, "expected a statement, found " + t.describe());
    std::string_view w = t.text;
    if (w == "FOR") {
      s = forLoop();
    } else if (w == "IF") {
      s = ifThenElse();
    } else if (w == "ELSE") {
      ts_.fail(t, "'ELSE' without a matching 'IF' at this indentation");
    } else if (w == "GetCurrentStream") {
      ts_.next();
      ts_.expect("into", "after 'GetCurrentStream'");
      auto g = std::make_unique<GetCurrentStream>();
      g->stream = namedStream("GetCurrentStream");
      s = std::move(g);
    } else if (w == "Stream") {
      // Newer dialect: `Stream 0x55d0c0 = GetCurrentStream()`.
      auto g = std::make_unique<GetCurrentStream>();
      g->stream = namedStream("GetCurrentStream");
      ts_.expect("=", "after the stream in 'Stream X = GetCurrentStream()'");
      ts_.expect("GetCurrentStream", "after 'Stream X ='");
      ts_.expect("(", "after 'GetCurrentStream'");
      ts_.expect(")", "after 'GetCurrentStream('");
      s = std::move(g);
    } else if (w == "SetCurrentStream") {
      ts_.next();
      auto c = std::make_unique<SetCurrentStream>();
      c->stream = streamOperand("SetCurrentStream", "to");
      s = std::move(c);
    } else if (w == "Synchronize") {
      ts_.next();
      auto c = std::make_unique<Synchronize>();
      c->stream = streamOperand("Synchronize", "");
      s = std::move(c);
    } else if (w == "Wait") {
      s = wait();
    } else if (w == "Deallocate") {
      ts_.next();
      auto d = std::make_unique<Deallocate>();
      if (ts_.accept("{")) {
        d->tv = tensor(main_);
        ts_.expect("}", "to close 'Deallocate {'");
      } else {
        d->tv = tensor(main_);
      }
      s = std::move(d);
    } else if (w == "StartCoalescing") {
      ts_.next();
      s = std::make_unique<StartCoalescing>();
    } else if (w == "EndCoalescing") {
      ts_.next();
      auto e = std::make_unique<EndCoalescing>();
      e->id = integer("the id of EndCoalescing");
      comm_ids_.insert(e->id);
      s = std::move(e);
    } else if (w == "Communication") {
      s = communication();
    } else if (w == "P2PCommunication") {
      s = p2p();
    } else if (w == "PostOnStream") {
      s = postOnStream();
    } else if (parseTensorName(w)) {
      s = assignment();
    } else {
      ts_.fail(t, "unknown statement " + t.describe());
    }
    s->loc = loc;
    if (!s->is<ForLoop>() && !s->is<IfThenElse>()) endOfStatement(what == "'Stream'" ? "'GetCurrentStream()'" : what);
    return s;
  }

  void directive() {
    ts_.next();  // `// braid:`
    const Token& w = ts_.peek();
    if (!w.is("alias")) ts_.failExpected("'alias' after '// braid:'");
    ts_.next();
    TensorView* out = tensor(main_);
    ts_.expect("->", "between the output and the input it aliases");
    TensorView* in = tensor(main_);
    prog_.aliases().emplace_back(out, in);
  }

  StmtPtr forLoop() {
    const Token& for_tok = ts_.next();
    auto f = std::make_unique<ForLoop>();
    f->index = std::string(ts_.expectWord("a loop index after 'FOR'").text);
    if (ts_.accept("in")) {
      f->domain = iterDomain(main_, idSpec());
    } else if (ts_.accept("from")) {
      f->start = parseScalarExpr(ts_);
      ts_.expect("to", "after the start of the loop range");
      f->stop = parseScalarExpr(ts_);
    } else {
      ts_.failExpected("'in' or 'from' after the loop index");
    }
    ts_.expect(":", "at the end of the 'FOR' line");
    endOfStatement("'FOR ...:'");
    nestedBody(f->body, for_tok, "FOR");
    return f;
  }

  StmtPtr ifThenElse() {
    const Token& if_tok = ts_.next();
    auto b = std::make_unique<IfThenElse>();
    ts_.accept("Manual");
    b->predicate = parseScalarExpr(ts_);
    ts_.expect(":", "at the end of the 'IF' line");
    endOfStatement("'IF ...:'");
    nestedBody(b->thenBody, if_tok, "IF");
    const Token& t = ts_.peek();
    if (t.is("ELSE") && t.col == if_tok.col && t.firstOnLine) {
      const Token& else_tok = ts_.next();
      ts_.expect(":", "after 'ELSE'");
      endOfStatement("'ELSE:'");
      nestedBody(b->elseBody, else_tok, "ELSE");
    }
    return b;
  }

  StmtPtr wait() {
    ts_.next();
    bool paren = ts_.accept("(");
    const Token& t = ts_.peek();
    if (!(t.is("Communication") || t.is("P2PCommunication") || t.is("EndCoalescing")))
      ts_.failExpected("'Communication' after 'Wait'");
    ts_.next();
    const Token& id_tok = ts_.peek();
    auto w = std::make_unique<Wait>();
    w->id = integer("the id of the communication to wait for");
    if (!comm_ids_.count(w->id))
      ts_.fail(id_tok, "Wait for communication " + std::to_string(w->id) +
                           ", which no Communication, P2PCommunication or EndCoalescing before it defines");
    if (paren) ts_.expect(")", "after 'Wait(Communication N'");
    return w;
  }

  StmtPtr communication() {
    ts_.next();
    auto c = std::make_unique<Communication>();
    c->id = integer("the id of the Communication");
    ts_.expect("(", "after the Communication id");
    bool has_type = false;
    bool has_red_op = false;
    const Token* input_tok = nullptr;
    const Token* output_tok = nullptr;
    attributes("Communication", [&](std::string_view key, const Token& key_tok) {
      if (key == "type") {
        const Token& v = ts_.expectWord("a communication type");
        auto t = parseCommunicationType(std::string(v.text));
        if (!t) ts_.fail(v, "unknown communication type " + v.describe());
        c->type = *t;
        has_type = true;
      } else if (key == "team") {
        ts_.expect("(", "before the team list");
        while (ts_.peek().kind == TokenKind::kNumber) c->team.push_back(integer64("a device id"));
        ts_.expect(")", "after team list");
      } else if (key == "root") {
        c->root = parseScalarExpr(ts_);
      } else if (key == "red_op") {
        c->redOp = reductionOp();
        has_red_op = true;
      } else if (key == "input") {
        input_tok = &key_tok;
        c->input = tensor(main_);
      } else if (key == "output") {
        output_tok = &key_tok;
        c->output = tensor(main_);
      } else if (key == "backend") {
        c->backend = backend();
      } else {
        return false;
      }
      return true;
    });
    if (!has_type) ts_.fail(ts_.peek(), "Communication " + std::to_string(c->id) + " has no 'type='");
    if (!input_tok || !output_tok)
      ts_.fail(ts_.peek(), "Communication " + std::to_string(c->id) + " needs both 'input=' and 'output='");
    // nvFuser leaves red_op out of its dumps; reductions default to a sum, as in its lowering.
    if (!has_red_op && isReducing(c->type)) c->redOp = ReductionOpType::kAdd;
    comm_ids_.insert(c->id);
    return c;
  }

  StmtPtr p2p() {
    ts_.next();
    auto c = std::make_unique<P2PCommunication>();
    c->id = integer("the id of the P2PCommunication");
    ts_.expect("(", "after the P2PCommunication id");
    bool has_type = false, has_buffer = false, has_peer = false;
    attributes("P2PCommunication", [&](std::string_view key, const Token&) {
      if (key == "type") {
        const Token& v = ts_.expectWord("'send' or 'recv'");
        if (v.text == "send" || v.text == "SEND") c->type = P2PType::kSend;
        else if (v.text == "recv" || v.text == "RECV") c->type = P2PType::kRecv;
        else ts_.fail(v, "expected 'send' or 'recv', found " + v.describe());
        has_type = true;
      } else if (key == "buffer") {
        c->buffer = tensor(main_);
        has_buffer = true;
      } else if (key == "peer") {
        c->peer = parseScalarExpr(ts_);
        has_peer = true;
      } else if (key == "backend") {
        c->backend = backend();
      } else {
        return false;
      }
      return true;
    });
    if (!has_type || !has_buffer || !has_peer)
      ts_.fail(ts_.peek(), "P2PCommunication " + std::to_string(c->id) + " needs 'type=', 'buffer=' and 'peer='");
    comm_ids_.insert(c->id);
    return c;
  }

  StmtPtr postOnStream() {
    ts_.next();
    auto p = std::make_unique<PostOnStream>();
    ts_.expect("(", "after 'PostOnStream'");
    const Token& unit = ts_.peek();
    if (!(unit.kind == TokenKind::kWord && startsWith(unit.text, "HostUnit") && isDigits(unit.text.substr(8))))
      ts_.failExpected("a HostUnit such as 'HostUnit0'");
    ts_.next();
    p->hostUnit = toInt(unit, unit.text.substr(8));
    post_refs_.emplace_back(p->hostUnit, unit);
    ts_.expect(",", "after the HostUnit");
    ts_.expect("Inputs", "in PostOnStream");
    ts_.expect(":", "after 'Inputs'");
    ts_.expect("{", "before the PostOnStream inputs");
    p->inputs = tensorList(main_, "}", "PostOnStream inputs");
    ts_.expect("}", "after the PostOnStream inputs");
    ts_.expect(",", "after the PostOnStream inputs");
    ts_.expect("Outputs", "in PostOnStream");
    ts_.expect(":", "after 'Outputs'");
    ts_.expect("{", "before the PostOnStream outputs");
    p->outputs = tensorList(main_, "}", "PostOnStream outputs");
    ts_.expect("}", "after the PostOnStream outputs");
    ts_.expect(")", "to close 'PostOnStream ('");
    return p;
  }

  // `T... = <something>`: ALLOCATE, HirAliasSelect, ShardByStream or a fusion op.
  StmtPtr assignment() {
    TensorView* out = tensor(main_);
    ts_.expect("=", "after the tensor that starts the statement");
    const Token& op = ts_.peek();
    if (op.is("ALLOCATE")) {
      ts_.next();
      ts_.expect("(", "after 'ALLOCATE'");
      auto a = std::make_unique<Allocate>();
      a->tv = out;
      a->legacy = false;
      attributes("ALLOCATE", [&](std::string_view key, const Token&) {
        if (key == "buffer") {
          tensor(main_);
          a->legacy = true;
        } else if (key == "mem_type") {
          const Token& v = ts_.expectWord("a memory type (global, local, shared)");
          auto m = parseMemoryTypeName(v.text);
          if (!m) ts_.fail(v, "unknown memory type " + v.describe());
          a->memType = *m;
        } else if (key == "size") {
          a->size = parseScalarExpr(ts_);
        } else if (key == "zero_init") {
          a->zeroInit = boolean();
        } else if (key == "resets_to_zero") {
          a->resetsToZero = boolean();
        } else {
          return false;
        }
        return true;
      });
      return a;
    }
    if (op.is("HirAliasSelect")) {
      ts_.next();
      ts_.expect("(", "after 'HirAliasSelect'");
      auto a = std::make_unique<AliasSelect>();
      a->out = out;
      a->in = tensor(main_);
      ts_.expect(",", "after the HirAliasSelect input");
      ts_.expect("axis", "in HirAliasSelect");
      ts_.expect("=", "after 'axis'");
      const Token& axis_tok = ts_.peek();
      IdSpec spec = idSpec();
      a->axis = axisOf(a->in, spec);
      if (!a->axis) ts_.fail(axis_tok, "axis " + spec.str() + " is not an axis of " + a->in->str());
      ts_.expect(",", "after the HirAliasSelect axis");
      ts_.expect("index", "in HirAliasSelect");
      ts_.expect("=", "after 'index'");
      a->index = parseScalarExpr(ts_);
      ts_.expect(")", "to close 'HirAliasSelect('");
      return a;
    }
    if (op.is("ShardByStream")) {
      ts_.next();
      ts_.expect("(", "after 'ShardByStream'");
      auto a = std::make_unique<ShardByStream>();
      a->out = out;
      a->in = tensor(main_);
      ts_.expect(",", "after the ShardByStream input");
      ts_.expect("stream_index", "in ShardByStream");
      ts_.expect("=", "after 'stream_index'");
      a->streamIndex = parseScalarExpr(ts_);
      ts_.expect(")", "to close 'ShardByStream('");
      return a;
    }
    auto h = std::make_unique<HostOp>();
    h->op = fusionOp(main_, out);
    return h;
  }

  // The right-hand side of a fusion op whose output is `out`; the Expr is made in `scope`.
  Expr* fusionOp(FusionScope& scope, TensorView* out) {
    const Token& op = ts_.peek();
    Fusion& f = *scope.fusion;
    Expr* e = nullptr;
    if (op.kind == TokenKind::kWord && parseTensorName(op.text)) {
      TensorView* a = tensor(scope);
      const Token& sym = ts_.peek();
      BinaryOpType bop = BinaryOpType::kAdd;
      if (sym.is("+")) bop = BinaryOpType::kAdd;
      else if (sym.is("-")) bop = BinaryOpType::kSub;
      else if (sym.is("*")) bop = BinaryOpType::kMul;
      else if (sym.is("/")) bop = BinaryOpType::kDiv;
      else ts_.failExpected("a binary operator (+ - * /) after the first operand");
      ts_.next();
      TensorView* b = tensor(scope);
      e = f.newExpr(OpType::kBinary, {a, b}, {out});
      e->binaryOp = bop;
    } else if (op.is("Set") || op.is("Set.Permute")) {
      bool permute = op.is("Set.Permute");
      ts_.next();
      ts_.expect("(", "after '" + std::string(op.text) + "'");
      TensorView* in = tensor(scope);
      e = f.newExpr(permute ? OpType::kPermute : OpType::kSet, {in}, {out});
      bool has_perm = false;
      while (ts_.accept(",")) {
        const Token& key = ts_.expectWord("an attribute such as 'cache_op='");
        ts_.expect("=", "after " + key.describe());
        if (key.text == "cache_op") {
          e->cacheOp = std::string(ts_.expectWord("a cache op such as 'Streaming'").text);
        } else if (key.text == "perm" && permute) {
          ts_.expect("{", "before the permutation");
          while (ts_.peek().kind == TokenKind::kNumber) {
            e->permutation.push_back(integer64("an axis"));
            if (!ts_.accept(",")) break;
          }
          ts_.expect("}", "after the permutation");
          has_perm = true;
        } else {
          ts_.fail(key, "unknown attribute " + key.describe() + " of " + std::string(op.text));
        }
      }
      ts_.expect(")", "to close '" + std::string(op.text) + "('");
      if (permute && !has_perm) e->permutation = inferPermutation(in->loop(), out->loop());
    } else if (op.is("reduction")) {
      ts_.next();
      ts_.expect("(", "after 'reduction'");
      TensorView* in = tensor(scope);
      e = f.newExpr(OpType::kReduction, {in}, {out});
      while (ts_.accept(",")) {
        const Token& key = ts_.expectWord("a reduction attribute ('op', 'initial value', 'allreduce')");
        if (key.text == "op") {
          ts_.expect("=", "after 'op'");
          e->reductionOp = reductionOp();
        } else if (key.text == "initial") {
          ts_.expect("value", "after 'initial'");
          ts_.expect("=", "after 'initial value'");
          e->initValue = rawUntilCommaOrParen("an initial value");
        } else if (key.text == "allreduce") {
          ts_.expect("=", "after 'allreduce'");
          boolean();
        } else {
          ts_.fail(key, "unknown attribute " + key.describe() + " of reduction");
        }
      }
      ts_.expect(")", "to close 'reduction('");
    } else if (op.is("broadcast") || op.is("squeeze")) {
      bool bcast = op.is("broadcast");
      ts_.next();
      ts_.expect("(", "after '" + std::string(op.text) + "'");
      TensorView* in = tensor(scope);
      e = f.newExpr(bcast ? OpType::kBroadcast : OpType::kSqueeze, {in}, {out});
      ts_.expect(",", "after the " + std::string(op.text) + " input");
      ts_.expect("flags", "in " + std::string(op.text));
      ts_.expect("=", "after 'flags'");
      ts_.expect("{", "before the flags");
      std::vector<bool> flags;
      while (!ts_.peek().is("}")) {
        flags.push_back(boolean());
        if (!ts_.accept(",")) break;
      }
      ts_.expect("}", "after the flags");
      ts_.expect(")", "to close '" + std::string(op.text) + "('");
      (bcast ? e->broadcastFlags : e->squeezeFlags) = std::move(flags);
    } else if (op.is("view")) {
      ts_.next();
      ts_.expect("(", "after 'view'");
      TensorView* in = tensor(scope);
      ts_.expect(")", "to close 'view('");
      e = f.newExpr(OpType::kReshape, {in}, {out});
    } else if (op.is("matmul") || op.is("linear")) {
      bool lin = op.is("linear");
      ts_.next();
      ts_.expect("(", "after '" + std::string(op.text) + "'");
      std::vector<TensorView*> ins{tensor(scope)};
      ts_.expect(",", "after the first operand of " + std::string(op.text));
      ins.push_back(tensor(scope));
      if (lin && ts_.accept(",")) ins.push_back(tensor(scope));
      ts_.expect(")", "to close '" + std::string(op.text) + "('");
      e = f.newExpr(lin ? OpType::kLinear : OpType::kMatmul, std::move(ins), {out});
    } else if (auto u = unaryOpByName(op)) {
      ts_.next();
      ts_.expect("(", "after '" + std::string(op.text) + "'");
      TensorView* in = tensor(scope);
      ts_.expect(")", "to close '" + std::string(op.text) + "('");
      e = f.newExpr(OpType::kUnary, {in}, {out});
      e->unaryOp = *u;
    } else {
      ts_.fail(op, "unknown operation " + op.describe() + " (expected ALLOCATE, HirAliasSelect, ShardByStream, "
                   "Set, Set.Permute, a binary operator, reduction, broadcast, squeeze, view, matmul, linear "
                   "or a unary function)");
    }
    ts_.accept(";");
    return e;
  }

  std::optional<UnaryOpType> unaryOpByName(const Token& t) const {
    if (t.kind != TokenKind::kWord || !ts_.peek(1).is("(")) return std::nullopt;
    for (int i = 0; i <= static_cast<int>(UnaryOpType::kCast); ++i) {
      auto u = static_cast<UnaryOpType>(i);
      if (t.text == unaryOpName(u)) return u;
    }
    return std::nullopt;
  }

  // ---------------------------------------------------------------- HostUnit sections

  void hostUnit() {
    const Token& head = ts_.next();
    int id = toInt(head, head.text.substr(8));
    if (prog_.hostUnits().count(id)) ts_.fail(head, "HostUnit" + std::to_string(id) + " is defined twice");
    ts_.expect(":", "after the HostUnit name");
    HostUnit unit;
    unit.id = id;
    unit.fusion = std::make_unique<Fusion>();
    FusionScope scope;
    scope.fusion = unit.fusion.get();
    ts_.expect("Inputs", "after 'HostUnitN:'");
    ts_.expect("=", "after 'Inputs'");
    ts_.expect("{", "before the HostUnit inputs");
    for (TensorView* tv : tensorList(scope, "}", "HostUnit inputs")) unit.fusion->addInput(tv);
    ts_.expect("}", "after the HostUnit inputs");
    ts_.expect("->", "between the HostUnit inputs and outputs");
    ts_.expect("Outputs", "after '->'");
    ts_.expect("=", "after 'Outputs'");
    ts_.expect("{", "before the HostUnit outputs");
    for (TensorView* tv : tensorList(scope, "}", "HostUnit outputs")) unit.fusion->addOutput(tv);
    ts_.expect("}", "after the HostUnit outputs");
    // The fusion's own listing repeats its inputs and outputs, one a line.
    if (ts_.accept("Inputs")) {
      ts_.expect(":", "after 'Inputs'");
      while (ts_.peek().kind == TokenKind::kWord && parseTensorName(ts_.peek().text)) tensor(scope);
    }
    if (ts_.accept("Outputs")) {
      ts_.expect(":", "after 'Outputs'");
      while (ts_.peek().kind == TokenKind::kWord && parseTensorName(ts_.peek().text)) tensor(scope);
    }
    ts_.expect("%kernel", "before the HostUnit's fusion");
    ts_.expect("{", "after '%kernel'");
    while (!ts_.peek().is("}")) {
      const Token& t = ts_.peek();
      if (t.kind == TokenKind::kEnd) ts_.fail(t, "unexpected end of file: expected '} // %kernel' to close the kernel");
      if (!(t.kind == TokenKind::kWord && parseTensorName(t.text)))
        ts_.fail(t, "expected a fusion op ('T... = ...') in the kernel, found " + t.describe());
      std::string what = t.describe();
      TensorView* out = tensor(scope);
      ts_.expect("=", "after the op's output");
      fusionOp(scope, out);
      endOfStatement(what);
    }
    ts_.expect("}", "to close the kernel ('} // %kernel')");
    prog_.hostUnits().emplace(id, std::move(unit));
  }

  // ---------------------------------------------------------------- operands

  // `key=value, key=value, ...)` up to and including the `)`. `on_key` parses the value of a
  // key it knows and returns true; the values of other keys are skipped, so newer nvFuser
  // attributes do not break reading.
  template <class F>
  void attributes(std::string_view what, F&& on_key) {
    if (ts_.accept(")")) return;
    while (true) {
      const Token& key = ts_.expectWord("an attribute name in " + std::string(what));
      ts_.expect("=", "after " + key.describe());
      if (!on_key(key.text, key)) skipValue();
      if (ts_.accept(")")) return;
      if (!ts_.accept(",")) ts_.failExpected("',' or ')' after the " + std::string(key.text) + " of " + std::string(what));
    }
  }

  void skipValue() {
    int depth = 0;
    while (true) {
      const Token& t = ts_.peek();
      if (t.kind == TokenKind::kEnd) ts_.failExpected("')'");
      if (depth == 0 && (t.is(",") || t.is(")"))) return;
      if (t.is("(") || t.is("[") || t.is("{")) ++depth;
      if (t.is(")") || t.is("]") || t.is("}")) --depth;
      ts_.next();
    }
  }

  std::string rawUntilCommaOrParen(std::string_view what) {
    const Token& first = ts_.peek();
    if (first.is(",") || first.is(")") || first.kind == TokenKind::kEnd) ts_.failExpected(what);
    size_t begin = first.offset, end = first.end;
    int depth = 0;
    while (true) {
      const Token& t = ts_.peek();
      if (t.kind == TokenKind::kEnd) ts_.failExpected("')'");
      if (depth == 0 && (t.is(",") || t.is(")"))) break;
      if (t.is("(") || t.is("[") || t.is("{")) ++depth;
      if (t.is(")") || t.is("]") || t.is("}")) --depth;
      end = t.end;
      ts_.next();
    }
    return std::string(ts_.source().substr(begin, end - begin));
  }

  bool boolean() {
    const Token& t = ts_.peek();
    if (t.is("true")) { ts_.next(); return true; }
    if (t.is("false")) { ts_.next(); return false; }
    ts_.failExpected("'true' or 'false'");
  }

  ReductionOpType reductionOp() {
    const Token& v = ts_.expectWord("a reduction op (add, max, min)");
    if (v.text == "add" || v.text == "sum") return ReductionOpType::kAdd;
    if (v.text == "max") return ReductionOpType::kMax;
    if (v.text == "min") return ReductionOpType::kMin;
    ts_.fail(v, "unknown reduction op " + v.describe() + " (expected add, max or min)");
  }

  CommBackend backend() {
    const Token& v = ts_.expectWord("a backend (NCCL, UCC, CUDA)");
    auto b = parseCommBackend(std::string(v.text));
    if (!b) ts_.fail(v, "unknown backend " + v.describe() + " (expected NCCL, UCC or CUDA)");
    return *b;
  }

  int toInt(const Token& t, std::string_view digits) {
    int v = 0;
    auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (ec != std::errc() || p != digits.data() + digits.size() || v < 0)
      ts_.fail(t, "number " + t.describe() + " is out of range");
    return v;
  }

  int integer(std::string_view what) {
    const Token& t = ts_.peek();
    if (t.kind != TokenKind::kNumber) ts_.failExpected(what);
    ts_.next();
    return toInt(t, t.text);
  }

  int64_t integer64(std::string_view what) {
    const Token& t = ts_.peek();
    if (t.kind != TokenKind::kNumber) ts_.failExpected(what);
    ts_.next();
    int64_t v = 0;
    auto [p, ec] = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
    if (ec != std::errc() || p != t.text.data() + t.text.size()) ts_.fail(t, "number " + t.describe() + " is out of range");
    return v;
  }

  static bool isScalarOperator(const Token& t) {
    if (t.kind != TokenKind::kPunct) return false;
    for (std::string_view op : {"+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "&&", "||"})
      if (t.text == op) return true;
    return false;
  }

  // `Stream 0`, `Stream 0x55d0c0` (named) or `Stream <expr>` (indexed).
  StreamRef stream() {
    ts_.expect("Stream", "");
    const Token& t = ts_.peek();
    if ((t.kind == TokenKind::kNumber || t.kind == TokenKind::kHexNumber) && !isScalarOperator(ts_.peek(1))) {
      ts_.next();
      return StreamRef::named(std::string(t.text));
    }
    return StreamRef::indexed(parseScalarExpr(ts_));
  }

  StreamRef namedStream(std::string_view stmt) {
    const Token& t = ts_.peek(1);  // the operand after `Stream`
    StreamRef s = stream();
    if (s.kind != StreamRef::Kind::kNamed)
      ts_.fail(t, std::string(stmt) + " captures into a stream variable such as 'Stream 0', found an indexed stream");
    return s;
  }

  // `<stmt> to Stream X` (older) or `<stmt>(Stream X)` (newer); `legacy_word` may be empty.
  StreamRef streamOperand(std::string_view stmt, std::string_view legacy_word) {
    if (ts_.accept("(")) {
      StreamRef s = stream();
      ts_.expect(")", "after the stream of " + std::string(stmt));
      return s;
    }
    if (!legacy_word.empty()) ts_.expect(legacy_word, "after '" + std::string(stmt) + "'");
    if (!ts_.peek().is("Stream")) ts_.failExpected("'Stream' after '" + std::string(stmt) + "'");
    return stream();
  }

  // ---------------------------------------------------------------- tensors and domains

  static std::optional<TensorName> parseTensorName(std::string_view w) {
    if (w.size() < 2 || w[0] != 'T') return std::nullopt;
    size_t i = 1;
    while (i < w.size() && w[i] >= '0' && w[i] <= '9') ++i;
    if (i == 1 || i - 1 > 9) return std::nullopt;
    TensorName n;
    n.name = std::stoi(std::string(w.substr(1, i - 1)));
    if (i == w.size()) return n;
    // `_<m>_<dtype>`
    if (w.size() < i + 4 || w[i] != '_' || w[i + 2] != '_') return std::nullopt;
    auto mem = parseMemoryTypeLetter(w.substr(i + 1, 1));
    auto dt = parseDataType(w.substr(i + 3));
    if (!mem || !dt) return std::nullopt;
    n.hasType = true;
    n.mem = *mem;
    n.dtype = *dt;
    return n;
  }

  IdSpec idSpec() {
    const Token& t = ts_.peek();
    auto bad = [&](const std::string& why) {
      ts_.fail(t, "expected an IterDomain such as 'iS0{i0}', found " + t.describe() + (why.empty() ? "" : ": " + why));
    };
    if (t.kind != TokenKind::kWord || t.text.size() < 2) bad("");
    IdSpec s;
    std::string_view w = t.text;
    switch (w[0]) {
      case 'i': s.kind = IterType::kIteration; break;
      case 'r': s.kind = IterType::kReduction; break;
      case 'b': s.kind = IterType::kBroadcast; break;
      default: bad("the kind must be i, r or b");
    }
    std::string_view rest = w.substr(1);
    static const std::pair<std::string_view, ParallelType> kParallel[] = {
        {"StreamIdx", ParallelType::kStream},  {"streamIdx", ParallelType::kStream},
        {"deviceIdx.x", ParallelType::kDIDx},  {"deviceIdx.y", ParallelType::kDIDy},
        {"S", ParallelType::kSerial}};
    bool found = false;
    for (const auto& [name, p] : kParallel) {
      if (startsWith(rest, name) && isDigits(rest.substr(name.size()))) {
        s.parallel = p;
        rest = rest.substr(name.size());
        found = true;
        break;
      }
    }
    if (!found) bad("unknown parallel type or missing id (expected S, StreamIdx, deviceIdx.x or deviceIdx.y, then a number)");
    s.id = toInt(t, rest);
    ts_.next();
    const Token& open = ts_.expect("{", "after the IterDomain name");
    (void)open;
    s.extent = parseScalarExpr(ts_);
    const Token& close = ts_.expect("}", "after the IterDomain extent");
    const Token& rf = ts_.peek();
    if (rf.is("rf") && TokenStream::adjacent(close, rf)) {
      ts_.next();
      s.rf = true;
    }
    return s;
  }

  // The IterDomain of `scope` printed as `spec` (same id and spelling), made on first sight.
  IterDomain* iterDomain(FusionScope& scope, const IdSpec& spec) {
    std::string want = spec.str();
    auto& same_id = scope.ids[spec.id];
    for (IterDomain* id : same_id)
      if (id->str() == want) return id;
    IterDomain* id = scope.fusion->newIterDomain(spec.extent, spec.kind, spec.parallel, spec.rf, spec.id);
    same_id.push_back(id);
    return id;
  }

  IterDomain* axisOf(TensorView* tv, const IdSpec& spec) {
    std::string want = spec.str();
    IterDomain* by_id = nullptr;
    for (IterDomain* id : tv->loop()) {
      if (id->str() == want) return id;
      if (id->id() == spec.id && !by_id) by_id = id;
    }
    return by_id;
  }

  DeviceMesh mesh() {
    ts_.expect("(", "");
    ts_.expect("DeviceMesh", "");
    ts_.expect("{", "after 'DeviceMesh'");
    std::vector<int64_t> devices;
    std::vector<int64_t> shape;
    if (ts_.peek().is("{")) {
      int64_t row_len = -1, rows = 0;
      while (ts_.accept("{")) {
        int64_t n = 0;
        while (ts_.peek().kind == TokenKind::kNumber) {
          devices.push_back(integer64("a device id"));
          ++n;
        }
        const Token& close = ts_.expect("}", "after a row of the device mesh");
        if (row_len >= 0 && n != row_len) ts_.fail(close, "the rows of a 2D device mesh must have the same length");
        row_len = n;
        ++rows;
      }
      shape = {rows, row_len};
    } else {
      while (ts_.peek().kind == TokenKind::kNumber) devices.push_back(integer64("a device id"));
      shape = {static_cast<int64_t>(devices.size())};
    }
    ts_.expect("}", "to close the device mesh");
    ts_.expect(")", "after the device mesh");
    if (shape.size() == 1) return DeviceMesh(std::move(devices));
    return DeviceMesh(std::move(devices), std::move(shape));
  }

  // A tensor: `T3_g_float[iS0{i0}, ...] (DeviceMesh{0 1})`, or the bare name of one seen before.
  TensorView* tensor(FusionScope& scope) {
    const Token& t = ts_.peek();
    std::optional<TensorName> name;
    if (t.kind == TokenKind::kWord) name = parseTensorName(t.text);
    if (!name) ts_.failExpected("a tensor such as 'T0_g_float[iS0{i0}]'");
    ts_.next();
    std::optional<std::vector<IdSpec>> domain;
    if (name->hasType && ts_.peek().is("[")) {
      ts_.next();
      domain.emplace();
      if (!ts_.peek().is("]")) {
        while (true) {
          domain->push_back(idSpec());
          if (!ts_.accept(",")) break;
        }
      }
      ts_.expect("]", "to close the domain of " + t.describe());
    }
    std::optional<DeviceMesh> m;
    if (ts_.peek().is("(") && ts_.peek(1).is("DeviceMesh")) m = mesh();
    auto it = scope.tensors.find(name->name);
    if (it != scope.tensors.end()) return it->second;
    if (!domain)
      ts_.fail(t, "tensor " + t.describe() + " is used before it is declared with its type and domain");
    std::vector<IterDomain*> ids;
    for (const IdSpec& s : *domain) ids.push_back(iterDomain(scope, s));
    TensorView* tv = scope.fusion->newTensor(ids, name->dtype, name->mem, name->name);
    if (m) tv->setDeviceMesh(*m);
    scope.tensors.emplace(name->name, tv);
    return tv;
  }

  // Tensors separated by commas (a trailing comma allowed), up to `close` (not consumed).
  std::vector<TensorView*> tensorList(FusionScope& scope, std::string_view close, std::string_view what) {
    std::vector<TensorView*> out;
    while (!ts_.peek().is(close)) {
      if (ts_.atEnd()) ts_.failExpected("'" + std::string(close) + "' after the " + std::string(what));
      out.push_back(tensor(scope));
      if (!ts_.accept(",")) break;
    }
    return out;
  }

  TokenStream ts_;
  HostProgram prog_;
  FusionScope main_;
  std::set<int> comm_ids_;
  std::vector<std::pair<int, Token>> post_refs_;
};

}  // namespace

HostProgram parseHostProgram(std::string_view text, const std::string& file) {
  Parser p(text, file);
  return p.run();
}

HostProgram parseHostProgramFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open host IR file '" + path + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw Error("cannot read host IR file '" + path + "'");
  return parseHostProgram(ss.str(), path);
}

}  // namespace braid
