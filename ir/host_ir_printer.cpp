// The printer of the host IR text format (docs/HOSTIR.md). It writes nvFuser's spelling of every
// node (the older dialect by default), so that a printed program reads like an NVFUSER_DUMP and
// parses back to an equal program. braid's two extensions (`perm=` on Set.Permute when the
// permutation cannot be read off the extents, and `// braid: alias` lines) are only written when
// needed.
#include <functional>

#include "ir/host_ir_printer_util.h"
#include "ir/host_ir_text.h"

namespace braid {

namespace {

std::string indentStr(int indent) { return std::string(static_cast<size_t>(std::max(indent, 0)) * 2, ' '); }

std::string tvStr(const TensorView* tv) { return tv ? tv->str() : "<null tensor>"; }

std::string tvAt(const std::vector<TensorView*>& v, size_t i) { return i < v.size() ? tvStr(v[i]) : "<missing tensor>"; }

std::string flagsStr(const std::vector<bool>& flags) {
  std::string s = "{";
  for (size_t i = 0; i < flags.size(); ++i) s += std::string(i ? ", " : "") + (flags[i] ? "true" : "false");
  return s + "}";
}

std::string tensorList(const std::vector<TensorView*>& v) {
  std::string s;
  for (const TensorView* tv : v) s += tvStr(tv) + ", ";
  return s;
}

using StmtCallback = std::function<void(const Stmt&, int line, int col)>;

class Printer {
 public:
  Printer(const PrintOptions& options, const StmtCallback* on_stmt) : options_(options), on_stmt_(on_stmt) {}

  std::string take() { return std::move(out_); }

  void program(const HostProgram& p) {
    emit("%HostIrContainer { (");
    for (size_t i = 0; i < p.inputs().size(); ++i) emit((i ? ", " : "") + tvStr(p.inputs()[i]));
    emit(") -> (");
    for (size_t i = 0; i < p.outputs().size(); ++i) emit((i ? ", " : "") + tvStr(p.outputs()[i]));
    emit(") :\n");
    for (const auto& [out, in] : p.aliases()) {
      emit(indentStr(1) + "// braid: alias " + (out ? out->nameStr() : "<null>") + " -> " +
           (in ? in->nameStr() : "<null>") + "\n");
    }
    scope(p.body(), 1);
    for (const auto& [id, unit] : p.hostUnits()) hostUnit(id, unit);
    emit("} // %HostIrContainer\n");
  }

  void scope(const Scope& s, int indent) {
    for (const auto& st : s)
      if (st) stmt(*st, indent);
  }

