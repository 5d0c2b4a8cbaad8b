// Joins (all work ordered before the exit on the default stream) and buffer lifetimes (a freed
// buffer's memory may be handed to the next allocation on its allocation stream at once, so
// every access must be ordered before that point).
#include <map>

#include "verify/checker_internal.h"

namespace braid::verify::detail {

void checkJoins(const sem::EventGraph& g, const sem::HappensBefore& hb, Reporter& r) {
  // Missing join: on every stream, the last event that does work must complete before the exit.
  std::map<int32_t, int32_t> exit_of_rank;
  for (size_t i = 0; i < g.ranks.size(); ++i) exit_of_rank[static_cast<int32_t>(g.ranks[i])] = g.exitEvent[i];
  for (const sem::StreamInfo& s : g.streams) {
    if (s.isDefault) continue;
    int32_t exit = exit_of_rank[s.rank];
    if (exit < 0 || !hb.runs(exit)) continue;
    int32_t last = -1;
    for (auto it = s.events.rbegin(); it != s.events.rend(); ++it) {
      const sem::Event& e = g.events[static_cast<size_t>(*it)];
      if (!e.isMarker() && hb.runs(e.id)) {
        last = e.id;
        break;
      }
    }
    if (last < 0 || hb.ordered(last, exit)) continue;
    const sem::Event& e = g.events[static_cast<size_t>(last)];
    Finding* f = r.add(FindingKind::kMissingJoin, {e.stmt});
    if (!f) continue;
    std::string outputs;
    for (const sem::Access& w : e.writes) {
      const sem::BufferInfo& b = g.buffers[static_cast<size_t>(w.region.buffer)];
      if (b.isOutput || b.isInput) outputs += (outputs.empty() ? "" : ", ") + r.bufferName(b.id);
    }
    f->summary = "work on " + s.name + " is not joined to the default stream before the program returns";
    f->sites.push_back(r.eventSite("unjoined", last, e.writes.empty() ? "" : r.accessDetail(e.writes.front())));
    f->explanation.push_back("This is the last operation on " + s.name + " (rank " + std::to_string(s.rank) +
                             "); nothing makes the caller's (default) stream wait for it before exit.");
    if (!outputs.empty())
      f->explanation.push_back("It writes " + outputs +
                               ", which the caller owns after return: the caller may read "
                               "it before it is complete.");
    f->explanation.push_back("Fix: after the loop, SetCurrentStream to the default stream, then Synchronize " + s.name +
                             ".");
  }

  // Lifetimes: every access to a freed buffer must complete before its free point.
  std::vector<std::map<int32_t, int32_t>> last_access(g.buffers.size());  // buffer -> stream -> event
  for (const sem::Event& e : g.events) {
    if (!hb.runs(e.id) || e.kind == sem::EventKind::kFree) continue;
    for (const auto* list : {&e.reads, &e.writes})
      for (const sem::Access& a : *list)
        if (a.region.buffer >= 0) last_access[static_cast<size_t>(a.region.buffer)][e.stream] = e.id;
  }
  for (const sem::BufferInfo& b : g.buffers) {
    if (b.freeEvent < 0 || !hb.runs(b.freeEvent)) continue;
    for (const auto& [stream, ev] : last_access[static_cast<size_t>(b.id)]) {
      if (hb.ordered(ev, b.freeEvent)) continue;
      const sem::Event& use = g.events[static_cast<size_t>(ev)];
      Finding* f = r.add(FindingKind::kUnsafeReuse, {b.freeStmt, use.stmt});
      if (!f) continue;
      std::string what = b.freeStmt && b.freeStmt->kind() == StmtKind::kDeallocate ? "deallocated" : "released";
      f->summary = r.bufferName(b.id) + " is " + what + " while " + g.streamName(use.stream) + " may still use it";
      f->sites.push_back(r.stmtSite("free", b.freeStmt, b.rank, b.allocStream, b.freeLoops,
                                    "its memory returns to the caching allocator on " + g.streamName(b.allocStream)));
      const sem::Access* acc = nullptr;
      for (const auto* list : {&use.reads, &use.writes})
        for (const sem::Access& a : *list)
          if (a.region.buffer == b.id && !acc) acc = &a;
      f->sites.push_back(r.eventSite("use", ev, acc ? r.accessDetail(*acc) : ""));
      f->explanation.push_back("The caching allocator may hand " + r.bufferName(b.id) +
                               "'s memory to the next allocation on " + g.streamName(b.allocStream) +
                               " right away, without waiting for other streams;");
      f->explanation.push_back("this use on " + g.streamName(use.stream) +
                               " is not ordered before that point, so "
                               "new data may overwrite it while it runs (or it may overwrite new data).");
      f->explanation.push_back("Fix: Deallocate it after the join, i.e. once " + g.streamName(b.allocStream) +
                               " has been made to wait for " + g.streamName(use.stream) + " (Synchronize).");
    }
  }
}

void checkDeadlock(const sem::EventGraph& g, const sem::HappensBefore& hb, Reporter& r) {
  if (!hb.deadlocked()) return;
  std::vector<const Stmt*> stmts;
  for (const auto& s : hb.cycle())
    if (s.event >= 0) stmts.push_back(g.events[static_cast<size_t>(s.event)].stmt);
  Finding* f = r.add(FindingKind::kDeadlock, stmts);
  if (!f) return;
  f->summary = "deadlock: the operations below wait for each other in a cycle";
  std::vector<int32_t> seen;
  for (const auto& s : hb.cycle()) {
    if (s.event < 0 || std::find(seen.begin(), seen.end(), s.event) != seen.end()) continue;
    seen.push_back(s.event);
    f->sites.push_back(r.eventSite("waits", s.event));
  }
  f->chain = r.chainLines(hb, hb.cycle());
  if (!hb.cycle().empty())
    f->chain.push_back("--[" + std::string(sem::linkKindName(hb.cycle().front().via)) + "]--> back to the first step");
  f->explanation.push_back(
      "Each step cannot finish (or start) before the previous one, and the first waits for "
      "the last. A communicator runs its operations one at a time in each rank's issue order, "
      "and a collective completes only when every member has started it.");
  f->explanation.push_back(
      "Fix: issue communications in the same order on every rank (a send at the position "
      "of the peer's matching receive), or group sends and receives with "
      "StartCoalescing / EndCoalescing.");
}

}  // namespace braid::verify::detail
