#include "sim/rank_skew.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>

#include "sim/median.h"

namespace braid::sim {

namespace {

bool isCollective(const TimelineOp& op) {
  if (op.kind != TimelineOpKind::kCommunication) return false;
  for (const char* p2p : {"EndCoalescing", "Send", "Recv", "P2P"})
    if (op.name.rfind(p2p, 0) == 0) return false;
  return true;
}

}  // namespace

std::vector<double> rankStartOffsets(const Timeline& measured) {
  int64_t ranks = measured.ranks;
  for (const auto& op : measured.ops) ranks = std::max<int64_t>(ranks, op.rank + 1);
  std::vector<double> start(static_cast<size_t>(std::max<int64_t>(ranks, 0)), 0);
  if (ranks < 2) return start;
  // (line, iteration, occurrence) -> end time, per rank.
  using Key = std::tuple<int, std::string, int>;
  std::vector<std::map<Key, double>> ends(static_cast<size_t>(ranks));
  std::vector<const TimelineOp*> ops;
  for (const auto& op : measured.ops)
    if (isCollective(op) && op.rank >= 0) ops.push_back(&op);
  std::stable_sort(ops.begin(), ops.end(), [](const TimelineOp* a, const TimelineOp* b) { return a->startUs < b->startUs; });
  std::map<std::tuple<int64_t, int, std::string>, int> seen;
  for (const TimelineOp* op : ops) {
    int n = seen[{op->rank, op->line, op->iteration}]++;
    ends[static_cast<size_t>(op->rank)][{op->line, op->iteration, n}] = op->endUs;
  }
  for (size_t r = 1; r < ends.size(); ++r) {
    std::vector<double> d;
    for (const auto& [key, end] : ends[r])
      if (auto it = ends[0].find(key); it != ends[0].end()) d.push_back(it->second - end);
    if (!d.empty()) start[r] = median(d);  // rank r's start minus rank 0's
  }
  double earliest = *std::min_element(start.begin(), start.end());
  for (double& s : start) s -= earliest;
  return start;
}

}  // namespace braid::sim
