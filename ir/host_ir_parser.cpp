// The parser of the host IR text format (docs/HOSTIR.md): every printer generation of nvFuser
// since mid-2024 (today's, the "to Stream" one, the oldest one of July 2024), any base
// indentation, statements split over lines, HostUnit sections (modelled, kept verbatim, elided
// or absent), the "Index definitions:" section, and braid's extensions.
//
// Statements are read by their grammar from a token stream in which line breaks are not tokens.
// The layout matters in three places only: a statement starts a line (except after the four
// statements that the printers of July and August 2024 ended without a line break); the column
// of its first token says which FOR / IF / ELSE body it belongs to; and a line that continues a
// statement must be indented deeper than the statement (TokenStream refuses the rest as a
// hard-wrapped dump).
#include <charconv>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "ir/checked_math.h"
#include "ir/host_ir_lexer.h"
#include "ir/input_file.h"
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

// A tensor name as printed: `T7`, `T7_g` (no dtype: nvFuser before September 2024),
// `T7_g___bfloat`, `T7_sym_float`.
struct TensorName {
  int name = -1;
  bool hasMem = false;
  bool hasType = false;
  MemoryType mem = MemoryType::kGlobal;
  DataType dtype = DataType::kFloat;
};

// What a word that starts like a tensor name turned out to be.
enum class NameCheck { kTensor, kNotATensor, kUnknownDtype, kUnknownMemory };

NameCheck checkTensorName(std::string_view w, TensorName* out) {
  if (w.size() < 2 || w[0] != 'T') return NameCheck::kNotATensor;
  size_t i = 1;
  while (i < w.size() && w[i] >= '0' && w[i] <= '9') ++i;
  if (i == 1 || i - 1 > 9) return NameCheck::kNotATensor;
  TensorName n;
  n.name = std::stoi(std::string(w.substr(1, i - 1)));
  if (i < w.size()) {
    if (w[i] != '_') return NameCheck::kNotATensor;
    size_t m = i + 1;
    size_t e = m;
    while (e < w.size() && w[e] != '_') ++e;
    auto mem = parseMemoryTypeLetter(w.substr(m, e - m));
    if (!mem) return NameCheck::kUnknownMemory;
    n.hasMem = true;
    n.mem = *mem;
    if (e < w.size()) {
      auto dt = parseDataType(w.substr(e + 1));
      if (!dt) return NameCheck::kUnknownDtype;
      n.hasType = true;
      n.dtype = *dt;
    }
  }
  if (out) *out = n;
  return NameCheck::kTensor;
}

std::optional<TensorName> parseTensorName(std::string_view w) {
  TensorName n;
  if (checkTensorName(w, &n) != NameCheck::kTensor) return std::nullopt;
  return n;
}

// An IterDomain as printed, before it is looked up or created.
struct IdSpec {
  IterType kind = IterType::kIteration;
  ParallelType parallel = ParallelType::kSerial;
  int id = 0;
  Scalar extent;
  bool rf = false;
  std::string str() const { return IterDomain(id, extent, kind, parallel, rf).str(); }
};

// The tensors and IterDomains of one Fusion (the program's, or a HostUnit's), by printed name.
struct FusionScope {
  Fusion* fusion = nullptr;
  std::map<int, TensorView*> tensors;
  std::map<int, std::vector<IterDomain*>> ids;
};

// Thrown inside a HostUnit's kernel when it holds something braid does not model (an op such
// as `iota`, a scalar statement, `[...]`): the kernel is then kept as text.
struct UnmodelledKernel {};

// Statements after which the printers of July and August 2024 wrote no line break, so that the
// next statement of the same body followed on the same line.
bool mayBeFollowedOnItsLine(const Stmt& s) {
  return s.is<Communication>() || s.is<Wait>() || s.is<SetCurrentStream>() || s.is<PostOnStream>();
}

bool isElision(const Token& t) { return t.is("...") || t.is("["); }

class Parser {
 public:
  Parser(std::string_view text, const std::string& file) : ts_(text, file) {
    prog_.sourceName = file;
    main_.fusion = &prog_.tensors();
  }

  HostProgram run() {
    bool end_dot = header();
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
    while (true) {
      if (isHostUnitHeader()) {
        hostUnit();
      } else if (elisionAhead()) {
        // `[...]` where the HostUnit sections would be: the dump leaves them out. The units it
        // names are then absent, like units a dump never printed.
        skipElision();
      } else {
        break;
      }
    }
    if (ts_.atEnd()) {
      std::string where;
      if (truncated_in_)
        where = " inside the body of the '" + std::string(truncated_in_->text) + "' on line " +
                std::to_string(truncated_in_->line) + " (the dump looks truncated)";
      ts_.fail(ts_.peek(), "unexpected end of file" + where + ": expected " +
                               (end_dot ? "'END.'" : "'} // %HostIrContainer'") + " to close the program");
    }
    if (end_dot) {
      ts_.expect("END.", "to close the program");
    } else {
      ts_.expect("}", "to close the program ('} // %HostIrContainer')");
    }
    if (ts_.peek().is("Index") && ts_.peek(1).is("definitions")) indexDefinitions();
    if (!ts_.atEnd())
      ts_.failExpected(end_dot ? "end of file after 'END.'" : "end of file after '} // %HostIrContainer'");
    return std::move(prog_);
  }

 private:
  // ---------------------------------------------------------------- structure

  // `%HostIrContainer { (ins) -> (outs) :`, or the form of July 2024's pull requests,
  // `[%HostIrContainer {] HOST IRS: (ins) -> (outs) :` closed by `END.`. Returns true for the latter.
  bool header() {
    bool end_dot = false;
    const Token& start = ts_.peek();
    ts_.beginStatement(start);
    if (ts_.peek().is("HOST")) {
      end_dot = true;
    } else {
      if (ts_.peek().is("Device") && ts_.peek(1).is("ID"))
        ts_.fail(ts_.peek(), "this file holds the programs of several devices ('Device ID = N' lines): read it as "
                             "per-rank programs (braid verify --rank-program FILE)");
      ts_.expect("%HostIrContainer", "at the start of a host program");
      ts_.expect("{", "after '%HostIrContainer'");
      if (ts_.peek().is("HOST")) {
        ts_.beginStatement(ts_.peek());
        end_dot = true;
      }
    }
    if (end_dot) {
      if (ts_.peek(1).is("FUSION"))
        ts_.fail(ts_.peek(), "'HOST FUSION' is the prototype printer of May 2024, before nvFuser's host IR dumps "
                             "(NVFUSER_DUMP=host_ir, July 2024) that braid reads");
      ts_.expect("HOST");
      ts_.expect("IRS", "after 'HOST'");
      ts_.expect(":", "after 'HOST IRS'");
    }
    ts_.expect("(", "before the program inputs");
    operandList(main_, ")", "program inputs", &prog_.inputs(), &prog_.scalarInputs());
    ts_.expect(")", "after the program inputs");
    ts_.expect("->", "between the program inputs and outputs");
    ts_.expect("(", "before the program outputs");
    operandList(main_, ")", "program outputs", &prog_.outputs(), &prog_.scalarOutputs());
    ts_.expect(")", "after the program outputs");
    ts_.expect(":", "at the end of the '%HostIrContainer' line");
    ts_.endStatement();
    if (!ts_.atEnd() && !ts_.peek().firstOnLine) ts_.failExpected("a new line after the '%HostIrContainer' header");
    return end_dot;
  }

