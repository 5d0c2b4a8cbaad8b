// Validation of a prediction against a measurement (validation.h): matching ops, the error
// arithmetic, overlap on both sides, and the reports.
#include "viz/validation.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <tuple>

#include "ir/error.h"
#include "viz/overlap.h"

namespace braid::viz {

// Durations under this many microseconds count as zero-length markers.
static constexpr double kMarkerUs = 1e-6;

double OpComparison::error() const {
  if (measuredUs <= kMarkerUs) return predictedUs <= kMarkerUs ? 0.0 : (predictedUs - measuredUs) / kMarkerUs;
  return (predictedUs - measuredUs) / measuredUs;
}

double Validation::makespanError() const {
  return measuredMakespanUs > 0 ? (predictedMakespanUs - measuredMakespanUs) / measuredMakespanUs : 0;
}

static double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

double Validation::medianAbsOpError() const {
  std::vector<double> v;
  for (const auto& o : ops) v.push_back(std::abs(o.error()));
  return median(v);
}

double Validation::maxAbsOpError() const {
  double x = 0;
  for (const auto& o : ops) x = std::max(x, std::abs(o.error()));
  return x;
}

static const std::string& streamName(const Timeline& t, const TimelineOp& op) {
  return t.streams[static_cast<size_t>(op.stream)].name;
}

static std::string describe(const Timeline& t, const TimelineOp& op) {
  std::string s = "rank " + std::to_string(op.rank) + ", " + streamName(t, op) + ": " + op.name + " (line " +
                  std::to_string(op.line);
  if (!op.iteration.empty()) s += ", " + op.iteration;
  return s + ")";
}

using Key = std::tuple<int64_t, std::string, int, std::string, std::string>;  // rank, stream, line, iteration, name

// The first word of an op's name: the measured and the predicted timeline name the same statement
// alike only up to it ("Allgather 0" / "Allgather", "Wait Communication 0" / "Wait Allgather 0").
static std::string firstWord(const std::string& name) { return name.substr(0, name.find(' ')); }

// Pairs ops with equal keys in start order; `withStream` false leaves the stream out of the key,
// `wholeName` false keeps only the name's first word (with the op's kind).
static void matchPass(const Timeline& meas, const Timeline& pred, std::vector<int32_t>& partner,
                      std::vector<bool>& predTaken, bool withStream, bool wholeName = true) {
  auto keyOf = [&](const Timeline& t, const TimelineOp& op) {
    std::string name = wholeName ? op.name : firstWord(op.name) + "/" + std::to_string(static_cast<int>(op.kind));
    return Key{op.rank, withStream ? streamName(t, op) : "", op.line, op.iteration, name};
  };
  std::map<Key, std::vector<int32_t>> byKey;  // predicted ops not yet matched, in start order
  std::vector<int32_t> order(pred.ops.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return pred.ops[a].startUs < pred.ops[b].startUs; });
  for (int32_t i : order)
    if (!predTaken[i]) byKey[keyOf(pred, pred.ops[i])].push_back(i);
  std::vector<int32_t> morder(meas.ops.size());
  for (size_t i = 0; i < morder.size(); ++i) morder[i] = static_cast<int32_t>(i);
  std::stable_sort(morder.begin(), morder.end(),
                   [&](int32_t a, int32_t b) { return meas.ops[a].startUs < meas.ops[b].startUs; });
  std::map<Key, size_t> used;
  for (int32_t i : morder) {
    if (partner[i] >= 0) continue;
    Key k = keyOf(meas, meas.ops[i]);
    auto it = byKey.find(k);
    if (it == byKey.end()) continue;
    size_t& u = used[k];
    if (u >= it->second.size()) continue;
    partner[i] = it->second[u++];
    predTaken[partner[i]] = true;
  }
}

static OverlapComparison overlapOfRank(const Timeline& meas, const Timeline& pred, int64_t rank) {
  OverlapComparison c;
  c.rank = rank;
  RankOverlap m = rankOverlap(meas, rank), p = rankOverlap(pred, rank);
  c.measuredCommUs = totalLength(m.communication);
  c.measuredHiddenUs = totalLength(m.hidden);
  c.predictedCommUs = totalLength(p.communication);
  c.predictedHiddenUs = totalLength(p.hidden);
  return c;
}

