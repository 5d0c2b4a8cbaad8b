// Shared by the verifier's rule files: where each statement sits (program order, the loops
// around it), and the list the rules add their problems to.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/verifier.h"

namespace braid::wellformed {

struct Placement {
  int order = 0;                      // position in program order (pre-order over nested bodies)
  std::vector<const ForLoop*> loops;  // enclosing loops, outermost first
};

class Context {
 public:
  Context(const HostProgram& p, const WellFormednessOptions& o);

  const HostProgram& program;
  const WellFormednessOptions& options;

  const Placement& at(const Stmt& s) const { return placement_.at(&s); }
  // Whether what `def` defines is visible at `use`: `def` comes first in program order, or both
  // sit in one loop (then `use` sees what a previous iteration defined: a pipeline that waits one
  // iteration behind).
  bool visible(const Stmt& def, const Stmt& use) const;
  // The loop both statements sit in, innermost (null if none).
  const ForLoop* sharedLoop(const Stmt& a, const Stmt& b) const;
  // Every statement, in program order.
  const std::vector<const Stmt*>& statements() const { return order_; }

  void report(const char* rule, const Stmt* s, std::string message);
  std::vector<WellFormednessProblem> take() { return std::move(problems_); }

 private:
  std::map<const Stmt*, Placement> placement_;
  std::vector<const Stmt*> order_;
  std::vector<WellFormednessProblem> problems_;
};

// "line 12" (or "<statement kind> (no location)" for built programs), to name another statement.
std::string where(const Stmt& s);

// The rules, one concern per file.
void checkTensors(Context& c);         // verifier.cpp: tensors belong to the program, names unique
void checkScopes(Context& c);          // verifier_scopes.cpp: scalars and stream variables defined before use
void checkCommunications(Context& c);  // verifier_communications.cpp: ids, Waits, teams, roots
void checkViews(Context& c);           // verifier_views.cpp: view operands, axes, constant indices
void checkAllocations(Context& c);     // verifier_allocations.cpp: definitions before use, ALLOCATE/Deallocate pairs

}  // namespace braid::wellformed
