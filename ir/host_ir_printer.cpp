// The printer of the host IR text format (docs/HOSTIR.md). It writes nvFuser's spelling of every
// node in one of its three printer generations (today's, the "to Stream" one, the oldest of
// July 2024), so that a printed program reads like an NVFUSER_DUMP of that time and parses back to
// an equal program. braid's two extensions (`perm=` on Set.Permute when the permutation cannot be
// read off the extents, and `// braid: alias` lines) are only written when needed.
#include <functional>

#include "ir/host_ir_printer_util.h"
#include "ir/host_ir_text.h"

namespace braid {

namespace {

std::string indentStr(int indent) { return std::string(static_cast<size_t>(std::max(indent, 0)) * 2, ' '); }

std::string flagsStr(const std::vector<bool>& flags) {
  std::string s = "{";
  for (size_t i = 0; i < flags.size(); ++i) s += std::string(i ? ", " : "") + (flags[i] ? "true" : "false");
  return s + "}";
}

// A scalar as nvFuser prints the right-hand side of a scalar expression (`i84 = i82 % 8;`): the
// outermost binary operation without parentheses.
std::string inlineScalar(const Scalar& s) {
  if (isBinary(s.op()) && s.op() != ScalarOp::kCeilDiv)
    return s.lhs().str() + " " + scalarOpSpelling(s.op()) + " " + s.rhs().str();
  return s.str();
}

using StmtCallback = std::function<void(const Stmt&, int line, int col)>;

class Printer {
 public:
  Printer(const PrintOptions& options, const HostProgram* program, const StmtCallback* on_stmt)
      : options_(options), d_(options.dialect), program_(program), on_stmt_(on_stmt) {}

  std::string take() { return std::move(out_); }

  void program(const HostProgram& p) {
    emit("%HostIrContainer { (" + operands(p.inputs(), p.scalarInputs(), ", ", "") + ") -> (" +
         operands(p.outputs(), p.scalarOutputs(), ", ", "") + ") :\n");
    for (const auto& [out, in] : p.aliases()) {
      emit(indentStr(1) + "// braid: alias " + (out ? nameOf(out) : "<null>") + " -> " + (in ? nameOf(in) : "<null>") +
           "\n");
    }
    scope(p.body(), 1);
    for (const auto& [id, unit] : p.hostUnits()) hostUnit(id, unit);
    emit("} // %HostIrContainer\n");
    if (!p.indexDefinitions().empty()) {
      emit("\nIndex definitions:\n");
      for (const auto& [name, value] : p.indexDefinitions()) emit(indentStr(1) + name + " = " + inlineScalar(value) + ";\n");
    }
  }

  void scope(const Scope& s, int indent) {
    for (size_t i = 0; i < s.size(); ++i) {
      if (!s[i]) continue;
      // The printers of July and August 2024 ended these statements without a line break, so in
      // a loop or branch body the next statement followed on the same line.
      bool run_on = d_ == HostIrDialect::kOldest && indent > 1 && i + 1 < s.size() &&
                    (s[i]->is<Communication>() || s[i]->is<Wait>() || s[i]->is<SetCurrentStream>() ||
                     s[i]->is<PostOnStream>());
      stmt(*s[i], indent, run_on);
    }
  }

  void stmt(const Stmt& s, int indent, bool run_on = false) {
    if (on_stmt_) (*on_stmt_)(s, line_, col_ + indent * 2 + 1);
    std::string text = stmtText(s, indent);
    if (run_on && !text.empty() && text.back() == '\n') text.pop_back();
    emit(text);
    if (s.is<ForLoop>()) {
      scope(s.as<ForLoop>()->body, indent + 1);
    } else if (s.is<IfThenElse>()) {
      const auto* b = s.as<IfThenElse>();
      scope(b->thenBody, indent + 1);
      if (!b->elseBody.empty()) {
        emit(indentStr(indent) + "ELSE:\n");
        scope(b->elseBody, indent + 1);
      }
    }
  }

  // ------------------------------------------------------------ tensors

