// Time of the parametric checker's proofs (Z3): every catalog workload, lowered with protocol A
// and B and both pipelines, proved for every numberOfStreams; the example dumps proved for all
// sizes; and a counterexample found and replayed (a mutant that forgets the initial
// Synchronize). The target is under 0.5 s per catalog proof (docs/PERFORMANCE.md).
#include <benchmark/benchmark.h>

#if BRAID_HAVE_Z3

#include <string>

#include "ir/host_ir_text.h"
#include "ir/scalar_parser.h"
#include "passes/lower.h"
#include "catalog/workload.h"
#include "verify/parametric/parametric_checker.h"

namespace {

braid::HostProgram lowered(const std::string& name, braid::StreamProtocol protocol, braid::PipelineKind pipeline) {
  braid::WorkloadParams p;
  p.devices = 4;
  p.streams = 4;
  p.m = 64;
  p.k = 16;
  p.n = 16;
  p.lowering.streams = 4;
  p.lowering.protocol = protocol;
  p.lowering.pipeline = pipeline;
  braid::Workload w = braid::makeWorkload(name, p);
  return braid::lower(*w.fusion, w.params.lowering, w.params.devices);
}

void prove(benchmark::State& state, const braid::HostProgram& p, braid::verify::ParametricOptions o) {
  int64_t queries = 0;
  bool proven = false;
  for (auto _ : state) {
    braid::verify::ParametricResult r = braid::verify::proveProgram(p, o);
    queries = r.queries;
    proven = r.proven();
    benchmark::DoNotOptimize(r);
  }
  state.counters["queries"] = static_cast<double>(queries);
  state.counters["proven"] = proven ? 1 : 0;
}

void BM_ProveCatalog(benchmark::State& state, std::string name, braid::StreamProtocol protocol,
                     braid::PipelineKind pipeline) {
  braid::HostProgram p = lowered(name, protocol, pipeline);
  braid::verify::ParametricOptions o;
  o.ranks = 4;
  prove(state, p, o);
}

void BM_ProveExample(benchmark::State& state, std::string file, std::string assume) {
  braid::HostProgram p = braid::parseHostProgramFile(std::string(BRAID_SOURCE_DIR) + "/examples/" + file);
  braid::verify::ParametricOptions o;
  if (!assume.empty()) o.assumptions.push_back(braid::parseScalar(assume));
  prove(state, p, o);
}

// A bug found, turned into bindings and replayed by the bounded checker.
void BM_FindAndReplay(benchmark::State& state) {
  braid::HostProgram p = lowered("ag_matmul", braid::StreamProtocol::kSeparateSyncLoop, braid::PipelineKind::kCollective);
  std::string text = braid::print(p);
  size_t at = text.find("    Synchronize Stream 0\n");
  text.erase(at, std::string("    Synchronize Stream 0\n").size());
  braid::HostProgram mutant = braid::parseHostProgram(text, "mutant.hir");
  braid::verify::ParametricOptions o;
  o.ranks = 4;
  bool confirmed = false;
  for (auto _ : state) {
    braid::verify::ParametricResult r = braid::verify::proveProgram(mutant, o);
    confirmed = r.bugFound();
    benchmark::DoNotOptimize(r);
  }
  state.counters["confirmed"] = confirmed ? 1 : 0;
}

void registerAll() {
  for (const auto& w : braid::workloadCatalog()) {
    for (auto protocol : {braid::StreamProtocol::kSeparateSyncLoop, braid::StreamProtocol::kInLoopSync}) {
      for (auto pipeline : {braid::PipelineKind::kCollective, braid::PipelineKind::kP2P}) {
        std::string label = w.name + "/" + braid::streamProtocolName(protocol) + "/" + braid::pipelineKindName(pipeline);
        benchmark::RegisterBenchmark(("BM_ProveCatalog/" + label).c_str(), BM_ProveCatalog, w.name, protocol, pipeline)
            ->Unit(benchmark::kMillisecond);
      }
    }
  }
  for (const auto& [file, assume] : std::vector<std::pair<std::string, std::string>>{
           {"stream_set_sync_loop.hir", ""},
           {"stream_set_serialized.hir", ""},
           {"ag_matmul_8ranks.hir", ""},
           {"ag_p2p_matmul_4ranks.hir", ""},
           {"linear_allreduce_rowparallel.hir", ""},
           {"matmul_reducescatter_4ranks.hir", "i0 % 16 == 0"}})
    benchmark::RegisterBenchmark(("BM_ProveExample/" + file).c_str(), BM_ProveExample, file, assume)
        ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_FindAndReplay/ag_matmul_no_initial_sync", BM_FindAndReplay)
      ->Unit(benchmark::kMillisecond);
}

}  // namespace

int main(int argc, char** argv) {
  registerAll();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

#else

int main() { return 0; }  // braid was built without Z3: nothing to measure

#endif  // BRAID_HAVE_Z3