  void stmt(const Stmt& s, int indent) {
    if (on_stmt_) (*on_stmt_)(s, line_, indent * 2 + 1);
    const std::string ind = indentStr(indent);
    const bool modern = options_.dialect == HostIrDialect::kModern;
    switch (s.kind()) {
      case StmtKind::kAllocate: {
        const auto* a = s.as<Allocate>();
        std::string t = tvStr(a->tv);
        if (a->legacy) {
          std::string line = ind + t + " = ALLOCATE(buffer=" + t + ", mem_type=" + std::string(memoryTypeName(a->memType));
          if (a->size) line += ", size=" + a->size->str();
          line += std::string(", zero_init=") + (a->zeroInit ? "true" : "false") +
                  ", resets_to_zero=" + (a->resetsToZero ? "true" : "false") + ")\n";
          emit(line);
        } else {
          emit(ind + t + " = ALLOCATE(mem_type=" + std::string(memoryTypeName(a->memType)) +
               ", zero_init=" + (a->zeroInit ? "true" : "false") + ")\n");
        }
        break;
      }
      case StmtKind::kDeallocate: {
        const auto* d = s.as<Deallocate>();
        if (modern) emit(ind + "Deallocate {\n" + indentStr(indent + 1) + tvStr(d->tv) + "\n" + ind + "}\n");
        else emit(ind + "Deallocate " + tvStr(d->tv) + "\n");
        break;
      }
      case StmtKind::kAliasSelect: {
        const auto* a = s.as<AliasSelect>();
        emit(ind + tvStr(a->out) + "\n" + ind + "   = HirAliasSelect( " + tvStr(a->in) +
             ", axis = " + (a->axis ? a->axis->str() : "<null axis>") + ", index = " + a->index.str() + " )\n");
        break;
      }
      case StmtKind::kShardByStream: {
        const auto* a = s.as<ShardByStream>();
        emit(ind + tvStr(a->out) + " = ShardByStream(" + tvStr(a->in) + ", stream_index = " + a->streamIndex.str() +
             ")\n");
        break;
      }
      case StmtKind::kGetCurrentStream: {
        const auto* g = s.as<GetCurrentStream>();
        if (modern) emit(ind + g->stream.str() + " = GetCurrentStream()\n");
        else emit(ind + "GetCurrentStream into " + g->stream.str() + "\n");
        break;
      }
      case StmtKind::kSetCurrentStream: {
        const auto* c = s.as<SetCurrentStream>();
        if (modern) emit(ind + "SetCurrentStream(" + c->stream.str() + ")\n");
        else emit(ind + "SetCurrentStream to " + c->stream.str() + "\n");
        break;
      }
      case StmtKind::kSynchronize: {
        const auto* c = s.as<Synchronize>();
        if (modern) emit(ind + "Synchronize(" + c->stream.str() + ")\n");
        else emit(ind + "Synchronize " + c->stream.str() + "\n");
        break;
      }
      case StmtKind::kForLoop: {
        const auto* f = s.as<ForLoop>();
        if (f->domain) emit(ind + "FOR " + f->index + " in " + f->domain->str() + ":\n");
        else emit(ind + "FOR " + f->index + " from " + f->start.str() + " to " + f->stop.str() + ":\n");
        scope(f->body, indent + 1);
        break;
      }
      case StmtKind::kIfThenElse: {
        const auto* b = s.as<IfThenElse>();
        emit(ind + "IF Manual " + b->predicate.str() + ":\n");
        scope(b->thenBody, indent + 1);
        if (!b->elseBody.empty()) {
          emit(ind + "ELSE:\n");
          scope(b->elseBody, indent + 1);
        }
        break;
      }
      case StmtKind::kHostOp: {
        const auto* h = s.as<HostOp>();
        if (h->op) emit(printExprText(*h->op, indent));
        else emit(ind + "<null host op>\n");
        break;
      }
      case StmtKind::kPostOnStream: {
        const auto* p = s.as<PostOnStream>();
        emit(ind + "PostOnStream (HostUnit" + std::to_string(p->hostUnit) + ", Inputs:{" + tensorList(p->inputs) +
             "}, Outputs:{" + tensorList(p->outputs) + "})\n");
        break;
      }
      case StmtKind::kCommunication: {
        const auto* c = s.as<Communication>();
        std::string line = ind + "Communication " + std::to_string(c->id) + " (type=" + communicationTypeName(c->type) +
                           ", team=(";
        for (size_t i = 0; i < c->team.size(); ++i) line += (i ? " " : "") + std::to_string(c->team[i]);
        line += "), ";
        if (c->root) line += "root=" + c->root->str() + ", ";
        // A reducing collective always shows its op (add when unset, as the parser reads it).
        std::optional<ReductionOpType> red = c->redOp;
        if (!red && isReducing(c->type)) red = ReductionOpType::kAdd;
        if (red) line += std::string("red_op=") + reductionOpName(*red) + ", ";
        line += "input=" + tvStr(c->input) + ", output=" + tvStr(c->output) + ", backend=" + commBackendName(c->backend) +
                ")\n";
        emit(line);
        break;
      }
      case StmtKind::kP2PCommunication: {
        const auto* c = s.as<P2PCommunication>();
        emit(ind + "P2PCommunication " + std::to_string(c->id) + " (type=" + (c->type == P2PType::kSend ? "send" : "recv") +
             ", buffer=" + tvStr(c->buffer) + ", peer=" + c->peer.str() + ", backend=" + commBackendName(c->backend) +
             ")\n");
        break;
      }
      case StmtKind::kStartCoalescing: emit(ind + "StartCoalescing\n"); break;
      case StmtKind::kEndCoalescing:
        emit(ind + "EndCoalescing " + std::to_string(s.as<EndCoalescing>()->id) + "\n");
        break;
      case StmtKind::kWait: {
        const auto* w = s.as<Wait>();
        if (modern) emit(ind + "Wait(Communication " + std::to_string(w->id) + ")\n");
        else emit(ind + "Wait Communication " + std::to_string(w->id) + "\n");
        break;
      }
    }
  }