  std::string nameOf(const TensorView* tv) const {
    if (!tv) return "<null tensor>";
    std::string s = "T" + std::to_string(tv->name()) + "_" + std::string(memoryTypeLetter(tv->memoryType()));
    if (tv->dtypeKnown()) s += "_" + std::string(dataTypeName(tv->dtype()));
    return s;
  }

  std::string idText(const IterDomain* id) const {
    if (!id) return "<null axis>";
    std::string p;
    switch (id->parallelType()) {
      case ParallelType::kStream:
        p = d_ == HostIrDialect::kModern ? "streamIdx" : d_ == HostIrDialect::kLegacy ? "StreamIdx" : "Stream";
        break;
      default: p = std::string(parallelTypeName(id->parallelType()));
    }
    std::string s = std::string(iterTypeLetter(id->iterType())) + p + std::to_string(id->id()) + "{" +
                    id->extent().extentStr() + "}";
    if (id->isRFactor()) s += "rf";
    return s;
  }

  std::string tv(const TensorView* t) const {
    if (!t) return "<null tensor>";
    std::string s = nameOf(t);
    std::string ids;
    for (size_t i = 0; i < t->loop().size(); ++i) ids += (i ? ", " : "") + idText(t->loop()[i]);
    if (d_ == HostIrDialect::kOldest) s += ids.empty() ? "[ ]" : "[ " + ids + " ]";
    else s += "[" + ids + "]";
    if (t->hasDeviceMesh()) s += " (" + t->deviceMesh()->str() + ")";
    return s;
  }

  std::string tvAt(const std::vector<TensorView*>& v, size_t i) const { return i < v.size() ? tv(v[i]) : "<missing tensor>"; }

  // Tensors and scalars in printed order, each followed by `sep` except the last, which is
  // followed by `last` (nvFuser writes `{a, b, }` in some lists and `{a, b}` in others).
  std::string operands(const std::vector<TensorView*>& tvs, const std::vector<ScalarOperand>& scalars,
                       const std::string& sep, const std::string& last) const {
    std::vector<std::string> items;
    size_t t = 0, k = 0;
    const size_t n = tvs.size() + scalars.size();
    for (size_t pos = 0; pos < n; ++pos) {
      if (k < scalars.size() && (scalars[k].position == pos || t >= tvs.size())) items.push_back(scalars[k++].value.str());
      else items.push_back(tvAt(tvs, t++));
    }
    std::string s;
    for (size_t i = 0; i < items.size(); ++i) s += items[i] + (i + 1 < items.size() ? sep : last);
    return s;
  }

  std::string streamText(const StreamRef& r) const { return r.str(); }

  // ------------------------------------------------------------ statements

  std::string commBackend(CommBackend b) const { return commBackendName(b); }

  std::string p2pText(const P2PCommunication& c) const {
    std::string s = "P2PCommunication " + std::to_string(c.id) + " (type=" + (c.type == P2PType::kSend ? "send" : "recv") +
                    ", buffer=" + tv(c.buffer) + ", peer=" + c.peer.str();
    // The printer of 2024 wrote no backend (NCCL then).
    if (d_ != HostIrDialect::kOldest || c.backend != CommBackend::kNccl) s += ", backend=" + commBackend(c.backend);
    return s + ")";
  }

  std::string teamText(const std::vector<int64_t>& team) const {
    std::string s = "team=(";
    for (size_t i = 0; i < team.size(); ++i) s += (i ? " " : "") + std::to_string(team[i]);
    return s + ")";
  }

