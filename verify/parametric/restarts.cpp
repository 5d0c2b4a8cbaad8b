#include "verify/parametric/restarts.h"

namespace braid::verify::parametric {

z3::check_result checkWithRestarts(BudgetWatchdog& dog, z3::solver& s, const Restarts& how, std::string& reason) {
  const QueryBudget budget = QueryBudget::ofCpuMs(how.cpuMs);
  z3::check_result r = checkWithin(dog, s, budget, reason);
  if (r != z3::unknown) return r;
  // A configured resource limit is for answers that are the same on every machine: the first
  // attempt's answer is final (a starved run would otherwise pay for fresh solvers on every query).
  if (how.resourceLimit > 0) return r;
  for (unsigned k = 1; k < how.attempts; ++k) {
    z3::solver fresh(s.ctx());
    fresh.set("random_seed", k);
    for (const z3::expr& a : s.assertions()) fresh.add(a);
    r = checkWithin(dog, fresh, budget, reason);
    if (r != z3::unknown) return r;
  }
  return r;
}

}  // namespace braid::verify::parametric
