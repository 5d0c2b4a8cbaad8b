// Joins (all work ordered before the exit on the default stream) and buffer lifetimes under the
// caching allocator's stream-ordered contract (DESIGN.md): a freed buffer's block may be handed to
// the next allocation on its allocation stream at once, so (a) every access must be ordered before
// the free's point on that stream, and (b) a use of a new allocation on another stream must be
// ordered after the allocation's point there (the block may be one just freed, still in use).
#include <map>

#include "verify/checker_internal.h"

namespace braid::verify::detail {

void checkJoins(const sem::EventGraph& g, const sem::HappensBefore& hb, Reporter& r) {
  // Missing join: on every stream, the last event that does work must complete before the exit.
  std::map<int32_t, int32_t> exit_of_rank;
  for (size_t i = 0; i < g.ranks.size(); ++i) exit_of_rank[static_cast<int32_t>(g.ranks[i])] = g.exitEvent[i];
  for (const sem::StreamInfo& s : g.streams) {
    if (s.isDefault() || s.isCommunicator()) continue;  // communications: checkUnwaitedCommunications
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
}

namespace {

const sem::Access* accessTo(const sem::Event& e, int32_t buffer) {
  for (const auto* list : {&e.reads, &e.writes})
    for (const sem::Access& a : *list)
      if (a.region.buffer == buffer) return &a;
  return nullptr;
}

bool isCommunication(const sem::Event& e) {
  return e.kind == sem::EventKind::kCollective || e.kind == sem::EventKind::kP2P;
}

// (a) An access not ordered before the buffer's free point.
void reportFreedWhileInUse(const sem::EventGraph& g, const sem::HappensBefore& hb, Reporter& r,
                           const sem::BufferInfo& b, int32_t use_id) {
  const sem::Event& use = g.events[static_cast<size_t>(use_id)];
  const sem::Access* acc = accessTo(use, b.id);
  if (isCommunication(use)) {
    int32_t wait = -1;
    FindingKind kind = classifyCommunicationConflict(g, hb, use_id, b.freeEvent, &wait);
    if (kind != FindingKind::kRace) {
      reportUnwaitedUse(r, g, kind, use_id, *acc, b.freeEvent, *acc, "frees", wait);
      return;
    }
  }
  Finding* f = r.add(FindingKind::kUnsafeReuse, {b.freeStmt, use.stmt});
  if (!f) return;
  std::string what = b.freeStmt && b.freeStmt->kind() == StmtKind::kDeallocate ? "deallocated" : "released";
  f->summary = r.bufferName(b.id) + " is " + what + " while " + g.streamName(use.stream) + " may still use it";
  f->sites.push_back(r.stmtSite("free", b.freeStmt, b.rank, b.allocStream, b.freeLoops,
                                "its memory returns to the caching allocator on " + g.streamName(b.allocStream)));
  f->sites.back().event = b.freeEvent;
  f->sites.push_back(r.eventSite("use", use_id, acc ? r.accessDetail(*acc) : ""));
  f->explanation.push_back("The caching allocator may hand " + r.bufferName(b.id) + "'s memory to the next allocation on " +
                           g.streamName(b.allocStream) + " right away, without waiting for other streams;");
  f->explanation.push_back("this use on " + g.streamName(use.stream) +
                           " is not ordered before that point, so new data may overwrite it while it runs (or it "
                           "may overwrite new data).");
  f->explanation.push_back("Fix: Deallocate it after the join, i.e. once " + g.streamName(b.allocStream) +
                           " has been made to wait for " + g.streamName(use.stream) + " (Synchronize).");
}

// (b) A use on another stream not ordered after the allocation's point on its allocation stream.
void reportUseBeforeAllocation(const sem::EventGraph& g, const sem::HappensBefore& hb, Reporter& r,
                               const sem::BufferInfo& b, int32_t use_id) {
  const sem::Event& use = g.events[static_cast<size_t>(use_id)];
  const sem::Event& alloc = g.events[static_cast<size_t>(b.allocEvent)];
  Finding* f = r.add(FindingKind::kUnsafeReuse, {b.allocStmt, use.stmt}, "allocation");
  if (!f) return;
  const sem::Access* acc = accessTo(use, b.id);
  f->summary = r.bufferName(b.id) + " is used on " + g.streamName(use.stream) + " before its allocation point on " +
               g.streamName(b.allocStream);
  f->sites.push_back(r.eventSite("allocate", b.allocEvent));
  f->sites.push_back(r.eventSite("use", use_id, acc ? r.accessDetail(*acc) : ""));
  // The block most recently freed on that stream before the allocation is the one the allocator
  // would hand out first: name its last use that this one is not ordered after.
  const sem::BufferInfo* old = nullptr;
  int32_t old_pos = -1;
  for (int32_t e : g.streams[static_cast<size_t>(b.allocStream)].events) {
    const sem::Event& m = g.events[static_cast<size_t>(e)];
    if (m.streamPos >= alloc.streamPos) break;
    if (m.kind == sem::EventKind::kFree && m.streamPos > old_pos) {
      old = &g.buffers[static_cast<size_t>(m.target)];
      old_pos = m.streamPos;
    }
  }
  int32_t previous = -1;
  if (old)
    for (const sem::Event& e : g.events)
      if (e.rank == b.rank && hb.runs(e.id) && !e.isMarker() && accessTo(e, old->id) && !hb.ordered(e.id, use_id))
        previous = e.id;
  if (previous >= 0) {
    const sem::Access* pa = accessTo(g.events[static_cast<size_t>(previous)], old->id);
    f->sites.push_back(r.eventSite("earlier use of the freed block", previous, pa ? r.accessDetail(*pa) : ""));
    f->explanation.push_back(r.bufferName(old->id) + " was freed on " + g.streamName(old->allocStream) +
                             " just before this allocation, and its use above is not ordered before this one: if "
                             "the allocator hands its block to " + r.bufferName(b.id) + ", the two race.");
  }
  f->explanation.push_back("The caching allocator associates " + r.bufferName(b.id) + " with " +
                           g.streamName(b.allocStream) +
                           " and may give it a block just freed there, which work enqueued before the allocation may "
                           "still be using;");
  f->explanation.push_back("this use on " + g.streamName(use.stream) + " is not ordered after the allocation's point on " +
                           g.streamName(b.allocStream) + ".");
  f->explanation.push_back("Fix: make " + g.streamName(use.stream) + " wait for " + g.streamName(b.allocStream) +
                           " (Synchronize) after the allocation and before this use, or allocate it while " +
                           g.streamName(use.stream) + " is current.");
}

}  // namespace

void checkLifetimes(const sem::EventGraph& g, const sem::HappensBefore& hb, Reporter& r) {
  for (const sem::Event& e : g.events) {
    if (!hb.runs(e.id) || e.isMarker()) continue;
    for (const auto* list : {&e.reads, &e.writes}) {
      for (const sem::Access& a : *list) {
        if (a.region.buffer < 0) continue;
        const sem::BufferInfo& b = g.buffers[static_cast<size_t>(a.region.buffer)];
        if (b.freeEvent >= 0 && hb.runs(b.freeEvent) && !hb.ordered(e.id, b.freeEvent))
          reportFreedWhileInUse(g, hb, r, b, e.id);
        if (b.allocEvent >= 0 && e.stream != b.allocStream && !hb.ordered(b.allocEvent, e.id))
          reportUseBeforeAllocation(g, hb, r, b, e.id);
      }
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
