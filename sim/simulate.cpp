#include "sim/simulate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "ir/error.h"
#include "sim/analysis.h"

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
  r.sim = buildSimGraph(r.graph, r.machine, go);
  EngineOptions eo;
  eo.recordSmCounters = o.recordSmCounters;
  r.engine = runEngine(r.sim, r.machine, eo);

  analyze(r);

  if (o.graphReplay) {
    char note[160];
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
