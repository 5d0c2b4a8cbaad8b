// Asking Z3 again when it answers unknown. Its nonlinear integer arithmetic (symbolic extents
// times symbolic quotients, which every size rule over a symbolic stream count or rank count has)
// has heavy-tailed running times: one bindings query of examples/matmul_reducescatter_4ranks.hir
// took 0.25-0.5 s of CPU for most random seeds and 2.7-9 s for some, and an incremental solver
// that had answered other queries before gave up on it with "incomplete (theory arithmetic)"
// where a fresh solver proved it (docs/VERIFY.md, "Unknown answers are asked again"). So which
// answer a query got depended on luck: on the seed, on the solver's history and on how slow the
// machine was (a sanitized build, a loaded machine), while the per-query timeout was wall-clock
// (now it is a budget of CPU time: cpu_budget.h).
//
// An unknown answer is therefore asked again, up to `attempts` times in all, each time in a fresh
// non-incremental solver (Z3 then preprocesses the whole query with its QF_NIA tactics) holding
// the same assertions, with another random seed and the same CPU budget. Each answer is Z3's own,
// so a retry never weakens a proof: unsat is unsat whichever attempt said it, and an answer that
// stays unknown is reported as unknown with the last reason. With a
// configured resource limit (`--resource-limit`, for answers that are the same on every machine)
// the first answer is final.
#pragma once

#include <string>

#include <z3++.h>

#include "verify/parametric/cpu_budget.h"

namespace braid::verify::parametric {

struct Restarts {
  unsigned attempts = 3;      // checks in all, the first one included; 1: no retry
  unsigned cpuMs = 4000;      // CPU milliseconds per attempt (QueryBudget::ofCpuMs)
  unsigned resourceLimit = 0;  // Z3's rlimit; when set, no retry (see above)
};

// `s.check()` within the budget, then on unknown the retries above. `reason` receives the last
// unknown's reason (checkWithin's: the budget that ran out, or Z3's reason_unknown), "" otherwise.
z3::check_result checkWithRestarts(BudgetWatchdog& dog, z3::solver& s, const Restarts& how, std::string& reason);

}  // namespace braid::verify::parametric
