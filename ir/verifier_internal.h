// Shared by the verifier's rule files: where each statement sits (program order, the loops
// around it), and the list the rules add their problems to.
#pragma once

#include <string>
#include <vector>

#include "ir/verifier.h"

namespace braid::wellformed {

// Every statement in program order (pre-order over nested bodies), with the loops around it. The
// rules walk statements by their position in that order and name other statements by position
// too, so that checking a program of tens of thousands of statements (after every lowering pass)
// costs a few flat vectors, not a map node per statement.
class Context {
 public:
  Context(const HostProgram& p, const WellFormednessOptions& o);

  const HostProgram& program;
  const WellFormednessOptions& options;

  // Every statement, in program order.
  const std::vector<const Stmt*>& statements() const { return order_; }
  // The position of `s` in statements(), or -1 when it is not a statement of the program.
  int orderOf(const Stmt& s) const;
  // The innermost loop around statement `order`, or null.
  const ForLoop* innermostLoop(int order) const;
  // Whether some loop around statement `order` iterates over `index`.
  bool insideLoopOver(int order, const std::string& index) const;
  // Whether what statement `def` defines is visible at statement `use`: `def` comes first in
  // program order, or both sit in one loop (then `use` sees what a previous iteration defined:
  // a pipeline that waits one iteration behind).
  bool visible(int def, int use) const { return def < use || sharedLoop(def, use) != nullptr; }
  // The loop both statements sit in, innermost (null if none).
  const ForLoop* sharedLoop(int a, int b) const;

  void report(const char* rule, const Stmt* s, std::string message);
  std::vector<WellFormednessProblem> take() { return std::move(problems_); }

 private:
  std::vector<const Stmt*> order_;
  // The position of the innermost ForLoop around each statement, -1 outside loops. A loop comes
  // before everything it holds, so the positions along a chain of enclosing loops decrease.
  std::vector<int> loop_;
  // Statement -> position, sorted by address; built on first use (only to sort what the rules
  // report, which name statements by pointer).
  mutable std::vector<std::pair<const Stmt*, int>> positions_;
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
