// The event graph of a host program: what the program does on every rank and stream, for given
// bindings. This is the meaning that verify, sim and viz share (DESIGN.md, "The host program's
// meaning"); ir/semantics/interpreter.h builds it, ir/semantics/happens_before.h orders it.
//
// One Event per dynamic device operation: a kernel, a host-evaluated op, a copy, a memset, a
// collective or a coalesced P2P group, plus zero-work markers that carry ordering: the stream
// side of a Synchronize or a Wait, the entry (inputs written on the default stream), the exit
// (the caller's stream reaches the end of the program), and the caching allocator's points: where
// an allocation takes its block and where a freed block may be reused, on the allocation stream.
//
// Streams. Each rank has its default stream, the worker streams the program selects, and one
// stream per communicator it posts on: communications run there, not on the stream that was
// current when they were posted (c10d's ProcessGroupNCCL, the weakest runtime, does so).
//
// Ordering. Every Edge `a -> b` means "a completes before b starts": stream FIFO, Synchronize
// (the waited stream's last event -> the marker), Wait (the communication -> the marker), post (the
// posting stream's last event before the post -> the communication), and per-communicator order
// (a rank's operations on one communicator, in issue order: a timing and deadlock fact, never a
// memory ordering). Rendezvous is a group, not an edge: the members of a CollectiveGroup (one
// collective on every rank of its team, or a matched send/recv pair) all start before any of them
// completes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/host_ir.h"
#include "ir/semantics/finding_kind.h"
#include "ir/semantics/region.h"
#include "ir/semantics/shape_inference.h"

namespace braid::sem {

enum class EventKind {
  kEntry,       // inputs are written on the default stream before the program starts
  kExit,        // the end of the program on the default stream; reads the outputs
  kCompute,     // host-evaluated op (add, sum, matmul, linear, ...) or a PostOnStream kernel
  kCopy,        // Set / Set.Permute into an allocated or aliased output
  kMemset,      // zero_init of an allocation
  kCollective,  // Communication
  kP2P,         // one P2PCommunication, or a StartCoalescing..EndCoalescing group
  kSync,        // Synchronize: the current stream waits for `target` stream's work so far
  kWait,        // Wait: the current stream waits for the communication event `target`
  kFree,        // the caching allocator may reuse `target` buffer on this stream from here on
  kAlloc,       // `target` buffer takes its block here on its allocation stream
};
const char* eventKindName(EventKind k);
// Markers do no device work (sync, wait, free, alloc, entry, exit).
bool isMarker(EventKind k);

enum class EdgeKind { kStream, kSync, kWait, kPost, kCommOrder };
const char* edgeKindName(EdgeKind k);

struct LoopIndex {
  std::string name;
  int64_t value = 0;
  bool operator==(const LoopIndex&) const = default;
};
// "StreamIdx=2, i=0" ("" for none).
std::string loopIndicesStr(const std::vector<LoopIndex>& loops);

struct Access {
  Region region;
  const TensorView* tensor = nullptr;  // the name the statement used (a view or the buffer)
};

// One side of a P2P transfer inside a kP2P event.
struct P2POp {
  P2PType type = P2PType::kSend;
  int64_t peer = 0;
  int64_t bytes = 0;
  int64_t count = 0;  // elements
  DataType dtype = DataType::kFloat;
  CommBackend backend = CommBackend::kNccl;  // sends and receives pair only on one backend
  const Stmt* stmt = nullptr;
};

struct Event {
  int32_t id = 0;
  int32_t rank = 0;
  int32_t stream = 0;     // EventGraph::streams index
  int32_t streamPos = 0;  // position in its stream's FIFO
  int64_t issue = 0;      // host issue index on its rank (statements executed before it)
  EventKind kind = EventKind::kCompute;
  const Stmt* stmt = nullptr;    // nullptr for entry / exit
  std::string op;                // "Set", "matmul", "Allgather", "Synchronize", "kernel HostUnit0", ...
  std::vector<LoopIndex> loops;  // enclosing loop indices, outermost first

  // Cost inputs.
  double flops = 0;
  GemmDims gemm;             // matmul / linear: the GEMM's batch, m, n, k (shape_inference.h)
  int64_t bytesRead = 0;
  int64_t bytesWritten = 0;
  int64_t messageBytes = 0;  // communications: the larger of this rank's send and receive buffer

  std::vector<Access> reads;
  std::vector<Access> writes;

  int32_t target = -1;  // kSync: stream waited on; kWait: communication event; kFree, kAlloc: buffer
  int32_t postedOn = -1;  // communications: the stream that was current when it was posted
  int32_t group = -1;               // kCollective: its CollectiveGroup (-1 when unmatched)
  std::vector<int32_t> pairGroups;  // kP2P: the CollectiveGroups of its matched send/recv pairs

  // kCollective
  const Communication* comm = nullptr;
  int64_t root = -1;
  DataType dtype = DataType::kFloat;
  int64_t inputCount = 0;    // elements this rank sends
  int64_t outputCount = 0;   // elements this rank receives
  std::string communicator;  // "NCCL team (0 1 2 3)"
  // kP2P
  std::vector<P2POp> p2p;

