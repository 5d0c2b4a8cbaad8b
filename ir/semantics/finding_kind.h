// The one taxonomy of what can be wrong with a host program. The interpreter records the problems
// it meets while running a rank's host thread with these kinds, and the checker reports ordering
// problems with the same kinds, so a finding means the same thing wherever it was found.
#pragma once

namespace braid::sem {

enum class FindingKind {
  // Ordering (found on the event graph).
  kRace,                    // two accesses on different streams overlap, one writes, nothing orders them
  kMissingWait,             // a communication's buffer is used before a Wait orders the use after it
  kWaitOnWrongStream,       // ... and the Wait there is on a stream that does not order the use
  kUnwaitedCommunication,   // a communication never waited (or joined) before the program returns
  kMissingJoin,             // work not ordered before the program's exit on the default stream
  kUninitializedRead,       // reads elements that nothing wrote before
  kOutputNotWritten,        // an output is not fully written at exit (coverage)
  kUnsafeReuse,             // a block the caching allocator may reuse is still in use on another stream
  kDeadlock,                // a wait-for cycle (stream order, syncs, communicator order, rendezvous)
  // Found while running a rank's host thread.
  kViewOutOfBounds,         // HirAliasSelect / ShardByStream outside its base
  kNonContiguousComm,       // a communication buffer that is not dense row-major (e.g. a permuted view)
  kUseAfterDeallocate,      // a statement uses a tensor after its Deallocate
  kUnboundTensor,           // a statement uses a tensor nothing allocated or bound
  kUnclosedCoalescing,      // StartCoalescing without EndCoalescing (or nested)
  kBadRoot,                 // a rooted collective whose root is not a member of its team
  kCommunicationSize,       // a communication's buffers break its type's size rule on some rank
  kCollectiveMismatch,      // members of a collective disagree, or a rank misses one
  kMismatchedStatements,    // operations matched across ranks come from different statements
  kP2PUnpaired,             // a send / recv without its peer's counterpart (on the same backend)
  kWaitWithoutPost,         // Wait on a communication the rank did not post
  // Warnings.
  kShapeMismatch,           // an op's preallocated output has another size than it produces
  kLostParallelism,         // a stream loop's iterations are serialized by its synchronization
};
enum class Severity { kError, kWarning };

const char* findingKindName(FindingKind k);  // "race", "missing-wait", ...
Severity severityOf(FindingKind k);
// A one-line headline for a finding of this kind ("data race", "use after Deallocate").
const char* findingHeadline(FindingKind k);

}  // namespace braid::sem
