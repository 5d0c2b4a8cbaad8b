// A test-only stand-in for the simulator: turns an event graph into a plausible timeline with a
// list schedule (each op starts when its predecessors are done; a collective's members start
// together; durations from flops and bytes at fixed rates). Not a cost model and not a product
// feature: it gives the viz tests timelines of real programs before sim exists.
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "ir/semantics/event_graph.h"
#include "ir/timeline.h"

namespace braid::testing {

inline TimelineOpKind timelineKindOf(sem::EventKind k) {
  switch (k) {
    case sem::EventKind::kCompute:
      return TimelineOpKind::kCompute;
    case sem::EventKind::kCopy:
      return TimelineOpKind::kCopy;
    case sem::EventKind::kMemset:
      return TimelineOpKind::kMemset;
    case sem::EventKind::kCollective:
    case sem::EventKind::kP2P:
      return TimelineOpKind::kCommunication;
    case sem::EventKind::kSync:
      return TimelineOpKind::kSync;
    default:
      return TimelineOpKind::kWait;
  }
}

// Durations: 3 us launch + flops at 400 TFLOP/s + bytes at 3 TB/s; communication 8 us + message
// bytes at `linkGBs` GB/s.
inline double plausibleDurationUs(const sem::Event& e, double linkGBs) {
  switch (e.kind) {
    case sem::EventKind::kCollective:
    case sem::EventKind::kP2P:
      return 8 + static_cast<double>(e.messageBytes) / (linkGBs * 1e3);
    case sem::EventKind::kCompute:
    case sem::EventKind::kCopy:
    case sem::EventKind::kMemset:
      return 3 + e.flops / 400e6 + static_cast<double>(e.bytesRead + e.bytesWritten) / 3e6;
    default:
      return 0;
  }
}

inline Timeline timelineFromGraph(const sem::EventGraph& g, const std::string& program, double linkGBs = 100) {
  const size_t n = g.events.size();
  std::vector<std::vector<int32_t>> succ(n);
  std::vector<int> indeg(n, 0);
  for (const sem::Edge& e : g.edges) {
    succ[static_cast<size_t>(e.from)].push_back(e.to);
    ++indeg[static_cast<size_t>(e.to)];
  }
  std::vector<double> ready(n, 0), start(n, 0), end(n, 0);
  std::vector<int> arrived(g.groups.size(), 0);
  std::vector<int32_t> work;
  for (size_t i = 0; i < n; ++i)
    if (indeg[i] == 0) work.push_back(static_cast<int32_t>(i));
  auto finish = [&](int32_t e) {
    end[static_cast<size_t>(e)] = start[static_cast<size_t>(e)] + plausibleDurationUs(g.events[static_cast<size_t>(e)], linkGBs);
    for (int32_t s : succ[static_cast<size_t>(e)]) {
      ready[static_cast<size_t>(s)] = std::max(ready[static_cast<size_t>(s)], end[static_cast<size_t>(e)]);
      if (--indeg[static_cast<size_t>(s)] == 0) work.push_back(s);
    }
  };
  while (!work.empty()) {
    int32_t e = work.back();
    work.pop_back();
    const sem::Event& ev = g.events[static_cast<size_t>(e)];
    if (ev.kind == sem::EventKind::kCollective && ev.group >= 0) {
      const sem::CollectiveGroup& grp = g.groups[static_cast<size_t>(ev.group)];
      if (++arrived[static_cast<size_t>(ev.group)] < static_cast<int>(grp.members.size())) continue;
      double t = 0;
      for (int32_t m : grp.members) t = std::max(t, ready[static_cast<size_t>(m)]);
      for (int32_t m : grp.members) start[static_cast<size_t>(m)] = t;
      for (int32_t m : grp.members) finish(m);
      continue;
    }
    start[static_cast<size_t>(e)] = ready[static_cast<size_t>(e)];
    finish(e);
  }

  Timeline t;
  t.program = program;
  t.machine = "test rates";
  t.ranks = g.numRanks;
  for (const sem::StreamInfo& s : g.streams)
    t.streams.push_back({s.id, s.rank,
                         s.isDefault()        ? TimelineStreamKind::kDefault
                         : s.isCommunicator() ? TimelineStreamKind::kCommunicator
                                              : TimelineStreamKind::kWorker,
                         s.name});
  std::map<int32_t, int32_t> opOf;
  for (const sem::Event& e : g.events) {
    if (e.kind == sem::EventKind::kEntry || e.kind == sem::EventKind::kExit || e.kind == sem::EventKind::kFree ||
        e.kind == sem::EventKind::kAlloc)
      continue;
    TimelineOp op;
    op.id = static_cast<int32_t>(t.ops.size());
    op.rank = e.rank;
    op.stream = e.stream;
    op.kind = timelineKindOf(e.kind);
    op.name = e.op;
    op.line = e.stmt && e.stmt->loc.known() ? e.stmt->loc.line : 0;
    op.iteration = sem::loopIndicesStr(e.loops);
    op.startUs = start[static_cast<size_t>(e.id)];
    op.endUs = end[static_cast<size_t>(e.id)];
    op.bytes = e.messageBytes > 0 ? e.messageBytes : e.bytesRead + e.bytesWritten;
    op.flops = e.flops;
    opOf[e.id] = op.id;
    t.ops.push_back(std::move(op));
  }
  // An ordering from a marker that is not an op (a free point) starts at the op before it on its
  // stream.
  std::map<int32_t, int32_t> standIn;
  for (const sem::StreamInfo& s : g.streams) {
    int32_t last = -1;
    for (int32_t e : s.events) {
      if (opOf.count(e)) {
        last = opOf[e];
      } else if (last >= 0) {
        standIn[e] = last;
      }
    }
  }
  for (const sem::Edge& e : g.edges) {
    TimelineEdgeKind kind;
    if (e.kind == sem::EdgeKind::kSync) {
      kind = TimelineEdgeKind::kSync;
    } else if (e.kind == sem::EdgeKind::kWait) {
      kind = TimelineEdgeKind::kWait;
    } else if (e.kind == sem::EdgeKind::kPost) {
      kind = TimelineEdgeKind::kPost;
    } else {
      continue;
    }
    int32_t from = opOf.count(e.from) ? opOf[e.from] : standIn.count(e.from) ? standIn[e.from] : -1;
    if (from < 0 || !opOf.count(e.to)) continue;
    t.edges.push_back({from, opOf[e.to], kind});
  }
  for (const sem::CollectiveGroup& grp : g.groups)
    for (size_t i = 1; i < grp.members.size(); ++i)
      if (opOf.count(grp.members[0]) && opOf.count(grp.members[i]))
        t.edges.push_back({opOf[grp.members[0]], opOf[grp.members[i]], TimelineEdgeKind::kRendezvous});
  return t;
}

}  // namespace braid::testing
