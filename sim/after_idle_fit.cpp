#include "sim/after_idle_fit.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "ir/error.h"
#include "sim/median.h"

namespace braid::sim {

namespace {

// One way of issuing's curve, from its reps pooled by idle time.
AfterIdle fitCurve(const std::map<double, std::vector<double>>& byIdle, int64_t ops, bool graph, std::string& note) {
  const char* how = graph ? "replayed as a CUDA graph" : "launched";
  auto awake = byIdle.find(0.0);
  if (awake == byIdle.end())
    throw Error(std::string("after_idle: no ") + (graph ? "graph" : "launched") +
                " run with idle_ms 0 (the back-to-back reference every delay is measured against)");
  const double awakeUs = median(awake->second);
  // Each idle time's delay, the median of its reps' differences from the back-to-back reps (sim/
  // median.h: the host's issue falls into two modes, and a median against a median flips between
  // them: +340 us after 20 ms idle in one pass of call EA, +130 in the next, where the pairwise
  // median gave +260 and +270), then made non-decreasing by pooling adjacent violators (weighted
  // by their reps): a longer idle never wakes the host faster, and pooling, unlike a running
  // maximum, does not carry one noisy short idle's delay to every longer one.
  struct Block {
    double sum = 0, weight = 0;
    size_t points = 0;
    double mean() const { return sum / weight; }
  };
  std::vector<Block> blocks;
  std::vector<double> idles;
  for (const auto& [idleMs, us] : byIdle) {
    if (idleMs == 0) continue;
    const double w = static_cast<double>(us.size());
    blocks.push_back({medianShift(us, awake->second) * w, w, 1});
    idles.push_back(idleMs);
    while (blocks.size() > 1 && blocks[blocks.size() - 2].mean() > blocks.back().mean()) {
      Block b = blocks.back();
      blocks.pop_back();
      blocks.back().sum += b.sum, blocks.back().weight += b.weight, blocks.back().points += b.points;
    }
  }
  AfterIdle c;
  double delay = 0;
  std::string points;
  size_t k = 0;
  for (const Block& b : blocks)
    for (size_t i = 0; i < b.points; ++i, ++k) {
      delay = std::max(0.0, b.mean());
      c.points.emplace_back(idles[k] * 1e3, delay);
      char t[48];
      std::snprintf(t, sizeof t, "%s%g ms +%.1f us", points.empty() ? "" : ", ", idles[k], delay);
      points += t;
    }
  char head[200];
  std::snprintf(head, sizeof head, "after idle: %lld host operations %s in %.1f us back to back (median of %zu), after an idle gap: ",
                static_cast<long long>(ops), how, awakeUs, awake->second.size());
  const std::string field = graph ? "host.after_idle_graph" : "host.after_idle";
  if (c.points.empty() || delay < 1) {
    note = std::string(head) + (points.empty() ? "no gap measured" : points) + "; under a microsecond: no delay (" + field +
           " left out)";
    return {};
  }
  note = std::string(head) + points + " (" + field + ")";
  return c;
}

}  // namespace

AfterIdleFit fitAfterIdle(const std::vector<AfterIdleMeasurement>& runs) {
  AfterIdleFit f;
  std::map<double, std::vector<double>> byIdle[2];  // launched, graph: every rep of one idle time, pooled
  int64_t ops[2] = {-1, -1};
  for (const AfterIdleMeasurement& w : runs) {
    const int g = w.graph ? 1 : 0;
    if (ops[g] >= 0 && w.ops != ops[g])
      throw Error("after_idle: every " + std::string(g ? "graph" : "launched") +
                  " entry must issue the same number of host operations (found " + std::to_string(w.ops) + " beside " +
                  std::to_string(ops[g]) + ")");
    ops[g] = w.ops;
    auto& v = byIdle[g][w.idleMs];
    v.insert(v.end(), w.us.begin(), w.us.end());
  }
  for (int g = 0; g < 2; ++g) {
    if (byIdle[g].empty()) continue;
    std::string note;
    (g ? f.graph : f.launched) = fitCurve(byIdle[g], ops[g], g == 1, note);
    (g ? f.graphMeasured : f.launchedMeasured) = true;
    f.notes.push_back(note);
  }
  return f;
}

}  // namespace braid::sim
