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
    case FindingKind::kWaitWithoutPost:
      return "wait-without-post";
    case FindingKind::kShapeMismatch:
      return "shape-mismatch";
    case FindingKind::kLostParallelism:
      return "lost-parallelism";
  }
  return "?";
}

Severity severityOf(FindingKind k) {
  return k == FindingKind::kLostParallelism || k == FindingKind::kShapeMismatch ? Severity::kWarning : Severity::kError;
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
    case FindingKind::kWaitWithoutPost:
      return "Wait on a communication that was not posted";
    case FindingKind::kShapeMismatch:
      return "size mismatch";
    case FindingKind::kLostParallelism:
      return "stream loop iterations are serialized";
  }
  return "?";
}

}  // namespace braid::sem
