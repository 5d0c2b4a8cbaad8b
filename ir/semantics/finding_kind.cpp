#include "ir/semantics/finding_kind.h"

namespace braid::sem {

const char* findingKindName(FindingKind k) {
  switch (k) {
    case FindingKind::kRace:
      return "race";
    case FindingKind::kMissingWait:
      return "missing-wait";
    case FindingKind::kWaitOnWrongStream:
      return "wait-on-wrong-stream";
    case FindingKind::kUnwaitedCommunication:
      return "unwaited-communication";
    case FindingKind::kMissingJoin:
      return "missing-join";
    case FindingKind::kUninitializedRead:
      return "uninitialized-read";
    case FindingKind::kOutputNotWritten:
      return "output-not-written";
    case FindingKind::kUnsafeReuse:
      return "unsafe-reuse";
    case FindingKind::kDeadlock:
      return "deadlock";
    case FindingKind::kViewOutOfBounds:
      return "view-out-of-bounds";
    case FindingKind::kNonContiguousComm:
      return "non-contiguous-communication";
    case FindingKind::kUseAfterDeallocate:
      return "use-after-deallocate";
    case FindingKind::kUnboundTensor:
      return "unbound-tensor";
    case FindingKind::kUnclosedCoalescing:
      return "unclosed-coalescing";
    case FindingKind::kBadRoot:
      return "bad-root";
    case FindingKind::kCommunicationSize:
      return "communication-size";
    case FindingKind::kCollectiveMismatch:
      return "collective-mismatch";
    case FindingKind::kMismatchedStatements:
      return "mismatched-statements";
    case FindingKind::kP2PUnpaired:
      return "p2p-unpaired";
    case FindingKind::kBadPeer:
      return "bad-peer";
    case FindingKind::kHostRendezvousMismatch:
      return "host-rendezvous-mismatch";
    case FindingKind::kWaitWithoutPost:
      return "wait-without-post";
    case FindingKind::kShapeMismatch:
      return "shape-mismatch";
    case FindingKind::kLostParallelism:
      return "lost-parallelism";
    case FindingKind::kOpaqueKernel:
      return "opaque-kernel";
    case FindingKind::kUnprintedDtype:
      return "unprinted-dtype";
    case FindingKind::kCrossRankView:
      return "cross-rank-view";
    case FindingKind::kExecutorAllocated:
      return "executor-allocated";
  }
  return "?";
}

Severity severityOf(FindingKind k) {
  if (k == FindingKind::kOpaqueKernel || k == FindingKind::kUnprintedDtype || k == FindingKind::kCrossRankView ||
      k == FindingKind::kExecutorAllocated)
    return Severity::kNote;
  return k == FindingKind::kLostParallelism || k == FindingKind::kShapeMismatch ? Severity::kWarning : Severity::kError;
}

const char* severityName(Severity s) {
  switch (s) {
    case Severity::kError: return "error";
    case Severity::kWarning: return "warning";
    case Severity::kNote: return "note";
  }
  return "?";
}

const char* findingHeadline(FindingKind k) {
  switch (k) {
    case FindingKind::kRace:
      return "data race";
    case FindingKind::kMissingWait:
      return "communication buffer used without a Wait";
    case FindingKind::kWaitOnWrongStream:
      return "Wait on a stream that does not order the use";
    case FindingKind::kUnwaitedCommunication:
      return "communication never waited before the program returns";
    case FindingKind::kMissingJoin:
      return "work not joined to the default stream before the program returns";
    case FindingKind::kUninitializedRead:
      return "read of memory nothing wrote";
    case FindingKind::kOutputNotWritten:
      return "output not fully written";
    case FindingKind::kUnsafeReuse:
      return "memory reused by the caching allocator while still in use";
    case FindingKind::kDeadlock:
      return "deadlock";
    case FindingKind::kViewOutOfBounds:
      return "view out of bounds of its base";
    case FindingKind::kNonContiguousComm:
      return "non-contiguous buffer passed to a communication";
    case FindingKind::kUseAfterDeallocate:
      return "use after Deallocate";
    case FindingKind::kUnboundTensor:
      return "use of an unbound tensor";
    case FindingKind::kUnclosedCoalescing:
      return "StartCoalescing without EndCoalescing";
    case FindingKind::kBadRoot:
      return "root outside the team";
    case FindingKind::kCommunicationSize:
      return "communication buffer of the wrong size";
    case FindingKind::kCollectiveMismatch:
      return "collective mismatch across ranks";
    case FindingKind::kMismatchedStatements:
      return "operations matched across ranks come from different statements";
    case FindingKind::kP2PUnpaired:
      return "send/recv without a matching peer operation";
    case FindingKind::kBadPeer:
      return "send/recv peer outside its team";
    case FindingKind::kHostRendezvousMismatch:
      return "ranks reach a host-side rendezvous a different number of times";
    case FindingKind::kWaitWithoutPost:
      return "Wait on a communication that was not posted";
    case FindingKind::kShapeMismatch:
      return "size mismatch";
    case FindingKind::kLostParallelism:
      return "stream loop iterations are serialized";
    case FindingKind::kOpaqueKernel:
      return "kernel treated as reading its inputs and writing its outputs whole";
    case FindingKind::kUnprintedDtype:
      return "dtype not printed: sizes assume 4-byte elements";
    case FindingKind::kCrossRankView:
      return "view of other ranks' memory, checked on this rank only";
    case FindingKind::kExecutorAllocated:
      return "communication output allocated by nvFuser's executor before the program";
  }
  return "?";
}

}  // namespace braid::sem