  std::string communicationText(const Communication& c) const {
    std::string s = "Communication " + std::to_string(c.id) + " (type=" + communicationTypeName(c.type) + ", " +
                    teamText(c.team);
    std::optional<ReductionOpType> red = c.redOp;
    if (!red && isReducing(c.type)) red = ReductionOpType::kAdd;
    // What the parser reads when red_op is absent: a sum for the reducing types, nothing else.
    std::optional<ReductionOpType> implied;
    if (isReducing(c.type)) implied = ReductionOpType::kAdd;
    const bool show_red = red != implied;
    switch (d_) {
      case HostIrDialect::kLegacy:
        // braid's own spelling of the "to Stream" generation: red_op always shown for reductions.
        if (c.root) s += ", root=" + c.root->str();
        if (red) s += std::string(", red_op=") + reductionOpName(*red);
        s += ", input=" + tv(c.input) + ", output=" + tv(c.output) + ", backend=" + commBackend(c.backend);
        break;
      case HostIrDialect::kModern:
        // nvFuser does not print the reduction; braid adds it only when it is not a sum.
        if (c.root) s += ", root=" + c.root->str();
        if (show_red) s += std::string(", red_op=") + reductionOpName(*red);
        s += ", input=" + tv(c.input) + ", output=" + tv(c.output) + ", backend=" + commBackend(c.backend);
        break;
      case HostIrDialect::kOldest:
        if (c.root) s += ", root=" + c.root->str();
        s += ", Input=" + tv(c.input) + ", Output=" + tv(c.output);
        if (show_red) s += std::string(", red_op=") + reductionOpName(*red);
        if (c.backend != CommBackend::kNccl) s += ", backend=" + commBackend(c.backend);
        break;
    }
    return s + ")";
  }

  template <StmtKind K>
  std::string selectText(const SelectStmt<K>& a, const char* op, int indent) const {
    return indentStr(indent) + tv(a.out) + "\n" + indentStr(indent) + "   = " + op + "( " + tv(a.in) +
           ", axis = " + idText(a.axis) + ", index = " + a.index.str() + " )\n";
  }

