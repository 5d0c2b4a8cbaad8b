#include "ir/host_ir.h"

#include <algorithm>
#include <functional>

namespace braid {

const char* stmtKindName(StmtKind k) {
  switch (k) {
    case StmtKind::kAllocate: return "Allocate";
    case StmtKind::kDeallocate: return "Deallocate";
    case StmtKind::kAliasSelect: return "HirAliasSelect";
    case StmtKind::kShardByStream: return "ShardByStream";
    case StmtKind::kGetCurrentStream: return "GetCurrentStream";
    case StmtKind::kSetCurrentStream: return "SetCurrentStream";
    case StmtKind::kSynchronize: return "Synchronize";
    case StmtKind::kForLoop: return "ForLoop";
    case StmtKind::kIfThenElse: return "IfThenElse";
    case StmtKind::kHostOp: return "HostOp";
    case StmtKind::kPostOnStream: return "PostOnStream";
    case StmtKind::kCommunication: return "Communication";
    case StmtKind::kP2PCommunication: return "P2PCommunication";
    case StmtKind::kStartCoalescing: return "StartCoalescing";
    case StmtKind::kEndCoalescing: return "EndCoalescing";
    case StmtKind::kWait: return "Wait";
    case StmtKind::kLaunchKernel: return "LaunchKernel";
    case StmtKind::kShareMemHandles: return "ShareMemHandles";
    case StmtKind::kCollectivePermute: return "CollectivePermute";
    case StmtKind::kSymmetricContiguousView: return "SymmetricContiguousView";
    case StmtKind::kSelect: return "select";
    case StmtKind::kSlice: return "slice";
    case StmtKind::kScalarAssign: return "ScalarAssign";
  }
  return "?";
}

std::string StreamRef::str() const {
  if (kind == Kind::kNamed) return "Stream " + name;
  // An indexed stream whose key is a constant would print like a named one (`Stream 3`); the
  // parentheses keep it indexed when read back (braid's spelling, see docs/HOSTIR.md).
  if (index.isConst()) return "Stream ( " + index.str() + " )";
  return "Stream " + index.str();
}

bool StreamRef::operator==(const StreamRef& o) const {
  if (kind != o.kind) return false;
  return kind == Kind::kNamed ? name == o.name : index == o.index;
}

const char* communicationTypeName(CommunicationType t) {
  switch (t) {
    case CommunicationType::kAllgather: return "Allgather";
    case CommunicationType::kAllreduce: return "Allreduce";
    case CommunicationType::kReduceScatter: return "ReduceScatter";
    case CommunicationType::kBroadcast: return "Broadcast";
    case CommunicationType::kReduce: return "Reduce";
    case CommunicationType::kScatter: return "Scatter";
    case CommunicationType::kGather: return "Gather";
    case CommunicationType::kSendRecv: return "SendRecv";
    case CommunicationType::kAllToAll: return "AllToAll";
  }
  return "?";
}

std::optional<CommunicationType> parseCommunicationType(const std::string& s) {
  for (CommunicationType t :
       {CommunicationType::kAllgather, CommunicationType::kAllreduce, CommunicationType::kReduceScatter,
        CommunicationType::kBroadcast, CommunicationType::kReduce, CommunicationType::kScatter,
        CommunicationType::kGather, CommunicationType::kSendRecv, CommunicationType::kAllToAll}) {
    if (s == communicationTypeName(t)) return t;
  }
  return std::nullopt;
}

bool isRooted(CommunicationType t) {
  return t == CommunicationType::kBroadcast || t == CommunicationType::kReduce || t == CommunicationType::kScatter ||
         t == CommunicationType::kGather || t == CommunicationType::kSendRecv;
}

bool isReducing(CommunicationType t) {
  return t == CommunicationType::kAllreduce || t == CommunicationType::kReduceScatter ||
         t == CommunicationType::kReduce;
}

const char* commBackendName(CommBackend b) {
  switch (b) {
    case CommBackend::kNccl: return "NCCL";
    case CommBackend::kUcc: return "UCC";
    case CommBackend::kCuda: return "CUDA";
  }
  return "?";
}

std::optional<CommBackend> parseCommBackend(const std::string& s) {
  if (s == "NCCL" || s == "nccl") return CommBackend::kNccl;
  if (s == "UCC" || s == "ucc") return CommBackend::kUcc;
  if (s == "CUDA" || s == "cuda") return CommBackend::kCuda;
  return std::nullopt;
}

Scalar HostProgram::expandIndexDefinitions(const Scalar& s) const {
  if (index_definitions_.empty()) return s;
  std::map<std::string, const Scalar*> defs;
  for (const auto& [name, value] : index_definitions_) defs.emplace(name, &value);
  // Memoized per symbol: a definition is expanded once however often it is used.
  std::map<std::string, Scalar> done;
  std::function<Scalar(const Scalar&)> expand = [&](const Scalar& x) -> Scalar {
    switch (x.op()) {
      case ScalarOp::kConst: return x;
      case ScalarOp::kSymbol: {
        auto it = defs.find(x.name());
        if (it == defs.end()) return x;
        auto memo = done.find(x.name());
        if (memo != done.end()) return memo->second;
        Scalar v = expand(*it->second);
        done.emplace(x.name(), v);
        return v;
      }
      case ScalarOp::kNot: return Scalar::logicalNot(expand(x.lhs()));
      default: return Scalar::binary(x.op(), expand(x.lhs()), expand(x.rhs()));
    }
  };
  return expand(s);
}

std::vector<TensorView*> stmtTensors(const Stmt& s) {
  std::vector<TensorView*> out;
  stmtTensors(s, out);
  return out;
}

void stmtTensors(const Stmt& s, std::vector<TensorView*>& out) {
  auto add = [](std::vector<TensorView*>& v, TensorView* tv) {
    if (tv && std::find(v.begin(), v.end(), tv) == v.end()) v.push_back(tv);
  };
  out.clear();
  switch (s.kind()) {
    case StmtKind::kAllocate: add(out, s.as<Allocate>()->tv); break;
    case StmtKind::kDeallocate: add(out, s.as<Deallocate>()->tv); break;
    case StmtKind::kAliasSelect: add(out, s.as<AliasSelect>()->in); add(out, s.as<AliasSelect>()->out); break;
    case StmtKind::kShardByStream: add(out, s.as<ShardByStream>()->in); add(out, s.as<ShardByStream>()->out); break;
    case StmtKind::kSymmetricContiguousView:
      add(out, s.as<SymmetricContiguousView>()->in);
      add(out, s.as<SymmetricContiguousView>()->out);
      break;
    case StmtKind::kSelect: add(out, s.as<Select>()->in); add(out, s.as<Select>()->out); break;
    case StmtKind::kSlice: add(out, s.as<Slice>()->in); add(out, s.as<Slice>()->out); break;
    case StmtKind::kHostOp:
      if (const Expr* e = s.as<HostOp>()->op) {
        for (TensorView* tv : e->inputs()) add(out, tv);
        for (TensorView* tv : e->outputs()) add(out, tv);
      }
      break;
    case StmtKind::kPostOnStream:
      for (TensorView* tv : s.as<PostOnStream>()->inputs) add(out, tv);
      for (TensorView* tv : s.as<PostOnStream>()->outputs) add(out, tv);
      break;
    case StmtKind::kLaunchKernel:
      for (TensorView* tv : s.as<LaunchKernel>()->inputs) add(out, tv);
      for (TensorView* tv : s.as<LaunchKernel>()->outputs) add(out, tv);
      break;
    case StmtKind::kCommunication: add(out, s.as<Communication>()->input); add(out, s.as<Communication>()->output); break;
    case StmtKind::kCollectivePermute:
      add(out, s.as<CollectivePermute>()->input);
      add(out, s.as<CollectivePermute>()->output);
      break;
    case StmtKind::kP2PCommunication: add(out, s.as<P2PCommunication>()->buffer); break;
    case StmtKind::kShareMemHandles:
      for (const P2PCommunication& c : s.as<ShareMemHandles>()->communications) add(out, c.buffer);
      break;
    case StmtKind::kGetCurrentStream:
    case StmtKind::kSetCurrentStream:
    case StmtKind::kSynchronize:
    case StmtKind::kForLoop:
    case StmtKind::kIfThenElse:
    case StmtKind::kStartCoalescing:
    case StmtKind::kEndCoalescing:
    case StmtKind::kWait:
    case StmtKind::kScalarAssign: break;
  }
}

std::set<int> missingHostUnits(const HostProgram& p) {
  std::set<int> out;
  forEachStmt(p.body(), [&](const Stmt& s, int) {
    if (s.is<PostOnStream>() && !p.hostUnits().count(s.as<PostOnStream>()->hostUnit)) out.insert(s.as<PostOnStream>()->hostUnit);
  });
  return out;
}

bool isWaitable(const Stmt& s, int* id) {
  int v = 0;
  switch (s.kind()) {
    case StmtKind::kCommunication: v = s.as<Communication>()->id; break;
    case StmtKind::kCollectivePermute: v = s.as<CollectivePermute>()->id; break;
    case StmtKind::kP2PCommunication: v = s.as<P2PCommunication>()->id; break;
    case StmtKind::kEndCoalescing: v = s.as<EndCoalescing>()->id; break;
    default: return false;
  }
  if (id) *id = v;
  return true;
}

}  // namespace braid
