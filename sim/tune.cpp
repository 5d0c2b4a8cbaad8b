// Tune candidates, their ranking against the serial (one-chunk) baseline, and its reports.
#include "sim/tune.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "ir/error.h"

namespace braid::sim {

template <typename T>
static void checkAxis(const std::vector<T>& values, const std::string& what) {
  if (values.empty()) throw Error("--" + what + ": no values");
  std::set<T> seen;
  for (const T& v : values)
    if (!seen.insert(v).second) {
      std::ostringstream os;
      os << "--" << what << ": " << v << " given twice";
      throw Error(os.str());
    }
}

std::vector<SweepConfig> tuneCandidates(const TuneSpace& space) {
  checkAxis(space.streams, "streams");
  checkAxis(space.protocols, "protocols");
  checkAxis(space.pipelines, "pipelines");
  std::vector<int64_t> streams = space.streams;
  for (int64_t s : streams)
    if (s <= 0) throw Error("--streams: " + std::to_string(s) + " is not a positive number of streams");
  // Serial is the baseline every speedup is measured against.
  if (std::find(streams.begin(), streams.end(), 1) == streams.end()) streams.push_back(1);
  std::sort(streams.begin(), streams.end());
  std::vector<std::string> pipelines = space.pipelines;
  bool collective = std::find(pipelines.begin(), pipelines.end(), "collective") != pipelines.end();
  std::vector<SweepConfig> out;
  checkAxis(space.pools, "pools");
  checkAxis(space.deferWaits, "defer-waits");
  checkAxis(space.prefetch, "prefetch");
  checkAxis(space.commBackends, "comm-backends");
  for (const std::string& b : space.commBackends)
    if (b != "nccl" && b != "cuda") throw Error("--comm-backends: '" + b + "' is neither nccl nor cuda");
  auto withBackend = [](SweepConfig c, const std::string& b) {
    if (b != "nccl") c.push_back({"comm-backend", b});
    return c;
  };
  for (int64_t pool : space.pools)
    if (pool < 0) throw Error("--pools: " + std::to_string(pool) + " is not a number of streams");
  for (int64_t s : streams) {
    for (const std::string& p : space.protocols) {
      if (s == 1 && !collective)
        for (const std::string& b : space.commBackends)
          out.push_back(withBackend({{"streams", "1"}, {"protocol", p}, {"pipeline", "collective"}}, b));
      for (const std::string& k : pipelines) {
        const bool serial = s == 1 && k == "collective";
        for (int64_t pool : space.pools) {
          if (pool > 0 && (pool >= s || k == "p2p")) continue;
          for (bool defer : space.deferWaits) {
            if (defer && (p == "B" || p == "b")) continue;
            for (bool pre : space.prefetch) {
              if (serial && (pool > 0 || defer || pre)) continue;
              SweepConfig c{{"streams", std::to_string(s)}, {"protocol", p}, {"pipeline", k}};
              if (pool > 0) c.push_back({"pool", std::to_string(pool)});
              if (defer) c.push_back({"defer-waits", "on"});
              if (pre) c.push_back({"prefetch", "on"});
              for (const std::string& b : space.commBackends) out.push_back(withBackend(c, b));
            }
          }
        }
      }
    }
  }
  return out;
}

int64_t streamsOf(const SweepConfig& c) {
  for (const auto& [k, v] : c)
    if (k == "streams") return std::stoll(v);
  return 0;
}

bool isSerial(const SweepConfig& c) {
  for (const auto& [k, v] : c)
    if (k == "pipeline" && v == "p2p") return false;
  return streamsOf(c) == 1;
}

double TuneResult::speedup(const SweepOutcome& o) const {
  if (!serial || !o.ok() || o.makespanUs <= 0) return 0;
  return ranked[*serial].makespanUs / o.makespanUs;
}

TuneResult rankTune(std::vector<SweepOutcome> outcomes) {
  TuneResult r;
  // Ties go to fewer streams: the same time with less machinery.
  std::stable_sort(outcomes.begin(), outcomes.end(), [](const SweepOutcome& a, const SweepOutcome& b) {
    return streamsOf(a.config) < streamsOf(b.config);
  });
  r.ranked = rankSweep(std::move(outcomes));
  std::optional<size_t> pipelined;
  for (size_t i = 0; i < r.ranked.size(); ++i) {
    if (!r.ranked[i].ok()) continue;
    bool one = isSerial(r.ranked[i].config);
    if (one && !r.serial) r.serial = i;
    if (!one && !pipelined) pipelined = i;
  }
  r.pipelinedWins = pipelined && (!r.serial || r.ranked[*pipelined].makespanUs < r.ranked[*r.serial].makespanUs);
  return r;
}

// Failed configurations grouped by their reason, in the order the reasons first appear.
static std::vector<std::pair<std::string, std::vector<std::string>>> failures(const TuneResult& r) {
  std::vector<std::pair<std::string, std::vector<std::string>>> out;
  std::map<std::string, size_t> at;
  for (const auto& o : r.ranked) {
    if (o.ok()) continue;
    auto [it, fresh] = at.emplace(o.error, out.size());
    if (fresh) out.push_back({o.error, {}});
    out[it->second].second.push_back(configStr(o.config));
  }
  return out;
}

std::string tuneTable(const TuneResult& r, size_t top) {
  std::ostringstream os;
  size_t width = 6;
  for (const auto& o : r.ranked) width = std::max(width, configStr(o.config).size());
  char line[512];
  std::snprintf(line, sizeof line, "  %4s  %-*s %12s %9s %14s %10s %8s\n", "#", static_cast<int>(width), "config",
                "predicted_us", "speedup", "exposed_comm", "host_us", "overlap");
  os << line;
  size_t shown = 0, ok = 0;
  for (size_t i = 0; i < r.ranked.size(); ++i) {
    const SweepOutcome& o = r.ranked[i];
    if (!o.ok()) continue;
    ++ok;
    // The serial baseline is always shown, even below the top K.
    if (shown >= top && r.serial != i) continue;
    ++shown;
    std::snprintf(line, sizeof line, "  %4zu  %-*s %12.1f %8.2fx %14.1f %10.1f %7.0f%%%s\n", ok,
                  static_cast<int>(width), configStr(o.config).c_str(), o.makespanUs, r.speedup(o), o.exposedCommUs,
                  o.hostUs, 100.0 * o.overlapFraction, r.serial == i ? "  (serial)" : "");
    os << line;
  }
  if (ok > shown) os << "  (" << ok - shown << " more; --top shows more)\n";
  for (const auto& [why, configs] : failures(r)) {
    os << "failed (" << configs.size() << "): " << why << "\n   ";
    for (const auto& c : configs) os << " [" << c << "]";
    os << "\n";
  }
  if (ok == 0) {
    os << "no configuration simulated\n";
    return os.str();
  }
  const SweepOutcome& best = r.ranked.front();
  if (r.pipelinedWins) {
    std::snprintf(line, sizeof line, "best: %s (%.1f us, %.2fx faster than serial)\n", configStr(best.config).c_str(),
                  best.makespanUs, r.speedup(best));
  } else {
    std::snprintf(line, sizeof line,
                  "no pipelined configuration beats serial: best is %s (%.1f us); pipelining costs more (host issue, "
                  "latencies, contention) than the overlap hides\n",
                  configStr(best.config).c_str(), best.makespanUs);
  }
  os << line;
  return os.str();
}

static nlohmann::ordered_json rowJson(const TuneResult& r, const SweepOutcome& o) {
  nlohmann::ordered_json cfg = nlohmann::ordered_json::object();
  for (const auto& [k, v] : o.config) cfg[k] = v;
  nlohmann::ordered_json row = {{"config", cfg}};
  if (!o.ok()) {
    row["error"] = o.error;
    return row;
  }
  row["predicted_us"] = o.makespanUs;
  row["speedup_vs_serial"] = r.serial ? nlohmann::ordered_json(r.speedup(o)) : nlohmann::ordered_json(nullptr);
  row["exposed_comm_us"] = o.exposedCommUs;
  row["host_us"] = o.hostUs;
  row["overlap_fraction"] = o.overlapFraction;
  row["peak_concurrency"] = o.peakConcurrency;
  return row;
}

std::string tuneJson(const TuneResult& r, size_t top) {
  using json = nlohmann::ordered_json;
  json list = json::array(), failed = json::array();
  for (const auto& o : r.ranked) {
    if (!o.ok())
      failed.push_back(rowJson(r, o));
    else if (list.size() < top)
      list.push_back(rowJson(r, o));
  }
  json j;
  j["configurations"] = std::move(list);
  j["serial"] = r.serial ? rowJson(r, r.ranked[*r.serial]) : json(nullptr);
  j["best"] = !r.ranked.empty() && r.ranked.front().ok() ? rowJson(r, r.ranked.front()) : json(nullptr);
  j["pipelined_beats_serial"] = r.pipelinedWins;
  j["failed"] = std::move(failed);
  return j.dump(1);
}

}  // namespace braid::sim
