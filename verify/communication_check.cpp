// Communications run on their communicator's stream (DESIGN.md): posting orders them after the
// posting stream's work so far and nothing else, and only a Wait orders later work after them.
// This file names what goes wrong when a program forgets that: a buffer used before a Wait, a Wait
// on a stream that does not order the use, a communication never waited before the program returns.
#include <algorithm>

#include "verify/checker_internal.h"

namespace braid::verify::detail {

namespace {

// The Wait markers on communication `comm`, in issue order.
std::vector<int32_t> waitsOn(const sem::EventGraph& g, int32_t comm) {
  std::vector<int32_t> waits;
  for (const sem::Edge& e : g.edges)
    if (e.kind == sem::EdgeKind::kWait && e.from == comm) waits.push_back(e.to);
  std::sort(waits.begin(), waits.end());
  return waits;
}

std::string postedLine(const sem::EventGraph& g, const sem::Event& c) {
  std::string s = c.stmt ? sem::stmtSummary(*c.stmt) : c.op;
  if (c.stmt && c.stmt->loc.known()) s += " (line " + std::to_string(c.stmt->loc.line) + ")";
  return s + ", posted on " + g.streamName(c.postedOn) + " and run on " + g.streamName(c.stream);
}

std::string waitStatement(const sem::Event& c) {
  if (c.stmt && c.stmt->is<Communication>()) return "Wait Communication " + std::to_string(c.stmt->as<Communication>()->id);
  if (c.stmt && c.stmt->is<P2PCommunication>())
    return "Wait Communication " + std::to_string(c.stmt->as<P2PCommunication>()->id);
  if (c.stmt && c.stmt->is<EndCoalescing>()) return "Wait Communication " + std::to_string(c.stmt->as<EndCoalescing>()->id);
  return "a Wait on it";
}

}  // namespace

FindingKind classifyCommunicationConflict(const sem::EventGraph& g, const sem::HappensBefore& hb, int32_t comm,
                                          int32_t other, int32_t* wait) {
  const sem::Event& c = g.events[static_cast<size_t>(comm)];
  const sem::Event& a = g.events[static_cast<size_t>(other)];
  *wait = -1;
  if (a.rank != c.rank || a.issue < c.issue) return FindingKind::kRace;
  // Issued after the post: only a Wait (or a chain through one) orders it after the communication.
  for (int32_t w : waitsOn(g, comm)) {
    const sem::Event& m = g.events[static_cast<size_t>(w)];
    if (m.issue < a.issue && !hb.ordered(w, other)) {
      *wait = w;
      return FindingKind::kWaitOnWrongStream;
    }
  }
  return FindingKind::kMissingWait;
}

void reportUnwaitedUse(Reporter& r, const sem::EventGraph& g, FindingKind kind, int32_t comm,
                       const sem::Access& commAccess, int32_t other, const sem::Access& otherAccess,
                       const std::string& role, int32_t wait) {
  const sem::Event& c = g.events[static_cast<size_t>(comm)];
  const sem::Event& a = g.events[static_cast<size_t>(other)];
  Finding* f = r.add(kind, {c.stmt, a.stmt});
  if (!f) return;
  bool comm_writes = std::any_of(c.writes.begin(), c.writes.end(),
                                 [&](const sem::Access& w) { return w.region.buffer == commAccess.region.buffer; });
  std::string buf = r.bufferName(commAccess.region.buffer);
  f->summary = std::string(sem::findingHeadline(kind)) + ": " + (a.stmt ? sem::stmtSummary(*a.stmt) : a.op) + " " +
               role + " " + buf + " while " + c.op + " may still " + (comm_writes ? "write" : "read") + " it";
  f->sites.push_back(r.eventSite("communication", comm, r.accessDetail(commAccess)));
  f->sites.push_back(r.eventSite(role == "frees" ? "free" : role == "writes" ? "write" : "read", other,
                                 role == "frees" ? "" : r.accessDetail(otherAccess)));
  if (wait >= 0) f->sites.push_back(r.eventSite("wait", wait));
  f->explanation.push_back("The communication is " + postedLine(g, c) +
                           ": posting orders it after the work already on that stream, and nothing after it.");
  if (kind == FindingKind::kWaitOnWrongStream) {
    const sem::Event& w = g.events[static_cast<size_t>(wait)];
    f->explanation.push_back("Its Wait is on " + g.streamName(w.stream) + ", but this statement runs on " +
                             g.streamName(a.stream) + ", which is not ordered after that Wait.");
    f->explanation.push_back("Fix: issue " + waitStatement(c) + " while " + g.streamName(a.stream) +
                             " is current (before this statement), or make " + g.streamName(a.stream) +
                             " Synchronize with " + g.streamName(w.stream) + " after the Wait.");
  } else {
    f->explanation.push_back("No Wait on it comes before this statement on " + g.streamName(a.stream) +
                             " (or on a stream it synchronizes with), so the communication may still be running.");
    f->explanation.push_back("Fix: issue " + waitStatement(c) + " on " + g.streamName(a.stream) +
                             " before this statement.");
  }
}

void checkUnwaitedCommunications(const sem::EventGraph& g, const sem::HappensBefore& hb, Reporter& r) {
  std::map<int32_t, int32_t> exit_of_rank;
  for (size_t i = 0; i < g.ranks.size(); ++i) exit_of_rank[static_cast<int32_t>(g.ranks[i])] = g.exitEvent[i];
  for (const sem::StreamInfo& s : g.streams) {
    if (!s.isCommunicator()) continue;
    int32_t exit = exit_of_rank[s.rank];
    if (exit < 0 || !hb.runs(exit)) continue;
    for (int32_t id : s.events) {
      const sem::Event& c = g.events[static_cast<size_t>(id)];
      if (!hb.runs(id) || hb.ordered(id, exit)) continue;
      Finding* f = r.add(FindingKind::kUnwaitedCommunication, {c.stmt});
      if (!f) continue;
      std::vector<int32_t> waits = waitsOn(g, id);
      f->summary = c.op + " is still running when the program returns";
      f->sites.push_back(r.eventSite("communication", id));
      for (int32_t w : waits) f->sites.push_back(r.eventSite("wait", w));
      f->explanation.push_back("The communication is " + postedLine(g, c) + ".");
      if (waits.empty()) {
        f->explanation.push_back("Nothing waits for it, so the caller's stream may return (and free or read its "
                                 "buffers) while it runs.");
        f->explanation.push_back("Fix: " + waitStatement(c) + " on a stream that is joined to the default stream "
                                 "before the program returns.");
      } else {
        f->explanation.push_back("Its Wait is on " + g.streamName(g.events[static_cast<size_t>(waits.back())].stream) +
                                 ", which is not joined to the default stream before the program returns.");
        f->explanation.push_back("Fix: Synchronize that stream from the default stream after the Wait, or Wait on the "
                                 "default stream.");
      }
    }
  }
}

}  // namespace braid::verify::detail
