#include "sim/report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

namespace braid::sim {

namespace {

using json = nlohmann::ordered_json;

bool exported(sem::EventKind k) {
  return k != sem::EventKind::kEntry && k != sem::EventKind::kExit && k != sem::EventKind::kFree &&
         k != sem::EventKind::kAlloc;
}

TimelineOpKind opKind(sem::EventKind k) {
  switch (k) {
    case sem::EventKind::kCopy:
      return TimelineOpKind::kCopy;
    case sem::EventKind::kMemset:
      return TimelineOpKind::kMemset;
    case sem::EventKind::kCollective:
    case sem::EventKind::kP2P:
      return TimelineOpKind::kCommunication;
    case sem::EventKind::kSync:
      return TimelineOpKind::kSync;
    case sem::EventKind::kWait:
      return TimelineOpKind::kWait;
    default:
      return TimelineOpKind::kCompute;
  }
}

int64_t opBytes(const sem::Event& e) {
  if (e.kind == sem::EventKind::kCollective || e.kind == sem::EventKind::kP2P) return e.messageBytes;
  return e.bytesRead + e.bytesWritten;
}

// Rounds to nanoseconds, so printed numbers stay short and stable.
double ns(double us) { return static_cast<double>(static_cast<int64_t>(us * 1000.0 + (us >= 0 ? 0.5 : -0.5))) / 1000.0; }

std::string fmt(double v, int decimals = 1) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string pct(double f) { return fmt(100.0 * f, 0) + "%"; }

json statsJson(const RankStats& s) {
  return {{"rank", s.rank},
          {"makespan_us", ns(s.makespanUs)},
          {"compute_us", ns(s.computeUs)},
          {"comm_us", ns(s.commUs)},
          {"exposed_comm_us", ns(s.exposedCommUs)},
          {"overlap_us", ns(s.overlapUs)},
          {"host_us", ns(s.hostUs)},
          {"peak_concurrency", s.peakConcurrency},
          {"sm_utilization", ns(s.smUtilization)},
          {"nvlink_utilization", ns(s.nvlinkUtilization)},
          {"nic_utilization", ns(s.nicUtilization)}};
}

// Position of each representative's stats, by class.
std::vector<size_t> statsOfClass(const SimResult& r) {
  std::vector<size_t> out(r.classes.representatives.size(), 0);
  for (size_t i = 0; i < r.stats.size(); ++i) {
    int32_t c = r.classes.classOf[static_cast<size_t>(r.stats[i].rank)];
    if (r.classes.representatives[static_cast<size_t>(c)] == r.stats[i].rank) out[static_cast<size_t>(c)] = i;
  }
  return out;
}

std::string eventLabel(const SimResult& r, int32_t e) {
  const sem::Event& ev = r.graph.events[static_cast<size_t>(e)];
  std::string s = ev.op;
  if (ev.stmt && ev.stmt->loc.known()) s += " (line " + std::to_string(ev.stmt->loc.line);
  std::string loops = sem::loopIndicesStr(ev.loops);
  if (!loops.empty()) s += (ev.stmt && ev.stmt->loc.known() ? ", " : " (") + loops;
  if ((ev.stmt && ev.stmt->loc.known()) || !loops.empty()) s += ")";
  return s;
}

std::map<std::string, double> breakdown(const std::vector<CriticalStep>& steps) {
  std::map<std::string, double> b;
  for (const auto& s : steps) b[s.kind] += s.endUs - s.startUs;
  return b;
}

}  // namespace

std::string whereOf(const SimResult& r, int32_t event) {
  size_t i = static_cast<size_t>(event);
  return "rank " + std::to_string(r.graph.events[i].rank) + ", " +
         r.sim.streams[static_cast<size_t>(r.sim.stream[i])].name;
}

Timeline toTimeline(const SimResult& r, const std::string& program) {
  const sem::EventGraph& g = r.graph;
  const SimGraph& s = r.sim;
  const EngineResult& e = r.engine;
  Timeline t;
  t.source = "predicted";
  t.program = program;
  t.machine = r.machine.name;
  t.ranks = r.numRanks();
  t.meta["number_of_streams"] = std::to_string(g.numberOfStreams);
  t.meta["gpu"] = r.machine.gpu.model;
  t.meta["topology"] =
      std::to_string(r.machine.topology.nodes) + " x " + std::to_string(r.machine.topology.gpusPerNode);
  if (r.classes.folded())
    t.meta["folded"] = "ranks of a class share their representative's timeline; simulated ranks: " +
                       std::to_string(r.classes.representatives.size());

  std::vector<int32_t> stream_id(s.streams.size(), -1);
  std::vector<int32_t> op_id(s.numEvents(), -1);
  for (size_t i = 0; i < s.numEvents(); ++i) {
    const sem::Event& ev = g.events[i];
    if (!exported(ev.kind) || e.end[i] < 0) continue;
    size_t ss = static_cast<size_t>(s.stream[i]);
    if (stream_id[ss] < 0) {
      stream_id[ss] = static_cast<int32_t>(t.streams.size());
      const SimStream& st = s.streams[ss];
      t.streams.push_back({stream_id[ss], g.ranks[static_cast<size_t>(st.gpu)], st.kind, st.name});
    }
    TimelineOp op;
    op.id = static_cast<int32_t>(t.ops.size());
    op.rank = ev.rank;
    op.stream = stream_id[ss];
    op.kind = opKind(ev.kind);
    op.name = ev.op;
    op.line = ev.stmt ? ev.stmt->loc.line : 0;
    op.iteration = sem::loopIndicesStr(ev.loops);
    op.startUs = e.start[i];
    op.endUs = e.end[i];
    op.bytes = opBytes(ev);
    op.flops = ev.flops;
    op_id[i] = op.id;
    t.ops.push_back(std::move(op));
  }
  for (size_t i = 0; i < s.numEvents(); ++i) {
    if (op_id[i] < 0) continue;
    for (uint32_t k = s.predBegin[i]; k < s.predBegin[i + 1]; ++k) {
      int32_t from = op_id[static_cast<size_t>(s.preds[k])];
      if (from < 0) continue;
      switch (s.predKind[k]) {
        case DepKind::kSync:
          t.edges.push_back({from, op_id[i], TimelineEdgeKind::kSync});
          break;
        case DepKind::kWait:
          t.edges.push_back({from, op_id[i], TimelineEdgeKind::kWait});
          break;
        case DepKind::kPost:
          t.edges.push_back({from, op_id[i], TimelineEdgeKind::kPost});
          break;
        default:
          break;
      }
    }
  }
  for (size_t rv = 0; rv < s.rendezvousSets.size(); ++rv) {
    int32_t last = e.lastArrival[rv];
    if (last < 0 || op_id[static_cast<size_t>(last)] < 0) continue;
    for (int32_t m : s.rendezvousSets[rv].members)
      if (m != last && op_id[static_cast<size_t>(m)] >= 0)
        t.edges.push_back({op_id[static_cast<size_t>(last)], op_id[static_cast<size_t>(m)], TimelineEdgeKind::kRendezvous});
  }
  return t;
}

std::string resultJson(const SimResult& r, const std::string& program) {
  json j;
  j["program"] = program;
  j["machine"] = r.machine.name;
  j["gpu"] = r.machine.gpu.model;
  j["topology"] = {{"nodes", r.machine.topology.nodes}, {"gpus_per_node", r.machine.topology.gpusPerNode}};
  j["number_of_streams"] = r.graph.numberOfStreams;
  j["makespan_us"] = ns(r.makespanUs);
  j["overlap_fraction"] = ns(r.overlapFraction);
  j["peak_concurrency"] = r.peakConcurrency;
  std::vector<size_t> of_class = statsOfClass(r);
  json ranks = json::array();
  for (int64_t rank = 0; rank < r.numRanks(); ++rank) {
    RankStats st = r.stats[of_class[static_cast<size_t>(r.classes.classOf[static_cast<size_t>(rank)])]];
    st.rank = rank;
    ranks.push_back(statsJson(st));
  }
  j["ranks"] = std::move(ranks);

  json steps = json::array();
  for (const auto& s : r.criticalPath) {
    json step = {{"kind", s.kind}, {"start_us", ns(s.startUs)}, {"end_us", ns(s.endUs)}, {"via", s.via}};
    if (s.event >= 0) {
      const sem::Event& ev = r.graph.events[static_cast<size_t>(s.event)];
      step["rank"] = ev.rank;
      step["stream"] = r.sim.streams[static_cast<size_t>(r.sim.stream[static_cast<size_t>(s.event)])].name;
      step["op"] = ev.op;
      step["line"] = ev.stmt ? ev.stmt->loc.line : 0;
      step["iteration"] = sem::loopIndicesStr(ev.loops);
    }
    steps.push_back(std::move(step));
  }
  json bd = json::object();
  for (const auto& [k, v] : breakdown(r.criticalPath)) bd[k] = ns(v);
  double length = r.criticalPath.empty() ? 0 : r.criticalPath.back().endUs;
  j["critical_path"] = {{"length_us", ns(length)}, {"breakdown_us", bd}, {"steps", steps}};

  json reps = json::array();
  for (int64_t rep : r.classes.representatives) reps.push_back(rep);
  j["folding"] = {{"folded", r.classes.folded()},
                  {"classes", r.classes.representatives.size()},
                  {"simulated_ranks", reps},
                  {"not_folded_because", r.classes.notFoldedBecause}};
  j["events"] = {{"simulated", r.simulatedEvents}, {"represented", r.representedEvents}};
  if (r.engine.deadlocked) {
    json blocked = json::array();
    for (int32_t e : r.engine.blocked) blocked.push_back(r.graph.describe(e));
    j["deadlock"] = {{"message", describeDeadlock(r)}, {"cycle", r.engine.cycle}, {"chain", blocked}};
  } else {
    j["deadlock"] = nullptr;
  }
  if (r.power.modelled)
    j["power"] = {{"start", r.power.start},
                  {"runs_simulated", r.power.runsSimulated},
                  {"converged", r.power.converged},
                  {"start_level", r.power.startLevel},
                  {"end_level", r.power.endLevel},
                  {"capped_fraction", r.power.cappedFraction}};
  j["host_after_idle_us"] = r.power.hostDelayUs;
  j["notes"] = r.notes;
  return j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace);  // a non-UTF-8 file name must not throw
}