Validation compareTimelines(const Timeline& meas, const Timeline& pred) {
  std::set<int64_t> predRanks, measRanks;
  for (const auto& op : pred.ops) predRanks.insert(op.rank);
  for (const auto& op : meas.ops) measRanks.insert(op.rank);
  if (meas.ops.empty()) throw Error("the measured timeline has no operations");
  for (int64_t r : measRanks)
    if (!predRanks.count(r))
      throw Error("the measured timeline has rank " + std::to_string(r) + ", which the simulated program (" +
                  std::to_string(pred.ranks) + " ranks) does not run; simulate as many ranks as were measured");
  Validation v;
  v.measuredMakespanUs = meas.makespanUs();
  v.predictedMakespanUs = pred.makespanUs();
  std::vector<int32_t> partner(meas.ops.size(), -1);
  std::vector<bool> predTaken(pred.ops.size(), false);
  matchPass(meas, pred, partner, predTaken, true);
  matchPass(meas, pred, partner, predTaken, false);
  matchPass(meas, pred, partner, predTaken, false, false);

  std::map<std::tuple<std::string, int, int>, std::vector<size_t>> groupOf;  // (name, line, kind) -> ops
  for (size_t i = 0; i < meas.ops.size(); ++i) {
    const TimelineOp& m = meas.ops[i];
    if (partner[i] < 0) {
      v.unmatchedMeasured.push_back(describe(meas, m));
      continue;
    }
    const TimelineOp& p = pred.ops[static_cast<size_t>(partner[i])];
    // A measured Synchronize or Wait spans from its post to when it was satisfied (CUDA events);
    // the simulator draws it as an instant: a marker either way, not an op to time.
    bool marker = m.kind == TimelineOpKind::kSync || m.kind == TimelineOpKind::kWait;
    if (marker || (m.durationUs() <= kMarkerUs && p.durationUs() <= kMarkerUs)) {
      ++v.matchedMarkers;
      continue;
    }
    OpComparison c{m.rank, streamName(meas, m), m.name, m.line, m.iteration, m.kind,
                   m.startUs, m.durationUs(), p.startUs, p.durationUs()};
    groupOf[{m.name, m.line, static_cast<int>(m.kind)}].push_back(v.ops.size());
    v.ops.push_back(std::move(c));
  }
  for (size_t i = 0; i < pred.ops.size(); ++i)
    if (!predTaken[i] && measRanks.count(pred.ops[i].rank)) v.unmatchedPredicted.push_back(describe(pred, pred.ops[i]));

  for (const auto& [key, members] : groupOf) {
    OpGroupError g;
    g.name = std::get<0>(key);
    g.line = std::get<1>(key);
    g.kind = static_cast<TimelineOpKind>(std::get<2>(key));
    g.count = members.size();
    std::vector<double> errs;
    for (size_t i : members) {
      g.measuredUs += v.ops[i].measuredUs;
      g.predictedUs += v.ops[i].predictedUs;
      errs.push_back(v.ops[i].error());
    }
    g.medianError = median(errs);
    v.groups.push_back(g);
  }
  // The groups whose error costs the most time first: where the model is most wrong.
  std::stable_sort(v.groups.begin(), v.groups.end(), [](const OpGroupError& a, const OpGroupError& b) {
    return std::abs(a.predictedUs - a.measuredUs) > std::abs(b.predictedUs - b.measuredUs);
  });

  OverlapComparison all;
  for (int64_t r : measRanks) {
    OverlapComparison c = overlapOfRank(meas, pred, r);
    all.measuredCommUs += c.measuredCommUs;
    all.measuredHiddenUs += c.measuredHiddenUs;
    all.predictedCommUs += c.predictedCommUs;
    all.predictedHiddenUs += c.predictedHiddenUs;
    v.overlap.push_back(c);
  }
  v.overlap.insert(v.overlap.begin(), all);
  return v;
}

static std::string pct(double f) {
  char b[32];
  std::snprintf(b, sizeof b, "%+.1f%%", 100 * f);
  return b;
}

std::string validationReport(const Validation& v, size_t maxOps) {
  std::ostringstream os;
  char line[640];
  std::snprintf(line, sizeof line, "end to end: measured %.1f us, predicted %.1f us, error %s\n", v.measuredMakespanUs,
                v.predictedMakespanUs, pct(v.makespanError()).c_str());
  os << line;
  std::snprintf(line, sizeof line,
                "operations: %zu matched (median |error| %.1f%%, max %.1f%%), %zu zero-length markers matched, %zu "
                "measured and %zu predicted unmatched\n",
                v.ops.size(), 100 * v.medianAbsOpError(), 100 * v.maxAbsOpError(), v.matchedMarkers,
                v.unmatchedMeasured.size(), v.unmatchedPredicted.size());
  os << line;
  os << "\noverlap (communication hidden under device work):\n";
  for (const auto& c : v.overlap) {
    std::snprintf(line, sizeof line, "  %-9s measured %5.1f%% of %10.1f us, predicted %5.1f%% of %10.1f us\n",
                  c.rank < 0 ? "all ranks" : ("rank " + std::to_string(c.rank)).c_str(), 100 * c.measuredFraction(),
                  c.measuredCommUs, 100 * c.predictedFraction(), c.predictedCommUs);
    os << line;
  }
  os << "\nby statement (largest time error first):\n";
  std::snprintf(line, sizeof line, "  %-24s %5s %-13s %6s %13s %13s %8s %9s\n", "op", "line", "kind", "count",
                "measured_us", "predicted_us", "error", "median");
  os << line;
  for (const auto& g : v.groups) {
    std::snprintf(line, sizeof line, "  %-24s %5d %-13s %6zu %13.1f %13.1f %8s %9s\n", g.name.c_str(), g.line,
                  timelineOpKindName(g.kind), g.count, g.measuredUs, g.predictedUs, pct(g.error()).c_str(),
                  pct(g.medianError).c_str());
    os << line;
  }
  if (maxOps > 0 && !v.ops.empty()) {
    std::vector<size_t> order(v.ops.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return std::abs(v.ops[a].error()) > std::abs(v.ops[b].error());
    });
    os << "\nlargest per-op errors:\n";
    std::snprintf(line, sizeof line, "  %4s  %-28s %-20s %11s %11s %8s %10s\n", "rank", "stream", "op", "measured",
                  "predicted", "error", "start_err");
    os << line;
    for (size_t i = 0; i < std::min(maxOps, order.size()); ++i) {
      const OpComparison& c = v.ops[order[i]];
      std::string op = c.name + ":" + std::to_string(c.line) + (c.iteration.empty() ? "" : " " + c.iteration);
      std::snprintf(line, sizeof line, "  %4lld  %-28s %-20s %11.1f %11.1f %8s %+10.1f\n",
                    static_cast<long long>(c.rank), c.stream.c_str(), op.c_str(), c.measuredUs, c.predictedUs,
                    pct(c.error()).c_str(), c.startErrorUs());
      os << line;
    }
  }
  auto listSome = [&](const char* what, const std::vector<std::string>& v) {
    if (v.empty()) return;
    os << "\nunmatched " << what << " operations (" << v.size() << "):\n";
    for (size_t i = 0; i < std::min<size_t>(v.size(), 10); ++i) os << "  " << v[i] << "\n";
    if (v.size() > 10) os << "  ... " << v.size() - 10 << " more\n";
  };
  listSome("measured", v.unmatchedMeasured);
  listSome("predicted", v.unmatchedPredicted);
  return os.str();
}

