// Golden host-IR text for every catalog workload and stream protocol (tests/passes/golden/*.hir).
// Regenerate after an intended change with BRAID_UPDATE_GOLDEN=1 and review the diff: it must
// explain the change.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "catalog/workload.h"
#include "ir/host_ir_text.h"
#include "lowering_test_util.h"
#include "passes/lower.h"

namespace braid {
namespace {

struct GoldenCase {
  std::string workload;
  // A, B, C, p2p_A, p2p_B, p2p_C, ring_A, ring_B; schedules: defer_A, prefetch_A, p2p_prefetch_A;
  // p2p_inplace_A: the own shard read in place (--own-shard in-place)
  // (docs/LOWERING.md, "Schedules").
  std::string config;
  int64_t devices = 2;
  int64_t streams = 4;
  int64_t m = 64;  // 66: chunks that do not divide (the last one shorter)
};

void PrintTo(const GoldenCase& c, std::ostream* os) {
  *os << c.workload << " " << c.config << " D=" << c.devices << " S=" << c.streams << " m=" << c.m;
}

// `ag_matmul_p2p_A_d4`, `allreduce_B_m66`.
std::string caseName(const GoldenCase& c) {
  std::string name = c.workload + "_" + c.config;
  if (c.devices != 2) name += "_d" + std::to_string(c.devices);
  if (c.m != 64) name += "_m" + std::to_string(c.m);
  return name;
}

WorkloadParams paramsFor(const GoldenCase& c) {
  WorkloadParams p;
  p.devices = c.devices;
  p.streams = c.streams;
  p.m = c.m;
  p.k = 32;
  p.n = 16;
  LoweringOptions& o = p.lowering;
  const std::string& cfg = c.config;
  bool b = cfg.back() == 'B';
  o.protocol = b ? StreamProtocol::kInLoopSync
               : cfg.back() == 'C' ? StreamProtocol::kPerIterationJoin
                                   : StreamProtocol::kSeparateSyncLoop;
  // Protocol B as nvFuser's AssignStreams writes it: streams keyed by the raw index. Ring
  // buffers need modulo indexing.
  o.indexing = b && cfg.rfind("ring", 0) != 0 ? StreamIndexing::kRaw : StreamIndexing::kModulo;
  o.pipeline = cfg.rfind("p2p", 0) == 0 ? PipelineKind::kP2P : PipelineKind::kCollective;
  o.ringBuffers = cfg.rfind("ring", 0) == 0;
  o.deferWaits = cfg.find("defer") != std::string::npos;
  o.prefetch = cfg.find("prefetch") != std::string::npos;
  o.ownShardInPlace = cfg.find("inplace") != std::string::npos;
  o.commBackend = cfg.find("cuda") != std::string::npos ? CommBackend::kCuda : CommBackend::kNccl;
  o.streams = c.streams;
  return p;
}

std::vector<GoldenCase> goldenCases() {
  std::vector<GoldenCase> v;
  for (const WorkloadInfo& w : workloadCatalog())
    for (const char* cfg : {"A", "B", "C"}) v.push_back({w.name, cfg});
  for (const char* cfg : {"p2p_A", "p2p_B", "p2p_C", "ring_A", "ring_B"}) v.push_back({"ag_matmul", cfg});
  v.push_back({"mlp", "ring_A"});
  v.push_back({"ag_matmul", "p2p_A", 4, 4});
  // Schedules: the waits of GEMM + RS / AR in the join, the allgathers posted ahead.
  for (const char* w : {"matmul_rs", "matmul_ar", "mlp"}) v.push_back({w, "defer_A"});
  for (const char* w : {"ag_matmul", "ag_linear_bias"}) v.push_back({w, "prefetch_A"});
  v.push_back({"ag_matmul", "prefetch_B"});
  v.push_back({"ag_matmul", "p2p_prefetch_A"});
  v.push_back({"ag_matmul", "p2p_inplace_A"});
  // --comm-backend cuda: the same programs with every communication on the copy engines.
  v.push_back({"ag_matmul", "p2p_cuda_A"});
  v.push_back({"matmul_rs", "cuda_A"});
  // A 2D mesh [2, 2]: Allreduces within each row, Allgathers within each column, one IF per team.
  for (const char* cfg : {"A", "B"}) v.push_back({"tp_dp_mlp", cfg, 4, 2});
  v.push_back({"allgather_2d", "B", 4, 2});
  // Chunks that do not divide: 66 rows in 4 chunks of ceilDiv(66, 4) = 17, the last one 15.
  for (const char* w : {"allreduce", "row_parallel_linear", "two_matmuls_inlinable"}) v.push_back({w, "B", 2, 4, 66});
  return v;
}

std::string goldenPath(const GoldenCase& c) {
  return std::string(BRAID_TEST_DATA_DIR) + "/passes/golden/" + caseName(c) + ".hir";
}

class GoldenTest : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(GoldenTest, MatchesGoldenFile) {
  const GoldenCase& c = GetParam();
  WorkloadParams p = paramsFor(c);
  Workload w = makeWorkload(c.workload, p);
  LoweringOptions o = p.lowering;
  o.streams = c.streams;
  HostProgram prog = lower(*w.fusion, o, c.devices);
  std::string text = print(prog);
  // The printed program reads back as the same program.
  std::string why;
  EXPECT_TRUE(structurallyEqual(prog, parseHostProgram(text, goldenPath(c)), &why)) << why;

