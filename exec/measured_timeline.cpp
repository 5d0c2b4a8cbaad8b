// Measured timelines (see measured_timeline.h).
#ifdef BRAID_WITH_TORCH

#include "exec/measured_timeline.h"

#include <algorithm>
#include <map>

namespace braid::exec {

namespace {

TimelineOpKind kindOf(const Stmt& s) {
  switch (s.kind()) {
    case StmtKind::kAllocate: return TimelineOpKind::kMemset;
    case StmtKind::kSynchronize: return TimelineOpKind::kSync;
    case StmtKind::kWait: return TimelineOpKind::kWait;
    case StmtKind::kCommunication:
    case StmtKind::kP2PCommunication:
    case StmtKind::kEndCoalescing: return TimelineOpKind::kCommunication;
    case StmtKind::kHostOp: {
      OpType t = s.as<HostOp>()->op->type();
      return t == OpType::kSet || t == OpType::kPermute ? TimelineOpKind::kCopy : TimelineOpKind::kCompute;
    }
    default: return TimelineOpKind::kCompute;
  }
}

std::string nameOf(const Stmt& s) {
  if (s.is<HostOp>()) return opTypeName(s.as<HostOp>()->op->type());
  if (s.is<Communication>()) {
    const auto* c = s.as<Communication>();
    return std::string(communicationTypeName(c->type)) + " " + std::to_string(c->id);
  }
  if (s.is<Wait>()) return "Wait Communication " + std::to_string(s.as<Wait>()->id);
  if (s.is<PostOnStream>()) return "HostUnit" + std::to_string(s.as<PostOnStream>()->hostUnit);
  return stmtKindName(s.kind());
}

}  // namespace

Timeline measuredTimeline(const std::vector<TimedStatement>& timed, const std::vector<DeviceSpan>& spans,
                          int64_t rank) {
  Timeline t;
  t.source = "measured";
  t.ranks = rank + 1;  // the ranks this part names (0..rank); the merge takes the largest
  std::map<int32_t, int32_t> slotStream;         // stream slot -> timeline stream id
  std::map<std::string, int32_t> laneStream;      // communicator lane -> timeline stream id
  for (const TimedStatement& ts : timed) {
    if (ts.token < 0 || static_cast<size_t>(ts.token) >= spans.size()) continue;
    const DeviceSpan& sp = spans[static_cast<size_t>(ts.token)];
    int32_t sid = -1;
    if (!ts.lane.empty()) {
      auto [it, inserted] = laneStream.try_emplace(ts.lane, static_cast<int32_t>(t.streams.size()));
      if (inserted) t.streams.push_back({it->second, rank, TimelineStreamKind::kCommunicator, ts.lane});
      sid = it->second;
    } else {
      auto [it, inserted] = slotStream.try_emplace(sp.slot, static_cast<int32_t>(t.streams.size()));
      if (inserted)
        t.streams.push_back({it->second, rank, sp.slot == 0 ? TimelineStreamKind::kDefault : TimelineStreamKind::kWorker,
                             sp.slot == 0 ? "default stream" : "stream slot " + std::to_string(sp.slot)});
      sid = it->second;
    }
    TimelineOp op;
    op.id = static_cast<int32_t>(t.ops.size());
    op.rank = rank;
    op.stream = sid;
    op.kind = kindOf(*ts.stmt);
    op.name = nameOf(*ts.stmt);
    op.line = ts.stmt->loc.known() ? ts.stmt->loc.line : 0;
    op.iteration = ts.iteration;
    op.startUs = sp.startUs;
    op.endUs = std::max(sp.startUs, sp.endUs);
    t.ops.push_back(std::move(op));
  }
  return t;
}

void appendTimeline(Timeline& into, const Timeline& part) {
  into.ranks = std::max(into.ranks, part.ranks);
  int32_t streamBase = static_cast<int32_t>(into.streams.size());
  int32_t opBase = static_cast<int32_t>(into.ops.size());
  for (TimelineStream s : part.streams) {
    s.id += streamBase;
    into.streams.push_back(std::move(s));
  }
  for (TimelineOp o : part.ops) {
    o.id += opBase;
    o.stream += streamBase;
    into.ops.push_back(std::move(o));
  }
  for (TimelineEdge e : part.edges) {
    e.from += opBase;
    e.to += opBase;
    into.edges.push_back(e);
  }
}

}  // namespace braid::exec

#endif
