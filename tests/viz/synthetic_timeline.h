// Timelines made up for the viz tests: the shape of a pipelined allgather + matmul on every rank
// (a communicator stream feeding worker streams, with Synchronize, Wait and post orderings), at
// any size. The big one (8 ranks x 8 streams x hundreds of ops) is generated here rather than
// committed as a data file.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>

#include "ir/timeline.h"

namespace braid::testing {

struct SyntheticSpec {
  int64_t ranks = 8;
  int streams = 8;        // worker streams per rank
  int iterations = 32;    // pipeline steps, round-robin over the worker streams
  int smallOps = 6;       // short elementwise ops after each matmul (they make dense runs)
  double commUs = 14;     // one chunk's allgather
  double matmulUs = 20;
  double smallUs = 0.4;
  bool serialized = false;  // protocol-C-like: every step waits for the previous one's matmul
  // Ranks >= skewFrom start every op later by skewUs * (rank - skewFrom + 1): not identical.
  int64_t skewFrom = 4;
  double skewUs = 3;
};

inline Timeline syntheticTimeline(const SyntheticSpec& s) {
  Timeline t;
  t.program = "synthetic ag_matmul";
  t.machine = "made up";
  t.ranks = s.ranks;
  t.meta["streams"] = std::to_string(s.streams);
  auto addOp = [&](int64_t rank, int32_t stream, TimelineOpKind kind, const std::string& name, int it, double start,
                   double dur) {
    TimelineOp op;
    op.id = static_cast<int32_t>(t.ops.size());
    op.rank = rank;
    op.stream = stream;
    op.kind = kind;
    op.name = name;
    op.line = 10;
    op.iteration = "i=" + std::to_string(it);
    op.startUs = start;
    op.endUs = start + dur;
    op.bytes = kind == TimelineOpKind::kCommunication ? 1 << 24 : 0;
    op.flops = kind == TimelineOpKind::kCompute ? 1e9 : 0;
    t.ops.push_back(op);
    return op.id;
  };
  for (int64_t r = 0; r < s.ranks; ++r) {
    double skew = r >= s.skewFrom ? s.skewUs * static_cast<double>(r - s.skewFrom + 1) : 0;
    int32_t base = static_cast<int32_t>(t.streams.size());
    t.streams.push_back({base, r, TimelineStreamKind::kDefault, "default stream"});
    for (int w = 0; w < s.streams; ++w)
      t.streams.push_back({base + 1 + w, r, TimelineStreamKind::kWorker, "Stream " + std::to_string(w)});
    int32_t comm = base + 1 + s.streams;
    t.streams.push_back({comm, r, TimelineStreamKind::kCommunicator, "NCCL team (0..7)"});
    std::vector<double> streamFree(static_cast<size_t>(s.streams), skew);
    std::vector<int32_t> lastOnStream(static_cast<size_t>(s.streams), -1);
    double commFree = skew;
    double prevMatmulEnd = skew;
    for (int i = 0; i < s.iterations; ++i) {
      int w = i % s.streams;
      int32_t ws = base + 1 + w;
      double commStart = s.serialized ? std::max(commFree, prevMatmulEnd) : commFree;
      int32_t c = addOp(r, comm, TimelineOpKind::kCommunication, "Allgather", i, commStart, s.commUs);
      if (lastOnStream[static_cast<size_t>(w)] >= 0)
        t.edges.push_back({lastOnStream[static_cast<size_t>(w)], c, TimelineEdgeKind::kPost});
      commFree = commStart + s.commUs;
      double at = std::max(streamFree[static_cast<size_t>(w)], commFree);
      int32_t wait = addOp(r, ws, TimelineOpKind::kWait, "Wait Allgather", i, at, 0);
      t.edges.push_back({c, wait, TimelineEdgeKind::kWait});
      int32_t mm = addOp(r, ws, TimelineOpKind::kCompute, "matmul", i, at, s.matmulUs);
      at += s.matmulUs;
      prevMatmulEnd = at;
      int32_t last = mm;
      for (int k = 0; k < s.smallOps; ++k) {
        last = addOp(r, ws, TimelineOpKind::kCompute, k % 2 ? "add" : "gelu", i, at, s.smallUs);
        at += s.smallUs;
      }
      streamFree[static_cast<size_t>(w)] = at;
      lastOnStream[static_cast<size_t>(w)] = last;
      int32_t sync = addOp(r, base, TimelineOpKind::kSync, "Synchronize Stream " + std::to_string(w), i, at, 0);
      t.edges.push_back({last, sync, TimelineEdgeKind::kSync});
    }
  }
  return t;
}

}  // namespace braid::testing
