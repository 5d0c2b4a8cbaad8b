// Cost of lowering a large fusion: a chain of N elementwise ops (add, relu, mul, gelu in turn,
// each reading the previous result and the input) on a [m, k] input whose rows are split into
// S Stream chunks, lowered for 4 ranks with protocol A. The target: 10,000 ops in under
// 200 ms. The fusion is rebuilt outside the timed region, because lowering rewrites it.
#include <benchmark/benchmark.h>

#include <memory>

#include "ir/device_mesh.h"
#include "ir/fusion.h"
#include "ir/ops.h"
#include "passes/lower.h"

namespace {

std::unique_ptr<braid::Fusion> chainFusion(int64_t ops, int64_t devices, int64_t streams) {
  auto f = std::make_unique<braid::Fusion>();
  braid::TensorView* in = f->makeTensor({braid::Scalar(1024), braid::Scalar(256)});
  in->setDeviceMesh(braid::DeviceMesh::range(devices));
  f->addInput(in);
  in->outerSplit(0, streams)->parallelize(0, braid::ParallelType::kStream);
  braid::TensorView* x = in;
  for (int64_t i = 0; i < ops; ++i) {
    switch (i % 4) {
      case 0: x = braid::add(x, in); break;
      case 1: x = braid::relu(x); break;
      case 2: x = braid::mul(x, in); break;
      default: x = braid::gelu(x); break;
    }
  }
  f->addOutput(x);
  return f;
}

void BM_LowerElementwiseChain(benchmark::State& state) {
  const int64_t ops = state.range(0);
  braid::LoweringOptions o;
  o.streams = 4;
  int64_t statements = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::unique_ptr<braid::Fusion> f = chainFusion(ops, 4, o.streams);
    state.ResumeTiming();
    braid::HostProgram p = braid::lower(*f, o, 4);
    statements = static_cast<int64_t>(p.body().size());
    state.PauseTiming();
    benchmark::DoNotOptimize(p);
    f.reset();
    p = {};
    state.ResumeTiming();
  }
  state.counters["ops"] = static_cast<double>(ops);
  state.counters["top_level_statements"] = static_cast<double>(statements);
}
BENCHMARK(BM_LowerElementwiseChain)->Arg(1000)->Arg(10000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
