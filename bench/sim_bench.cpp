// Throughput of the simulator (docs/PERFORMANCE.md): the allgather + matmul pipeline
// (ag_matmul, protocol A, bf16) lowered once, then simulated.
//   BM_SimFolded/8192: 8192 ranks x ~1000 events per rank, folded to one simulated rank;
//     events_per_s counts the events of all ranks it stands for.
//   BM_SimUnfolded/R: R ranks, every one simulated (the interpreter runs every rank).
//   BM_SimEngine/R: the engine alone (schedule input, schedule, analysis) on a prebuilt event
//     graph of R ranks: what one simulated event costs.
#include <benchmark/benchmark.h>

#include "ir/semantics/host_trace.h"
#include "ir/semantics/interpreter.h"
#include "passes/lower.h"
#include "catalog/workload.h"
#include "sim/analysis.h"
#include "sim/simulate.h"

namespace {

// ~6 events per chunk and rank: `streams` chunks give ~6 x streams events per rank.
braid::HostProgram agMatmul(int64_t ranks, int64_t streams) {
  braid::WorkloadParams p;
  p.devices = ranks;
  p.streams = streams;
  p.m = ranks * streams * 8;
  p.k = 8192;
  p.n = 3584;
  p.dtype = braid::DataType::kBFloat16;
  braid::Workload w = braid::makeWorkload("ag_matmul", p);
  return braid::lower(*w.fusion, w.params.lowering, w.params.devices);
}

const braid::sim::Machine& h200() {
  static const braid::sim::Machine m = braid::sim::loadMachine("h200");
  return m;
}

void report(benchmark::State& state, int64_t events) {
  state.counters["events"] = static_cast<double>(events);
  state.counters["events_per_s"] = benchmark::Counter(
      static_cast<double>(events) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void simulateAgMatmul(benchmark::State& state, bool fold) {
  const int64_t ranks = state.range(0);
  braid::HostProgram p = agMatmul(ranks, 166);
  braid::sim::SimOptions o;
  o.semantics.numRanks = ranks;
  o.semantics.numberOfStreams = 4;
  o.fold = fold;
  int64_t events = 0;
  for (auto _ : state) {
    braid::sim::SimResult r = braid::sim::simulate(p, h200(), o);
    events = r.representedEvents;
    state.counters["simulated_events"] = static_cast<double>(r.simulatedEvents);
    benchmark::DoNotOptimize(r.makespanUs);
  }
  report(state, events);
}

void BM_SimFolded(benchmark::State& state) { simulateAgMatmul(state, true); }
BENCHMARK(BM_SimFolded)->Arg(8192)->Unit(benchmark::kMillisecond);

void BM_SimUnfolded(benchmark::State& state) { simulateAgMatmul(state, false); }
BENCHMARK(BM_SimUnfolded)->Arg(64)->Arg(256)->Unit(benchmark::kMillisecond);

void BM_SimEngine(benchmark::State& state) {
  const int64_t ranks = state.range(0);
  braid::HostProgram p = agMatmul(ranks, 166);
  braid::sim::SimResult r;
  r.machine = h200();
  r.classes = braid::sem::singletonClasses(ranks);
  braid::sem::SemanticsOptions so;
  so.numRanks = ranks;
  r.graph = braid::sem::buildEventGraph(p, so);
  for (int64_t rank : r.graph.ranks) r.hostTraces.push_back(braid::sem::traceHost(p, {}, rank, 4));
  braid::sim::SimGraphOptions go;
  go.hostTraces = &r.hostTraces;
  for (auto _ : state) {
    r.sim = braid::sim::buildSimGraph(r.graph, r.machine, go);
    r.engine = braid::sim::runEngine(r.sim, r.machine);
    braid::sim::analyze(r);
    benchmark::DoNotOptimize(r.makespanUs);
  }
  report(state, static_cast<int64_t>(r.graph.events.size()));
}
BENCHMARK(BM_SimEngine)->Arg(64)->Arg(256)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
