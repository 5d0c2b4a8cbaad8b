// One entry point for both checkers, for tools and tests: the bounded checker (exact for given
// sizes) or the parametric one (for all sizes), chosen as `braid verify` chooses, and the same
// check after every lowering pass (`braid lower --verify-each`), naming the first pass whose
// output fails.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/fusion.h"
#include "ir/host_ir.h"
#include "passes/lower.h"
#include "verify/checker.h"
#include "verify/parametric/parametric_checker.h"

namespace braid::verify {

enum class VerifyMode { kAuto, kBounded, kParametric };
const char* verifyModeName(VerifyMode m);  // "auto", "bounded", "parametric"
std::optional<VerifyMode> parseVerifyMode(const std::string& s);

struct CheckOptions {
  VerifyMode mode = VerifyMode::kAuto;
  VerifyOptions bounded;        // bindings, ranks and streams of the bounded checker
  ParametricOptions parametric; // the parametric checker's (bindings and ranks are taken from `bounded`)
};

struct ProgramCheck {
  VerifyMode mode = VerifyMode::kBounded;  // the mode that ran
  bool ok = false;          // no error (bounded) / every property proven (parametric)
  bool bug = false;         // errors (bounded) / a confirmed counterexample (parametric)
  bool incomplete = false;  // it uses tensors nothing allocated: not an executable program yet
  int exitCode = 0;         // as `braid verify`: 0 ok, 1 bug, 4 inconclusive
  std::string summary;      // one line
  std::string report;       // the full text report
  std::optional<VerifyResult> bounded;
  std::optional<ParametricResult> parametric;
};

// kAuto: parametric when symbols stay unbound after the bindings and braid has Z3, else bounded.
VerifyMode chooseMode(const HostProgram& p, const CheckOptions& o);
// Checks `p` in the chosen mode. Throws Error for bad input (as the checkers do).
ProgramCheck checkProgram(const HostProgram& p, const CheckOptions& o);

// The verifier after every pass of the standard pipeline.
struct PassCheck {
  std::string pass;
  bool changed = false;
  bool hasProgram = false;  // before host lowering there is only the fusion
  ProgramCheck check;       // when hasProgram
};
struct EachPassResult {
  std::vector<PassCheck> passes;
  std::string firstFailing;   // the first pass whose output has a bug ("" when none)
  std::string firstUnproven;  // the first pass whose output is not proven and has no confirmed bug
  HostProgram program;        // the lowered program
  bool ok() const { return firstFailing.empty() && firstUnproven.empty(); }
  std::string report() const;  // one line per pass, then the failing pass's full report
};

// Lowers `fusion` (as braid::lower does) and checks the host program after every pass. A program
// that still names unallocated tensors (between host lowering and allocation) is not
// executable yet: that is reported, and is a failure only for the last pass.
EachPassResult lowerVerifyingEachPass(Fusion& fusion, const LoweringOptions& options, int64_t devices,
                                      const CheckOptions& check, LowerConfig config = {});
// The same for any pipeline (a pass author's own passes among the standard ones): adds the
// checking hook to `pm` and runs it over `ctx`.
EachPassResult runVerifyingEachPass(PassManager& pm, LoweringContext& ctx, const CheckOptions& check);

}  // namespace braid::verify
