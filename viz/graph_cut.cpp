#include "viz/graph_cut.h"

#include <algorithm>
#include <deque>

namespace braid::viz {

Selection selectEvents(const sem::EventGraph& g, const std::set<int32_t>& focus, const GraphDrawOptions& o) {
  const size_t n = g.events.size();
  Selection s;
  std::set<int64_t> ranks(o.ranks.begin(), o.ranks.end());
  auto inRanks = [&](int32_t e) { return ranks.empty() || ranks.count(g.events[static_cast<size_t>(e)].rank); };
  int64_t candidates = 0;
  for (size_t e = 0; e < n; ++e) candidates += inRanks(static_cast<int32_t>(e));
  s.keep.assign(n, false);
  auto finish = [&]() {
    s.kept = std::count(s.keep.begin(), s.keep.end(), true);
    return s;
  };
  if (candidates <= o.maxEvents) {
    for (size_t e = 0; e < n; ++e) s.keep[e] = inRanks(static_cast<int32_t>(e));
    if (!ranks.empty())
      s.notes.push_back("showing ranks " + [&] {
        std::string r;
        for (int64_t x : ranks) r += (r.empty() ? "" : ", ") + std::to_string(x);
        return r;
      }());
    return finish();
  }
  std::vector<int32_t> seeds;
  for (int32_t e : focus)
    if (inRanks(e)) seeds.push_back(e);
  if (!seeds.empty()) {
    // Undirected neighbours: ordering edges and the other members of a collective.
    std::vector<std::vector<int32_t>> adj(n);
    for (const sem::Edge& e : g.edges) {
      adj[static_cast<size_t>(e.from)].push_back(e.to);
      adj[static_cast<size_t>(e.to)].push_back(e.from);
    }
    for (const sem::CollectiveGroup& grp : g.groups)
      for (int32_t a : grp.members)
        for (int32_t b : grp.members)
          if (a != b) adj[static_cast<size_t>(a)].push_back(b);
    for (int radius = std::max(0, o.neighbourhood);; --radius) {
      std::vector<int> dist(n, -1);
      std::deque<int32_t> queue;
      for (int32_t e : seeds) {
        dist[static_cast<size_t>(e)] = 0;
        queue.push_back(e);
      }
      while (!queue.empty()) {
        int32_t e = queue.front();
        queue.pop_front();
        if (dist[static_cast<size_t>(e)] == radius) continue;
        for (int32_t x : adj[static_cast<size_t>(e)])
          if (dist[static_cast<size_t>(x)] < 0 && inRanks(x)) {
            dist[static_cast<size_t>(x)] = dist[static_cast<size_t>(e)] + 1;
            queue.push_back(x);
          }
      }
      int64_t count = std::count_if(dist.begin(), dist.end(), [](int d) { return d >= 0; });
      if (count <= o.maxEvents || radius == 0) {
        for (size_t e = 0; e < n; ++e) s.keep[e] = dist[e] >= 0;
        finish();
        s.notes.push_back("showing " + std::to_string(s.kept) + " of " + std::to_string(n) +
                          " events: the findings' events and their neighbours within " + std::to_string(radius) +
                          " step" + (radius == 1 ? "" : "s") + "; \"...\" stands for events left out");
        return s;
      }
    }
  }
  // No findings: the first events of the first rank drawn.
  int64_t firstRank = -1;
  for (size_t e = 0; e < n && firstRank < 0; ++e)
    if (inRanks(static_cast<int32_t>(e))) firstRank = g.events[e].rank;
  int64_t taken = 0;
  for (size_t e = 0; e < n && taken < o.maxEvents; ++e)
    if (g.events[e].rank == firstRank) {
      s.keep[e] = true;
      ++taken;
    }
  finish();
  s.notes.push_back("showing the first " + std::to_string(s.kept) + " of " + std::to_string(n) + " events, on rank " +
                    std::to_string(firstRank) + " (pass ranks to choose others); \"...\" stands for events left out");
  return s;
}

}  // namespace braid::viz
