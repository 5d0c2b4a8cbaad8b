#include "viz/rank_groups.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace braid::viz {

namespace {

// A rank's streams with ops, in stream id order, each with its ops in start order.
struct RankShape {
  std::vector<TimelineStreamKind> laneKinds;
  std::vector<std::vector<const TimelineOp*>> lanes;
};

std::map<int64_t, RankShape> shapesOf(const Timeline& t) {
  std::map<int64_t, std::map<int32_t, std::vector<const TimelineOp*>>> byStream;
  for (const TimelineOp& op : t.ops) byStream[op.rank][op.stream].push_back(&op);
  std::map<int64_t, RankShape> shapes;
  for (auto& [rank, streams] : byStream) {
    RankShape& s = shapes[rank];
    for (auto& [stream, ops] : streams) {
      std::stable_sort(ops.begin(), ops.end(),
                       [](const TimelineOp* a, const TimelineOp* b) { return a->startUs < b->startUs; });
      s.laneKinds.push_back(t.streams[static_cast<size_t>(stream)].kind);
      s.lanes.push_back(std::move(ops));
    }
  }
  return shapes;
}

bool sameShape(const RankShape& a, const RankShape& b, double tol) {
  if (a.laneKinds != b.laneKinds) return false;
  for (size_t l = 0; l < a.lanes.size(); ++l) {
    const auto& x = a.lanes[l];
    const auto& y = b.lanes[l];
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      if (x[i]->kind != y[i]->kind || x[i]->name != y[i]->name) return false;
      if (std::fabs(x[i]->startUs - y[i]->startUs) > tol || std::fabs(x[i]->endUs - y[i]->endUs) > tol) return false;
    }
  }
  return true;
}

}  // namespace

std::vector<RankGroup> groupIdenticalRanks(const Timeline& t, double toleranceUs) {
  std::map<int64_t, RankShape> shapes = shapesOf(t);
  std::vector<RankGroup> groups;
  for (const auto& [rank, shape] : shapes) {
    RankGroup* match = nullptr;
    if (toleranceUs >= 0)
      for (RankGroup& g : groups)
        if (sameShape(shapes.at(g.representative()), shape, toleranceUs)) {
          match = &g;
          break;
        }
    if (match) {
      match->ranks.push_back(rank);
    } else {
      groups.push_back({{rank}});
    }
  }
  return groups;
}

std::string rankListStr(const std::vector<int64_t>& ranks) {
  std::string s;
  for (size_t i = 0; i < ranks.size();) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    s += (s.empty() ? "" : ", ") + std::to_string(ranks[i]);
    if (j > i) s += (j == i + 1 ? ", " : "-") + std::to_string(ranks[j]);
    i = j + 1;
  }
  return s;
}

}  // namespace braid::viz
