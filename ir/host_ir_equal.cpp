// Structural equality of host programs: what print() writes must be what compares. Tensors are
// compared by their printed identity (name, dtype, memory type, loop domain with IterDomain ids,
// mesh), statements field by field, recursively; source locations are ignored.
#include <algorithm>
#include <sstream>

#include "ir/host_ir_text.h"

namespace braid {

namespace {

class Comparer {
 public:
  bool program(const HostProgram& a, const HostProgram& b) {
    if (!tensorLists(a.inputs(), b.inputs(), "program inputs")) return false;
    if (!tensorLists(a.outputs(), b.outputs(), "program outputs")) return false;
    if (!scalarOperands(a.scalarInputs(), b.scalarInputs(), "program scalar inputs")) return false;
    if (!scalarOperands(a.scalarOutputs(), b.scalarOutputs(), "program scalar outputs")) return false;
    if (a.indexDefinitions().size() != b.indexDefinitions().size())
      return fail("number of index definitions differs: " + std::to_string(a.indexDefinitions().size()) + " vs " +
                  std::to_string(b.indexDefinitions().size()));
    for (size_t i = 0; i < a.indexDefinitions().size(); ++i) {
      const auto& [an, av] = a.indexDefinitions()[i];
      const auto& [bn, bv] = b.indexDefinitions()[i];
      if (an != bn) return fail("index definition " + std::to_string(i) + ": " + an + " vs " + bn);
      if (!scalar(av, bv, "index definition of " + an)) return false;
    }
    if (a.aliases().size() != b.aliases().size())
      return fail("number of aliases differs: " + std::to_string(a.aliases().size()) + " vs " +
                  std::to_string(b.aliases().size()));
    for (size_t i = 0; i < a.aliases().size(); ++i) {
      const auto& [ao, ai] = a.aliases()[i];
      const auto& [bo, bi] = b.aliases()[i];
      if (!tensor(ao, bo, "alias " + std::to_string(i) + " output") || !tensor(ai, bi, "alias " + std::to_string(i) + " input"))
        return false;
    }
    if (!scope(a.body(), b.body(), "body")) return false;
    if (a.hostUnits().size() != b.hostUnits().size())
      return fail("number of HostUnits differs: " + std::to_string(a.hostUnits().size()) + " vs " +
                  std::to_string(b.hostUnits().size()));
    auto ia = a.hostUnits().begin();
    auto ib = b.hostUnits().begin();
    for (; ia != a.hostUnits().end(); ++ia, ++ib) {
      std::string where = "HostUnit" + std::to_string(ia->first);
      if (ia->first != ib->first) return fail("HostUnit ids differ: " + std::to_string(ia->first) + " vs " + std::to_string(ib->first));
      const Fusion* fa = ia->second.fusion.get();
      const Fusion* fb = ib->second.fusion.get();
      if (!fa || !fb) {
        if (fa != fb) return fail(where + ": one has no fusion");
        continue;
      }
      if (!tensorLists(fa->inputs(), fb->inputs(), where + " inputs")) return false;
      if (!tensorLists(fa->outputs(), fb->outputs(), where + " outputs")) return false;
      if (!scalarOperands(ia->second.scalarInputs, ib->second.scalarInputs, where + " scalar inputs")) return false;
      if (ia->second.body != ib->second.body) return fail(where + ": kernel body differs (modelled, text or elided)");
      if (ia->second.bodyText != ib->second.bodyText) return fail(where + ": kernel text differs");
      auto ea = fa->exprs();
      auto eb = fb->exprs();
      if (ea.size() != eb.size())
        return fail(where + ": number of ops differs: " + std::to_string(ea.size()) + " vs " + std::to_string(eb.size()));
      for (size_t i = 0; i < ea.size(); ++i)
        if (!expr(ea[i], eb[i], where + " op " + std::to_string(i))) return false;
    }
    return true;
  }

  std::string why;

 private:
  bool fail(const std::string& s) {
    why = s;
    return false;
  }

  // A tensor's printed identity (a dtype the file did not print is left out of it).
  static std::string tvKey(const TensorView* tv) { return tv ? tv->str() : "<null>"; }

  bool tensor(const TensorView* a, const TensorView* b, const std::string& where) {
    std::string ka = tvKey(a), kb = tvKey(b);
    if (ka != kb) return fail(where + ": tensor " + ka + " vs " + kb);
    return true;
  }