  bool isHostUnitHeader() const {
    const Token& t = ts_.peek();
    return t.kind == TokenKind::kWord && startsWith(t.text, "HostUnit") && isDigits(t.text.substr(8)) &&
           ts_.peek(1).is(":");
  }

  // `[...]` or `...` on a line of its own.
  bool elisionAhead() const {
    const Token& t = ts_.peek();
    if (!t.firstOnLine) return false;
    if (t.is("...")) return true;
    return t.is("[") && ts_.peek(1).is("...") && ts_.peek(2).is("]");
  }

  void skipElision() {
    if (ts_.accept("[")) {
      ts_.expect("...");
      ts_.expect("]");
    } else {
      ts_.expect("...");
    }
    endOfStatement("'[...]'");
  }

  bool endsBody(const Token& t) const {
    return t.kind == TokenKind::kEnd || t.is("}") || isHostUnitHeader() || t.is("END.") ||
           (elisionAhead() && &t == &ts_.peek());
  }

  // Statements of one body, all at column `col`, until a line further left or the end of the body.
  void block(Scope& out, int col) {
    bool after_nested = false;
    const Stmt* prev = nullptr;
    while (true) {
      const Token& t = ts_.peek();
      if (t.firstOnLine) {
        if (elisionAhead() && t.col >= col)
          ts_.fail(t, "the dump elides statements here ('[...]'); braid reads only whole programs (HostUnit "
                      "kernels may be elided, statements may not)");
        if (endsBody(t) || t.col < col) return;
        if (t.col > col) {
          if (after_nested)
            ts_.fail(t, "inconsistent indentation: column " + std::to_string(t.col) +
                            " matches no enclosing block (this block is at column " + std::to_string(col) + ")");
          ts_.fail(t, "unexpected indentation: expected column " + std::to_string(col) +
                          " like the statements before it, found column " + std::to_string(t.col));
        }
      } else if (!prev || !mayBeFollowedOnItsLine(*prev)) {
        // statement() checked the end of the line; only a directive can leave us here.
        ts_.failExpected("the end of the line");
      } else {
        prog_.printedBeforeAllocate = true;  // a statement run on after another: July / August 2024
      }
      StmtPtr s = statement();
      after_nested = s && (s->is<ForLoop>() || s->is<IfThenElse>());
      prev = s.get();
      if (s) out.push_back(std::move(s));
    }
  }

  // The body that a FOR / IF / ELSE opens: deeper than the line it stands on (it may follow
  // another statement on that line, as in the printers of July and August 2024).
  void nestedBody(Scope& out, const Token& owner, std::string_view what) {
    const Token& t = ts_.peek();
    if (endsBody(t) || t.col <= ts_.lineStart(owner).col)
      ts_.fail(t, "expected an indented body for the '" + std::string(what) + "' on line " +
                      std::to_string(owner.line) + ", found " + t.describe() +
                      (t.kind == TokenKind::kEnd ? "" : " at column " + std::to_string(t.col)));
    // Every walk over statements recurses once per level: a file may not choose that depth.
    if (++block_depth_ > kMaxBlockNesting)
      ts_.fail(owner, "'" + std::string(what) + "' nested more than " + std::to_string(kMaxBlockNesting) +
                          " levels deep (braid's limit)");
    block(out, t.col);
    --block_depth_;
    if (ts_.atEnd() && !truncated_in_) truncated_in_ = &owner;
  }

