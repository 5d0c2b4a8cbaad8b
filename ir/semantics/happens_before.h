// Happens-before on an EventGraph: "a completes before b starts", as implied by chains of the
// graph's ordering facts (stream FIFO, Synchronize, Wait, per-communicator order) and the
// rendezvous of collectives (every member starts before any member completes).
//
// Each event is one node, except members of collectives and P2P pairs, which get a start and an
// end node; each CollectiveGroup gets a hub (start(m) -> hub -> end(m) for each member m). A
// topological sort finds deadlocks (a cycle: some operation waits for itself) and gives the
// order in which vector clocks are computed: one entry per clocked stream (a stream whose events
// are totally ordered), so a query is one comparison. Memory is events x clocked streams.
//
// Communicator streams are clocked only when the communicator's issue order counts as an
// ordering (communicatorOrder): otherwise their events are not ordered among themselves, and
// whether a communication completes before an event is decided through its successors (the Waits
// on it), which are clocked.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/semantics/event_graph.h"

namespace braid::sem {

enum class LinkKind { kStream, kSync, kWait, kPost, kCommOrder, kRendezvous, kInternal };
const char* linkKindName(LinkKind k);

// One step of a chain: an event (or, for a rendezvous, a collective group), reached from the
// previous step through `via`.
struct ChainStep {
  int32_t event = -1;
  int32_t group = -1;  // set for a rendezvous hub step (event = -1)
  LinkKind via = LinkKind::kInternal;
  bool atEnd = true;  // for split events: the step is the event's completion (else its start)
};

class HappensBefore {
 public:
  // communicatorOrder: whether a communicator's operations count as ordered in issue order.
  // DESIGN.md: a communicator *may* run its operations one at a time in issue order (NCCL does
  // not promise they progress concurrently), so a program must be deadlock-free with that order
  // (check with true) and race-free without relying on it (check with false).
  explicit HappensBefore(const EventGraph& g, bool communicatorOrder = true);
  // Events that cannot run under `other` (a deadlock there) do not run here either.
  void restrictRunsTo(const HappensBefore& other);

  // a completes before b starts (false for a == b).
  bool ordered(int32_t a, int32_t b) const;
  bool concurrent(int32_t a, int32_t b) const { return a != b && !ordered(a, b) && !ordered(b, a); }
  // An event that can run at all: false for events on or after a deadlock cycle.
  bool runs(int32_t e) const { return runs_[static_cast<size_t>(e)] != 0; }
  // Whether the events of `stream` are totally ordered here (every stream but communicator
  // streams without communicatorOrder).
  bool clocked(int32_t stream) const { return clockOf_[static_cast<size_t>(stream)] >= 0; }
  // The events that run, in a linear extension of happens-before (a topological order of their
  // starts): a walk in this order meets a before b whenever a completes before b starts.
  const std::vector<int32_t>& order() const { return order_; }

  bool deadlocked() const { return !cycle_.empty(); }
  // The wait-for cycle, in order: each step waits for the previous one (and the first for the
  // last).
  const std::vector<ChainStep>& cycle() const { return cycle_; }

  // A shortest chain of ordering facts from a's completion to b's start (a first, b last);
  // empty when !ordered(a, b).
  std::vector<ChainStep> chain(int32_t a, int32_t b) const;

  const EventGraph& graph() const { return g_; }

 private:
  struct Pred {
    int32_t node;
    LinkKind kind;
  };
  int32_t startNode(int32_t e) const { return start_[static_cast<size_t>(e)]; }
  int32_t endNode(int32_t e) const { return end_[static_cast<size_t>(e)]; }
  // The end of event a reaches node v.
  bool reaches(int32_t a, int32_t v) const;
  // Node v (in the topological order) is reached from a clocked event x's completion.
  bool clockReaches(const Event& x, int32_t v) const;

  const EventGraph& g_;
  int32_t nodes_ = 0;
  size_t width_ = 0;             // number of clocked streams
  std::vector<int32_t> clockOf_;  // stream -> its vector-clock entry, -1 when unclocked
  std::vector<int32_t> start_, end_;
  std::vector<int32_t> nodeEvent_;  // node -> event (-1 for hubs)
  std::vector<int32_t> nodeGroup_;  // node -> group for hubs
  std::vector<uint32_t> predBegin_;
  std::vector<Pred> preds_;
  std::vector<int32_t> vc_;  // nodes_ x width_
  std::vector<uint32_t> succBegin_;
  std::vector<Pred> succs_;
  std::vector<uint8_t> runs_;
  std::vector<int32_t> order_;
  std::vector<ChainStep> cycle_;
};

}  // namespace braid::sem