  bool scalarOperands(const std::vector<ScalarOperand>& a, const std::vector<ScalarOperand>& b, const std::string& where) {
    if (a.size() != b.size())
      return fail(where + ": " + std::to_string(a.size()) + " vs " + std::to_string(b.size()) + " scalars");
    for (size_t i = 0; i < a.size(); ++i) {
      if (a[i].position != b[i].position) return fail(where + " [" + std::to_string(i) + "]: position differs");
      if (!scalar(a[i].value, b[i].value, where + " [" + std::to_string(i) + "]")) return false;
    }
    return true;
  }

  template <StmtKind K>
  bool select(const SelectStmt<K>& a, const SelectStmt<K>& b, const std::string& where) {
    std::string ax = a.axis ? a.axis->str() : "<null>";
    std::string bx = b.axis ? b.axis->str() : "<null>";
    if (ax != bx) return fail(where + ": axis " + ax + " vs " + bx);
    return tensor(a.out, b.out, where + " output") && tensor(a.in, b.in, where + " input") &&
           scalar(a.index, b.index, where + " index");
  }

  bool p2p(const P2PCommunication* a, const P2PCommunication* b, const std::string& where) {
    return same(a->id, b->id, where, "id") && same(a->type, b->type, where, "type") &&
           same(a->backend, b->backend, where, "backend") && tensor(a->buffer, b->buffer, where + " buffer") &&
           scalar(a->peer, b->peer, where + " peer");
  }

  bool tensorLists(const std::vector<TensorView*>& a, const std::vector<TensorView*>& b, const std::string& where) {
    if (a.size() != b.size())
      return fail(where + ": " + std::to_string(a.size()) + " vs " + std::to_string(b.size()) + " tensors");
    for (size_t i = 0; i < a.size(); ++i)
      if (!tensor(a[i], b[i], where + " [" + std::to_string(i) + "]")) return false;
    return true;
  }

  bool scalar(const Scalar& a, const Scalar& b, const std::string& where) {
    if (!(a == b)) return fail(where + ": " + a.str() + " vs " + b.str());
    return true;
  }

  bool stream(const StreamRef& a, const StreamRef& b, const std::string& where) {
    if (!(a == b)) return fail(where + ": " + a.str() + " vs " + b.str());
    return true;
  }

  template <class T>
  bool same(const T& a, const T& b, const std::string& where, const std::string& what) {
    if (!(a == b)) return fail(where + ": " + what + " differs");
    return true;
  }

  bool expr(const Expr* a, const Expr* b, const std::string& where) {
    if (!a || !b) return a == b ? true : fail(where + ": one op is missing");
    if (a->type() != b->type())
      return fail(where + ": op " + opTypeName(a->type()) + " vs " + opTypeName(b->type()));
    if (!tensorLists(a->inputs(), b->inputs(), where + " inputs")) return false;
    if (!tensorLists(a->outputs(), b->outputs(), where + " outputs")) return false;
    switch (a->type()) {
      case OpType::kSet:
        return same(a->cacheOp, b->cacheOp, where, "cache_op") &&
               same(a->segmenterSet, b->segmenterSet, where, "Set / SegmenterSet");
      case OpType::kPermute:
        return same(a->cacheOp, b->cacheOp, where, "cache_op") && same(a->permutation, b->permutation, where, "permutation");
      case OpType::kUnary: return same(a->unaryOp, b->unaryOp, where, "unary op");
      case OpType::kBinary: return same(a->binaryOp, b->binaryOp, where, "binary op");
      case OpType::kReduction:
        return same(a->reductionOp, b->reductionOp, where, "reduction op") &&
               same(a->initValue, b->initValue, where, "initial value");
      case OpType::kBroadcast: return same(a->broadcastFlags, b->broadcastFlags, where, "broadcast flags");
      case OpType::kSqueeze: return same(a->squeezeFlags, b->squeezeFlags, where, "squeeze flags");
      default: return true;
    }
  }

  bool scope(const Scope& a, const Scope& b, const std::string& where) {
    if (a.size() != b.size())
      return fail(where + ": " + std::to_string(a.size()) + " vs " + std::to_string(b.size()) + " statements");
    for (size_t i = 0; i < a.size(); ++i)
      if (!stmt(*a[i], *b[i], where + "[" + std::to_string(i) + "]")) return false;
    return true;
  }

