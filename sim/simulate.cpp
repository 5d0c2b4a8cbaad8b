#include "sim/simulate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "ir/error.h"
#include "sim/analysis.h"
#include "sim/power_state.h"

namespace braid::sim {

RankStats SimResult::rankStats(int64_t rank) const {
  int32_t c = classes.classOf.at(static_cast<size_t>(rank));
  int64_t rep = classes.representatives.at(static_cast<size_t>(c));
  for (const RankStats& s : stats)
    if (s.rank == rep) {
      RankStats copy = s;
      copy.rank = rank;
      return copy;
    }
  throw Error("internal: no statistics for rank " + std::to_string(rank));
}

namespace {

// The levels every GPU starts the next run at, after a run that ended at `end`: idle for `gap`.
std::vector<double> nextStart(const PowerModel& m, const EngineResult& end, double gap) {
  std::vector<double> v(end.finalPowerLevel.size());
  for (size_t i = 0; i < v.size(); ++i) v[i] = idleLevel(m, end.finalPowerLevel[i], gap);
  return v;
}

// "500 us", "20 ms".
std::string gapText(double us) {
  char b[32];
  if (us >= 1000) std::snprintf(b, sizeof b, "%.3g ms", us / 1000);
  else std::snprintf(b, sizeof b, "%.3g us", us);
  return b;
}

double maxOf(const std::vector<double>& v) { return v.empty() ? 0 : *std::max_element(v.begin(), v.end()); }

// Where the program's run starts under the power cap (PowerStart): the levels the runs before it
// leave. kSteady is the fixed point of "run, then idle for the gap" (each GPU's level at the start
// equals the level the run and the gap bring it back to), found per GPU by regula falsi from the
// bracket [0, 1]; plain iteration would also get there, but only after hundreds of runs for a
// program much shorter than the controller's time constant.
std::vector<double> powerStartLevels(const SimGraph& g, const Machine& mc, const PowerStart& ps, PowerSummary& out) {
  const PowerModel& m = mc.gpu.power;
  std::vector<double> x(static_cast<size_t>(g.numGpus), 0);
  char what[120];
  if (ps.kind == PowerStart::Kind::kIdle) {
    out.start = "idle";
    return x;
  }
  EngineOptions eo;
  auto step = [&](const std::vector<double>& from) {
    eo.initialPowerLevel = from;
    EngineResult e = runEngine(g, mc, eo);
    ++out.runsSimulated;
    if (e.deadlocked) throw Error("the program cannot complete: its power state over repeated runs is undefined");
    return nextStart(m, e, ps.gapUs);
  };
  if (ps.kind == PowerStart::Kind::kAfterRuns) {
    std::snprintf(what, sizeof what, "after %lld back-to-back runs %s apart", static_cast<long long>(ps.runs),
                  gapText(ps.gapUs).c_str());
    out.start = what;
    for (int64_t i = 0; i < ps.runs; ++i) {
      std::vector<double> next = step(x);
      bool same = true;
      for (size_t k = 0; k < x.size(); ++k) same = same && std::abs(next[k] - x[k]) < 1e-12;
      x = std::move(next);
      if (same) break;  // a fixed point: every further run starts here too
    }
    return x;
  }
  std::snprintf(what, sizeof what, "in the steady state of back-to-back runs %s apart", gapText(ps.gapUs).c_str());
  out.start = what;
  // g(x) = F(x) - x is positive at 0 and not positive at 1 on every GPU (a run and a gap never
  // take the level above 1) and decreasing, so each GPU's root stays bracketed; regula falsi with
  // the Illinois step keeps the bracket and converges fast where g is nearly linear, even across
  // the kink where a run starts to reach the cap (a plain secant there can cycle).
  constexpr int kMaxRuns = 200;
  const size_t n = x.size();
  std::vector<double> lo(n, 0), hi(n, 1), glo(n), ghi(n, -1);
  std::vector<int> side(n, 0);  // which end moved last: -1 lo, +1 hi
  std::vector<double> fx = step(x);
  for (size_t k = 0; k < n; ++k) glo[k] = fx[k] - x[k];
  for (int it = 0; it < kMaxRuns; ++it) {
    double worst = 0;
    bool collapsed = true;  // every unsettled GPU's bracket is down to a point: g jumps there
    for (size_t k = 0; k < n; ++k) {
      worst = std::max(worst, std::abs(fx[k] - x[k]));
      if (std::abs(fx[k] - x[k]) >= 1e-6 && hi[k] - lo[k] > 1e-12) collapsed = false;
    }
    if (worst < 1e-6) return x;
    if (collapsed) break;
    for (size_t k = 0; k < n; ++k) {
      const double r = fx[k] - x[k];
      if (r > 0) {
        lo[k] = x[k], glo[k] = r;
        if (side[k] == -1) ghi[k] /= 2;  // Illinois: the other end has not moved for two steps
        side[k] = -1;
      } else {
        hi[k] = x[k], ghi[k] = r;
        if (side[k] == 1) glo[k] /= 2;
        side[k] = 1;
      }
      const double denom = glo[k] - ghi[k];
      x[k] = denom > 0 ? lo[k] + glo[k] * (hi[k] - lo[k]) / denom : 0.5 * (lo[k] + hi[k]);
      if (!(x[k] > lo[k] && x[k] < hi[k])) x[k] = 0.5 * (lo[k] + hi[k]);
    }
    fx = step(x);
  }
  // g jumps across zero (the schedule changed with the clocks) or the runs ran out: the run shown
  // starts at the lower end of the bracket, and the note says it is not a settled state.
  out.converged = false;
  return lo;
}

}  // namespace

SimResult simulate(const HostProgram& p, const Machine& machine, const SimOptions& o) {
  SimResult r;
  r.machine = machine;
  int64_t ranks = o.semantics.numRanks > 0 ? o.semantics.numRanks : sem::ranksFromProgram(p);
  Topology& topo = r.machine.topology;
  if (ranks > topo.gpus()) {
    int64_t nodes = (ranks + topo.gpusPerNode - 1) / topo.gpusPerNode;
    r.notes.push_back("the machine has " + std::to_string(topo.gpus()) + " GPUs (" + std::to_string(topo.nodes) +
                      " x " + std::to_string(topo.gpusPerNode) + "); simulated on " + std::to_string(nodes) +
                      " nodes to fit " + std::to_string(ranks) + " ranks");
    topo.nodes = nodes;
  }

  bool skewed = std::any_of(o.rankStartUs.begin(), o.rankStartUs.end(), [](double v) { return v != 0; });
  r.classes = o.fold && !skewed ? sem::rankClasses(p, ranks, topo.gpusPerNode) : sem::singletonClasses(ranks);
  sem::SemanticsOptions so = o.semantics;
  so.numRanks = ranks;
  so.ranks.clear();
  if (r.classes.folded()) so.ranks = r.classes.representatives;
  r.graph = sem::buildEventGraph(p, so);

  r.hostTraces.reserve(r.graph.ranks.size());
  for (int64_t rank : r.graph.ranks)
    r.hostTraces.push_back(sem::traceHost(p, so.bindings, rank, r.graph.numberOfStreams));
  SimGraphOptions go;
  go.hostTraces = &r.hostTraces;
  go.graphReplay = o.graphReplay;
  go.rankStartUs = &o.rankStartUs;
  go.copyEngines = o.copyEngines;
  // After an idle gap the host issues later (Machine::host.afterIdle; a graph replay has its own
  // curve, its issue being one call).
  const bool gap = o.power.kind != PowerStart::Kind::kIdle && o.power.gapUs > 0;
  const AfterIdle& afterIdle = o.graphReplay ? r.machine.host.afterIdleGraph : r.machine.host.afterIdle;
  if (gap) r.power.hostDelayUs = afterIdle.delayUs(o.power.gapUs);
  go.hostStartUs = r.power.hostDelayUs;
  r.sim = buildSimGraph(r.graph, r.machine, go);
  EngineOptions eo;
  eo.recordSmCounters = o.recordSmCounters;
  if (r.machine.gpu.power.enabled()) {
    r.power.modelled = true;
    eo.initialPowerLevel = powerStartLevels(r.sim, r.machine, o.power, r.power);
    r.power.startLevel = maxOf(eo.initialPowerLevel);
  }
  r.engine = runEngine(r.sim, r.machine, eo);

  analyze(r);
  if (r.power.modelled) {
    r.power.endLevel = maxOf(r.engine.finalPowerLevel);
    for (double us : r.engine.cappedUs)
      r.power.cappedFraction = std::max(r.power.cappedFraction, r.makespanUs > 0 ? us / r.makespanUs : 0);
  }
  // Said when it matters: a start other than idle, or a run that reached the cap.
  if (r.power.modelled && (o.power.kind != PowerStart::Kind::kIdle || r.power.cappedFraction > 0)) {
    char note[320];
    std::snprintf(note, sizeof note,
                  "power: the run starts %s at %.2f of a full GEMM load's power (the cap: %.2f); compute at the cap's "
                  "lower clocks %.0f%% of the run%s",
                  r.power.start.c_str(), r.power.startLevel, r.machine.gpu.power.capLoad, 100 * r.power.cappedFraction,
                  r.power.converged ? "" : "; not settled to 1e-6 (the schedule changes with the clocks there)");
    r.notes.push_back(note);
  } else if (o.power.kind != PowerStart::Kind::kIdle) {
    r.notes.push_back("power: " + r.machine.name +
                      " models no power cap (gpu.power_cap): every run is at full clocks, whatever ran before it");
  }

  if (r.power.hostDelayUs > 0) {
    char note[200];
    std::snprintf(note, sizeof note,
                  "after idle: the run follows %s idle, so its host issues it %.3g us later than back to back "
                  "(host.%s)",
                  gapText(o.power.gapUs).c_str(), r.power.hostDelayUs, o.graphReplay ? "after_idle_graph" : "after_idle");
    r.notes.push_back(note);
  } else if (gap && afterIdle.empty() && !(r.machine.host.afterIdle.empty() && r.machine.host.afterIdleGraph.empty())) {
    r.notes.push_back(std::string("after idle: ") + r.machine.name + " has no host." +
                      (o.graphReplay ? "after_idle_graph: a graph replay's" : "after_idle: a launched run's") +
                      " start after idle is not modelled");
  }

  if (o.graphReplay) {
    char note[256];
    std::snprintf(note, sizeof note,
                  "a CUDA-graph replay: no host issue (the whole program is submitted at once); every operation is "
                  "ready %.3g us (the launch latency) after the start and runs once its dependencies are met",
                  r.machine.gpu.launchLatencyUs);
    r.notes.push_back(note);
  }
  if (r.classes.folded()) {
    std::string what = r.classes.representatives.size() == 1
                           ? "all " + std::to_string(ranks) + " ranks do the same work (same statements, sizes and teams)"
                           : std::to_string(r.classes.representatives.size()) +
                                 " classes of ranks that do the same work (same statements, sizes and teams)";
    r.notes.push_back("folded: " + what + "; simulated " + std::to_string(r.classes.representatives.size()) +
                      " rank(s) and gave every other rank its class's results");
  } else if (!r.classes.notFoldedBecause.empty() && ranks > 1) {
    r.notes.push_back("not folded: " + r.classes.notFoldedBecause + "; simulated every rank");
  }
  if (!r.graph.issues.empty()) {
    const sem::Issue& first = r.graph.issues.front();
    r.notes.push_back(std::to_string(r.graph.issues.size()) +
                      " problem(s) in the program were skipped (the operations they concern were not simulated); "
                      "the first: rank " + std::to_string(first.rank) + ", " +
                      (first.stmt && first.stmt->loc.known() ? "line " + std::to_string(first.stmt->loc.line) + ": "
                                                             : std::string()) +
                      first.message + " (braid verify explains them)");
  }
  return r;
}

std::string describeDeadlock(const SimResult& r) {
  const EngineResult& e = r.engine;
  if (!e.deadlocked) return "";
  std::string s = std::to_string(e.unfinished) + " operation(s) never complete: ";
  for (size_t i = 0; i < e.blocked.size(); ++i) {
    s += (i ? ", which waits for " : "") + r.graph.describe(e.blocked[i]);
  }
  if (e.cycle && !e.blocked.empty()) {
    s += ", which waits for " + r.graph.describe(e.blocked.front()) + " again (a cycle)";
  } else {
    s += ", which waits for a communication partner that never posts its side";
  }
  return s;
}

}  // namespace braid::sim
