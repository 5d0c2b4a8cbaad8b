// The median of a sample (the mean of the middle two for an even count; 0 for none): how the
// simulator's consumers of measurements summarize repeated times (calibration fits, rank skew,
// the overlap model's beside-times, the power fit); and the shift between two samples.
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

// How much later sample `a` runs than sample `b`: the median of every difference a[i] - b[j] (the
// Hodges-Lehmann shift; 0 when either is empty). Where runs fall into two modes (a host that
// issues 100 operations in 550 us in some runs and 800 in others), the difference of the two
// medians jumps by the gap between the modes whenever one sample's median lands in the other mode;
// the pairwise median follows a shift of both modes.
inline double medianShift(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> d;
  d.reserve(a.size() * b.size());
  for (double x : a)
    for (double y : b) d.push_back(x - y);
  return median(std::move(d));
}

}  // namespace braid::sim