  BRAID_EXPECT_GOLDEN(goldenPath(c), text, "lowering of " + c.workload + " (" + c.config + ")");
}

INSTANTIATE_TEST_SUITE_P(, GoldenTest, ::testing::ValuesIn(goldenCases()),
                         [](const auto& info) { return caseName(info.param); });

// Every catalog workload lowers for 1..8 devices and 1..8 streams with every protocol (sizes
// chosen to divide as every schedule needs).
TEST(CatalogTest, EveryWorkloadLowersForOneToEightDevicesAndStreams) {
  for (const WorkloadInfo& info : workloadCatalog())
    for (int64_t d = 1; d <= 8; ++d)
      for (int64_t s = 1; s <= 8; ++s)
        for (const char* cfg : {"A", "B", "C", "p2p_B", "ring_A"}) {
          GoldenCase c{info.name, cfg, d, s};
          WorkloadParams p = paramsFor(c);
          p.m = 705600;  // divisible by every S * D up to 8 * 8
          p.k = 840;
          p.n = 705600;
          Workload w = makeWorkload(info.name, p);
          LoweringOptions o = p.lowering;
          EXPECT_NO_THROW(lower(*w.fusion, o, d)) << info.name << " D=" << d << " S=" << s << " " << cfg;
        }
}

// ag_matmul --pipeline p2p copies its own shard into its chunk once (iteration 0's THEN branch);
// with --own-shard in-place (forward-own-shard) it reads it in place: no copy of the input for any
// rank count, pool or protocol, except with --prefetch, where the received chunks are kept in full
// for the compute loop and the own one is copied in there: exactly one copy.
TEST(P2PPipelineTest, AgMatmulCopiesOrReadsItsOwnShardInPlace) {
  for (int64_t d = 1; d <= 4; ++d)
    for (int64_t pool : {1, 2})
      for (const char* cfg : {"p2p_A", "p2p_B", "p2p_C", "p2p_prefetch_A", "p2p_prefetch_B"}) {
        GoldenCase c{"ag_matmul", cfg, d, pool, 16 * d};
        WorkloadParams p = paramsFor(c);
        Workload w = makeWorkload(c.workload, p);
        HostProgram copied = lower(*w.fusion, p.lowering, d);
        EXPECT_EQ(testing_util::ownShardCopies(copied), 1) << "D=" << d << " pool=" << pool << " " << cfg;
        p.lowering.ownShardInPlace = true;
        HostProgram prog = lower(*w.fusion, p.lowering, d);
        const bool prefetch = std::string(cfg).find("prefetch") != std::string::npos;
        EXPECT_EQ(testing_util::ownShardCopies(prog), prefetch ? 1 : 0)
            << "D=" << d << " pool=" << pool << " " << cfg << " in place\n" << print(prog);
      }
}

}  // namespace
}  // namespace braid
