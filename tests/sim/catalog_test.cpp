// Everything braid ships simulates: every catalog workload on 1 to 8192 ranks, every example and
// nvFuser dump in examples/.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include "ir/semantics/interpreter.h"
#include "passes/lower.h"
#include "catalog/workload.h"
#include "tests/sim/sim_test_util.h"

namespace braid {
namespace {

const sim::Machine& h200() {
  static const sim::Machine m = sim::loadMachine("h200");
  return m;
}

void expectSimulates(const sim::SimResult& r, int64_t ranks, const std::string& what) {
  EXPECT_FALSE(r.engine.deadlocked) << what << ": " << sim::describeDeadlock(r);
  EXPECT_EQ(r.numRanks(), ranks) << what;
  EXPECT_GT(r.makespanUs, 0) << what;
  EXPECT_TRUE(std::isfinite(r.makespanUs)) << what;
  EXPECT_GE(r.overlapFraction, 0) << what;
  EXPECT_LE(r.overlapFraction, 1 + 1e-9) << what;
  EXPECT_FALSE(r.criticalPath.empty()) << what;
}

// One test per workload and rank count, so no single test runs long (8192 ranks take a few
// seconds per workload: lowering and printing the 8192-rank teams).
class CatalogOnRanks : public ::testing::TestWithParam<std::tuple<std::string, int64_t>> {};

std::vector<std::string> catalogNames() {
  std::vector<std::string> names;
  for (const auto& info : workloadCatalog()) names.push_back(info.name);
  return names;
}

TEST_P(CatalogOnRanks, Simulates) {
  const auto& [name, d] = GetParam();
  WorkloadParams p;
  p.devices = d;
  p.streams = 2;
  p.m = 2 * d * 8;  // divisible as every schedule needs (docs/WORKLOADS.md)
  p.k = d * 8;
  p.n = d * 8;
  p.dtype = DataType::kBFloat16;
  Workload w = makeWorkload(name, p);
  HostProgram prog = lower(*w.fusion, w.params.lowering, w.params.devices);
  sim::SimOptions o;
  o.semantics.numRanks = d;
  o.semantics.numberOfStreams = 2;
  sim::SimResult r = sim::simulate(prog, h200(), o);
  std::string what = name + " on " + std::to_string(d) + " ranks";
  expectSimulates(r, d, what);
  // Catalog workloads give every rank the same work: one simulated rank stands for all.
  EXPECT_EQ(r.classes.representatives.size(), 1u) << what << ": " << r.classes.notFoldedBecause;
}

INSTANTIATE_TEST_SUITE_P(EveryWorkload, CatalogOnRanks,
                         ::testing::Combine(::testing::ValuesIn(catalogNames()),
                                            ::testing::Values(1, 2, 8, 64, 1024, 8192)),
                         [](const auto& info) {
                           return std::get<0>(info.param) + "_D" + std::to_string(std::get<1>(info.param));
                         });

// The P2P pipeline pairs ranks with specific peers, so it is simulated rank by rank, with D
// iterations each: up to 64 ranks here.
TEST(SimCatalog, P2PPipelineSimulatesEveryRank) {
  for (int64_t d : {2, 8, 64}) {
    WorkloadParams p;
    p.devices = d;
    p.m = d * 64;
    p.k = p.n = 256;
    p.dtype = DataType::kBFloat16;
    p.lowering.pipeline = PipelineKind::kP2P;
    Workload w = makeWorkload("ag_matmul", p);
    HostProgram prog = lower(*w.fusion, w.params.lowering, w.params.devices);
    sim::SimOptions o;
    o.semantics.numRanks = d;
    sim::SimResult r = sim::simulate(prog, h200(), o);
    expectSimulates(r, d, "ag_matmul p2p on " + std::to_string(d) + " ranks");
    EXPECT_FALSE(r.classes.folded());
    EXPECT_EQ(r.stats.size(), static_cast<size_t>(d));
  }
}

TEST(SimCatalog, EveryExampleAndDumpSimulates) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(BRAID_SOURCE_DIR) + "/examples")) {
    if (entry.path().extension() != ".hir") continue;
    HostProgram p = parseHostProgramFile(entry.path().string());
    sim::SimOptions o;
    for (const auto& s : sem::unboundSymbols(p, {})) o.semantics.bindings[s] = 256;
    sim::SimResult r = sim::simulate(p, h200(), o);
    expectSimulates(r, sem::ranksFromProgram(p), entry.path().filename().string());
    ++files;
  }
  EXPECT_GE(files, 11);
}

// On the copy engines only a reduction's local sum is a kernel: compute beside the transfers slows
// the pipelined GEMM + ReduceScatter (its sums run beside the next chunk's GEMM), never the
// AG + GEMM p2p pipeline (pure copies).
TEST(CopyEngines, OnlyTheLocalSumOfAReductionSlowsBesideCompute) {
  auto makespan = [](const std::string& workload, PipelineKind pipeline, double rateUnderCompute) {
    WorkloadParams p;
    p.devices = 2;
    p.streams = 4;
    p.m = 8192;
    p.k = 4096;
    p.n = 4096;
    p.dtype = DataType::kBFloat16;
    p.lowering.streams = 1;  // one compute stream: chunk i's communication beside chunk i+1's GEMM
    p.lowering.pipeline = pipeline;
    p.lowering.deferWaits = workload == "matmul_rs";
    p.lowering.commBackend = CommBackend::kCuda;
    Workload w = makeWorkload(workload, p);
    sim::Machine m = testing::bareMachine();
    m.contention.commRateUnderCompute = rateUnderCompute;
    m.copyEngines.hostCallUs = 0;  // the posts' store rendezvous would put the host on the critical path
    sim::SimOptions o;
    o.semantics.numRanks = 2;
    o.semantics.numberOfStreams = p.lowering.streams;
    sim::SimResult r = sim::simulate(lower(*w.fusion, w.params.lowering, 2), m, o);
    EXPECT_FALSE(r.engine.deadlocked) << sim::describeDeadlock(r);
    return r.makespanUs;
  };
  EXPECT_GT(makespan("matmul_rs", PipelineKind::kCollective, 0.1), makespan("matmul_rs", PipelineKind::kCollective, 1.0));
  EXPECT_DOUBLE_EQ(makespan("ag_matmul", PipelineKind::kP2P, 0.1), makespan("ag_matmul", PipelineKind::kP2P, 1.0));
}

}  // namespace
}  // namespace braid
