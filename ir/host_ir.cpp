#include "ir/host_ir.h"

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

}  // namespace braid
