#include "viz/finding_marks.h"

#include "ir/semantics/happens_before.h"

namespace braid::viz {

namespace {

// A chain or cycle of ordering steps as edges between events. A rendezvous step (every member
// of a collective starts before any completes) becomes one edge from the member before it to the
// member after it, labelled with the collective, rather than a node of its own.
void addPath(const sem::EventGraph& g, const std::vector<sem::ChainStep>& steps, bool closed, const std::string& tag,
             bool error, std::vector<MarkEdge>& out) {
  auto emit = [&](int32_t from, int32_t to, int32_t group) {
    MarkEdge e{{from}, {to}, MarkStyle::kPath, "", error};
    if (group >= 0) {
      const sem::CollectiveGroup& grp = g.groups[static_cast<size_t>(group)];
      e.label = (grp.p2p ? "send/recv pair" : "collective #" + std::to_string(grp.sequence + 1)) + " on " +
                grp.communicator + ": all members start first";
    }
    out.push_back(e);
  };
  size_t first = out.size();
  int32_t firstEvent = -1, last = -1, pending = -1, leading = -1;
  for (const sem::ChainStep& s : steps) {
    if (s.group >= 0) {
      if (firstEvent < 0) leading = s.group;
      pending = s.group;
    }
    if (s.event < 0 || s.event == last) continue;
    if (last >= 0) emit(last, s.event, pending);
    if (firstEvent < 0) firstEvent = s.event;
    last = s.event;
    pending = -1;
  }
  if (closed && last >= 0 && last != firstEvent) emit(last, firstEvent, pending >= 0 ? pending : leading);
  if (out.size() > first) out[first].label = tag + (out[first].label.empty() ? "" : "; " + out[first].label);
}

int32_t exitOfRank(const sem::EventGraph& g, int64_t rank) {
  for (size_t i = 0; i < g.ranks.size(); ++i)
    if (g.ranks[i] == rank) return g.exitEvent[i];
  return -1;
}

}  // namespace

std::set<int32_t> FindingMarks::focus() const {
  std::set<int32_t> f;
  for (const auto& [e, _] : events) f.insert(e);
  for (const MarkEdge& m : edges) {
    if (m.from.event >= 0) f.insert(m.from.event);
    if (m.to.event >= 0) f.insert(m.to.event);
  }
  return f;
}

FindingMarks markFindings(const sem::EventGraph& g, const verify::VerifyResult& r) {
  FindingMarks marks;
  for (size_t i = 0; i < r.findings.size(); ++i) {
    const verify::Finding& f = r.findings[i];
    const int n = static_cast<int>(i) + 1;
    const bool error = f.severity == verify::Severity::kError;
    const std::string tag = "#" + std::to_string(n);
    const std::string kind = verify::findingKindName(f.kind);
    const bool named = f.summary.rfind(kind, 0) == 0;  // "deadlock: ..." already says its kind
    marks.titles.push_back(tag + " " + (named ? "" : kind + ": ") + f.summary +
                           (f.occurrences > 1 ? " (" + std::to_string(f.occurrences) + " instances)" : ""));
    marks.titleIsError.push_back(error);
    std::vector<int32_t> siteEvents;
    for (const verify::Site& s : f.sites) {
      int32_t e = s.event;
      siteEvents.push_back(e);
      if (e >= 0) marks.events[e].push_back({n, s.role, error});
    }
    // The event of the first site with `role`, -1 if none.
    auto site = [&](const std::string& role) {
      for (size_t k = 0; k < f.sites.size(); ++k)
        if (f.sites[k].role == role && siteEvents[k] >= 0) return siteEvents[k];
      return int32_t{-1};
    };
    auto missing = [&](int32_t from, int32_t to, const std::string& what) {
      if (from >= 0 && to >= 0) marks.edges.push_back({{from}, {to}, MarkStyle::kMissing, tag + " " + what, error});
    };
    auto exitOf = [&](int32_t e) { return e < 0 ? -1 : exitOfRank(g, g.events[static_cast<size_t>(e)].rank); };
    switch (f.kind) {
      case verify::FindingKind::kRace:
        // The earlier access, then the later one: the ordering that would make it safe.
        if (siteEvents.size() >= 2) missing(siteEvents[0], siteEvents[1], "missing ordering");
        break;
      case verify::FindingKind::kMissingJoin:
        missing(site("unjoined"), exitOf(site("unjoined")), "missing join");
        break;
      case verify::FindingKind::kUnsafeReuse:
        // Either a use that must finish before the free, or one that must start after the allocation.
        missing(site("use"), site("free"), "must finish before the free");
        missing(site("allocate"), site("use"), "must start after the allocation");
        break;
      case verify::FindingKind::kMissingWait: {
        int32_t use = site("read") >= 0 ? site("read") : site("write") >= 0 ? site("write") : site("free");
        missing(site("communication"), use, "needs a Wait before this");
        break;
      }
      case verify::FindingKind::kWaitOnWrongStream: {
        int32_t use = site("read") >= 0 ? site("read") : site("write") >= 0 ? site("write") : site("free");
        missing(site("wait"), use, "not ordered after the Wait");
        break;
      }
      case verify::FindingKind::kUnwaitedCommunication:
        missing(site("communication"), exitOf(site("communication")), "still running at exit");
        break;
      case verify::FindingKind::kDeadlock: {
        sem::HappensBefore hb(g, /*communicatorOrder=*/true);
        addPath(g, hb.cycle(), /*closed=*/true, tag + " waits for", error, marks.edges);
        break;
      }
      case verify::FindingKind::kLostParallelism:
        // sites: the loop, the last work of an iteration, the first work of the next.
        if (siteEvents.size() >= 3 && siteEvents[1] >= 0 && siteEvents[2] >= 0) {
          sem::HappensBefore hb(g, /*communicatorOrder=*/false);
          addPath(g, hb.chain(siteEvents[1], siteEvents[2]), /*closed=*/false, tag + " serializes", error,
                  marks.edges);
        }
        break;
      default:
        break;
    }
  }
  return marks;
}

}  // namespace braid::viz