  std::string stmtText(const Stmt& s, int indent) const {
    const std::string ind = indentStr(indent);
    const std::string cont = ind + "   ";
    const bool modern = d_ == HostIrDialect::kModern;
    switch (s.kind()) {
      case StmtKind::kAllocate: {
        const auto* a = s.as<Allocate>();
        std::string t = tv(a->tv);
        std::string mem = a->memType == MemoryType::kLocal ? "register" : std::string(memoryTypeName(a->memType));
        if (a->legacy) {
          std::string line = ind + t + " = ALLOCATE(buffer=" + t + ", mem_type=" + mem;
          if (a->size) line += ", size=" + a->size->str();
          return line + ", zero_init=" + (a->zeroInit ? "true" : "false") +
                 ", resets_to_zero=" + (a->resetsToZero ? "true" : "false") + ")\n";
        }
        return ind + t + " = ALLOCATE(mem_type=" + mem + ", zero_init=" + (a->zeroInit ? "true" : "false") + ")\n";
      }
      case StmtKind::kDeallocate: {
        const auto* d = s.as<Deallocate>();
        // nvFuser always printed the braces; the one-line form is braid's, kept in the "to Stream"
        // dialect that braid's golden files use.
        if (d_ == HostIrDialect::kLegacy) return ind + "Deallocate " + tv(d->tv) + "\n";
        return ind + "Deallocate {\n" + indentStr(indent + 1) + tv(d->tv) + "\n" + ind + "}\n";
      }
      case StmtKind::kAliasSelect: return selectText(*s.as<AliasSelect>(), "HirAliasSelect", indent);
      case StmtKind::kSelect: return selectText(*s.as<Select>(), "select", indent);
      case StmtKind::kSlice: {
        const auto* a = s.as<Slice>();
        std::string r;
        for (const SliceRange& x : a->ranges) r += " {" + x.start.str() + ", " + x.stop.str() + ", " + x.step.str() + "}";
        return ind + tv(a->out) + "\n" + cont + "= slice( " + tv(a->in) + ", {" + r + " } )\n";
      }
      case StmtKind::kShardByStream: {
        const auto* a = s.as<ShardByStream>();
        return ind + tv(a->out) + " = ShardByStream(" + tv(a->in) + (modern ? ", stream_index=" : ", stream_index = ") +
               a->streamIndex.str() + ")\n";
      }
      case StmtKind::kSymmetricContiguousView: {
        const auto* a = s.as<SymmetricContiguousView>();
        return ind + tv(a->out) + " = SymmetricContiguousView(" + tv(a->in) + ")\n";
      }
      case StmtKind::kGetCurrentStream: {
        const auto* g = s.as<GetCurrentStream>();
        if (modern) return ind + streamText(g->stream) + " = GetCurrentStream()\n";
        return ind + "GetCurrentStream into " + streamText(g->stream) + "\n";
      }
      case StmtKind::kSetCurrentStream: {
        const auto* c = s.as<SetCurrentStream>();
        if (modern) return ind + "SetCurrentStream(" + streamText(c->stream) + ")\n";
        return ind + "SetCurrentStream to " + streamText(c->stream) + "\n";
      }
      case StmtKind::kSynchronize: {
        const auto* c = s.as<Synchronize>();
        if (modern) return ind + "Synchronize(" + streamText(c->stream) + ")\n";
        return ind + "Synchronize " + streamText(c->stream) + "\n";
      }
      case StmtKind::kForLoop: {
        const auto* f = s.as<ForLoop>();
        if (f->domain) return ind + "FOR " + f->index + " in " + idText(f->domain) + ":\n";
        return ind + "FOR " + f->index + " from " + f->start.str() + " to " + f->stop.str() + ":\n";
      }
      case StmtKind::kIfThenElse: return ind + "IF Manual " + s.as<IfThenElse>()->predicate.str() + ":\n";
      case StmtKind::kHostOp: {
        const auto* h = s.as<HostOp>();
        return h->op ? exprText(*h->op, indent) : ind + "<null host op>\n";
      }
      case StmtKind::kScalarAssign: {
        const auto* a = s.as<ScalarAssign>();
        return ind + a->name + " = " + inlineScalar(a->value) + ";\n";
      }
      case StmtKind::kPostOnStream: {
        const auto* p = s.as<PostOnStream>();
        std::vector<ScalarOperand> none;
        return ind + "PostOnStream (HostUnit" + std::to_string(p->hostUnit) + ", Inputs:{" +
               operands(p->inputs, p->scalarInputs, ", ", ", ") + "}, Outputs:{" +
               operands(p->outputs, none, ", ", ", ") + "})\n";
      }
      case StmtKind::kLaunchKernel: {
        const auto* k = s.as<LaunchKernel>();
        std::vector<ScalarOperand> none;
        if (!k->groupId)
          return ind + "LaunchKernel(Inputs: {" + operands(k->inputs, k->scalarInputs, ", ", ", ") + "}, Outputs: {" +
                 operands(k->outputs, none, ", ", ", ") + "})\n";
        const std::string in1 = indentStr(indent + 1);
        return ind + "LaunchKernel(\n" + in1 + "Group ID: " + std::to_string(*k->groupId) + ",\n" + in1 + "Inputs: {" +
               operands(k->inputs, k->scalarInputs, ", ", "") + "},\n" + in1 + "Outputs: {" +
               operands(k->outputs, none, ", ", "") + "},\n" + ind + ")\n";
      }
      case StmtKind::kCommunication: return ind + communicationText(*s.as<Communication>()) + "\n";
      case StmtKind::kCollectivePermute: {
        const auto* c = s.as<CollectivePermute>();
        return ind + "CollectivePermute " + std::to_string(c->id) + " (" + teamText(c->team) +
               ", send_peer=" + c->sendPeer.str() + ", recv_peer=" + c->recvPeer.str() + ", input=" + tv(c->input) +
               ", output=" + tv(c->output) + ", backend=" + commBackend(c->backend) + ")\n";
      }
      case StmtKind::kP2PCommunication: return ind + p2pText(*s.as<P2PCommunication>()) + "\n";
      case StmtKind::kShareMemHandles: {
        // nvFuser's printer leaves the parenthesis open; braid writes the same.
        std::string line = ind + "ShareMemHandles(";
        for (const P2PCommunication& c : s.as<ShareMemHandles>()->communications) line += p2pText(c) + ", ";
        while (!line.empty() && line.back() == ' ') line.pop_back();
        return line + "\n";
      }
      case StmtKind::kStartCoalescing: return ind + "StartCoalescing\n";
      case StmtKind::kEndCoalescing: return ind + "EndCoalescing " + std::to_string(s.as<EndCoalescing>()->id) + "\n";
      case StmtKind::kWait: {
        const auto* w = s.as<Wait>();
        if (modern) return ind + "Wait(Communication " + std::to_string(w->id) + ")\n";
        return ind + "Wait Communication " + std::to_string(w->id) + "\n";
      }
    }
    return ind + "<unknown statement>\n";
  }

