// Inter-stream races and coverage (reads of memory nothing wrote, outputs not fully written).
//
// Shadow memory per buffer: an interval map from element ranges to the last write and the reads
// since it (one per clocked stream: an earlier read on the same stream is ordered before the later
// one; every read on a communicator's stream, whose operations are not ordered among themselves).
// Events are visited in a linear extension of happens-before (HappensBefore::order(); host issue
// order is not one: a rendezvous can order an access after one issued later), so checking each
// access against the last write and the reads since it finds a race wherever one exists
// (FastTrack's argument: an earlier conflicting write either happens before the last write, and
// then before this access if the last write does, or races with the last write, which was
// reported then).
//
// A conflict with a communication is reported as what it is: its buffer used after the post
// without a Wait (missing-wait), or with a Wait on a stream that does not order the use
// (wait-on-wrong-stream); a conflict with work issued before the post is a race.
#include <algorithm>
#include <map>

#include "verify/checker_internal.h"

namespace braid::verify::detail {

namespace {

struct Seg {
  int64_t end = 0;
  int32_t lastWrite = -1;
  int32_t writeAccess = -1;                        // index of the access in the writer's writes
  std::vector<std::pair<int32_t, int32_t>> reads;  // (event, access index)
};
using Shadow = std::map<int64_t, Seg>;

void splitAt(Shadow& m, int64_t x) {
  auto it = m.upper_bound(x);
  if (it == m.begin()) return;
  --it;
  if (it->first < x && it->second.end > x) {
    Seg tail = it->second;
    it->second.end = x;
    m.emplace(x, std::move(tail));
  }
}

struct Conflict {
  int32_t earlier, earlierAccess;
  bool earlierWrites;
  int64_t lo, hi;
};

}  // namespace

void checkRacesAndCoverage(const sem::EventGraph& g, const sem::HappensBefore& hb, Reporter& r) {
  std::vector<Shadow> shadow(g.buffers.size());

  auto reportRace = [&](const Conflict& c, int32_t later, int32_t later_access, bool later_writes) {
    const sem::Event& a = g.events[static_cast<size_t>(c.earlier)];
    const sem::Event& b = g.events[static_cast<size_t>(later)];
    const sem::Access& aa = c.earlierWrites ? a.writes[static_cast<size_t>(c.earlierAccess)]
                                            : a.reads[static_cast<size_t>(c.earlierAccess)];
    const sem::Access& ba =
        later_writes ? b.writes[static_cast<size_t>(later_access)] : b.reads[static_cast<size_t>(later_access)];
    for (auto [comm, other, comm_access, other_access, other_writes] :
         {std::tuple{&a, &b, &aa, &ba, later_writes}, std::tuple{&b, &a, &ba, &aa, c.earlierWrites}}) {
      if (comm->kind != sem::EventKind::kCollective && comm->kind != sem::EventKind::kP2P) continue;
      int32_t wait = -1;
      FindingKind kind = classifyCommunicationConflict(g, hb, comm->id, other->id, &wait);
      if (kind == FindingKind::kRace) continue;
      reportUnwaitedUse(r, g, kind, comm->id, *comm_access, other->id, *other_access,
                        other_writes ? "writes" : "reads", wait);
      return;
    }
    Finding* f = r.add(FindingKind::kRace, {a.stmt, b.stmt});
    if (!f) return;
    std::string buf = r.bufferName(aa.region.buffer);
    f->summary = "data race on " + buf + ": " + (c.earlierWrites ? "write" : "read") + " on " + g.streamName(a.stream) +
                 " and " + (later_writes ? "write" : "read") + " on " + g.streamName(b.stream) + " are not ordered";
    f->sites.push_back(r.eventSite(c.earlierWrites ? "write" : "read", c.earlier, r.accessDetail(aa)));
    f->sites.push_back(r.eventSite(later_writes ? "write" : "read", later, r.accessDetail(ba)));
    f->explanation.push_back("Both touch " + buf + " elements [" + std::to_string(c.lo) + ", " + std::to_string(c.hi) +
                             ") on rank " + std::to_string(a.rank) + ", and at least one writes.");
    f->explanation.push_back(
        "No chain of stream order, Synchronize, Wait or collective completion orders one "
        "before the other, so they may run at the same time.");
    f->explanation.push_back("Fix: make " + g.streamName(b.stream) + " wait for " + g.streamName(a.stream) +
                             " (Synchronize) between them, or give them disjoint memory.");
  };

  for (int32_t id : hb.order()) {
    const sem::Event& x = g.events[static_cast<size_t>(id)];
    if (!hb.runs(x.id)) continue;
    std::vector<std::tuple<Conflict, int32_t, bool>> conflicts;  // (conflict, access index, later writes)
    std::vector<std::pair<int64_t, int64_t>> unwritten;          // (lo, hi) of reads of nothing
    int32_t unwritten_access = -1;
    bool is_exit = x.kind == sem::EventKind::kExit;

    // Checks.
    for (size_t ai = 0; ai < x.reads.size(); ++ai) {
      const sem::Access& acc = x.reads[ai];
      if (acc.region.buffer < 0) continue;
      Shadow& m = shadow[static_cast<size_t>(acc.region.buffer)];
      acc.region.forEachRun([&](int64_t lo, int64_t hi) {
        int64_t at = lo;
        auto it = m.upper_bound(lo);
        if (it != m.begin() && std::prev(it)->second.end > lo) --it;
        for (; it != m.end() && it->first < hi; ++it) {
          int64_t s = std::max(it->first, lo), e = std::min(it->second.end, hi);
          if (s > at) {
            unwritten.emplace_back(at, s);
            if (unwritten_access < 0) unwritten_access = static_cast<int32_t>(ai);
          }
          at = e;
          const Seg& seg = it->second;
          if (seg.lastWrite < 0) {
            unwritten.emplace_back(s, e);
            if (unwritten_access < 0) unwritten_access = static_cast<int32_t>(ai);
          } else if (!is_exit && seg.lastWrite != x.id && !hb.ordered(seg.lastWrite, x.id)) {
            conflicts.push_back({{seg.lastWrite, seg.writeAccess, true, s, e}, static_cast<int32_t>(ai), false});
          }
        }
        if (at < hi) {
          unwritten.emplace_back(at, hi);
          if (unwritten_access < 0) unwritten_access = static_cast<int32_t>(ai);
        }
      });
    }
    if (!is_exit) {
      for (size_t ai = 0; ai < x.writes.size(); ++ai) {
        const sem::Access& acc = x.writes[ai];
        if (acc.region.buffer < 0) continue;
        Shadow& m = shadow[static_cast<size_t>(acc.region.buffer)];
        acc.region.forEachRun([&](int64_t lo, int64_t hi) {
          auto it = m.upper_bound(lo);
          if (it != m.begin() && std::prev(it)->second.end > lo) --it;
          for (; it != m.end() && it->first < hi; ++it) {
            int64_t s = std::max(it->first, lo), e = std::min(it->second.end, hi);
            const Seg& seg = it->second;
            if (seg.lastWrite >= 0 && seg.lastWrite != x.id && !hb.ordered(seg.lastWrite, x.id))
              conflicts.push_back({{seg.lastWrite, seg.writeAccess, true, s, e}, static_cast<int32_t>(ai), true});
            for (const auto& [rd, ra] : seg.reads)
              if (rd != x.id && !hb.ordered(rd, x.id))
                conflicts.push_back({{rd, ra, false, s, e}, static_cast<int32_t>(ai), true});
          }
        });
      }
    }

    // Reports (one per pair of events).
    std::vector<int32_t> seen;
    for (auto& [c, ai, w] : conflicts) {
      if (std::find(seen.begin(), seen.end(), c.earlier) != seen.end()) continue;
      seen.push_back(c.earlier);
      reportRace(c, x.id, ai, w);
    }
    if (!unwritten.empty()) {
      const sem::Access& acc = x.reads[static_cast<size_t>(unwritten_access)];
      std::sort(unwritten.begin(), unwritten.end());
      int64_t count = 0;
      for (auto& [lo, hi] : unwritten) count += hi - lo;
      std::string range =
          "[" + std::to_string(unwritten.front().first) + ", " + std::to_string(unwritten.front().second) + ")";
      if (is_exit) {
        Finding* f = r.add(FindingKind::kOutputNotWritten, {nullptr}, acc.tensor ? acc.tensor->nameStr() : "");
        if (f) {
          f->summary = "output " + (acc.tensor ? acc.tensor->nameStr() : std::string("?")) +
                       " is not fully written when the program returns";
          f->sites.push_back(r.eventSite("output", x.id, r.accessDetail(acc)));
          f->explanation.push_back(std::to_string(count) + " element(s) of " + r.bufferName(acc.region.buffer) +
                                   " (first: elements " + range + ") are never written on rank " +
                                   std::to_string(x.rank) + ".");
          f->explanation.push_back("Check the loop bounds and the slice each iteration writes.");
        }
      } else {
        Finding* f = r.add(FindingKind::kUninitializedRead, {x.stmt});
        if (f) {
          f->summary =
              "reads " + (acc.tensor ? acc.tensor->nameStr() : std::string("?")) + " where nothing was written";
          f->sites.push_back(r.eventSite("read", x.id, r.accessDetail(acc)));
          f->explanation.push_back(std::to_string(count) + " element(s) of " + r.bufferName(acc.region.buffer) +
                                   " (first: elements " + range + ") are read before anything writes them.");
        }
      }
    }

    // Updates.
    if (is_exit) continue;
    for (size_t ai = 0; ai < x.reads.size(); ++ai) {
      const sem::Access& acc = x.reads[ai];
      if (acc.region.buffer < 0) continue;
      Shadow& m = shadow[static_cast<size_t>(acc.region.buffer)];
      acc.region.forEachRun([&](int64_t lo, int64_t hi) {
        splitAt(m, lo);
        splitAt(m, hi);
        // Fill gaps so that the read is remembered there too.
        int64_t at = lo;
        std::vector<std::pair<int64_t, int64_t>> gaps;
        for (auto it = m.lower_bound(lo); it != m.end() && it->first < hi; ++it) {
          if (it->first > at) gaps.emplace_back(at, it->first);
          at = it->second.end;
        }
        if (at < hi) gaps.emplace_back(at, hi);
        for (auto& [s, e] : gaps) m.emplace(s, Seg{e, -1, -1, {}});
        for (auto it = m.lower_bound(lo); it != m.end() && it->first < hi; ++it) {
          auto& reads = it->second.reads;
          bool replaced = false;
          for (auto& rd : reads) {
            if (g.events[static_cast<size_t>(rd.first)].stream == x.stream && hb.clocked(x.stream)) {
              rd = {x.id, static_cast<int32_t>(ai)};
              replaced = true;
              break;
            }
          }
          if (!replaced) reads.emplace_back(x.id, static_cast<int32_t>(ai));
        }
      });
    }
    for (size_t ai = 0; ai < x.writes.size(); ++ai) {
      const sem::Access& acc = x.writes[ai];
      if (acc.region.buffer < 0) continue;
      Shadow& m = shadow[static_cast<size_t>(acc.region.buffer)];
      acc.region.forEachRun([&](int64_t lo, int64_t hi) {
        splitAt(m, lo);
        splitAt(m, hi);
        auto first = m.lower_bound(lo);
        auto last = m.lower_bound(hi);
        m.erase(first, last);
        m.emplace(lo, Seg{hi, x.id, static_cast<int32_t>(ai), {}});
      });
    }
  }
}

}  // namespace braid::verify::detail
