// Timeline: when each operation of a host program ran (measured by exec) or will run (predicted
// by sim), on every rank and stream. One schema for both, so viz draws them side by side and
// validate compares them op by op. It lives in ir/ because sim and exec both produce it and
// neither may depend on the other (DESIGN.md, "Layout"). docs/TIMELINE.md documents the JSON.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace braid {

enum class TimelineStreamKind { kDefault, kWorker, kCommunicator };
const char* timelineStreamKindName(TimelineStreamKind k);  // "default", "worker", "communicator"

// What an operation does, for colouring and for the overlap arithmetic.
enum class TimelineOpKind {
  kCompute,        // kernels and host-evaluated ops (matmul, linear, add, ...)
  kCommunication,  // collectives and P2P transfers
  kCopy,           // Set / Set.Permute copies
  kMemset,         // zero-fill of an allocation
  kSync,           // Synchronize: a stream waits for another (zero or small duration)
  kWait,           // Wait: a stream waits for a communication
  kHost,           // host-side work shown on its own lane (issue cost), if a producer records it
};
const char* timelineOpKindName(TimelineOpKind k);  // "compute", "communication", ...

enum class TimelineEdgeKind { kSync, kWait, kPost, kRendezvous };
const char* timelineEdgeKindName(TimelineEdgeKind k);  // "sync", "wait", "post", "rendezvous"

struct TimelineStream {
  int32_t id = 0;
  int64_t rank = 0;
  TimelineStreamKind kind = TimelineStreamKind::kWorker;
  std::string name;  // "default stream", "Stream 3", "NCCL team (0 1 2 3)"
};

struct TimelineOp {
  int32_t id = 0;
  int64_t rank = 0;
  int32_t stream = 0;  // TimelineStream::id
  TimelineOpKind kind = TimelineOpKind::kCompute;
  std::string name;       // "matmul", "Allgather", "Wait Communication 3"
  int line = 0;           // the statement's line in the host program, 0 when unknown
  std::string iteration;  // loop indices, "StreamIdx=2" ("" outside loops)
  double startUs = 0;
  double endUs = 0;
  int64_t bytes = 0;  // bytes moved (communication: the larger of sent and received)
  double flops = 0;

  double durationUs() const { return endUs - startUs; }
};

// An ordering between two ops, drawn as an arrow: `from` had to complete before `to` started.
struct TimelineEdge {
  int32_t from = 0;
  int32_t to = 0;
  TimelineEdgeKind kind = TimelineEdgeKind::kSync;
};

struct Timeline {
  std::string source = "predicted";  // "predicted" (sim) or "measured" (exec)
  std::string program;               // the program's name or file
  std::string machine;               // machine model or GPU name
  int64_t ranks = 0;
  std::vector<TimelineStream> streams;
  std::vector<TimelineOp> ops;
  std::vector<TimelineEdge> edges;
  std::map<std::string, std::string> meta;  // free-form facts: protocol, streams, date, ...

  // Latest end over all ops, 0 when there are none.
  double makespanUs() const;
};

// JSON (docs/TIMELINE.md). Writing then reading gives an equal timeline.
std::string timelineToJson(const Timeline& t, int indent = 1);
// Throws Error naming the file and the field ("t.json: ops[3].start_us: expected a number") on a
// malformed document, a dangling stream or op reference, or an op that ends before it starts.
Timeline timelineFromJson(const std::string& text, const std::string& file = "<timeline>");
Timeline readTimelineFile(const std::string& path);
void writeTimelineFile(const Timeline& t, const std::string& path);

}  // namespace braid