  bool isMarker() const { return braid::sem::isMarker(kind); }
};

struct Edge {
  int32_t from = 0;
  int32_t to = 0;
  EdgeKind kind = EdgeKind::kStream;
};

enum class StreamKind {
  kDefault,       // the caller's stream at entry
  kWorker,        // a stream the program selects (SetCurrentStream)
  kCommunicator,  // the internal stream a communicator runs its operations on, in issue order
};
const char* streamKindName(StreamKind k);  // "default", "worker", "communicator"

struct StreamInfo {
  int32_t id = 0;
  int32_t rank = 0;
  StreamKind kind = StreamKind::kWorker;
  std::string name;             // "default stream", "worker stream 3", "NCCL team (0 1)"
  std::vector<int32_t> events;  // FIFO order (issue order on a communicator)

  bool isDefault() const { return kind == StreamKind::kDefault; }
  bool isCommunicator() const { return kind == StreamKind::kCommunicator; }
};

// Members complete together: each one starts before any of them completes.
struct CollectiveGroup {
  int32_t id = 0;
  bool p2p = false;
  std::string communicator;
  int64_t sequence = 0;          // position among the communicator's collectives (collectives only)
  std::vector<int32_t> members;  // event ids
};

struct BufferInfo {
  int32_t id = 0;
  int32_t rank = 0;
  const TensorView* tensor = nullptr;  // the tensor it was allocated for
  DataType dtype = DataType::kFloat;
  std::vector<int64_t> shape;
  int64_t numel = 0;
  bool isInput = false;  // owned by the caller (inputs, and outputs' storage)
  bool isOutput = false;
  bool zeroInit = false;
  int32_t allocStream = -1;         // stream current at the allocation (caching-allocator semantics)
  int32_t allocEvent = -1;          // kAlloc marker on allocStream (-1 for caller-owned buffers)
  int64_t allocIssue = -1;          // host position of the allocation
  const Stmt* allocStmt = nullptr;  // Allocate, or the op that allocated its output
  std::vector<LoopIndex> allocLoops;
  int32_t freeEvent = -1;          // kFree marker on allocStream, or -1 when alive at exit
  const Stmt* freeStmt = nullptr;  // the Deallocate / Allocate / op whose rebinding freed it
  std::vector<LoopIndex> freeLoops;
};

// Problems the interpreter meets while running a rank's host thread (as opposed to ordering
// problems, which the checker finds on the finished graph), in the one taxonomy of findings.
struct Issue {
  FindingKind kind = FindingKind::kUnboundTensor;
  int32_t rank = 0;
  const Stmt* stmt = nullptr;
  int32_t stream = -1;
  std::vector<LoopIndex> loops;
  std::string message;
  const Stmt* otherStmt = nullptr;  // e.g. the Deallocate, the other rank's collective
  int32_t otherRank = -1;
  int32_t otherStream = -1;  // where the other statement ran (the stream current at a Deallocate)
  std::vector<LoopIndex> otherLoops;
  int32_t event = -1;  // the event concerned, when there is one
  int32_t otherEvent = -1;
};

// One execution of a ForLoop on one rank; iteration k issued events [begin, end).
struct LoopRun {
  int32_t rank = 0;
  const ForLoop* loop = nullptr;
  std::vector<LoopIndex> outer;  // indices of enclosing loops
  struct Iteration {
    int64_t value = 0;
    int32_t begin = 0;
    int32_t end = 0;
  };
  std::vector<Iteration> iterations;
};

// A host-side rendezvous: ShareMemHandles' barrier, which the host threads of every rank reach
// together (nvFuser's Communicator::barrier after the IPC handle exchange). It orders no device
// work: streams keep running; it holds back what each host issues after it, which the simulator
// times.
struct HostRendezvous {
  struct Arrival {
    int32_t rank = 0;
    int64_t issue = 0;  // host issue index on that rank: the statement's position
    const Stmt* stmt = nullptr;
    std::vector<LoopIndex> loops;
  };
  int32_t id = 0;
  std::string what;  // "ShareMemHandles barrier #2"
  std::vector<Arrival> members;
};

struct EventGraph {
  int64_t numRanks = 1;
  int64_t numberOfStreams = 4;
  std::vector<int64_t> ranks;  // the ranks whose host threads ran
  std::vector<Event> events;
  std::vector<Edge> edges;
  std::vector<StreamInfo> streams;
  std::vector<CollectiveGroup> groups;
  std::vector<BufferInfo> buffers;
  std::vector<Issue> issues;
  std::vector<LoopRun> loops;
  std::vector<HostRendezvous> rendezvous;
  std::vector<int32_t> entryEvent;  // per position in `ranks`
  std::vector<int32_t> exitEvent;
  // Ranks whose host thread stopped at a statement that cannot run (an issue such as a view out of
  // bounds): what follows it, and the matching across ranks, would only repeat that one error.
  std::vector<int64_t> haltedRanks;
  bool halted() const { return !haltedRanks.empty(); }

  // A short description of an event for messages: "Set at line 12 (rank 0, Stream 1, StreamIdx=1)".
  std::string describe(int32_t event) const;
  std::string streamName(int32_t stream) const;
};

// Short one-line spelling of a statement for messages: "T3 = Set(T2)", "Synchronize Stream 0",
// "Communication 41 (Allgather)".
std::string stmtSummary(const Stmt& s);

}  // namespace braid::sem
