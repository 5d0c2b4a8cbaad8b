#include "sim/after_idle_fit.h"

#include <algorithm>
#include <cstdio>
#include <map>

#include "ir/error.h"
#include "sim/median.h"

namespace braid::sim {

AfterIdleFit fitAfterIdle(const std::vector<AfterIdleMeasurement>& runs) {
  AfterIdleFit f;
  if (runs.empty()) return f;
  std::map<double, std::vector<double>> byIdle;  // every rep of one idle time, pooled
  for (const AfterIdleMeasurement& w : runs) {
    if (w.ops != runs.front().ops)
      throw Error("after_idle: every entry must time the same number of host operations (found " + std::to_string(w.ops) +
                  " beside " + std::to_string(runs.front().ops) + ")");
    auto& v = byIdle[w.idleMs];
    v.insert(v.end(), w.us.begin(), w.us.end());
  }
  auto awake = byIdle.find(0.0);
  if (awake == byIdle.end())
    throw Error("after_idle: no run with idle_ms 0 (the back-to-back reference every factor is measured against)");
  f.awakeUs = median(awake->second);
  // Each idle time's delay, median against median, then made non-decreasing by pooling adjacent
  // violators (weighted by their reps): a longer idle never wakes the host faster, and pooling,
  // unlike a running maximum, does not carry one noisy short idle's delay to every longer one.
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
    blocks.push_back({(median(us) - f.awakeUs) * w, w, 1});
    idles.push_back(idleMs);
    while (blocks.size() > 1 && blocks[blocks.size() - 2].mean() > blocks.back().mean()) {
      Block b = blocks.back();
      blocks.pop_back();
      blocks.back().sum += b.sum, blocks.back().weight += b.weight, blocks.back().points += b.points;
    }
  }
  double delay = 0;
  std::string points;
  size_t k = 0;
  for (const Block& b : blocks)
    for (size_t i = 0; i < b.points; ++i, ++k) {
      delay = std::max(0.0, b.mean());
      f.curve.points.emplace_back(idles[k] * 1e3, delay);
      char t[48];
      std::snprintf(t, sizeof t, "%s%g ms +%.1f us", points.empty() ? "" : ", ", idles[k], delay);
      points += t;
    }
  char head[200];
  std::snprintf(head, sizeof head,
                "after idle: %lld host operations issued in %.1f us back to back (median of %zu), after an idle gap: ",
                static_cast<long long>(runs.front().ops), f.awakeUs, awake->second.size());
  if (f.curve.points.empty() || delay < 1) {
    f.curve.points.clear();
    f.summary = std::string(head) + (points.empty() ? "no gap measured" : points) +
                "; under a microsecond: the host issues at once (host.after_idle left out)";
    return f;
  }
  f.summary = std::string(head) + points + " (host.after_idle)";
  return f;
}

}  // namespace braid::sim