std::string formatSummary(const SimResult& r, const std::string& program) {
  std::ostringstream os;
  const Machine& mc = r.machine;
  os << "braid sim: " << program << " on " << mc.name << " (" << mc.gpu.model << ", " << mc.topology.nodes
     << " node(s) x " << mc.topology.gpusPerNode << " GPUs), " << r.numRanks() << " rank(s), numberOfStreams "
     << r.graph.numberOfStreams << "\n";
  if (r.engine.deadlocked) os << "DEADLOCK: " << describeDeadlock(r) << "\n";
  bool communicates = std::any_of(r.stats.begin(), r.stats.end(), [](const RankStats& s) { return s.commUs > 0; });
  os << "makespan " << fmt(r.makespanUs) << " us; "
     << (communicates ? pct(r.overlapFraction) + " of communication time hidden under computation"
                      : std::string("no communication"))
     << "; peak concurrency " << r.peakConcurrency << "\n\n";

  // One row per class of equivalent ranks (unfolded: per rank, at most 16 rows).
  std::vector<size_t> of_class = statsOfClass(r);
  char line[256];
  std::snprintf(line, sizeof line, "  %-16s %11s %11s %11s %13s %10s %6s %6s\n", "rank(s)", "makespan_us", "compute_us",
                "comm_us", "exposed_comm", "host_us", "peak", "SMs");
  os << line;
  size_t rows = r.classes.representatives.size();
  size_t shown = std::min<size_t>(rows, 16);
  for (size_t c = 0; c < shown; ++c) {
    const RankStats& s = r.stats[of_class[c]];
    std::string who = r.classes.members(static_cast<int32_t>(c), 2);
    if (who.size() > 16) who = who.substr(0, 13) + "...";
    std::snprintf(line, sizeof line, "  %-16s %11.1f %11.1f %11.1f %13.1f %10.1f %6d %5.0f%%\n", who.c_str(),
                  s.makespanUs, s.computeUs, s.commUs, s.exposedCommUs, s.hostUs, s.peakConcurrency,
                  100.0 * s.smUtilization);
    os << line;
  }
  if (rows > shown) os << "  ... " << rows - shown << " more (--json lists every rank)\n";

  if (!r.criticalPath.empty()) {
    double length = r.criticalPath.back().endUs;
    os << "\ncritical path " << fmt(length) << " us:";
    bool first = true;
    for (const auto& [k, v] : breakdown(r.criticalPath)) {
      os << (first ? " " : ", ") << k << " " << fmt(v) << " (" << pct(length > 0 ? v / length : 0) << ")";
      first = false;
    }
    os << "\n";
    const size_t n = r.criticalPath.size();
    auto step = [&](size_t i) {
      const CriticalStep& s = r.criticalPath[i];
      std::snprintf(line, sizeof line, "  %10.1f - %10.1f  ", s.startUs, s.endUs);
      os << line;
      if (s.event < 0) {
        os << "host issue (the host thread reaches the first operation)\n";
        return;
      }
      os << eventLabel(r, s.event) << " on " << whereOf(r, s.event);
      if (!s.via.empty()) os << "  [after: " << s.via << "]";
      os << "\n";
    };
    if (n <= 12) {
      for (size_t i = 0; i < n; ++i) step(i);
    } else {
      for (size_t i = 0; i < 6; ++i) step(i);
      os << "  ... " << n - 12 << " more steps (--json lists them all)\n";
      for (size_t i = n - 6; i < n; ++i) step(i);
    }
  }
  if (!r.notes.empty()) {
    os << "\n";
    for (const auto& note : r.notes) os << "note: " << note << "\n";
  }
  return os.str();
}

}  // namespace braid::sim
