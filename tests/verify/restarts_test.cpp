// checkWithRestarts (verify/parametric/restarts.h): an unknown answer is asked again in fresh
// solvers, a decided one is not, and one that stays unknown keeps its reason (Z3's, or the budget's).
#include <gtest/gtest.h>

#if BRAID_HAVE_Z3

#include "verify/parametric/restarts.h"

namespace braid::verify::parametric {
namespace {

// x * y == 2 * x * y + 1 with x, y >= 1: nonlinear, unsatisfiable (the product is positive).
z3::expr nonlinear(z3::context& c) {
  z3::expr x = c.int_const("x"), y = c.int_const("y");
  return x >= 1 && y >= 1 && x * y == 2 * x * y + 1;
}

TEST(Z3Restarts, ADecidedAnswerIsKept) {
  z3::context c;
  BudgetWatchdog dog;
  z3::solver s(c);
  s.add(nonlinear(c));
  std::string reason = "stale";
  EXPECT_EQ(checkWithRestarts(dog, s, Restarts{}, reason), z3::unsat);
  EXPECT_EQ(reason, "");
  z3::solver sat(c);
  sat.add(c.int_const("x") * c.int_const("y") == 6 && c.int_const("x") > 1 && c.int_const("y") > 1);
  EXPECT_EQ(checkWithRestarts(dog, sat, Restarts{}, reason), z3::sat);
}

// The solver itself may not decide (here: no resources); a fresh attempt with its own limits does.
TEST(Z3Restarts, AnUnknownAnswerIsAskedAgainInAFreshSolver) {
  z3::context c;
  BudgetWatchdog dog;
  z3::solver s(c);
  s.set("rlimit", 1u);
  s.add(nonlinear(c));
  ASSERT_EQ(s.check(), z3::unknown);  // what the retry is for
  std::string reason;
  Restarts how;
  how.cpuMs = 20000;
  EXPECT_EQ(checkWithRestarts(dog, s, how, reason), z3::unsat);
  EXPECT_EQ(reason, "");
  how.attempts = 1;  // no retry: the solver's own answer
  EXPECT_EQ(checkWithRestarts(dog, s, how, reason), z3::unknown);
  EXPECT_NE(reason, "");
}

TEST(Z3Restarts, AnAnswerThatStaysUnknownKeepsZ3sReason) {
  z3::context c;
  BudgetWatchdog dog;
  z3::solver s(c);
  s.set("rlimit", 1u);
  s.add(nonlinear(c));
  Restarts how;
  how.resourceLimit = 1;  // a configured limit: the first answer is final, not retried
  std::string reason;
  EXPECT_EQ(checkWithRestarts(dog, s, how, reason), z3::unknown);
  EXPECT_NE(reason, "");
}

// A budget that runs out is an unknown answer like any other: asked again, and if it stays
// unknown, the reason says which budget ran out.
TEST(Z3Restarts, ASpentBudgetIsAskedAgainAndNamed) {
  z3::context c;
  BudgetWatchdog dog;
  z3::solver s(c);
  z3::expr x = c.int_const("x"), y = c.int_const("y"), z = c.int_const("z");
  s.add(x >= 1 && y >= 1 && z >= 1 && x * x * x + y * y * y == z * z * z);  // undecided: runs until stopped
  Restarts how;
  how.cpuMs = 20;
  std::string reason;
  EXPECT_EQ(checkWithRestarts(dog, s, how, reason), z3::unknown);
  EXPECT_TRUE(reason == "CPU budget of 20 ms spent" || reason.rfind("wall-clock ceiling of 400 ms", 0) == 0) << reason;
}

}  // namespace
}  // namespace braid::verify::parametric

#endif  // BRAID_HAVE_Z3