  void endOfStatement(std::string_view what, bool may_continue_line = false) {
    const Token& t = ts_.peek();
    if (t.kind == TokenKind::kEnd || t.firstOnLine) return;
    if (may_continue_line && t.kind == TokenKind::kWord) return;
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
    ts_.beginStatement(t);
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
      // Today's printer: `Stream 0x55d0c0 = GetCurrentStream()`.
      auto g = std::make_unique<GetCurrentStream>();
      g->stream = namedStream("GetCurrentStream");
      ts_.expect("=", "after the stream in 'Stream X = GetCurrentStream()'");
      ts_.expect("GetCurrentStream", "after 'Stream X ='");
      ts_.expect("(", "after 'GetCurrentStream'");
      ts_.expect(")", "after 'GetCurrentStream('");
      what = "'GetCurrentStream()'";
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
      s = deallocate();
    } else if (w == "StartCoalescing") {
      ts_.next();
      s = std::make_unique<StartCoalescing>();
    } else if (w == "EndCoalescing") {
      ts_.next();
      auto e = std::make_unique<EndCoalescing>();
      e->id = integer("the id of EndCoalescing");
      s = std::move(e);
    } else if (w == "Communication") {
      s = communication();
    } else if (w == "P2PCommunication") {
      s = p2p();
    } else if (w == "CollectivePermute") {
      s = collectivePermute();
    } else if (w == "PostOnStream") {
      s = postOnStream();
    } else if (w == "LaunchKernel") {
      s = launchKernel();
    } else if (w == "ShareMemHandles") {
      s = shareMemHandles();
    } else if (w == "MoeDispatch" || w == "MoeCombine") {
      ts_.fail(t, std::string(w) + " (nvFuser's expert-parallel token shuffle, 2026) is not supported by braid yet");
    } else if (checkTensorName(w, nullptr) != NameCheck::kNotATensor) {
      s = assignment();
    } else if (ts_.peek(1).is("=")) {
      s = scalarAssign();
    } else {
      ts_.fail(t, "unknown statement " + t.describe());
    }
    s->loc = loc;
    ts_.endStatement();
    if (!s->is<ForLoop>() && !s->is<IfThenElse>()) endOfStatement(what, mayBeFollowedOnItsLine(*s));
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
    ts_.endStatement();
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
    ts_.endStatement();
    endOfStatement("'IF ...:'");
    nestedBody(b->thenBody, if_tok, "IF");
    const Token& t = ts_.peek();
    if (t.is("ELSE") && t.col == ts_.lineStart(if_tok).col && t.firstOnLine) {
      ts_.beginStatement(t);
      const Token& else_tok = ts_.next();
      ts_.expect(":", "after 'ELSE'");
      ts_.endStatement();
      endOfStatement("'ELSE:'");
      nestedBody(b->elseBody, else_tok, "ELSE");
    }
    return b;
  }

  StmtPtr wait() {
    ts_.next();
    bool paren = ts_.accept("(");
    const Token& t = ts_.peek();
    if (!(t.is("Communication") || t.is("P2PCommunication") || t.is("EndCoalescing") || t.is("CollectivePermute")))
      ts_.failExpected("'Communication' after 'Wait'");
    ts_.next();
    auto w = std::make_unique<Wait>();
    // Which statement the id names is the verifier's question (ir/verifier.h): a Wait may come
    // before its communication in a loop body, and `braid print` prints whatever parses.
    w->id = integer("the id of the communication to wait for");
    if (paren) ts_.expect(")", "after 'Wait(Communication N'");
    return w;
  }

  // `Deallocate T` (braid's one-line form), `Deallocate {` T `}` (nvFuser), or, in April 2025,
  // `Deallocate {` with the tensor's ALLOCATE statement inside.
  StmtPtr deallocate() {
    ts_.next();
    auto d = std::make_unique<Deallocate>();
    if (ts_.accept("{")) {
      d->tv = tensor(main_);
      if (ts_.accept("=")) {
        ts_.expect("ALLOCATE", "after '=' in 'Deallocate {'");
        ts_.expect("(", "after 'ALLOCATE'");
        attributes("ALLOCATE", [&](std::string_view, const Token&) { return false; });
      }
      ts_.expect("}", "to close 'Deallocate {'");
    } else {
      d->tv = tensor(main_);
    }
    return d;
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
        c->team = team();
      } else if (key == "root") {
        c->root = parseScalarExpr(ts_);
      } else if (key == "red_op") {
        c->redOp = reductionOp();
        has_red_op = true;
      } else if (key == "input" || key == "Input") {  // `Input=`: July 2024
        if (key == "Input") prog_.printedBeforeAllocate = true;
        input_tok = &key_tok;
        c->input = tensor(main_);
      } else if (key == "output" || key == "Output") {
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
    return c;
  }

  // `P2PCommunication N (type=send, buffer=T, peer=e[, backend=B])`, also inside ShareMemHandles.
  std::unique_ptr<P2PCommunication> p2p() {
    ts_.expect("P2PCommunication");
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
    return c;
  }

  StmtPtr collectivePermute() {
    ts_.next();
    auto c = std::make_unique<CollectivePermute>();
    c->id = integer("the id of the CollectivePermute");
    ts_.expect("(", "after the CollectivePermute id");
    bool has_send = false, has_recv = false, has_in = false, has_out = false;
    attributes("CollectivePermute", [&](std::string_view key, const Token&) {
      if (key == "team") {
        c->team = team();
      } else if (key == "send_peer") {
        c->sendPeer = parseScalarExpr(ts_);
        has_send = true;
      } else if (key == "recv_peer") {
        c->recvPeer = parseScalarExpr(ts_);
        has_recv = true;
      } else if (key == "input") {
        c->input = tensor(main_);
        has_in = true;
      } else if (key == "output") {
        c->output = tensor(main_);
        has_out = true;
      } else if (key == "backend") {
        c->backend = backend();
      } else {
        return false;
      }
      return true;
    });
    if (!has_send || !has_recv || !has_in || !has_out)
      ts_.fail(ts_.peek(), "CollectivePermute " + std::to_string(c->id) +
                               " needs 'send_peer=', 'recv_peer=', 'input=' and 'output='");
    return c;
  }

  // `ShareMemHandles(P2PCommunication a (...), P2PCommunication b (...), ` ending the line:
  // nvFuser's printer never closes the parenthesis (a closing one is accepted too).
  StmtPtr shareMemHandles() {
    ts_.next();
    auto s = std::make_unique<ShareMemHandles>();
    ts_.expect("(", "after 'ShareMemHandles'");
    while (true) {
      if (ts_.accept(")")) break;
      const Token& t = ts_.peek();
      if (t.firstOnLine || t.kind == TokenKind::kEnd) break;
      if (!t.is("P2PCommunication")) ts_.failExpected("a P2PCommunication in ShareMemHandles");
      s->communications.push_back(std::move(*p2p()));
      if (!ts_.accept(",")) {
        ts_.accept(")");
        break;
      }
    }
    return s;
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
    ts_.expect(",", "after the HostUnit");
    kernelOperands("PostOnStream", p->inputs, p->scalarInputs, p->outputs);
    ts_.expect(")", "to close 'PostOnStream ('");
    return p;
  }

  // `Inputs:{...}, Outputs:{...}` of a PostOnStream or LaunchKernel: tensors and scalars in, tensors
  // out.
  void kernelOperands(const std::string& stmt, std::vector<TensorView*>& ins, std::vector<ScalarOperand>& scalar_ins,
                      std::vector<TensorView*>& outs) {
    for (bool in : {true, false}) {
      std::string part = in ? "inputs" : "outputs";
      if (!in) ts_.expect(",", "after the " + stmt + " inputs");
      ts_.expect(in ? "Inputs" : "Outputs", "in " + stmt);
      ts_.expect(":", "after '" + std::string(in ? "Inputs" : "Outputs") + "'");
      ts_.expect("{", "before the " + stmt + " " + part);
      operandList(main_, "}", stmt + " " + part, in ? &ins : &outs, in ? &scalar_ins : nullptr);
      ts_.expect("}", "after the " + stmt + " " + part);
    }
  }

  // `LaunchKernel(Inputs: {..}, Outputs: {..})` (early 2025), or on several lines with
  // `Index: N,` (May 2025) or `Group ID: N,` (since) first.
  StmtPtr launchKernel() {
    ts_.next();
    auto k = std::make_unique<LaunchKernel>();
    ts_.expect("(", "after 'LaunchKernel'");
    if (ts_.accept("Group")) {
      ts_.expect("ID", "after 'Group'");
      ts_.expect(":", "after 'Group ID'");
      k->groupId = integer64("the group id of the kernel");
      ts_.expect(",", "after the group id");
    } else if (ts_.accept("Index")) {
      ts_.expect(":", "after 'Index'");
      k->groupId = integer64("the index of the kernel");
      ts_.expect(",", "after the kernel index");
    }
    kernelOperands("LaunchKernel", k->inputs, k->scalarInputs, k->outputs);
    ts_.accept(",");
    ts_.expect(")", "to close 'LaunchKernel('");
    return k;
  }

  // `i45 = i12 + 3;` (a scalar the host computes in the body).
  StmtPtr scalarAssign() {
    const Token& name = ts_.next();
    if (name.text.front() == '%')
      ts_.fail(name, "unknown statement " + name.describe());
    auto a = std::make_unique<ScalarAssign>();
    a->name = std::string(name.text);
    ts_.expect("=", "after the scalar's name");
    a->value = parseScalarExpr(ts_);
    ts_.accept(";");
    return a;
  }

  // `T... = <something>`: ALLOCATE, a view, or a fusion op.
  StmtPtr assignment() {
    TensorView* out = tensor(main_);
    ts_.expect("=", "after the tensor that starts the statement");
    const Token& op = ts_.peek();
    if (op.is("ALLOCATE")) return allocate(out);
    if (op.is("HirAliasSelect") || op.is("select")) {
      bool hir = op.is("HirAliasSelect");
      std::string name(op.text);
      ts_.next();
      ts_.expect("(", "after '" + name + "'");
      TensorView* in = tensor(main_);
      ts_.expect(",", "after the " + name + " input");
      ts_.expect("axis", "in " + name);
      ts_.expect("=", "after 'axis'");
      const Token& axis_tok = ts_.peek();
      IdSpec spec = idSpec();
      IterDomain* axis = axisOf(in, spec);
      if (!axis) ts_.fail(axis_tok, "axis " + spec.str() + " is not an axis of " + in->str());
      ts_.expect(",", "after the " + name + " axis");
      ts_.expect("index", "in " + name);
      ts_.expect("=", "after 'index'");
      Scalar index = parseScalarExpr(ts_);
      ts_.expect(")", "to close '" + name + "('");
      if (hir) return makeSelect<AliasSelect>(out, in, axis, index);
      return makeSelect<Select>(out, in, axis, index);
    }
    if (op.is("slice")) return slice(out);
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
    if (op.is("SymmetricContiguousView")) {
      ts_.next();
      ts_.expect("(", "after 'SymmetricContiguousView'");
      auto a = std::make_unique<SymmetricContiguousView>();
      a->out = out;
      a->in = tensor(main_);
      ts_.expect(")", "to close 'SymmetricContiguousView('");
      return a;
    }
    auto h = std::make_unique<HostOp>();
    h->op = fusionOp(main_, out, /*in_kernel=*/false);
    return h;
  }

  template <class S>
  static StmtPtr makeSelect(TensorView* out, TensorView* in, IterDomain* axis, Scalar index) {
    auto a = std::make_unique<S>();
    a->out = out;
    a->in = in;
    a->axis = axis;
    a->index = std::move(index);
    return a;
  }

  StmtPtr allocate(TensorView* out) {
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
        const Token& v = ts_.expectWord("a memory type (global, register, shared, symmetric)");
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
    if (ts_.peek().is(".") && ts_.peek(1).is("alias"))
      ts_.fail(ts_.peek(), "an ALLOCATE that aliases another buffer ('.alias=') is not supported by braid");
    return a;
  }

  // `slice( T0, { {start, stop, step} {start, stop, step} } )`.
  StmtPtr slice(TensorView* out) {
    ts_.next();
    ts_.expect("(", "after 'slice'");
    auto s = std::make_unique<Slice>();
    s->out = out;
    s->in = tensor(main_);
    ts_.expect(",", "after the slice input");
    ts_.expect("{", "before the slice ranges");
    while (ts_.accept("{")) {
      SliceRange r;
      r.start = parseScalarExpr(ts_);
      ts_.expect(",", "after the start of a slice range");
      r.stop = parseScalarExpr(ts_);
      ts_.expect(",", "after the stop of a slice range");
      r.step = parseScalarExpr(ts_);
      ts_.expect("}", "to close a slice range");
      s->ranges.push_back(std::move(r));
      ts_.accept(",");
    }
    ts_.expect("}", "after the slice ranges");
    ts_.expect(")", "to close 'slice('");
    return s;
  }

  // The right-hand side of a fusion op whose output is `out`; the Expr is made in `scope`. In a
  // kernel, what braid does not model throws UnmodelledKernel; in the program body it is an error.
  Expr* fusionOp(FusionScope& scope, TensorView* out, bool in_kernel) {
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
      if (in_kernel && !(ts_.peek().kind == TokenKind::kWord && parseTensorName(ts_.peek().text)))
        throw UnmodelledKernel{};  // a tensor-scalar op
      TensorView* b = tensor(scope);
      e = f.newExpr(OpType::kBinary, {a, b}, {out});
      e->binaryOp = bop;
    } else if (op.is("Set") || op.is("Set.Permute") || op.is("SegmenterSet")) {
      bool permute = op.is("Set.Permute");
      std::string name(op.text);
      ts_.next();
      ts_.expect("(", "after '" + name + "'");
      TensorView* in = tensor(scope);
      e = f.newExpr(permute ? OpType::kPermute : OpType::kSet, {in}, {out});
      e->segmenterSet = name == "SegmenterSet";
      e->cacheOp = "";  // nvFuser prints no cache_op when it is Unspecified
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
          ts_.fail(key, "unknown attribute " + key.describe() + " of " + name);
        }
      }
      ts_.expect(")", "to close '" + name + "('");
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
    } else if (in_kernel) {
      throw UnmodelledKernel{};
    } else {
      ts_.fail(op, "unknown operation " + op.describe() + " (expected ALLOCATE, HirAliasSelect, ShardByStream, "
                   "SymmetricContiguousView, select, slice, Set, Set.Permute, SegmenterSet, a binary operator, "
                   "reduction, broadcast, squeeze, view, matmul, linear or a unary function)");
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
    const Token& head = ts_.peek();
    size_t header_pos = ts_.position();
    int id = toInt(head, head.text.substr(8));
    if (prog_.hostUnits().count(id)) ts_.fail(head, "HostUnit" + std::to_string(id) + " is defined twice");
    HostUnit unit;
    unit.id = id;
    FusionScope scope;
    hostUnitHeader(unit, scope);
    if (elisionAhead()) {
      skipElision();
      unit.body = HostUnit::Body::kElided;
    } else if (!ts_.peek().is("%kernel")) {
      // Only the header was printed (or pasted): the kernel is elided.
      unit.body = HostUnit::Body::kElided;
    } else {
      const Token& kernel = ts_.next();
      ts_.expect("{", "after '%kernel'");
      size_t body_pos = ts_.position();
      try {
        kernelOps(scope, kernel);
      } catch (const UnmodelledKernel&) {
        // Read the header again into a fresh fusion (the ops read so far are dropped), then keep
        // the kernel as text.
        ts_.seek(header_pos);
        unit = HostUnit();
        unit.id = id;
        scope = FusionScope();
        hostUnitHeader(unit, scope);
        ts_.next();  // %kernel
        ts_.next();  // {
        (void)body_pos;
        opaqueKernel(unit, kernel);
      }
    }
    prog_.hostUnits().emplace(id, std::move(unit));
  }

  // `HostUnitN: Inputs={...} -> Outputs={...}` and the listing that today's printer adds.
  void hostUnitHeader(HostUnit& unit, FusionScope& scope) {
    const Token& head = ts_.peek();
    ts_.beginStatement(head);
    ts_.next();
    unit.fusion = std::make_unique<Fusion>();
    scope.fusion = unit.fusion.get();
    ts_.expect(":", "after the HostUnit name");
    ts_.expect("Inputs", "after 'HostUnitN:'");
    ts_.expect("=", "after 'Inputs'");
    ts_.expect("{", "before the HostUnit inputs");
    std::vector<TensorView*> ins, outs;
    operandList(scope, "}", "HostUnit inputs", &ins, &unit.scalarInputs);
    ts_.expect("}", "after the HostUnit inputs");
    ts_.expect("->", "between the HostUnit inputs and outputs");
    ts_.expect("Outputs", "after '->'");
    ts_.expect("=", "after 'Outputs'");
    ts_.expect("{", "before the HostUnit outputs");
    operandList(scope, "}", "HostUnit outputs", &outs, nullptr);
    ts_.expect("}", "after the HostUnit outputs");
    ts_.endStatement();
    for (TensorView* tv : ins) unit.fusion->addInput(tv);
    for (TensorView* tv : outs) unit.fusion->addOutput(tv);
    // The fusion's own listing repeats its inputs and outputs, one a line.
    for (const char* part : {"Inputs", "Outputs"}) {
      if (ts_.peek().is(part) && ts_.peek(1).is(":")) {
        ts_.next();
        ts_.next();
        while (isOperandStart(ts_.peek()) && !(ts_.peek().is("Outputs") && ts_.peek(1).is(":"))) {
          ts_.beginStatement(ts_.peek());
          if (ts_.peek().kind == TokenKind::kWord && parseTensorName(ts_.peek().text)) tensor(scope);
          else parseScalarExpr(ts_);
          ts_.endStatement();
        }
      }
    }
  }

  bool isOperandStart(const Token& t) const {
    if (t.kind == TokenKind::kNumber) return true;
    // A scalar operand as the printer writes it: `( i0 - i1 )`, `-3`, `!b`.
    if (t.is("(") || t.is("-") || t.is("!")) return true;
    if (t.kind != TokenKind::kWord) return false;
    return !t.is("%kernel") && !isHostUnitHeader() && !t.is("END.");
  }

  // The ops of a kernel braid models, up to and including the closing `}`.
  void kernelOps(FusionScope& scope, const Token& kernel) {
    while (true) {
      const Token& t = ts_.peek();
      if (t.is("}") && t.firstOnLine) break;
      if (t.kind == TokenKind::kEnd) unterminatedKernel(kernel);
      if (!(t.kind == TokenKind::kWord && parseTensorName(t.text))) {
        if (t.kind == TokenKind::kWord || isElision(t) || t.kind == TokenKind::kNumber) throw UnmodelledKernel{};
        ts_.fail(t, "expected a fusion op ('T... = ...') in the kernel, found " + t.describe());
      }
      ts_.beginStatement(t);
      std::string what = t.describe();
      TensorView* out = tensor(scope);
      ts_.expect("=", "after the op's output");
      fusionOp(scope, out, /*in_kernel=*/true);
      ts_.endStatement();
      endOfStatement(what);
    }
    ts_.expect("}", "to close the kernel ('} // %kernel')");
  }

  [[noreturn]] void unterminatedKernel(const Token& kernel) {
    ts_.fail(ts_.peek(), "unexpected end of file: expected '} // %kernel' to close the kernel opened on line " +
                             std::to_string(kernel.line));
  }

  // A kernel braid does not model: its lines up to the `}` that closes it (a `}` starting a line
  // no further right than `%kernel`), kept as text with the kernel's indentation removed.
  void opaqueKernel(HostUnit& unit, const Token& kernel) {
    const Token& first = ts_.peek();
    if (first.kind != TokenKind::kEnd && !first.firstOnLine)
      ts_.failExpected("a new line after '%kernel {'");
    // The kernel's indentation is that of the line `%kernel` sits on, which is its own column
    // unless a blank the printer never writes (a vertical tab, a form feed) put it after the
    // HostUnit header: measured from there, the kernel's own continuation indentation would be
    // stripped and the printed text would no longer parse.
    const int indent = ts_.lineStart(kernel).col;
    std::vector<const Token*> open;
    while (true) {
      const Token& t = ts_.peek();
      if (t.kind == TokenKind::kEnd) unterminatedKernel(kernel);
      if (t.is("}") && t.firstOnLine && t.col <= indent && open.empty()) break;
      if (t.is("(") || t.is("[") || t.is("{")) open.push_back(&t);
      if (t.is(")") || t.is("]") || t.is("}")) {
        const char* want = t.is(")") ? "(" : t.is("]") ? "[" : "{";
        if (open.empty() || !open.back()->is(want))
          ts_.fail(t, "unbalanced " + t.describe() + " in the kernel of HostUnit" + std::to_string(unit.id));
        open.pop_back();
      }
      seekPast(t);
    }
    const Token& close = ts_.peek();
    std::string_view src = ts_.source();
    size_t begin = lineStart(src, first.kind == TokenKind::kEnd ? close.offset : first.offset);
    size_t end = lineStart(src, close.offset);
    std::string text;
    size_t pos = begin;
    const size_t base = static_cast<size_t>(indent - 1);
    while (pos < end) {
      size_t nl = src.find('\n', pos);
      if (nl == std::string_view::npos || nl > end) nl = end;
      std::string_view line = src.substr(pos, nl - pos);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      size_t strip = 0;
      while (strip < base && strip < line.size() && line[strip] == ' ') ++strip;
      line.remove_prefix(strip);
      while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
      if (!line.empty()) text += std::string(line) + "\n";
      pos = nl + 1;
    }
    ts_.expect("}", "to close the kernel ('} // %kernel')");
    std::string trimmed = text;
    trimmed.erase(std::remove_if(trimmed.begin(), trimmed.end(), [](char c) { return c == ' ' || c == '\n'; }),
                  trimmed.end());
    if (trimmed == "[...]" || trimmed == "...") {
      unit.body = HostUnit::Body::kElided;
    } else {
      unit.body = HostUnit::Body::kOpaque;
      unit.bodyText = std::move(text);
    }
  }

  // Moves past `t` (the next token) without the checks of TokenStream::next: kernel text braid
  // keeps verbatim may hold any character and any layout.
  void seekPast(const Token& t) {
    (void)t;
    ts_.seek(ts_.position() + 1);
  }

  static size_t lineStart(std::string_view src, size_t offset) {
    size_t nl = src.rfind('\n', offset == 0 ? 0 : offset - 1);
    if (offset == 0) return 0;
    return nl == std::string_view::npos ? 0 : nl + 1;
  }

  // ---------------------------------------------------------------- Index definitions

  // `Index definitions:` then `  i84 = i82 % 8;` lines (NVFUSER_DUMP=host_ir(indices)).
  // Operations in `s` with every symbol of `sizes` replaced by its expansion (iterative, saturating).
  static int64_t expandedSize(const Scalar& s, const std::map<std::string, int64_t>& sizes) {
    int64_t total = 0;
    std::vector<const Scalar*> work{&s};
    while (!work.empty()) {
      const Scalar* x = work.back();
      work.pop_back();
      if (x->isSymbol()) {
        // A use of another definition costs one more than its expansion, so a chain of plain
        // renamings (i2 = i1; i3 = i2; ...) counts its length too.
        auto it = sizes.find(x->name());
        if (it != sizes.end()) total = saturatingAdd(total, saturatingAdd(it->second, 1));
      } else if (!x->isConst()) {
        total = saturatingAdd(total, 1);
        work.push_back(&x->lhs());
        if (x->op() != ScalarOp::kNot) work.push_back(&x->rhs());
      }
    }
    return total;
  }

  void indexDefinitions() {
    ts_.next();
    ts_.next();
    ts_.expect(":", "after 'Index definitions'");
    std::map<std::string, SourceLoc> where;
    while (ts_.peek().kind == TokenKind::kWord && ts_.peek(1).is("=")) {
      const Token& name = ts_.peek();
      ts_.beginStatement(name);
      ts_.next();
      ts_.next();
      std::string n(name.text);
      if (where.count(n)) ts_.fail(name, n + " is defined twice in the index definitions");
      Scalar v = parseScalarExpr(ts_);
      ts_.accept(";");
      ts_.endStatement();
      endOfStatement("the definition of " + n);
      where.emplace(n, ts_.loc(name));
      prog_.indexDefinitions().emplace_back(n, v);
    }
    // The definitions must not depend on themselves (nvFuser's are a DAG).
    std::map<std::string, const Scalar*> defs;
    for (const auto& [n, v] : prog_.indexDefinitions()) defs.emplace(n, &v);
    std::map<std::string, int> state;  // 1: on the path, 2: done
    std::map<std::string, int64_t> expanded;  // operations of each definition once expanded
    int64_t all_expanded = 0;
    constexpr int64_t kMaxExpandedDefinitions = int64_t{1} << 20;
    // Depth-first over the definitions with an explicit stack: the input controls the depth, so
    // no recursion (a chain of thousands of definitions overflowed the stack under ASan).
    struct Frame {
      std::string name;
      std::vector<std::string> deps;  // the symbols of its definition that are definitions
      size_t next = 0;
    };
    std::vector<Frame> path;
    auto enter = [&](const std::string& n) {
      int& s = state[n];
      if (s == 2) return;
      if (s == 1) {
        std::string cycle;
        auto it = std::find_if(path.begin(), path.end(), [&](const Frame& f) { return f.name == n; });
        for (; it != path.end(); ++it) cycle += it->name + " -> ";
        throw ParseError(where.at(n), n + " is defined in terms of itself (" + cycle + n + ")");
      }
      s = 1;
      if (static_cast<int64_t>(path.size()) + 1 > kMaxScalarOperations)
        throw ParseError(where.at(n), "index definitions depend on each other more than " +
                                          std::to_string(kMaxScalarOperations) + " levels deep");
      Frame f{n, {}, 0};
      for (const std::string& d : defs.at(n)->freeSymbols())
        if (defs.count(d)) f.deps.push_back(d);
      path.push_back(std::move(f));
    };
    auto leave = [&](const std::string& n) {
      state[n] = 2;
      // Written out in the symbols they finally depend on (HostProgram::expandIndexDefinitions),
      // definitions that use each other twice double at every level: i60 = i59 + i59 would be
      // 2^60 operations. The expansion stays within the limit of one expression, which also
      // bounds this walk's depth.
      int64_t size = expandedSize(*defs.at(n), expanded);
      if (size > kMaxScalarOperations)
        throw ParseError(where.at(n), "the index definition of " + n + " expands into more than " +
                                          std::to_string(kMaxScalarOperations) +
                                          " operations (braid's limit on one expression)");
      expanded[n] = size;
      // The semantics expands every definition once per program: all of them together stay small.
      all_expanded = saturatingAdd(all_expanded, size);
      if (all_expanded > kMaxExpandedDefinitions)
        throw ParseError(where.at(n), "the index definitions expand into more than " +
                                          std::to_string(kMaxExpandedDefinitions) + " operations in all");
    };
    for (const auto& [root, v] : prog_.indexDefinitions()) {
      enter(root);
      while (!path.empty()) {
        Frame& top = path.back();
        if (top.next < top.deps.size()) {
          std::string d = top.deps[top.next++];
          enter(d);
          continue;
        }
        std::string n = std::move(top.name);
        path.pop_back();
        leave(n);
      }
    }
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

  // The text of a value up to the next `,` or `)` at its nesting level, with the spacing it was
  // written with inside a line (a line break between two of its tokens is dropped).
  std::string rawUntilCommaOrParen(std::string_view what) {
    const Token& first = ts_.peek();
    if (first.is(",") || first.is(")") || first.kind == TokenKind::kEnd) ts_.failExpected(what);
    std::string out;
    const Token* prev = nullptr;
    int depth = 0;
    while (true) {
      const Token& t = ts_.peek();
      if (t.kind == TokenKind::kEnd) ts_.failExpected("')'");
      if (depth == 0 && (t.is(",") || t.is(")"))) break;
      if (t.is("(") || t.is("[") || t.is("{")) ++depth;
      if (t.is(")") || t.is("]") || t.is("}")) --depth;
      if (prev) {
        std::string_view gap = ts_.source().substr(prev->end(), t.offset - prev->end());
        if (gap.find('\n') == std::string_view::npos) out += gap;
        else if (prev->kind == TokenKind::kWord && t.kind == TokenKind::kWord) out += " ";
      }
      out += t.text;
      prev = &t;
      ts_.next();
    }
    return out;
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

  // A device id in 0 .. kMaxRanks-1, not yet in `seen` (a bitmap, so a long list is read in
  // linear time): a mesh holding device 2^63-1 would otherwise count as "1 rank".
  int64_t deviceId(std::vector<bool>& seen, const char* in) {
    const Token& t = ts_.peek();
    int64_t d = integer64("a device id");
    if (d < 0 || d >= kMaxRanks)
      ts_.fail(t, "device " + std::to_string(d) + " in the " + in + " is outside 0.." + std::to_string(kMaxRanks - 1) +
                      " (braid runs at most " + std::to_string(kMaxRanks) + " ranks)");
    if (seen.empty()) seen.assign(static_cast<size_t>(kMaxRanks), false);
    if (seen[static_cast<size_t>(d)]) ts_.fail(t, "device " + std::to_string(d) + " appears twice in the " + in);
    seen[static_cast<size_t>(d)] = true;
    return d;
  }

  // `(0 1 2 3)`: device ids, each once.
  std::vector<int64_t> team() {
    ts_.expect("(", "before the team list");
    std::vector<int64_t> out;
    std::vector<bool> seen;
    while (ts_.peek().kind == TokenKind::kNumber) out.push_back(deviceId(seen, "team"));
    ts_.expect(")", "after team list");
    return out;
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
      case '?': s.kind = IterType::kSymbolic; break;
      default: bad("the kind must be i, r, b or ?");
    }
    std::string_view rest = w.substr(1);
    // `Stream` (until April 2025), `StreamIdx` (until September 2025) and `streamIdx` (since) name
    // the same parallel type.
    static const std::pair<std::string_view, ParallelType> kParallel[] = {
        {"StreamIdx", ParallelType::kStream},  {"streamIdx", ParallelType::kStream},
        {"Stream", ParallelType::kStream},     {"deviceIdx.x", ParallelType::kDIDx},
        {"deviceIdx.y", ParallelType::kDIDy},  {"S", ParallelType::kSerial}};
    bool found = false;
    for (const auto& [name, p] : kParallel) {
      if (startsWith(rest, name) && isDigits(rest.substr(name.size()))) {
        s.parallel = p;
        rest = rest.substr(name.size());
        found = true;
        break;
      }
    }
    if (!found)
      bad("unknown parallel type or missing id (expected S, streamIdx, StreamIdx, Stream, deviceIdx.x or "
          "deviceIdx.y, then a number)");
    s.id = toInt(t, rest);
    ts_.next();
    ts_.expect("{", "after the IterDomain name");
    // `{extent}`, or `{start : extent}` / `{start : stop : extent}` for resized axes; an expanded
    // broadcast adds ` ex <extent>`. braid keeps the extent.
    s.extent = parseScalarExpr(ts_);
    for (int k = 0; k < 2 && ts_.accept(":"); ++k) s.extent = parseScalarExpr(ts_);
    if (ts_.accept("ex")) parseScalarExpr(ts_);
    const Token& close = ts_.expect("}", "after the IterDomain extent");
    const Token& suffix = ts_.peek();
    // `rf`, and nvFuser's padding (`_p`) and cluster (`_c`) marks, which braid does not keep.
    if (suffix.kind == TokenKind::kWord && TokenStream::adjacent(close, suffix) &&
        (startsWith(suffix.text, "rf") || startsWith(suffix.text, "_p") || startsWith(suffix.text, "_c"))) {
      std::string_view marks = suffix.text;
      if (startsWith(marks, "rf")) {
        s.rf = true;
        marks.remove_prefix(2);
      }
      while (startsWith(marks, "_p") || startsWith(marks, "_c")) marks.remove_prefix(2);
      if (!marks.empty()) ts_.fail(suffix, "unexpected " + suffix.describe() + " after the IterDomain");
      ts_.next();
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
    std::vector<bool> seen;
    auto device = [&]() { devices.push_back(deviceId(seen, "device mesh")); };
    if (ts_.peek().is("{")) {
      int64_t row_len = -1, rows = 0;
      while (ts_.accept("{")) {
        int64_t n = 0;
        while (ts_.peek().kind == TokenKind::kNumber) {
          device();
          ++n;
        }
        const Token& close = ts_.expect("}", "after a row of the device mesh");
        if (row_len >= 0 && n != row_len) ts_.fail(close, "the rows of a 2D device mesh must have the same length");
        row_len = n;
        ++rows;
      }
      shape = {rows, row_len};
    } else {
      while (ts_.peek().kind == TokenKind::kNumber) device();
      shape = {static_cast<int64_t>(devices.size())};
    }
    ts_.expect("}", "to close the device mesh");
    ts_.expect(")", "after the device mesh");
    if (shape.size() == 1) return DeviceMesh(std::move(devices));
    return DeviceMesh(std::move(devices), std::move(shape));
  }

  // nvFuser's scheduling annotations after a tensor's domain (`ca_pos( 2 )`, `produce_pos( 1 )`,
  // `compute_with( T3, 1 )`, `maybe_produce_pos( 2 )`): they do not matter on the host.
  void skipTensorAnnotations() {
    while (true) {
      const Token& t = ts_.peek();
      if (!(t.is("ca_pos") || t.is("produce_pos") || t.is("compute_with") || t.is("maybe_produce_pos"))) return;
      if (!ts_.peek(1).is("(")) return;
      ts_.next();
      ts_.next();
      int depth = 1;
      while (depth > 0) {
        const Token& u = ts_.peek();
        if (u.kind == TokenKind::kEnd) ts_.failExpected("')' to close " + t.describe());
        if (u.is("(")) ++depth;
        if (u.is(")")) --depth;
        ts_.next();
      }
    }
  }

  // A tensor: `T3_g_float[iS0{i0}, ...] (DeviceMesh{0 1})`, `T3_g[ iS0{i0} ]` (no dtype), or the
  // bare name of one seen before.
  TensorView* tensor(FusionScope& scope) {
    const Token& t = ts_.peek();
    TensorName name;
    NameCheck check = t.kind == TokenKind::kWord ? checkTensorName(t.text, &name) : NameCheck::kNotATensor;
    if (check == NameCheck::kUnknownDtype)
      ts_.fail(t, "tensor " + t.describe() + " has a data type braid does not know (it knows float, double, __half, "
                  "__bfloat, int, int64_t and bool)");
    if (check == NameCheck::kUnknownMemory)
      ts_.fail(t, "tensor " + t.describe() + " has a memory type braid does not know (it knows g, l, s and sym)");
    if (check != NameCheck::kTensor) ts_.failExpected("a tensor such as 'T0_g_float[iS0{i0}]'");
    ts_.next();
    std::optional<std::vector<IdSpec>> domain;
    if (name.hasMem && ts_.peek().is("[")) {
      const Token& open = ts_.next();
      // `[ iS0{4} ]`: the spacing of the printers before December 2024.
      if (!TokenStream::adjacent(open, ts_.peek())) prog_.printedBeforeAllocate = true;
      domain.emplace();
      if (!ts_.peek().is("]")) {
        while (true) {
          domain->push_back(idSpec());
          if (!ts_.accept(",")) break;
        }
      }
      ts_.expect("]", "to close the domain of " + t.describe());
    }
    skipTensorAnnotations();
    std::optional<DeviceMesh> m;
    if (ts_.peek().is("(") && ts_.peek(1).is("DeviceMesh")) m = mesh();
    auto it = scope.tensors.find(name.name);
    if (it != scope.tensors.end()) return it->second;
    if (!domain)
      ts_.fail(t, "tensor " + t.describe() + " is used before it is declared with its type and domain");
    std::vector<IterDomain*> ids;
    for (const IdSpec& s : *domain) ids.push_back(iterDomain(scope, s));
    TensorView* tv = scope.fusion->newTensor(ids, name.dtype, name.mem, name.name);
    if (!name.hasType) {
      tv->setDtypeKnown(false);
      prog_.printedBeforeAllocate = true;
    }
    if (m) tv->setDeviceMesh(*m);
    scope.tensors.emplace(name.name, tv);
    return tv;
  }

  // Tensors and scalars separated by commas (a trailing comma allowed), up to `close` (not
  // consumed). Scalars are recorded with their position in the list; without `scalars`, only
  // tensors may appear (outputs).
  void operandList(FusionScope& scope, std::string_view close, std::string_view what, std::vector<TensorView*>* tvs,
                   std::vector<ScalarOperand>* scalars) {
    size_t position = 0;
    while (!ts_.peek().is(close)) {
      if (ts_.atEnd()) ts_.failExpected("'" + std::string(close) + "' after the " + std::string(what));
      const Token& t = ts_.peek();
      if (t.kind == TokenKind::kWord && checkTensorName(t.text, nullptr) != NameCheck::kNotATensor) {
        tvs->push_back(tensor(scope));
      } else if (t.kind == TokenKind::kWord || t.kind == TokenKind::kNumber || t.is("-") || t.is("(") || t.is("!")) {
        if (!scalars) {
          std::string item(what);
          if (item.size() > 1 && item.back() == 's') item.pop_back();
          ts_.fail(t, "a " + item + " must be a tensor, found " + t.describe());
        }
        scalars->push_back(ScalarOperand{position, parseScalarExpr(ts_)});
      } else {
        ts_.failExpected("a tensor or a scalar in the " + std::string(what));
      }
      ++position;
      if (!ts_.accept(",")) break;
    }
  }

  TokenStream ts_;
  HostProgram prog_;
  FusionScope main_;
  const Token* truncated_in_ = nullptr;  // the innermost FOR / IF / ELSE whose body the file ends in
  static constexpr int kMaxBlockNesting = 100;  // FOR / IF / ELSE bodies inside each other
  int block_depth_ = 0;
};

}  // namespace