  bool stmt(const Stmt& sa, const Stmt& sb, const std::string& path) {
    std::string where = path + " (" + stmtKindName(sa.kind()) + (sa.loc.known() ? " at " + sa.loc.str() : "") + ")";
    if (sa.kind() != sb.kind()) return fail(where + ": statement kind " + stmtKindName(sa.kind()) + " vs " + stmtKindName(sb.kind()));
    switch (sa.kind()) {
      case StmtKind::kAllocate: {
        const auto* a = sa.as<Allocate>();
        const auto* b = sb.as<Allocate>();
        if (!tensor(a->tv, b->tv, where)) return false;
        if (!same(a->memType, b->memType, where, "mem_type") || !same(a->legacy, b->legacy, where, "ALLOCATE form") ||
            !same(a->zeroInit, b->zeroInit, where, "zero_init"))
          return false;
        if (a->legacy) {
          if (!same(a->resetsToZero, b->resetsToZero, where, "resets_to_zero")) return false;
          if (a->size.has_value() != b->size.has_value()) return fail(where + ": size present in one only");
          if (a->size && !scalar(*a->size, *b->size, where + " size")) return false;
        }
        return true;
      }
      case StmtKind::kDeallocate: return tensor(sa.as<Deallocate>()->tv, sb.as<Deallocate>()->tv, where);
      case StmtKind::kAliasSelect: return select(*sa.as<AliasSelect>(), *sb.as<AliasSelect>(), where);
      case StmtKind::kShardByStream: {
        const auto* a = sa.as<ShardByStream>();
        const auto* b = sb.as<ShardByStream>();
        return tensor(a->out, b->out, where + " output") && tensor(a->in, b->in, where + " input") &&
               scalar(a->streamIndex, b->streamIndex, where + " stream_index");
      }
      case StmtKind::kGetCurrentStream:
        return stream(sa.as<GetCurrentStream>()->stream, sb.as<GetCurrentStream>()->stream, where);
      case StmtKind::kSetCurrentStream:
        return stream(sa.as<SetCurrentStream>()->stream, sb.as<SetCurrentStream>()->stream, where);
      case StmtKind::kSynchronize: return stream(sa.as<Synchronize>()->stream, sb.as<Synchronize>()->stream, where);
      case StmtKind::kForLoop: {
        const auto* a = sa.as<ForLoop>();
        const auto* b = sb.as<ForLoop>();
        if (a->index != b->index) return fail(where + ": loop index " + a->index + " vs " + b->index);
        if ((a->domain == nullptr) != (b->domain == nullptr)) return fail(where + ": loop form differs");
        if (a->domain) {
          if (a->domain->str() != b->domain->str())
            return fail(where + ": loop domain " + a->domain->str() + " vs " + b->domain->str());
        } else if (!scalar(a->start, b->start, where + " start") || !scalar(a->stop, b->stop, where + " stop")) {
          return false;
        }
        return scope(a->body, b->body, path + ".body");
      }
      case StmtKind::kIfThenElse: {
        const auto* a = sa.as<IfThenElse>();
        const auto* b = sb.as<IfThenElse>();
        return scalar(a->predicate, b->predicate, where + " predicate") && scope(a->thenBody, b->thenBody, path + ".then") &&
               scope(a->elseBody, b->elseBody, path + ".else");
      }
      case StmtKind::kHostOp: return expr(sa.as<HostOp>()->op, sb.as<HostOp>()->op, where);
      case StmtKind::kPostOnStream: {
        const auto* a = sa.as<PostOnStream>();
        const auto* b = sb.as<PostOnStream>();
        return same(a->hostUnit, b->hostUnit, where, "HostUnit") && tensorLists(a->inputs, b->inputs, where + " inputs") &&
               tensorLists(a->outputs, b->outputs, where + " outputs") &&
               scalarOperands(a->scalarInputs, b->scalarInputs, where + " scalar inputs");
      }
      case StmtKind::kCommunication: {
        const auto* a = sa.as<Communication>();
        const auto* b = sb.as<Communication>();
        if (!same(a->id, b->id, where, "id") || !same(a->type, b->type, where, "type") ||
            !same(a->team, b->team, where, "team") || !same(a->backend, b->backend, where, "backend"))
          return false;
        // An absent red_op of a reducing collective means add (nvFuser's dumps omit it).
        auto red = [](const Communication* c) {
          return isReducing(c->type) && !c->redOp ? std::optional<ReductionOpType>(ReductionOpType::kAdd) : c->redOp;
        };
        if (!same(red(a), red(b), where, "red_op")) return false;
        if (a->root.has_value() != b->root.has_value()) return fail(where + ": root present in one only");
        if (a->root && !scalar(*a->root, *b->root, where + " root")) return false;
        return tensor(a->input, b->input, where + " input") && tensor(a->output, b->output, where + " output");
      }
      case StmtKind::kP2PCommunication: return p2p(sa.as<P2PCommunication>(), sb.as<P2PCommunication>(), where);
      case StmtKind::kShareMemHandles: {
        const auto& a = sa.as<ShareMemHandles>()->communications;
        const auto& b = sb.as<ShareMemHandles>()->communications;
        if (a.size() != b.size()) return fail(where + ": number of communications differs");
        for (size_t i = 0; i < a.size(); ++i)
          if (!p2p(&a[i], &b[i], where + " [" + std::to_string(i) + "]")) return false;
        return true;
      }
      case StmtKind::kCollectivePermute: {
        const auto* a = sa.as<CollectivePermute>();
        const auto* b = sb.as<CollectivePermute>();
        return same(a->id, b->id, where, "id") && same(a->team, b->team, where, "team") &&
               same(a->backend, b->backend, where, "backend") && scalar(a->sendPeer, b->sendPeer, where + " send_peer") &&
               scalar(a->recvPeer, b->recvPeer, where + " recv_peer") && tensor(a->input, b->input, where + " input") &&
               tensor(a->output, b->output, where + " output");
      }
      case StmtKind::kLaunchKernel: {
        const auto* a = sa.as<LaunchKernel>();
        const auto* b = sb.as<LaunchKernel>();
        return same(a->groupId, b->groupId, where, "group id") && tensorLists(a->inputs, b->inputs, where + " inputs") &&
               tensorLists(a->outputs, b->outputs, where + " outputs") &&
               scalarOperands(a->scalarInputs, b->scalarInputs, where + " scalar inputs");
      }
      case StmtKind::kSymmetricContiguousView: {
        const auto* a = sa.as<SymmetricContiguousView>();
        const auto* b = sb.as<SymmetricContiguousView>();
        return tensor(a->out, b->out, where + " output") && tensor(a->in, b->in, where + " input");
      }
      case StmtKind::kSelect: return select(*sa.as<Select>(), *sb.as<Select>(), where);
      case StmtKind::kSlice: {
        const auto* a = sa.as<Slice>();
        const auto* b = sb.as<Slice>();
        if (a->ranges.size() != b->ranges.size()) return fail(where + ": number of slice ranges differs");
        for (size_t i = 0; i < a->ranges.size(); ++i) {
          std::string w = where + " range " + std::to_string(i);
          if (!scalar(a->ranges[i].start, b->ranges[i].start, w + " start") ||
              !scalar(a->ranges[i].stop, b->ranges[i].stop, w + " stop") ||
              !scalar(a->ranges[i].step, b->ranges[i].step, w + " step"))
            return false;
        }
        return tensor(a->out, b->out, where + " output") && tensor(a->in, b->in, where + " input");
      }
      case StmtKind::kScalarAssign: {
        const auto* a = sa.as<ScalarAssign>();
        const auto* b = sb.as<ScalarAssign>();
        if (a->name != b->name) return fail(where + ": scalar " + a->name + " vs " + b->name);
        return scalar(a->value, b->value, where + " value");
      }
      case StmtKind::kStartCoalescing: return true;
      case StmtKind::kEndCoalescing: return same(sa.as<EndCoalescing>()->id, sb.as<EndCoalescing>()->id, where, "id");
      case StmtKind::kWait: return same(sa.as<Wait>()->id, sb.as<Wait>()->id, where, "id");
    }
    return true;
  }
};

}  // namespace

bool structurallyEqual(const HostProgram& a, const HostProgram& b, std::string* why) {
  Comparer c;
  bool eq = c.program(a, b);
  if (!eq && why) *why = c.why;
  return eq;
}

}  // namespace braid