std::string validationJson(const Validation& v) {
  using json = nlohmann::ordered_json;
  json j;
  j["measured_makespan_us"] = v.measuredMakespanUs;
  j["predicted_makespan_us"] = v.predictedMakespanUs;
  j["makespan_error"] = v.makespanError();
  j["median_abs_op_error"] = v.medianAbsOpError();
  j["max_abs_op_error"] = v.maxAbsOpError();
  j["matched_markers"] = v.matchedMarkers;
  j["overlap"] = json::array();
  for (const auto& c : v.overlap)
    j["overlap"].push_back({{"rank", c.rank < 0 ? json(nullptr) : json(c.rank)},
                            {"measured_comm_us", c.measuredCommUs},
                            {"measured_hidden_fraction", c.measuredFraction()},
                            {"predicted_comm_us", c.predictedCommUs},
                            {"predicted_hidden_fraction", c.predictedFraction()}});
  j["statements"] = json::array();
  for (const auto& g : v.groups)
    j["statements"].push_back({{"op", g.name},
                               {"line", g.line},
                               {"kind", timelineOpKindName(g.kind)},
                               {"count", g.count},
                               {"measured_us", g.measuredUs},
                               {"predicted_us", g.predictedUs},
                               {"error", g.error()},
                               {"median_error", g.medianError}});
  j["ops"] = json::array();
  for (const auto& c : v.ops)
    j["ops"].push_back({{"rank", c.rank},
                        {"stream", c.stream},
                        {"op", c.name},
                        {"line", c.line},
                        {"iteration", c.iteration},
                        {"measured_start_us", c.measuredStartUs},
                        {"measured_us", c.measuredUs},
                        {"predicted_start_us", c.predictedStartUs},
                        {"predicted_us", c.predictedUs},
                        {"error", c.error()}});
  j["unmatched_measured"] = v.unmatchedMeasured;
  j["unmatched_predicted"] = v.unmatchedPredicted;
  return j.dump(1);
}

Timeline sideBySide(const Timeline& measured, const Timeline& predicted) {
  Timeline t;
  t.source = "measured";  // the schema knows two sources; meta says this holds both
  t.meta["side_by_side"] = "streams named \"measured: ...\" and \"predicted: ...\"";
  t.program = measured.program.empty() ? predicted.program : measured.program;
  t.machine = measured.machine + " / " + predicted.machine;
  t.ranks = std::max(measured.ranks, predicted.ranks);
  for (const Timeline* part : {&measured, &predicted}) {
    const std::string prefix = part == &measured ? "measured: " : "predicted: ";
    int32_t streamBase = static_cast<int32_t>(t.streams.size());
    int32_t opBase = static_cast<int32_t>(t.ops.size());
    for (TimelineStream s : part->streams) {
      s.id += streamBase;
      s.name = prefix + s.name;
      t.streams.push_back(std::move(s));
    }
    for (TimelineOp op : part->ops) {
      op.id += opBase;
      op.stream += streamBase;
      t.ops.push_back(std::move(op));
    }
    for (TimelineEdge e : part->edges) {
      e.from += opBase;
      e.to += opBase;
      t.edges.push_back(e);
    }
    for (const auto& [k, v] : part->meta) t.meta[prefix.substr(0, prefix.size() - 2) + "." + k] = v;
  }
  return t;
}

}  // namespace braid::viz
