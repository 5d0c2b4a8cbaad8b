// What the checker reports: one Finding per bug (or warning), with the statements involved
// (source line, rank, stream, loop indices), an explanation in a few lines, and, where ordering
// matters, the chain of ordering facts (or the wait-for cycle).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/error.h"
#include "ir/semantics/event_graph.h"

namespace braid::verify {

enum class FindingKind {
  kRace,                // two accesses on different streams overlap, one writes, nothing orders them
  kMissingJoin,         // work not ordered before the program's exit on the default stream
  kUninitializedRead,   // reads elements that nothing wrote before
  kOutputNotWritten,    // an output is not fully written at exit (coverage)
  kViewOutOfBounds,     // HirAliasSelect / ShardByStream outside its base
  kNonContiguousComm,   // a communication buffer that is not dense row-major (e.g. a permuted view)
  kUseAfterDeallocate,  // a statement uses a tensor after its Deallocate
  kUnsafeReuse,         // memory freed while work on another stream may still touch it
  kUnboundTensor,       // a statement uses a tensor nothing allocated or bound
  kCollectiveMismatch,  // members of a collective disagree, or a rank misses one
  kP2PUnpaired,         // a send / recv without its peer's counterpart
  kWaitWithoutPost,     // Wait on a communication the rank did not post
  kDeadlock,            // a wait-for cycle (stream order, syncs, communicator order, rendezvous)
  kShapeMismatch,       // warning: an op's preallocated output has another size than it produces
  kLostParallelism,     // warning: a stream loop's iterations are serialized by its synchronization
};
enum class Severity { kError, kWarning };

const char* findingKindName(FindingKind k);  // "race", "missing-join", ...
Severity severityOf(FindingKind k);

// One statement instance involved in a finding.
struct Site {
  std::string role;  // "write", "read", "free", "deallocate", "collective", ...
  SourceLoc loc;
  std::string statement;  // one-line summary of the statement
  int64_t rank = -1;
  std::string stream;
  std::vector<sem::LoopIndex> loops;
  std::string detail;  // e.g. "T3 (a view of T1): elements [4, 8)"
  int32_t event = -1;  // the event graph node, when the site is one (viz highlights it)
};

struct Finding {
  FindingKind kind = FindingKind::kRace;
  Severity severity = Severity::kError;
  std::string summary;                   // one line
  std::vector<Site> sites;               // the statements, in the order the summary names them
  std::vector<std::string> explanation;  // a few lines
  std::vector<std::string> chain;        // ordering chain / cycle, one step per line
  int64_t occurrences = 1;               // identical findings at other ranks / iterations
};

}  // namespace braid::verify
