#include "sim/sweep.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "ir/error.h"

namespace braid::sim {

SweepAxis parseSweepAxis(const std::string& spec) {
  auto eq = spec.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
    throw Error("--sweep expects KEY=V1,V2,..., got '" + spec + "'");
  SweepAxis a;
  a.key = spec.substr(0, eq);
  std::stringstream ss(spec.substr(eq + 1));
  std::string v;
  while (std::getline(ss, v, ','))
    if (!v.empty()) a.values.push_back(v);
  if (a.values.empty()) throw Error("--sweep " + a.key + ": no values");
  return a;
}

std::string configStr(const SweepConfig& c) {
  std::string s;
  for (const auto& [k, v] : c) s += (s.empty() ? "" : " ") + k + "=" + v;
  return s;
}

std::vector<SweepConfig> sweepConfigs(const std::vector<SweepAxis>& axes, size_t limit) {
  std::vector<SweepConfig> out{{}};
  for (const SweepAxis& a : axes) {
    for (const SweepAxis& b : axes)
      if (&b != &a && b.key == a.key) throw Error("--sweep names '" + a.key + "' twice");
    std::vector<SweepConfig> next;
    for (const SweepConfig& c : out)
      for (const std::string& v : a.values) {
        SweepConfig d = c;
        d.emplace_back(a.key, v);
        next.push_back(std::move(d));
        if (next.size() > limit)
          throw Error("--sweep asks for more than " + std::to_string(limit) + " configurations");
      }
    out = std::move(next);
  }
  return out;
}

SweepOutcome summarize(const SimResult& r, SweepConfig c) {
  SweepOutcome o;
  o.config = std::move(c);
  o.deadlocked = r.engine.deadlocked;
  if (o.deadlocked) o.error = "deadlock: " + describeDeadlock(r);
  o.makespanUs = r.makespanUs;
  o.overlapFraction = r.overlapFraction;
  o.peakConcurrency = r.peakConcurrency;
  for (const RankStats& s : r.stats) {
    o.exposedCommUs = std::max(o.exposedCommUs, s.exposedCommUs);
    o.hostUs = std::max(o.hostUs, s.hostUs);
  }
  return o;
}

std::vector<SweepOutcome> runSweep(const std::vector<SweepConfig>& configs,
                                   const std::function<SweepOutcome(const SweepConfig&)>& one, unsigned threads,
                                   const std::function<void(size_t, size_t)>& progress) {
  std::vector<SweepOutcome> out(configs.size());
  std::atomic<size_t> next{0}, done{0};
  auto work = [&] {
    for (size_t i; (i = next.fetch_add(1)) < configs.size();) {
      try {
        out[i] = one(configs[i]);
      } catch (const Error& e) {
        out[i].error = e.what();
      }
      out[i].config = configs[i];
      done.fetch_add(1);
    }
  };
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = std::min<unsigned>(threads, static_cast<unsigned>(std::max<size_t>(configs.size(), 1)));
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) pool.emplace_back(work);
  while (done.load() < configs.size()) {
    if (progress) progress(done.load(), configs.size());
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  for (auto& t : pool) t.join();
  if (progress) progress(configs.size(), configs.size());
  return out;
}

std::vector<SweepOutcome> rankSweep(std::vector<SweepOutcome> outcomes) {
  std::stable_sort(outcomes.begin(), outcomes.end(), [](const SweepOutcome& a, const SweepOutcome& b) {
    if (a.ok() != b.ok()) return a.ok();
    return a.ok() && a.makespanUs < b.makespanUs;
  });
  return outcomes;
}

std::string sweepTable(const std::vector<SweepOutcome>& ranked) {
  std::ostringstream os;
  size_t width = 6;
  for (const auto& o : ranked) width = std::max(width, configStr(o.config).size());
  char line[512];
  std::snprintf(line, sizeof line, "  %4s  %-*s %12s %14s %10s %8s %5s\n", "#", static_cast<int>(width),
                "config", "makespan_us", "exposed_comm", "host_us", "overlap", "peak");
  os << line;
  int rank = 0;
  for (const auto& o : ranked) {
    std::string c = configStr(o.config);
    if (!o.ok()) {
      os << "     -  " << c << std::string(width - std::min(width, c.size()), ' ') << " " << o.error << "\n";
      continue;
    }
    std::snprintf(line, sizeof line, "  %4d  %-*s %12.1f %14.1f %10.1f %7.0f%% %5d\n", ++rank,
                  static_cast<int>(width), c.c_str(), o.makespanUs, o.exposedCommUs, o.hostUs,
                  100.0 * o.overlapFraction, o.peakConcurrency);
    os << line;
  }
  if (!ranked.empty() && ranked.front().ok()) {
    const SweepOutcome& best = ranked.front();
    double worst = best.makespanUs;
    for (const auto& o : ranked)
      if (o.ok()) worst = std::max(worst, o.makespanUs);
    std::snprintf(line, sizeof line, "best: %s (%.1f us, %.2fx faster than the slowest configuration)\n",
                  configStr(best.config).c_str(), best.makespanUs, best.makespanUs > 0 ? worst / best.makespanUs : 1.0);
    os << line;
  } else {
    os << "no configuration simulated\n";
  }
  return os.str();
}

std::string sweepJson(const std::vector<SweepOutcome>& ranked) {
  using json = nlohmann::ordered_json;
  json list = json::array();
  for (const auto& o : ranked) {
    json cfg = json::object();
    for (const auto& [k, v] : o.config) cfg[k] = v;
    json row = {{"config", cfg}};
    if (o.ok()) {
      row["makespan_us"] = o.makespanUs;
      row["exposed_comm_us"] = o.exposedCommUs;
      row["host_us"] = o.hostUs;
      row["overlap_fraction"] = o.overlapFraction;
      row["peak_concurrency"] = o.peakConcurrency;
      row["error"] = nullptr;
    } else {
      row["error"] = o.error;
    }
    list.push_back(std::move(row));
  }
  json j;
  j["configurations"] = std::move(list);
  j["best"] = !ranked.empty() && ranked.front().ok() ? j["configurations"][0] : json(nullptr);
  return j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace);  // a non-UTF-8 file name must not throw
}

}  // namespace braid::sim