HostProgram parseHostProgram(std::string_view text, const std::string& file) {
  Parser p(text, file);
  return p.run();
}

namespace {

std::string readFile(const std::string& path) { return readInputFile(path, "host IR file"); }

// `Device ID = 12` alone on its line (any indentation): the device number, else -1.
int64_t deviceIdLine(std::string_view line) {
  std::istringstream in{std::string(line)};
  std::string device, id, eq, rest;
  int64_t n = -1;
  if (!(in >> device >> id >> eq >> n) || device != "Device" || id != "ID" || eq != "=" || n < 0) return -1;
  if (in >> rest) return -1;
  return n;
}

}  // namespace

HostProgram parseHostProgramFile(const std::string& path) { return parseHostProgram(readFile(path), path); }

std::vector<std::pair<int64_t, HostProgram>> parseDeviceDumps(std::string_view text, const std::string& file) {
  struct Section {
    int64_t device;
    size_t begin;  // byte offset of the line after the marker
    int line;      // its line number
  };
  std::vector<Section> sections;
  std::vector<size_t> markers;
  size_t pos = 0;
  int line = 1;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    size_t end = nl == std::string_view::npos ? text.size() : nl;
    int64_t d = deviceIdLine(text.substr(pos, end - pos));
    if (d >= 0) {
      for (const Section& s : sections)
        if (s.device == d)
          throw ParseError(SourceLoc{file, line, 1}, "device " + std::to_string(d) + " has two programs in this file");
      markers.push_back(pos);
      sections.push_back({d, nl == std::string_view::npos ? text.size() : nl + 1, line + 1});
    }
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
    ++line;
  }
  std::vector<std::pair<int64_t, HostProgram>> out;
  for (size_t i = 0; i < sections.size(); ++i) {
    size_t end = i + 1 < sections.size() ? markers[i + 1] : text.size();
    // Blank lines in front keep the file's line numbers in locations.
    std::string part(static_cast<size_t>(sections[i].line - 1), '\n');
    part += text.substr(sections[i].begin, end - sections[i].begin);
    out.emplace_back(sections[i].device, parseHostProgram(part, file));
  }
  return out;
}

std::vector<std::pair<int64_t, HostProgram>> parseDeviceDumpsFile(const std::string& path) {
  return parseDeviceDumps(readFile(path), path);
}

}  // namespace braid