  // One fusion op in nvFuser's multi-line form (`T4...` / `   = Set( T3..., cache_op=Streaming )`).
  std::string exprText(const Expr& e, int indent) const {
    const std::string ind = indentStr(indent);
    const std::string cont = ind + "   ";
    const std::string out = e.outputs().empty() ? "<missing tensor>" : tv(e.outputs()[0]);
    const auto& in = e.inputs();
    std::string s = ind + out + "\n" + cont + "= ";
    auto cache = [&]() { return e.cacheOp.empty() ? std::string() : ", cache_op=" + e.cacheOp; };
    switch (e.type()) {
      case OpType::kSet:
        s += std::string(e.segmenterSet ? "SegmenterSet" : "Set") + "( " + tvAt(in, 0) + cache() + " )\n";
        break;
      case OpType::kPermute: {
        s += "Set.Permute( " + tvAt(in, 0) + cache();
        std::vector<int64_t> inferred;
        if (!in.empty() && in[0] && !e.outputs().empty() && e.outputs()[0])
          inferred = inferPermutation(in[0]->loop(), e.outputs()[0]->loop());
        if (inferred != e.permutation) {
          s += ", perm={";
          for (size_t i = 0; i < e.permutation.size(); ++i) s += (i ? ", " : "") + std::to_string(e.permutation[i]);
          s += "}";
        }
        s += " )\n";
        break;
      }
      case OpType::kUnary: s += std::string(unaryOpName(e.unaryOp)) + "(" + tvAt(in, 0) + ");\n"; break;
      case OpType::kBinary: s += tvAt(in, 0) + "\n" + cont + binaryOpSymbol(e.binaryOp) + " " + tvAt(in, 1) + ";\n"; break;
      case OpType::kReduction:
        s += "reduction( " + tvAt(in, 0) + ", op = " + reductionOpName(e.reductionOp) +
             ", initial value = " + e.initValue + ", allreduce = false )\n";
        break;
      case OpType::kBroadcast: s += "broadcast( " + tvAt(in, 0) + ", flags = " + flagsStr(e.broadcastFlags) + " )\n"; break;
      case OpType::kSqueeze: s += "squeeze( " + tvAt(in, 0) + ", flags = " + flagsStr(e.squeezeFlags) + " )\n"; break;
      case OpType::kReshape: s += "view( " + tvAt(in, 0) + " )\n"; break;
      case OpType::kMatmul: s += "matmul(" + tvAt(in, 0) + ",\n" + cont + "         " + tvAt(in, 1) + ")\n"; break;
      case OpType::kLinear:
        s += "linear(" + tvAt(in, 0) + ",\n" + cont + "         " + tvAt(in, 1);
        if (in.size() > 2) s += ",\n" + cont + "         " + tvAt(in, 2);
        s += " )\n";
        break;
    }
    return s;
  }

