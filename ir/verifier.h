// The host-program verifier: structural well-formedness, as MLIR's and XLA's verifiers check
// their IRs. A program that fails it has no meaning under DESIGN.md ("The host program's
// meaning"): a value used where it is not defined, a Wait or stream naming nothing, a view whose
// shape or constant index cannot hold for any sizes, a team outside the meshes of its tensors.
// Such a program is bad input (exit 2), checked once after parsing and after every lowering pass,
// before the consumers (checker, simulator, evaluator) give it a meaning.
//
// What depends on sizes, ranks, iterations or ordering is not structure: races, missing Waits,
// roots outside their team at some iteration, buffer size rules, unbound tensors at run time,
// views out of bounds for given sizes are findings of the checker (exit 1), reported with the rank
// and iteration where they happen (docs/VERIFY.md, "Verifier or checker").
#pragma once

#include <string>
#include <vector>

#include "ir/error.h"
#include "ir/host_ir.h"

namespace braid {

struct WellFormednessOptions {
  // The allocation pass has run (the lowering pipeline sets it from then on): every tensor a
  // statement reads or a communication writes is defined before it, every Deallocate follows a
  // definition of its tensor and is not a second one in a row. Off for parsed programs: a dump may
  // rely on its executor (or be broken), and the checker reports unbound tensors with their rank.
  bool allocationsPlaced = false;
  // Deallocates were placed too: every ALLOCATE of an intermediate (not owed to the caller) has a
  // Deallocate later in the same scope.
  bool deallocationsPlaced = false;
};

// One violated rule, at one statement.
struct WellFormednessProblem {
  std::string rule;     // "scope", "stream", "communication", "view", "team", "tensor", "allocation"
  SourceLoc loc;        // the statement's location (unknown for built programs without locations)
  const Stmt* stmt = nullptr;
  std::string message;  // what is wrong and why, naming other statements with their lines
  std::string str() const;  // "file:line:col: error: [rule] message"
};

// Every problem of `p`, in program order; empty when it is well formed.
std::vector<WellFormednessProblem> findWellFormednessProblems(const HostProgram& p,
                                                              const WellFormednessOptions& options = {});

// Thrown by verifyWellFormed: an Error (exit 2) whose message lists every problem.
class WellFormednessError : public Error {
 public:
  WellFormednessError(std::vector<WellFormednessProblem> problems, const std::string& context);
  const std::vector<WellFormednessProblem>& problems() const { return problems_; }

 private:
  std::vector<WellFormednessProblem> problems_;
};

// Throws WellFormednessError when `p` is not well formed; `context` opens the message
// ("internal lowering error after pass 'X'", or empty for a file: the locations say where).
void verifyWellFormed(const HostProgram& p, const WellFormednessOptions& options = {},
                      const std::string& context = "");

// What every consumer of a host IR file (verify, sim, run) reads it with: parseHostProgramFile,
// then verifyWellFormed. `braid print` parses only, so it prints anything that parses.
HostProgram parseWellFormedHostProgramFile(const std::string& path);

}  // namespace braid
