#include "ir/semantics/happens_before.h"

#include <algorithm>
#include <deque>
#include <unordered_map>

#include "ir/error.h"
#include "ir/semantics/budget.h"

namespace braid::sem {

const char* linkKindName(LinkKind k) {
  switch (k) {
    case LinkKind::kStream:
      return "stream order";
    case LinkKind::kSync:
      return "Synchronize";
    case LinkKind::kWait:
      return "Wait";
    case LinkKind::kPost:
      return "posted after";
    case LinkKind::kCommOrder:
      return "communicator order";
    case LinkKind::kRendezvous:
      return "rendezvous";
    case LinkKind::kInternal:
      return "runs";
  }
  return "?";
}

namespace {
LinkKind linkOf(EdgeKind k) {
  switch (k) {
    case EdgeKind::kStream:
      return LinkKind::kStream;
    case EdgeKind::kSync:
      return LinkKind::kSync;
    case EdgeKind::kWait:
      return LinkKind::kWait;
    case EdgeKind::kPost:
      return LinkKind::kPost;
    case EdgeKind::kCommOrder:
      return LinkKind::kCommOrder;
  }
  return LinkKind::kStream;
}
}  // namespace

HappensBefore::HappensBefore(const EventGraph& g, bool communicator_order) : g_(g) {
  size_t n_events = g.events.size();
  start_.resize(n_events);
  end_.resize(n_events);
  int32_t n = 0;
  for (size_t e = 0; e < n_events; ++e) {
    const Event& x = g.events[e];
    bool split = x.group >= 0 || !x.pairGroups.empty();
    start_[e] = n++;
    end_[e] = split ? n++ : start_[e];
  }
  std::vector<int32_t> hub(g.groups.size());
  for (size_t i = 0; i < g.groups.size(); ++i) hub[i] = n++;
  nodes_ = n;
  nodeEvent_.assign(static_cast<size_t>(n), -1);
  nodeGroup_.assign(static_cast<size_t>(n), -1);
  for (size_t e = 0; e < n_events; ++e) {
    nodeEvent_[static_cast<size_t>(start_[e])] = static_cast<int32_t>(e);
    nodeEvent_[static_cast<size_t>(end_[e])] = static_cast<int32_t>(e);
  }
  for (size_t i = 0; i < g.groups.size(); ++i) nodeGroup_[static_cast<size_t>(hub[i])] = static_cast<int32_t>(i);

  struct Arc {
    int32_t from, to;
    LinkKind kind;
  };
  std::vector<Arc> arcs;
  arcs.reserve(g.edges.size() + n_events);
  for (const Edge& e : g.edges)
    if (communicator_order || e.kind != EdgeKind::kCommOrder)
      arcs.push_back({endNode(e.from), startNode(e.to), linkOf(e.kind)});
  for (size_t e = 0; e < n_events; ++e)
    if (start_[e] != end_[e]) arcs.push_back({start_[e], end_[e], LinkKind::kInternal});
  for (size_t i = 0; i < g.groups.size(); ++i) {
    for (int32_t m : g.groups[i].members) {
      arcs.push_back({startNode(m), hub[i], LinkKind::kRendezvous});
      arcs.push_back({hub[i], endNode(m), LinkKind::kRendezvous});
    }
  }

  // CSR of predecessors and successors.
  predBegin_.assign(static_cast<size_t>(n) + 1, 0);
  succBegin_.assign(static_cast<size_t>(n) + 1, 0);
  std::vector<uint32_t>& succ_begin = succBegin_;
  for (const Arc& a : arcs) {
    ++predBegin_[static_cast<size_t>(a.to) + 1];
    ++succ_begin[static_cast<size_t>(a.from) + 1];
  }
  for (size_t i = 0; i < static_cast<size_t>(n); ++i) {
    predBegin_[i + 1] += predBegin_[i];
    succ_begin[i + 1] += succ_begin[i];
  }
  preds_.resize(arcs.size());
  succs_.resize(arcs.size());
  {
    std::vector<uint32_t> pf(predBegin_.begin(), predBegin_.end() - 1);
    std::vector<uint32_t> sf(succ_begin.begin(), succ_begin.end() - 1);
    for (const Arc& a : arcs) {
      preds_[pf[static_cast<size_t>(a.to)]++] = {a.from, a.kind};
      succs_[sf[static_cast<size_t>(a.from)]++] = {a.to, a.kind};
    }
  }

  // Kahn's topological order; nodes left over sit on or after a cycle.
  std::vector<uint32_t> indeg(static_cast<size_t>(n));
  for (size_t v = 0; v < static_cast<size_t>(n); ++v) indeg[v] = predBegin_[v + 1] - predBegin_[v];
  std::vector<int32_t> order;
  order.reserve(static_cast<size_t>(n));
  for (int32_t v = 0; v < n; ++v)
    if (indeg[static_cast<size_t>(v)] == 0) order.push_back(v);
  for (size_t i = 0; i < order.size(); ++i) {
    int32_t v = order[i];
    for (uint32_t j = succ_begin[static_cast<size_t>(v)]; j < succ_begin[static_cast<size_t>(v) + 1]; ++j)
      if (--indeg[static_cast<size_t>(succs_[j].node)] == 0) order.push_back(succs_[j].node);
  }
  std::vector<uint8_t> done(static_cast<size_t>(n), 0);
  for (int32_t v : order) done[static_cast<size_t>(v)] = 1;

  // Vector clocks: vc[v][c] = the last position on the stream of clock c whose event completes
  // before v.
  clockOf_.assign(g.streams.size(), -1);
  for (const StreamInfo& s : g.streams)
    if (communicator_order || !s.isCommunicator()) clockOf_[static_cast<size_t>(s.id)] = static_cast<int32_t>(width_++);
  if (static_cast<double>(n) * static_cast<double>(width_) > kMaxClockEntries)
    throw Error("the event graph is too large for the checker (" + std::to_string(n_events) + " events on " +
                std::to_string(width_) + " streams); use smaller sizes or fewer iterations");
  vc_.assign(static_cast<size_t>(n) * width_, -1);
  for (int32_t v : order) {
    int32_t* row = &vc_[static_cast<size_t>(v) * width_];
    for (uint32_t j = predBegin_[static_cast<size_t>(v)]; j < predBegin_[static_cast<size_t>(v) + 1]; ++j) {
      const int32_t* p = &vc_[static_cast<size_t>(preds_[j].node) * width_];
      for (size_t s = 0; s < width_; ++s) row[s] = std::max(row[s], p[s]);
    }
    int32_t e = nodeEvent_[static_cast<size_t>(v)];
    if (e >= 0 && endNode(e) == v) {
      const Event& x = g.events[static_cast<size_t>(e)];
      int32_t c = clockOf_[static_cast<size_t>(x.stream)];
      if (c >= 0) row[static_cast<size_t>(c)] = std::max(row[static_cast<size_t>(c)], x.streamPos);
    }
  }
  runs_.assign(n_events, 0);
  for (size_t e = 0; e < n_events; ++e) runs_[e] = done[static_cast<size_t>(end_[e])];
  for (int32_t v : order) {
    int32_t e = nodeEvent_[static_cast<size_t>(v)];
    if (e >= 0 && startNode(e) == v && runs_[static_cast<size_t>(e)]) order_.push_back(e);
  }

  if (order.size() < static_cast<size_t>(n)) {
    // Walk back through waiting predecessors until a node repeats: that loop is the cycle.
    int32_t cur = -1;
    for (int32_t v = 0; v < n && cur < 0; ++v)
      if (!done[static_cast<size_t>(v)]) cur = v;
    std::unordered_map<int32_t, size_t> seen;
    std::vector<std::pair<int32_t, LinkKind>> walk;  // (node, link from its predecessor)
    LinkKind via = LinkKind::kInternal;
    while (!seen.count(cur)) {
      seen[cur] = walk.size();
      walk.emplace_back(cur, via);
      int32_t next = -1;
      for (uint32_t j = predBegin_[static_cast<size_t>(cur)]; j < predBegin_[static_cast<size_t>(cur) + 1]; ++j) {
        if (!done[static_cast<size_t>(preds_[j].node)]) {
          next = preds_[j].node;
          // `cur` waits for `next` through this link.
          walk.back().second = preds_[j].kind;
          break;
        }
      }
      if (next < 0) break;  // cannot happen: a left-over node has a left-over predecessor
      cur = next;
    }
    if (seen.count(cur)) {
      std::vector<std::pair<int32_t, LinkKind>> loop(walk.begin() + static_cast<long>(seen[cur]), walk.end());
      std::reverse(loop.begin(), loop.end());  // forward: each node waits for the previous one
      for (auto& [node, link] : loop) {
        ChainStep s;
        s.event = nodeEvent_[static_cast<size_t>(node)];
        s.group = nodeGroup_[static_cast<size_t>(node)];
        s.via = link;
        s.atEnd = s.event < 0 || endNode(s.event) == node;
        if (!cycle_.empty() && s.event >= 0 && cycle_.back().event == s.event) {
          cycle_.back().atEnd = true;
          continue;
        }
        cycle_.push_back(s);
      }
    }
  }
}

void HappensBefore::restrictRunsTo(const HappensBefore& other) {
  for (size_t e = 0; e < runs_.size() && e < other.runs_.size(); ++e) runs_[e] = runs_[e] && other.runs_[e];
}

bool HappensBefore::clockReaches(const Event& x, int32_t v) const {
  if (v == endNode(x.id)) return true;
  int32_t c = clockOf_[static_cast<size_t>(x.stream)];
  return vc_[static_cast<size_t>(v) * width_ + static_cast<size_t>(c)] >= x.streamPos;
}

bool HappensBefore::reaches(int32_t a, int32_t v) const {
  const Event& x = g_.events[static_cast<size_t>(a)];
  if (clocked(x.stream)) return clockReaches(x, v);
  // An unclocked communication: through its successors (the Waits on it, rendezvous hubs), the
  // first clocked ones decide.
  if (!runs(a)) return false;
  std::vector<int32_t> stack{endNode(a)};
  std::vector<int32_t> seen{endNode(a)};
  while (!stack.empty()) {
    int32_t u = stack.back();
    stack.pop_back();
    if (u == v) return true;
    for (uint32_t j = succBegin_[static_cast<size_t>(u)]; j < succBegin_[static_cast<size_t>(u) + 1]; ++j) {
      int32_t w = succs_[j].node;
      if (std::find(seen.begin(), seen.end(), w) != seen.end()) continue;
      seen.push_back(w);
      int32_t e = nodeEvent_[static_cast<size_t>(w)];
      if (e >= 0 && clocked(g_.events[static_cast<size_t>(e)].stream) && startNode(e) == endNode(e)) {
        if (w == v || clockReaches(g_.events[static_cast<size_t>(e)], v)) return true;
        continue;
      }
      stack.push_back(w);
    }
  }
  return false;
}

bool HappensBefore::ordered(int32_t a, int32_t b) const {
  if (a == b) return false;
  const Event& x = g_.events[static_cast<size_t>(a)];
  const Event& y = g_.events[static_cast<size_t>(b)];
  if (clocked(x.stream) && x.stream == y.stream) return x.streamPos < y.streamPos && runs(a);
  return reaches(a, startNode(b));
}

std::vector<ChainStep> HappensBefore::chain(int32_t a, int32_t b) const {
  if (!ordered(a, b)) return {};
  int32_t target = endNode(a);
  std::unordered_map<int32_t, std::pair<int32_t, LinkKind>> parent;  // node -> (successor, link)
  std::deque<int32_t> queue{startNode(b)};
  parent[startNode(b)] = {-1, LinkKind::kInternal};
  bool found = startNode(b) == target;
  while (!queue.empty() && !found) {
    int32_t v = queue.front();
    queue.pop_front();
    for (uint32_t j = predBegin_[static_cast<size_t>(v)]; j < predBegin_[static_cast<size_t>(v) + 1]; ++j) {
      int32_t u = preds_[j].node;
      if (parent.count(u) || !reaches(a, u)) continue;
      parent[u] = {v, preds_[j].kind};
      if (u == target) {
        found = true;
        break;
      }
      queue.push_back(u);
    }
  }
  if (!found) return {};
  std::vector<ChainStep> steps;
  int32_t v = target;
  LinkKind via = LinkKind::kInternal;
  while (v >= 0) {
    ChainStep s;
    s.event = nodeEvent_[static_cast<size_t>(v)];
    s.group = nodeGroup_[static_cast<size_t>(v)];
    s.via = via;
    s.atEnd = s.event < 0 || endNode(s.event) == v;
    if (!(steps.size() && s.event >= 0 && steps.back().event == s.event)) steps.push_back(s);
    auto [next, link] = parent[v];
    via = link;
    v = next;
  }
  return steps;
}

}  // namespace braid::sem
