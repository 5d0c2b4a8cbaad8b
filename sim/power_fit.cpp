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

double sumSquares(const PowerModel& m, double base, const std::vector<PowerMeasurement>& series, size_t* count,
                  double load = 1) {
  double sum = 0;
  size_t n = 0;
  for (const auto& s : series) {
    std::vector<double> pred = predictPowerRuns(m, base, s, load);
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

// The GEMM's time at full clocks: the runs of the first 5 ms of every series that follow another
// run directly (the first after an idle gap pays for the clocks' ramp).
double fullClockUs(const std::vector<PowerMeasurement>& series) {
  std::vector<double> early;
  for (const auto& s : series)
    for (size_t i = 0; i < s.runs.size() && s.runs[i].startUs < 5000; ++i)
      if (!afterIdle(s, i)) early.push_back(s.runs[i].us);
  if (early.empty())
    for (const auto& s : series) early.push_back(s.runs.front().us);
  return median(early);
}

const PowerMeasurement* longestSustained(const std::vector<PowerMeasurement>& series) {
  const PowerMeasurement* best = nullptr;
  for (const auto& s : series)
    if (s.bursts == 1 && s.duty == 1 && (!best || s.runs.size() > best->runs.size())) best = &s;
  return best && best->runs.size() >= 8 ? best : nullptr;
}

}  // namespace

std::vector<double> predictPowerRuns(const PowerModel& m, double baseUs, const PowerMeasurement& series,
                                     double load) {
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
    out.push_back(runFullLoad(st, baseUs, load));
  }
  return out;
}

namespace {

// Every other GEMM with a sustained series: the share of a full load's power that gives the fitted
// cap its sustained slowdown (a search over (0.3, 1]), as gpu.power_cap.gemm_power by flops.
void fitGemmPower(PowerFit& f, const std::vector<std::vector<PowerMeasurement>>& byGemm) {
  std::vector<std::pair<double, double>> points = {{f.reference.flops(), 1.0}};
  std::string said;
  for (const auto& g : byGemm) {
    if (g.front().gemm == f.reference) continue;
    const PowerMeasurement* s = longestSustained(g);
    if (!s) continue;
    const double flops = s->gemm.flops();
    auto same = std::find_if(points.begin(), points.end(), [&](const auto& p) { return p.first == flops; });
    if (same != points.end()) continue;  // one weight per size: the first GEMM of those flops
    const std::vector<PowerMeasurement> one = {*s};
    const double base = fullClockUs(one);
    double best = 1, bestCost = INFINITY;
    for (int i = 0; i <= 140; ++i) {  // 0.300, 0.305, ..., 1.000
      const double w = 0.3 + 0.005 * i;
      double c = sumSquares(f.model, base, one, nullptr, w);
      if (c < bestCost) bestCost = c, best = std::min(w, 1.0);
    }
    points.emplace_back(flops, best);
    char b[96];
    std::snprintf(b, sizeof b, "%s%lldx%lldx%lld %.3f", said.empty() ? "" : ", ", static_cast<long long>(s->gemm.m),
                  static_cast<long long>(s->gemm.n), static_cast<long long>(s->gemm.k), best);
    said += b;
  }
  if (points.size() < 2) return;
  std::sort(points.begin(), points.end());
  f.model.gemmPower.points = points;
  f.summary += "; a GEMM's power relative to it (gemm_power): " + said;
}

}  // namespace

PowerFit fitPowerCap(const std::vector<PowerMeasurement>& all) {
  if (all.empty()) throw Error("power: no measurements to fit");
  // The reference: the GEMM with the most series (the benchmark's bursts and duty cycles).
  std::vector<std::vector<PowerMeasurement>> byGemm;
  for (const auto& s : all) {
    auto it = std::find_if(byGemm.begin(), byGemm.end(), [&](const auto& g) { return g.front().gemm == s.gemm; });
    if (it == byGemm.end()) byGemm.push_back({s});
    else it->push_back(s);
  }
  const std::vector<PowerMeasurement>& series =
      *std::max_element(byGemm.begin(), byGemm.end(), [](const auto& a, const auto& b) { return a.size() < b.size(); });
  const PowerMeasurement* sustained = longestSustained(series);
  if (!sustained)
    throw Error("power: no sustained series (one burst of at least 8 runs back to back) to see the capped speed in");

  PowerFit f;
  f.reference = series.front().gemm;
  f.baseUs = fullClockUs(series);
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
    PowerModel m{cap, tauUs, s, {}};
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
                "power: fitted to %zu runs of %lldx%lldx%lld (%.1f us at full clocks) in %zu series: cap_load %.3f, "
                "time_constant_ms %.2f, capped_slowdown %.3f; rms error per run %.2f%% (%.2f%% without a cap)",
                f.runs, static_cast<long long>(f.reference.m), static_cast<long long>(f.reference.n),
                static_cast<long long>(f.reference.k), f.baseUs, series.size(), best.capLoad,
                best.timeConstantUs / 1e3, best.cappedSlowdown, 100 * f.rmsError, 100 * f.rmsWithout);
  f.summary = line;
  fitGemmPower(f, byGemm);
  return f;
}

}  // namespace braid::sim
