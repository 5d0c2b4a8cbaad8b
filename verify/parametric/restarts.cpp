#include "verify/parametric/restarts.h"

namespace braid::verify::parametric {

z3::check_result checkWithRestarts(z3::solver& s, const Restarts& how, std::string& reason) {
  reason.clear();
  z3::check_result r = s.check();
  if (r != z3::unknown) return r;
  reason = s.reason_unknown();
  // A configured resource limit is for answers that are the same on every machine: the first
  // attempt's answer is final (a starved run would otherwise pay for fresh solvers on every query).
  if (how.resourceLimit > 0) return r;
  for (unsigned k = 1; k < how.attempts; ++k) {
    z3::solver fresh(s.ctx());
    fresh.set("timeout", how.timeoutMs);
    fresh.set("random_seed", k);
    for (const z3::expr& a : s.assertions()) fresh.add(a);
    r = fresh.check();
    if (r != z3::unknown) {
      reason.clear();
      return r;
    }
    reason = fresh.reason_unknown();
  }
  return r;
}

}  // namespace braid::verify::parametric
