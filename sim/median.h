// The median of a sample (the mean of the middle two for an even count; 0 for none): how the
// simulator's consumers of measurements summarize repeated times (calibration fits, rank skew,
// the overlap model's beside-times, the power fit).
#pragma once

#include <algorithm>
#include <vector>

namespace braid::sim {

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

}  // namespace braid::sim
