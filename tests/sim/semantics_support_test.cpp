// The two rules the simulator added to ir/semantics: the host instruction trace (it must number
// statements exactly as the interpreter's `issue` does) and provable rank equivalence.
#include <gtest/gtest.h>

#include <filesystem>

#include "ir/host_ir_text.h"
#include "ir/semantics/host_trace.h"
#include "ir/semantics/interpreter.h"
#include "ir/semantics/rank_symmetry.h"
#include "passes/lower.h"
#include "catalog/workload.h"
#include "tests/sim/sim_test_util.h"

namespace braid {
namespace {

// Small sizes for every symbol the program needs.
Bindings smallBindings(const HostProgram& p) {
  Bindings b;
  for (const auto& s : sem::unboundSymbols(p, {})) b[s] = 8;
  return b;
}

void expectTraceMatchesGraph(const HostProgram& p, const Bindings& b, int64_t streams, const std::string& what) {
  sem::SemanticsOptions o;
  o.bindings = b;
  o.numberOfStreams = streams;
  sem::EventGraph g = sem::buildEventGraph(p, o);
  for (size_t pos = 0; pos < g.ranks.size(); ++pos) {
    sem::HostTrace t = sem::traceHost(p, b, g.ranks[pos], streams);
    for (const sem::Event& e : g.events) {
      if (e.rank != g.ranks[pos]) continue;
      if (e.kind == sem::EventKind::kEntry) {
        EXPECT_EQ(e.issue, 0) << what;
      } else if (e.kind == sem::EventKind::kExit) {
        EXPECT_EQ(e.issue, static_cast<int64_t>(t.stmts.size())) << what;
      } else if (e.kind != sem::EventKind::kFree) {
        ASSERT_GE(e.issue, 1) << what;
        ASSERT_LE(e.issue, static_cast<int64_t>(t.stmts.size())) << what;
        EXPECT_EQ(t.stmts[static_cast<size_t>(e.issue - 1)], e.stmt) << what << ": " << g.describe(e.id);
      }
    }
  }
}

TEST(HostTrace, NumbersStatementsAsTheInterpreterDoesOnEveryExample) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(BRAID_SOURCE_DIR) + "/examples")) {
    if (entry.path().extension() != ".hir") continue;
    HostProgram p = parseHostProgramFile(entry.path().string());
    expectTraceMatchesGraph(p, smallBindings(p), 3, entry.path().filename().string());
    ++files;
  }
  EXPECT_GE(files, 10);
}

TEST(HostTrace, NumbersStatementsAsTheInterpreterDoesOnLoweredWorkloads) {
  for (const auto& info : workloadCatalog()) {
    WorkloadParams params;
    params.devices = 2;
    params.streams = 2;
    params.m = params.k = params.n = 16;
    Workload w = makeWorkload(info.name, params);
    HostProgram p = lower(*w.fusion, w.params.lowering, w.params.devices);
    expectTraceMatchesGraph(p, {}, 2, info.name);
  }
}

TEST(RankSymmetry, FoldsRanksThatDoTheSameWork) {
  HostProgram p = parseHostProgramFile(testing::examplePath("ag_matmul_8ranks.hir"));
  sem::RankClasses c = sem::rankClasses(p, 8);
  EXPECT_TRUE(c.folded());
  ASSERT_EQ(c.representatives.size(), 1u);
  EXPECT_EQ(c.classSize[0], 8);
  EXPECT_EQ(c.members(0), "0-7");
}

TEST(RankSymmetry, RanksOutsideATeamFormTheirOwnClass) {
  HostProgram p = parseHostProgramFile(testing::examplePath("ag_matmul_8ranks.hir"));
  sem::RankClasses c = sem::rankClasses(p, 12);  // ranks 8..11 are in no team
  ASSERT_EQ(c.representatives.size(), 2u);
  EXPECT_EQ(c.representatives[1], 8);
  EXPECT_EQ(c.classSize[0], 8);
  EXPECT_EQ(c.classSize[1], 4);
  EXPECT_EQ(c.members(1), "8-11");
}

TEST(RankSymmetry, ARankDependentBranchOrP2PKeepsEveryRank) {
  HostProgram p = parseHostProgramFile(testing::examplePath("ag_p2p_matmul_4ranks.hir"));
  sem::RankClasses c = sem::rankClasses(p, 4);
  EXPECT_FALSE(c.folded());
  EXPECT_EQ(c.representatives.size(), 4u);
  EXPECT_NE(c.notFoldedBecause.find("depends on the rank"), std::string::npos) << c.notFoldedBecause;
}

// A root that depends on the loop index, not the rank: still one class.
TEST(RankSymmetry, ARootDoesNotPreventFolding) {
  HostProgram p = parseHostProgramFile(testing::examplePath("broadcast_allgather_4ranks.hir"));
  EXPECT_TRUE(sem::rankClasses(p, 4).folded());
}

// A branch per team of a 2D mesh (the predicate names only the rank): every row posts the same
// Allreduce in a team of the same shape, so all ranks fold into one class.
TEST(RankSymmetry, RowsOfA2DMeshFoldIntoOneClass) {
  WorkloadParams params;
  params.devices = 8;
  params.tp = 4;
  params.streams = 2;
  params.m = 32;
  params.k = 16;
  params.n = 32;
  Workload w = makeWorkload("tp_dp_mlp", params);
  HostProgram p = lower(*w.fusion, w.params.lowering, w.params.devices);
  sem::RankClasses c = sem::rankClasses(p, 8, 8);
  ASSERT_EQ(c.representatives.size(), 1u) << c.notFoldedBecause;
  EXPECT_EQ(c.classSize[0], 8);
}

// Teams of the same shape that spread differently over nodes cost differently: with 4 ranks per
// node, {0 1 2} sits in node 0 while {3 4 5} straddles nodes 0 and 1.
TEST(RankSymmetry, TeamsThatSpreadDifferentlyOverNodesAreTwoClasses) {
  HostProgram p = parseHostProgram(R"(%HostIrContainer { (T0_g_float[iS0{8}]) -> (T1_g_float[iS1{24}]) :
  T1_g_float[iS1{24}] = ALLOCATE(buffer=T1_g_float[iS1{24}], mem_type=global, size=24, zero_init=false, resets_to_zero=false)
  IF Manual ( deviceIdx.x < 3 ):
    Communication 0 (type=Allgather, team=(0 1 2), input=T0_g_float[iS0{8}], output=T1_g_float[iS1{24}], backend=NCCL)
    Wait Communication 0
  ELSE:
    Communication 1 (type=Allgather, team=(3 4 5), input=T0_g_float[iS0{8}], output=T1_g_float[iS1{24}], backend=NCCL)
    Wait Communication 1
} // %HostIrContainer
)");
  EXPECT_EQ(sem::rankClasses(p, 6).representatives.size(), 1u);  // nodes unknown: one shape
  sem::RankClasses c = sem::rankClasses(p, 6, 4);
  ASSERT_EQ(c.representatives.size(), 2u);
  EXPECT_EQ(c.members(0), "0-2");
  EXPECT_EQ(c.members(1), "3-5");
}

}  // namespace
}  // namespace braid
