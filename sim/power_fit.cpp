#include "sim/power_fit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "ir/error.h"
#include "sim/median.h"
#include "sim/power_state.h"

namespace braid::sim {

namespace {

// A run that follows an idle gap of more than a millisecond: an idle GPU lowers its clocks, and
// the first run after the gap pays for their ramp back up (docs/EXEC.md, Power state), which is
// not the cap. It is simulated but not compared.
bool afterIdle(const PowerMeasurement& s, size_t i) {
  if (i == 0) return true;
  const auto& prev = s.runs[i - 1];
  return s.runs[i].startUs - (prev.startUs + prev.us) > 1000;
}

double sumSquares(const PowerModel& m, double base, const std::vector<PowerMeasurement>& series, size_t* count) {
  double sum = 0;
  size_t n = 0;
  for (const auto& s : series) {
    std::vector<double> pred = predictPowerRuns(m, base, s);
    for (size_t i = 0; i < s.runs.size(); ++i) {
      if (afterIdle(s, i)) continue;
      double e = (pred[i] - s.runs[i].us) / s.runs[i].us;
      sum += e * e;
      ++n;
    }
  }
  if (count) *count = n;
  return sum;
}

}  // namespace

std::vector<double> predictPowerRuns(const PowerModel& m, double baseUs, const PowerMeasurement& series) {
  std::vector<double> out;
  PowerState st(m, 0);
  for (size_t i = 0; i < series.runs.size(); ++i) {
    if (i > 0) {
      const auto& prev = series.runs[i - 1];
      double gap = series.runs[i].startUs - (prev.startUs + prev.us);
      if (gap > 0) {
        st.setLoad(0);
        st.advance(gap);
      }
    }
    out.push_back(runFullLoad(st, baseUs));
  }
  return out;
}

PowerFit fitPowerCap(const std::vector<PowerMeasurement>& series) {
  if (series.empty()) throw Error("power: no measurements to fit");
  for (const auto& s : series)
    if (!(s.gemm == series.front().gemm)) throw Error("power: the series time different GEMMs; fit one at a time");
  const PowerMeasurement* sustained = nullptr;
  for (const auto& s : series)
    if (s.bursts == 1 && s.duty == 1 && (!sustained || s.runs.size() > sustained->runs.size())) sustained = &s;
  if (!sustained || sustained->runs.size() < 8)
    throw Error("power: no sustained series (one burst of at least 8 runs back to back) to see the capped speed in");

  PowerFit f;
  // Full clocks: the runs of the first 5 ms of every series that follow another run directly.
  std::vector<double> early;
  for (const auto& s : series)
    for (size_t i = 0; i < s.runs.size() && s.runs[i].startUs < 5000; ++i)
      if (!afterIdle(s, i)) early.push_back(s.runs[i].us);
  if (early.empty())
    for (const auto& s : series) early.push_back(s.runs.front().us);
  f.baseUs = median(early);
  // At the cap: the last quarter of the sustained series.
  std::vector<double> late;
  const std::vector<PowerMeasurement::Run>& runs = sustained->runs;
  for (size_t i = runs.size() * 3 / 4; i < runs.size(); ++i) late.push_back(runs[i].us);
  const double slowdown = median(late) / f.baseUs;
  f.rmsWithout = std::sqrt(sumSquares(PowerModel{}, f.baseUs, series, &f.runs) / std::max<size_t>(f.runs, 1));
  char line[320];
  if (slowdown < 1.02) {
    f.rmsError = f.rmsWithout;
    std::snprintf(line, sizeof line,
                  "power: %zu runs of one GEMM under sustained load end %.1f%% slower than they start: no power cap "
                  "in reach (gpu.power_cap left out)",
                  f.runs, 100 * (slowdown - 1));
    f.summary = line;
    return f;
  }
  // A grid over the cap and the time constant at the observed slowdown, then a local search over
  // all three (the cost is cheap: one pass of the state over every run).
  PowerModel best;
  double bestCost = INFINITY;
  auto consider = [&](double cap, double tauUs, double s) {
    if (cap <= 0.05 || cap >= 0.995 || tauUs <= 10 || s <= 1) return;
    PowerModel m{cap, tauUs, s};
    double c = sumSquares(m, f.baseUs, series, nullptr);
    if (c < bestCost) bestCost = c, best = m;
  };
  for (double cap = 0.50; cap <= 0.985; cap += 0.01)
    for (double lt = std::log(500.0); lt <= std::log(2e6); lt += std::log(2e6 / 500.0) / 48)  // 0.5 ms .. 2 s
      consider(cap, std::exp(lt), slowdown);
  double dc = 0.01, dt = 0.1, ds = 0.02;
  for (int round = 0; round < 60 && dc > 1e-4; ++round) {
    PowerModel at = best;
    for (int a = -1; a <= 1; ++a)
      for (int b = -1; b <= 1; ++b)
        for (int c = -1; c <= 1; ++c)
          consider(at.capLoad + a * dc, at.timeConstantUs * std::exp(b * dt), at.cappedSlowdown * (1 + c * ds));
    if (best == at) dc /= 2, dt /= 2, ds /= 2;
  }
  f.model = best;
  f.rmsError = std::sqrt(bestCost / std::max<size_t>(f.runs, 1));
  std::snprintf(line, sizeof line,
                "power: fitted to %zu runs of one GEMM (%.1f us at full clocks) in %zu series: cap_load %.3f, "
                "time_constant_ms %.2f, capped_slowdown %.3f; rms error per run %.2f%% (%.2f%% without a cap)",
                f.runs, f.baseUs, series.size(), best.capLoad, best.timeConstantUs / 1e3, best.cappedSlowdown,
                100 * f.rmsError, 100 * f.rmsWithout);
  f.summary = line;
  return f;
}

}  // namespace braid::sim
