// `braid verify` in parametric mode (chosen when sizes stay unbound, or with --mode), its exit
// codes, --json, and a counterexample's reproduce line; `braid lower --verify-each`; the
// pass-verification API and EXPECT_VERIFIES.
#include <gtest/gtest.h>

#if BRAID_HAVE_Z3

#include <nlohmann/json.hpp>

#include "passes/pass_manager.h"
#include "tests/support/bad_input.h"
#include "tests/support/cli_runner.h"
#include "tests/verify/catalog_mutations.h"
#include "tests/verify/parametric_test_util.h"
#include "verify/parametric/expect_verifies.h"
#include "verify/parametric/program_check.h"

namespace braid::verify {
namespace {

using braid::testing::runBraid;
using braid::testing::verifyDataPath;

TEST(ParametricCli, UnboundSizesChooseParametricModeAndStateTheScope) {
  auto r = runBraid("verify " + verifyDataPath("copy_sync_loop.hir"));
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("PROVEN"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("for all i0 >= 1, i2 >= 1, numberOfStreams >= 1, ranks 0..0"), std::string::npos) << r.out;
}

TEST(ParametricCli, BoundSizesChooseBoundedModeAndModeOverrides) {
  auto bounded = runBraid("verify " + verifyDataPath("copy_sync_loop.hir") + " --bind i0=4 --bind i2=3");
  EXPECT_EQ(bounded.rc, 0);
  EXPECT_NE(bounded.out.find("verified: no errors for these bindings"), std::string::npos) << bounded.out;
  auto forced = runBraid("verify " + verifyDataPath("copy_sync_loop.hir") + " --bind i0=4 --mode parametric");
  EXPECT_EQ(forced.rc, 0) << forced.out << forced.err;
  EXPECT_NE(forced.out.find("for all i2 >= 1"), std::string::npos) << forced.out;
  auto unbound = runBraid("verify " + verifyDataPath("copy_sync_loop.hir") + " --mode bounded");
  EXPECT_EQ(unbound.rc, 2) << unbound.out << unbound.err;
  auto bad = runBraid("verify " + verifyDataPath("copy_sync_loop.hir") + " --mode fancy");
  EXPECT_EQ(bad.rc, 2);
}

TEST(ParametricCli, BugExitsOneAndTheReproduceLineReplaysIt) {
  auto r = runBraid("verify " + verifyDataPath("missing_join.hir"));
  EXPECT_EQ(r.rc, 1) << r.out << r.err;
  EXPECT_NE(r.out.find("(confirmed): error[missing-join]"), std::string::npos) << r.out;
  auto at = r.out.find("reproduce: braid verify ");
  ASSERT_NE(at, std::string::npos) << r.out;
  std::string line = r.out.substr(at + std::string("reproduce: braid ").size());
  line = line.substr(0, line.find('\n'));
  auto replay = runBraid(line);
  EXPECT_EQ(replay.rc, 1) << line << "\n" << replay.out;
  EXPECT_NE(replay.out.find("error[missing-join]"), std::string::npos) << replay.out;
}

TEST(ParametricCli, JsonVerdict) {
  auto r = runBraid("verify " + verifyDataPath("race_no_initial_sync.hir") + " --json");
  EXPECT_EQ(r.rc, 1) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["mode"], "parametric");
  EXPECT_EQ(j["verdict"], "bug");
  ASSERT_FALSE(j["witnesses"].empty());
  bool race = false;
  for (const auto& w : j["witnesses"]) race |= w["kind"] == "race" && w["confirmed"] == true;
  EXPECT_TRUE(race) << r.out;
  EXPECT_EQ(j["properties"][0]["name"], "races");
  EXPECT_EQ(j["properties"][0]["status"], "violated");
}

TEST(ParametricCli, InconclusiveExitsFour) {
  // With a Z3 work limit too small to decide anything, nothing is proven and nothing confirmed.
  auto r = runBraid("verify " + verifyDataPath("copy_sync_loop.hir") + " --max-streams 1 --resource-limit 1");
  EXPECT_EQ(r.rc, 4) << r.out << r.err;
  EXPECT_EQ(r.out.find("\nPROVEN"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("NOT PROVEN"), std::string::npos) << r.out;
}

// The smallest budget (--timeout 0.001: a millisecond of CPU per Z3 attempt) ends the proof
// unknown, naming the budget: the size rule of this example needs far more than a millisecond,
// and Z3 is handed no timer of its own that could hang (verify/parametric/cpu_budget.h).
TEST(ParametricCli, AMillisecondBudgetEndsUnknownAndNamesTheBudget) {
  std::string f = braid::testing::examplePath("matmul_reducescatter_4ranks.hir");
  auto r = runBraid("verify " + f + " --assume 'i0 % 16 == 0' --timeout 0.001");
  EXPECT_EQ(r.rc, 4) << r.out << r.err;
  EXPECT_NE(r.out.find("NOT PROVEN:"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\nPROVEN:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bindings (unknown)"), std::string::npos) << r.out;
  // On a loaded machine the wall-clock ceiling (20 ms) may end a query first.
  EXPECT_TRUE(r.out.find("(CPU budget of 1 ms spent)") != std::string::npos ||
              r.out.find("(wall-clock ceiling of 20 ms reached") != std::string::npos)
      << r.out;
}

TEST(ParametricCli, TheBudgetMustBeAMillisecondToADay) {
  std::string f = verifyDataPath("copy_sync_loop.hir");
  braid::testing::expectBadInput({
      {"verify " + f + " --timeout 0", "--timeout"},
      {"verify " + f + " --timeout -1", "--timeout"},
      {"verify " + f + " --timeout 0.0004", "--timeout"},
      {"verify " + f + " --timeout 86401", "--timeout"},
      {"verify " + f + " --timeout nan", "--timeout must be between 0.001 and 86400 CPU seconds"},
      {"verify " + f + " --timeout soon", "--timeout"},
  });
}

TEST(ParametricCli, AssumptionsAreStated) {
  std::string f = braid::testing::examplePath("matmul_reducescatter_4ranks.hir");
  auto plain = runBraid("verify " + f);
  EXPECT_EQ(plain.rc, 1) << plain.out;
  auto assumed = runBraid("verify " + f + " --assume 'i0 % 16 == 0'");
  EXPECT_EQ(assumed.rc, 0) << assumed.out << assumed.err;
  EXPECT_NE(assumed.out.find("where ( ( i0 % 16 ) == 0 )"), std::string::npos) << assumed.out;
}

TEST(ParametricCli, WorkloadInParametricModeCoversEveryStreamCount) {
  auto r = runBraid("verify ag_matmul --mode parametric --devices 2 --streams 3 --m 12");
  EXPECT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("numberOfStreams >= 1"), std::string::npos) << r.out;
}

TEST(ParametricCli, LowerVerifyEach) {
  auto r = runBraid("lower ag_matmul --devices 2 --streams 2 --m 8 --k 4 --n 4 --verify-each");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.err.find("after assign-streams: proven"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("not executable yet"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("every pass's output verifies"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("%HostIrContainer"), std::string::npos);
}

// A pass that breaks synchronization: drops the join of the workers.
class DropJoinPass : public Pass {
 public:
  std::string name() const override { return "drop-join"; }
  bool run(LoweringContext& ctx) override {
    return braid::testing::dropSync(ctx.program, 1, braid::testing::Config{});
  }
};

TEST(PassVerification, NamesTheFirstPassWhoseOutputFails) {
  Workload w = makeWorkload("allgather", [] {
    WorkloadParams p;
    p.devices = 2;
    p.streams = 2;
    p.m = 8;
    p.lowering.streams = 2;
    return p;
  }());
  LoweringContext ctx(*w.fusion, w.params.lowering, w.params.devices);
  PassManager pm;
  addStandardPasses(pm);
  pm.add(std::make_unique<DropJoinPass>());
  CheckOptions o;
  o.mode = VerifyMode::kParametric;
  o.bounded.ranks = 2;
  EachPassResult r = runVerifyingEachPass(pm, ctx, o);
  EXPECT_EQ(r.firstFailing, "drop-join") << r.report();
  EXPECT_NE(r.report().find("first pass whose output fails: drop-join"), std::string::npos) << r.report();
}

TEST(PassVerification, ExpectVerifiesOnALoweredProgramAndItsMutant) {
  braid::testing::Config c;
  auto p = braid::testing::lowerWorkload("matmul_ar", c);
  ASSERT_TRUE(p);
  EXPECT_VERIFIES(*p);
  HostProgram mutant = parseHostProgram(print(*p), "matmul_ar.hir");
  ASSERT_TRUE(braid::testing::dropSync(mutant, 0, c));
  auto result = testing::verifies(mutant);
  EXPECT_FALSE(result);
  EXPECT_NE(std::string(result.message()).find("counterexample"), std::string::npos) << result.message();
}

}  // namespace
}  // namespace braid::verify

#endif  // BRAID_HAVE_Z3
