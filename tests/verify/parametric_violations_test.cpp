// Every violation class of the bounded checker is caught in parametric mode with a counterexample
// that the bounded checker confirms when replayed, and each corrected twin is proven for all
// sizes. Also: chains of synchronization across iterations need the induction step, and
// communications run on their communicator's stream (a missing Wait is a bug).
#include <gtest/gtest.h>

#if BRAID_HAVE_Z3

#include "ir/scalar_parser.h"
#include "tests/verify/parametric_test_util.h"

namespace braid::verify {
namespace {

using namespace braid::testing;

struct Case {
  const char* bad;
  const char* good;
  FindingKind kind;
  const char* property;
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.bad << " vs " << c.good; }

class ParametricViolation : public ::testing::TestWithParam<Case> {};

TEST_P(ParametricViolation, CaughtReplayedAndTwinProven) {
  const Case& c = GetParam();
  ParametricResult bad = proveData(c.bad);
  EXPECT_FALSE(bad.proven());
  EXPECT_TRUE(hasConfirmed(bad, c.kind)) << c.bad << "\n" << formatParametricReport(bad);
  const PropertyVerdict* p = property(bad, c.property);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->status, ClaimStatus::kViolated) << formatParametricReport(bad);
  EXPECT_EQ(parametricExitCode(bad), 1);
  for (const auto& w : bad.witnesses) {
    if (!w.confirmed) continue;
    EXPECT_TRUE(w.replayed);
    EXPECT_FALSE(w.replay.ok()) << "a confirmed witness replays to an error";
    EXPECT_FALSE(w.sites.empty());
    EXPECT_TRUE(w.bindings.count(kNumberOfStreams));
  }
  ParametricResult good = proveData(c.good);
  EXPECT_TRUE(good.proven()) << c.good << "\n" << formatParametricReport(good);
  EXPECT_EQ(parametricExitCode(good), 0);
}

INSTANTIATE_TEST_SUITE_P(
    Classes, ParametricViolation,
    ::testing::Values(Case{"race_no_initial_sync.hir", "copy_sync_loop.hir", FindingKind::kRace, "races"},
                      Case{"missing_join.hir", "copy_sync_loop.hir", FindingKind::kMissingJoin, "joins"},
                      Case{"join_wrong_order.hir", "copy_sync_loop.hir", FindingKind::kMissingJoin, "joins"},
                      Case{"protocol_b_partial_join.hir", "protocol_b.hir", FindingKind::kMissingJoin, "joins"},
                      Case{"output_partial.hir", "copy_sync_loop.hir", FindingKind::kOutputNotWritten, "output coverage"},
                      Case{"view_out_of_bounds.hir", "copy_sync_loop.hir", FindingKind::kViewOutOfBounds, "views"},
                      Case{"uninitialized_read.hir", "uninitialized_read_fixed.hir", FindingKind::kUninitializedRead,
                           "initialization"},
                      Case{"noncontiguous_comm.hir", "noncontiguous_comm_fixed.hir", FindingKind::kNonContiguousComm,
                           "views"},
                      Case{"use_after_deallocate.hir", "use_after_deallocate_fixed.hir",
                           FindingKind::kUseAfterDeallocate, "bindings"},
                      Case{"free_before_join.hir", "free_before_join_fixed.hir", FindingKind::kUnsafeReuse,
                           "allocator reuse"},
                      Case{"collective_rank_dependent_root.hir", "collective_rank_dependent_root_fixed.hir",
                           FindingKind::kCollectiveMismatch, "collective matching"},
                      Case{"p2p_unpaired.hir", "p2p_unpaired_fixed.hir", FindingKind::kP2PUnpaired,
                           "collective matching"},
                      Case{"p2p_deadlock.hir", "p2p_deadlock_fixed.hir", FindingKind::kDeadlock, "deadlock"},
                      Case{"collective_order_deadlock.hir", "collective_order_deadlock_fixed.hir",
                           FindingKind::kDeadlock, "deadlock"},
                      Case{"parametric_chain_broken.hir", "parametric_chain_join.hir", FindingKind::kMissingJoin,
                           "joins"}),
    [](const ::testing::TestParamInfo<Case>& info) {
      std::string n = info.param.bad;
      return n.substr(0, n.find('.'));
    });

TEST(ParametricWitness, RaceNamesStatementsIterationsRanksStreamsAndTheMissingEdge) {
  ParametricResult r = proveData("race_no_initial_sync.hir");
  const Witness* w = nullptr;
  for (const auto& x : r.witnesses)
    if (x.kind == FindingKind::kRace && x.confirmed) w = &x;
  ASSERT_NE(w, nullptr) << formatParametricReport(r);
  ASSERT_EQ(w->sites.size(), 2u);
  EXPECT_EQ(w->sites[0].statement, "program entry");  // issued first, named first
  EXPECT_EQ(w->sites[0].stream, "default stream");
  EXPECT_TRUE(w->sites[1].loc.known());
  EXPECT_EQ(w->sites[1].rank, 0);
  ASSERT_EQ(w->sites[1].loops.size(), 1u);
  EXPECT_EQ(w->sites[1].loops[0].name, "StreamIdx");
  EXPECT_NE(w->sites[1].stream.find("worker stream"), std::string::npos);
  EXPECT_NE(w->missingEdge.find("Synchronize"), std::string::npos) << w->missingEdge;
  EXPECT_NE(replayArguments(*w).find("--bind i0="), std::string::npos);
  // The replay is the bounded checker's run for exactly these bindings.
  VerifyOptions o;
  for (const auto& [k, v] : w->bindings)
    if (k != kNumberOfStreams) o.bindings[k] = v;
  o.ranks = w->ranks;
  o.streams = w->bindings.at(kNumberOfStreams);
  EXPECT_TRUE(verifyProgram(loadVerifyProgram("race_no_initial_sync.hir"), o).has(FindingKind::kRace));
}

TEST(ParametricWitness, DeadlockNamesTheWaitForCycle) {
  ParametricResult r = proveData("p2p_deadlock.hir");
  const Witness* w = nullptr;
  for (const auto& x : r.witnesses)
    if (x.kind == FindingKind::kDeadlock) w = &x;
  ASSERT_NE(w, nullptr) << formatParametricReport(r);
  EXPECT_TRUE(w->confirmed);
  std::string cycle;
  for (const auto& c : w->cycle) cycle += c + "\n";
  EXPECT_NE(cycle.find("rendezvous"), std::string::npos) << cycle;
  EXPECT_NE(cycle.find("runs before"), std::string::npos) << cycle;
}

// Stream i + 1 waits for stream i and the exit joins only the last stream: the work of iteration
// k reaches the exit through every later iteration, which needs the induction step.
TEST(ParametricInduction, ChainedIterationsAndAJoinOfOnlyTheLastStream) {
  ParametricResult r = proveData("parametric_chain_join.hir");
  EXPECT_TRUE(r.proven()) << formatParametricReport(r);
  EXPECT_EQ(property(r, "joins")->status, ClaimStatus::kProven);
}

// DESIGN.md: a communication runs on its communicator's stream; only a Wait orders later work
// after it. Forgetting the Wait is a bug: the next reader uses the buffer too early, and the
// communication is never waited before the program returns. Both replay.
TEST(ParametricCommunications, AMissingWaitIsABug) {
  ParametricResult r = proveData("parametric_missing_wait.hir");
  EXPECT_FALSE(r.proven()) << formatParametricReport(r);
  EXPECT_TRUE(hasConfirmed(r, FindingKind::kMissingWait)) << formatParametricReport(r);
  EXPECT_TRUE(hasConfirmed(r, FindingKind::kUnwaitedCommunication)) << formatParametricReport(r);
  EXPECT_EQ(property(r, "races")->status, ClaimStatus::kViolated);
  EXPECT_EQ(parametricExitCode(r), 1);
  ParametricResult fixed = proveData("parametric_missing_wait_fixed.hir");
  EXPECT_TRUE(fixed.proven()) << formatParametricReport(fixed);
}

// Unknown answers are reported as such: with almost no resources every query is undecided, the
// stream count is then enumerated up to the bound, and nothing is claimed as proven.
TEST(ParametricHonesty, UndecidedQueriesAreNeverProofs) {
  ParametricOptions o;
  o.resourceLimit = 1;
  o.maxStreams = 2;
  ParametricResult r = proveData("copy_sync_loop.hir", o);
  EXPECT_FALSE(r.proven());
  EXPECT_FALSE(r.bugFound());
  EXPECT_EQ(parametricExitCode(r), 4);
  bool someUnknown = false;
  for (const auto& p : r.properties) {
    if (p.status == ClaimStatus::kUnknown) {
      someUnknown = true;
      EXPECT_EQ(p.scope, "numberOfStreams = 1..2") << p.name;
    }
  }
  EXPECT_TRUE(someUnknown) << formatParametricReport(r);
  EXPECT_EQ(formatParametricReport(r).find("\nPROVEN:"), std::string::npos);
}

// A query that spends its CPU budget is unknown, and the verdict says that the budget ran out.
// The ReduceScatter size rule of this example (a symbolic extent times a symbolic quotient) needs
// far more than a millisecond of CPU; the other queries of the program need less.
TEST(ParametricHonesty, ASpentCpuBudgetIsNamedAndNeverAProof) {
  ParametricOptions o;
  o.assumptions.push_back(parseScalar("i0 % 16 == 0"));
  o.queryCpuMs = 1;
  o.attempts = 1;
  o.maxStreams = 2;
  ParametricResult r = proveFile(examplePath("matmul_reducescatter_4ranks.hir"), o);
  EXPECT_FALSE(r.proven());
  EXPECT_FALSE(r.bugFound());
  EXPECT_EQ(parametricExitCode(r), 4);
  EXPECT_EQ(property(r, "bindings")->status, ClaimStatus::kUnknown);
  std::string report = formatParametricReport(r);
  EXPECT_EQ(report.find("\nPROVEN:"), std::string::npos);
  // On a loaded machine the wall-clock ceiling (20 ms here) may end a query first.
  EXPECT_TRUE(report.find("CPU budget of 1 ms spent") != std::string::npos ||
              report.find("wall-clock ceiling of 20 ms reached") != std::string::npos)
      << report;
}

// A fixed stream count is stated as such.
TEST(ParametricScope, FixedStreamCount) {
  ParametricOptions o;
  o.streams = 3;
  ParametricResult r = proveData("copy_sync_loop.hir", o);
  EXPECT_TRUE(r.proven()) << formatParametricReport(r);
  EXPECT_NE(r.scope().find("numberOfStreams = 3"), std::string::npos) << r.scope();
  EXPECT_NE(r.scope().find("i0 >= 1, i2 >= 1"), std::string::npos) << r.scope();
}

// A property proven only stream count by stream count (what a small budget leaves more of) is in
// the PROVEN line and named as proven up to the bound only.
TEST(ParametricScope, APropertyProvenOnlyUpToTheStreamBoundIsNamed) {
  ParametricResult r;
  r.ranks = 2;
  r.streamScope = "numberOfStreams >= 1 (numberOfStreams = 1..8 for some properties)";
  r.properties = {{.name = "races", .scope = "numberOfStreams = 1..8"}, {.name = "joins", .scope = "numberOfStreams >= 1"}};
  ASSERT_TRUE(r.proven());
  std::string report = formatParametricReport(r);
  EXPECT_NE(report.find("PROVEN: races, joins\n"), std::string::npos) << report;
  EXPECT_NE(report.find("proven only for numberOfStreams up to the bound: races\n"), std::string::npos) << report;
}

}  // namespace
}  // namespace braid::verify

#endif  // BRAID_HAVE_Z3