  void hostUnit(int id, const HostUnit& unit) {
    emit("\n");
    const Fusion* f = unit.fusion.get();
    std::vector<TensorView*> none;
    std::vector<ScalarOperand> no_scalars;
    const auto& ins = f ? f->inputs() : none;
    const auto& outs = f ? f->outputs() : none;
    emit("HostUnit" + std::to_string(id) + ": Inputs={" + operands(ins, unit.scalarInputs, ", ", ", ") +
         "} -> Outputs={" + operands(outs, no_scalars, ", ", ", ") + "}");
    if (d_ == HostIrDialect::kOldest) {
      // Before December 2024 the fusion's listing of its inputs and outputs did not exist.
      emit("\n");
    } else {
      emit("Inputs:\n");
      std::string listed = operands(ins, unit.scalarInputs, "\n  ", "\n");
      if (!listed.empty()) emit("  " + listed);
      emit("Outputs:\n");
      listed = operands(outs, no_scalars, "\n  ", "\n");
      if (!listed.empty()) emit("  " + listed);
      emit("\n");
    }
    emit("%kernel {\n");
    switch (unit.body) {
      case HostUnit::Body::kModelled:
        if (f)
          for (const Expr* e : f->exprs()) emit(exprText(*e, 0));
        break;
      case HostUnit::Body::kOpaque: emit(unit.bodyText); break;
      case HostUnit::Body::kElided: emit("[...]\n"); break;
    }
    emit("} // %kernel\n");
  }

 private:
  void emit(const std::string& s) {
    out_ += s;
    for (char c : s) {
      if (c == '\n') {
        ++line_;
        col_ = 0;
      } else {
        ++col_;
      }
    }
  }

  const PrintOptions& options_;
  HostIrDialect d_;
  const HostProgram* program_;
  const StmtCallback* on_stmt_;
  std::string out_;
  int line_ = 1;
  int col_ = 0;
};

}  // namespace

const char* dialectName(HostIrDialect d) {
  switch (d) {
    case HostIrDialect::kOldest: return "oldest";
    case HostIrDialect::kLegacy: return "to-stream";
    case HostIrDialect::kModern: return "today";
  }
  return "?";
}

std::optional<HostIrDialect> parseDialectName(const std::string& s) {
  if (s == "today" || s == "modern") return HostIrDialect::kModern;
  if (s == "to-stream" || s == "legacy") return HostIrDialect::kLegacy;
  if (s == "oldest" || s == "2024") return HostIrDialect::kOldest;
  return std::nullopt;
}

std::vector<int64_t> inferPermutation(const std::vector<IterDomain*>& in, const std::vector<IterDomain*>& out) {
  // Backtracking over the output axes: candidates are the input axes with a structurally equal
  // extent. The answer counts only if it is the single one.
  const size_t n = out.size();
  if (in.size() != n || n == 0) return {};
  std::vector<int64_t> cur(n, -1), found;
  std::vector<bool> used(n, false);
  int solutions = 0;
  std::function<void(size_t)> go = [&](size_t i) {
    if (solutions > 1) return;
    if (i == n) {
      if (++solutions == 1) found = cur;
      return;
    }
    for (size_t j = 0; j < n; ++j) {
      if (used[j] || !in[j] || !out[i] || !(in[j]->extent() == out[i]->extent())) continue;
      used[j] = true;
      cur[i] = static_cast<int64_t>(j);
      go(i + 1);
      used[j] = false;
    }
  };
  go(0);
  return solutions == 1 ? found : std::vector<int64_t>{};
}

std::string print(const HostProgram& p, const PrintOptions& options) {
  Printer pr(options, &p, nullptr);
  pr.program(p);
  return pr.take();
}

std::string printStmt(const Stmt& s, int indent, const PrintOptions& options) {
  Printer pr(options, nullptr, nullptr);
  pr.stmt(s, indent);
  return pr.take();
}

std::string printStmt(const HostProgram& p, const Stmt& s, int indent, const PrintOptions& options) {
  Printer pr(options, &p, nullptr);
  pr.stmt(s, indent);
  return pr.take();
}

void assignPrintedLocations(HostProgram& p, const std::string& file) {
  StmtCallback cb = [&file](const Stmt& s, int line, int col) {
    // The statements belong to `p`, which is not const here.
    const_cast<Stmt&>(s).loc = SourceLoc{file, line, col};
  };
  PrintOptions options;
  Printer pr(options, &p, &cb);
  pr.program(p);
}

}  // namespace braid