  void hostUnit(int id, const HostUnit& unit) {
    emit("\n");
    const Fusion* f = unit.fusion.get();
    std::vector<TensorView*> none;
    const auto& ins = f ? f->inputs() : none;
    const auto& outs = f ? f->outputs() : none;
    emit("HostUnit" + std::to_string(id) + ": Inputs={" + tensorList(ins) + "} -> Outputs={" + tensorList(outs) +
         "}Inputs:\n");
    for (const TensorView* tv : ins) emit("  " + tvStr(tv) + "\n");
    emit("Outputs:\n");
    for (const TensorView* tv : outs) emit("  " + tvStr(tv) + "\n");
    emit("\n%kernel {\n");
    if (f)
      for (const Expr* e : f->exprs()) emit(printExprText(*e, 0));
    emit("} // %kernel\n");
  }

 private:
  void emit(const std::string& s) {
    out_ += s;
    for (char c : s)
      if (c == '\n') ++line_;
  }

  const PrintOptions& options_;
  const StmtCallback* on_stmt_;
  std::string out_;
  int line_ = 1;
};

}  // namespace

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

std::string printExprText(const Expr& e, int indent) {
  const std::string ind = indentStr(indent);
  const std::string cont = ind + "   ";
  const std::string out = e.outputs().empty() ? "<missing tensor>" : tvStr(e.outputs()[0]);
  const auto& in = e.inputs();
  std::string s = ind + out + "\n" + cont + "= ";
  switch (e.type()) {
    case OpType::kSet:
      s += "Set( " + tvAt(in, 0) + ", cache_op=" + e.cacheOp + " )\n";
      break;
    case OpType::kPermute: {
      s += "Set.Permute( " + tvAt(in, 0) + ", cache_op=" + e.cacheOp;
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
    case OpType::kUnary:
      s += std::string(unaryOpName(e.unaryOp)) + "(" + tvAt(in, 0) + ");\n";
      break;
    case OpType::kBinary:
      s += tvAt(in, 0) + "\n" + cont + binaryOpSymbol(e.binaryOp) + " " + tvAt(in, 1) + ";\n";
      break;
    case OpType::kReduction:
      s += "reduction( " + tvAt(in, 0) + ", op = " + reductionOpName(e.reductionOp) +
           ", initial value = " + e.initValue + ", allreduce = false )\n";
      break;
    case OpType::kBroadcast:
      s += "broadcast( " + tvAt(in, 0) + ", flags = " + flagsStr(e.broadcastFlags) + " )\n";
      break;
    case OpType::kSqueeze:
      s += "squeeze( " + tvAt(in, 0) + ", flags = " + flagsStr(e.squeezeFlags) + " )\n";
      break;
    case OpType::kReshape:
      s += "view( " + tvAt(in, 0) + " )\n";
      break;
    case OpType::kMatmul:
      s += "matmul(" + tvAt(in, 0) + ",\n" + cont + "         " + tvAt(in, 1) + ")\n";
      break;
    case OpType::kLinear:
      s += "linear(" + tvAt(in, 0) + ",\n" + cont + "         " + tvAt(in, 1);
      if (in.size() > 2) s += ",\n" + cont + "         " + tvAt(in, 2);
      s += " )\n";
      break;
  }
  return s;
}

std::string print(const HostProgram& p, const PrintOptions& options) {
  Printer pr(options, nullptr);
  pr.program(p);
  return pr.take();
}

std::string printStmt(const Stmt& s, int indent, const PrintOptions& options) {
  Printer pr(options, nullptr);
  pr.stmt(s, indent);
  return pr.take();
}

void assignPrintedLocations(HostProgram& p, const std::string& file) {
  StmtCallback cb = [&file](const Stmt& s, int line, int col) {
    // The statements belong to `p`, which is not const here.
    const_cast<Stmt&>(s).loc = SourceLoc{file, line, col};
  };
  PrintOptions options;
  Printer pr(options, &cb);
  pr.program(p);
}

}  // namespace braid
