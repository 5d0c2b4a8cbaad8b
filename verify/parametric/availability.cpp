// Whether the parametric checker was built (BRAID_WITH_Z3); without Z3 its entry point says so.
#include "ir/error.h"
#include "verify/parametric/parametric_checker.h"

namespace braid::verify {

#if BRAID_HAVE_Z3
bool parametricAvailable() { return true; }
#else
bool parametricAvailable() { return false; }

ParametricResult proveProgram(const HostProgram&, const ParametricOptions&) {
  throw Error("braid was built without Z3 (BRAID_WITH_Z3=OFF), so the parametric checker is unavailable; "
              "bind the sizes (--bind NAME=VALUE) or use --mode bounded");
}
#endif

}  // namespace braid::verify
