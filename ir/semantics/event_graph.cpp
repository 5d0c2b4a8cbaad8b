#include "ir/semantics/event_graph.h"

#include <sstream>

namespace braid::sem {

const char* eventKindName(EventKind k) {
  switch (k) {
    case EventKind::kEntry:
      return "entry";
    case EventKind::kExit:
      return "exit";
    case EventKind::kCompute:
      return "compute";
    case EventKind::kCopy:
      return "copy";
    case EventKind::kMemset:
      return "memset";
    case EventKind::kCollective:
      return "collective";
    case EventKind::kP2P:
      return "p2p";
    case EventKind::kSync:
      return "sync";
    case EventKind::kWait:
      return "wait";
    case EventKind::kFree:
      return "free";
    case EventKind::kAlloc:
      return "alloc";
  }
  return "?";
}

bool isMarker(EventKind k) {
  return k == EventKind::kEntry || k == EventKind::kExit || k == EventKind::kSync || k == EventKind::kWait ||
         k == EventKind::kFree || k == EventKind::kAlloc;
}

const char* edgeKindName(EdgeKind k) {
  switch (k) {
    case EdgeKind::kStream:
      return "stream order";
    case EdgeKind::kSync:
      return "Synchronize";
    case EdgeKind::kWait:
      return "Wait";
    case EdgeKind::kPost:
      return "post";
    case EdgeKind::kCommOrder:
      return "communicator order";
  }
  return "?";
}

const char* streamKindName(StreamKind k) {
  switch (k) {
    case StreamKind::kDefault:
      return "default";
    case StreamKind::kWorker:
      return "worker";
    case StreamKind::kCommunicator:
      return "communicator";
  }
  return "?";
}

std::string loopIndicesStr(const std::vector<LoopIndex>& loops) {
  std::string s;
  for (const auto& l : loops) s += (s.empty() ? "" : ", ") + l.name + "=" + std::to_string(l.value);
  return s;
}

std::string EventGraph::streamName(int32_t stream) const {
  if (stream < 0 || static_cast<size_t>(stream) >= streams.size()) return "?";
  return streams[static_cast<size_t>(stream)].name;
}

std::string EventGraph::describe(int32_t id) const {
  const Event& e = events.at(static_cast<size_t>(id));
  std::ostringstream os;
  os << (e.stmt ? stmtSummary(*e.stmt) : e.op);
  if (e.stmt && e.stmt->loc.known()) os << " at line " << e.stmt->loc.line;
  os << " (rank " << e.rank << ", " << streamName(e.stream);
  if (!e.loops.empty()) os << ", " << loopIndicesStr(e.loops);
  os << ")";
  return os.str();
}

namespace {
std::string tvName(const TensorView* tv) {
  return tv ? tv->nameStr() : "?";
}
}  // namespace

std::string stmtSummary(const Stmt& s) {
  std::ostringstream os;
  switch (s.kind()) {
    case StmtKind::kAllocate:
      os << tvName(s.as<Allocate>()->tv) << " = ALLOCATE";
      break;
    case StmtKind::kDeallocate:
      os << "Deallocate " << tvName(s.as<Deallocate>()->tv);
      break;
    case StmtKind::kAliasSelect: {
      const auto* a = s.as<AliasSelect>();
      os << tvName(a->out) << " = HirAliasSelect(" << tvName(a->in) << ", index = " << a->index.str() << ")";
      break;
    }
    case StmtKind::kShardByStream: {
      const auto* a = s.as<ShardByStream>();
      os << tvName(a->out) << " = ShardByStream(" << tvName(a->in) << ", stream_index = " << a->streamIndex.str()
         << ")";
      break;
    }
    case StmtKind::kGetCurrentStream:
      os << "GetCurrentStream into " << s.as<GetCurrentStream>()->stream.str();
      break;
    case StmtKind::kSetCurrentStream:
      os << "SetCurrentStream to " << s.as<SetCurrentStream>()->stream.str();
      break;
    case StmtKind::kSynchronize:
      os << "Synchronize " << s.as<Synchronize>()->stream.str();
      break;
    case StmtKind::kForLoop:
      os << "FOR " << s.as<ForLoop>()->index;
      break;
    case StmtKind::kIfThenElse:
      os << "IF " << s.as<IfThenElse>()->predicate.str();
      break;
    case StmtKind::kHostOp: {
      const Expr* e = s.as<HostOp>()->op;
      if (!e) {
        os << "host op";
        break;
      }
      for (size_t i = 0; i < e->outputs().size(); ++i) os << (i ? ", " : "") << tvName(e->output(i));
      if (e->type() == OpType::kBinary && e->inputs().size() == 2) {
        os << " = " << tvName(e->input(0)) << " " << binaryOpSymbol(e->binaryOp) << " " << tvName(e->input(1));
        break;
      }
      os << " = ";
      if (e->type() == OpType::kUnary) {
        os << unaryOpName(e->unaryOp);
      } else if (e->type() == OpType::kReduction) {
        os << "reduction[" << reductionOpName(e->reductionOp) << "]";
      } else if (e->type() == OpType::kPermute) {
        os << "Set.Permute";
      } else if (e->type() == OpType::kSet) {
        os << "Set";
      } else {
        os << opTypeName(e->type());
      }
      os << "(";
      for (size_t i = 0; i < e->inputs().size(); ++i) os << (i ? ", " : "") << tvName(e->input(i));
      os << ")";
      break;
    }
    case StmtKind::kPostOnStream: {
      const auto* k = s.as<PostOnStream>();
      os << "PostOnStream HostUnit" << k->hostUnit << " (";
      for (size_t i = 0; i < k->inputs.size(); ++i) os << (i ? ", " : "") << tvName(k->inputs[i]);
      os << " -> ";
      for (size_t i = 0; i < k->outputs.size(); ++i) os << (i ? ", " : "") << tvName(k->outputs[i]);
      os << ")";
      break;
    }
    case StmtKind::kCommunication: {
      const auto* c = s.as<Communication>();
      os << "Communication " << c->id << " (" << communicationTypeName(c->type) << ", " << tvName(c->input) << " -> "
         << tvName(c->output) << ")";
      break;
    }
    case StmtKind::kP2PCommunication: {
      const auto* c = s.as<P2PCommunication>();
      os << "P2PCommunication " << c->id << " (" << (c->type == P2PType::kSend ? "send " : "recv ") << tvName(c->buffer)
         << ", peer " << c->peer.str() << ")";
      break;
    }
    case StmtKind::kStartCoalescing:
      os << "StartCoalescing";
      break;
    case StmtKind::kEndCoalescing:
      os << "EndCoalescing " << s.as<EndCoalescing>()->id;
      break;
    case StmtKind::kWait:
      os << "Wait Communication " << s.as<Wait>()->id;
      break;
  }
  return os.str();
}

}  // namespace braid::sem
