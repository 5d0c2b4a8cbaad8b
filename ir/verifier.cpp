// The verifier's driver: places every statement (program order, enclosing loops), runs the rules
// of each concern, and the simplest rule: every tensor named belongs to the program.
#include "ir/verifier.h"

#include <algorithm>
#include <map>
#include <set>

#include "ir/host_ir_text.h"
#include "ir/verifier_internal.h"

namespace braid {

std::string WellFormednessProblem::str() const { return loc.str() + ": error: [" + rule + "] " + message; }

namespace {

std::string joinProblems(const std::vector<WellFormednessProblem>& problems, const std::string& context) {
  std::string s = context.empty() ? "" : context + ": ";
  s += "the host program is not well formed (" + std::to_string(problems.size()) + " problem(s))";
  for (const auto& p : problems) s += "\n" + p.str();
  return s;
}

}  // namespace

WellFormednessError::WellFormednessError(std::vector<WellFormednessProblem> problems, const std::string& context)
    : Error(joinProblems(problems, context)), problems_(std::move(problems)) {}

namespace wellformed {

namespace {

void place(const Scope& scope, std::vector<const ForLoop*>& loops, std::map<const Stmt*, Placement>& out,
           std::vector<const Stmt*>& order) {
  for (const auto& s : scope) {
    out[s.get()] = Placement{static_cast<int>(order.size()), loops};
    order.push_back(s.get());
    if (s->is<ForLoop>()) {
      loops.push_back(s->as<ForLoop>());
      place(s->as<ForLoop>()->body, loops, out, order);
      loops.pop_back();
    } else if (s->is<IfThenElse>()) {
      place(s->as<IfThenElse>()->thenBody, loops, out, order);
      place(s->as<IfThenElse>()->elseBody, loops, out, order);
    }
  }
}

}  // namespace

Context::Context(const HostProgram& p, const WellFormednessOptions& o) : program(p), options(o) {
  std::vector<const ForLoop*> loops;
  place(p.body(), loops, placement_, order_);
}

const ForLoop* Context::sharedLoop(const Stmt& a, const Stmt& b) const {
  const auto& la = at(a).loops;
  const auto& lb = at(b).loops;
  const ForLoop* shared = nullptr;
  for (size_t i = 0; i < la.size() && i < lb.size() && la[i] == lb[i]; ++i) shared = la[i];
  return shared;
}

bool Context::visible(const Stmt& def, const Stmt& use) const {
  return at(def).order < at(use).order || sharedLoop(def, use) != nullptr;
}

void Context::report(const char* rule, const Stmt* s, std::string message) {
  WellFormednessProblem p;
  p.rule = rule;
  p.stmt = s;
  if (s) p.loc = s->loc;
  if (p.loc.file.empty()) p.loc.file = program.sourceName;
  p.message = std::move(message);
  if (s && !s->loc.known()) {
    // A built program has no lines: name the statement by its text instead.
    std::string text = printStmt(program, *s);
    if (auto nl = text.find('\n'); nl != std::string::npos) text.resize(nl);
    if (auto first = text.find_first_not_of(' '); first != std::string::npos) text.erase(0, first);
    p.message += " [statement: " + text + "]";
  }
  problems_.push_back(std::move(p));
}

std::string where(const Stmt& s) {
  if (s.loc.known()) return "line " + std::to_string(s.loc.line);
  return std::string(stmtKindName(s.kind())) + " (no location)";
}

void checkTensors(Context& c) {
  const HostProgram& p = c.program;
  std::set<const TensorView*> owned;
  std::map<int, const TensorView*> names;
  for (const TensorView* tv : p.tensors().tensors()) {
    owned.insert(tv);
    auto [it, inserted] = names.emplace(tv->name(), tv);
    if (!inserted)
      c.report("tensor", nullptr,
               "two tensors are named T" + std::to_string(tv->name()) +
                   ": statements that name one would be read as naming the other");
  }
  auto mine = [&](const TensorView* tv) { return tv && owned.count(tv); };
  for (const TensorView* tv : p.inputs())
    if (!mine(tv)) c.report("tensor", nullptr, "a program input is not a tensor of the program");
  for (const TensorView* tv : p.outputs())
    if (!mine(tv)) c.report("tensor", nullptr, "a program output is not a tensor of the program");
  for (const Stmt* s : c.statements()) {
    for (const TensorView* tv : stmtTensors(*s))
      if (!mine(tv))
        c.report("tensor", s,
                 std::string(stmtKindName(s->kind())) + " names " + (tv ? tv->nameStr() : std::string("a tensor")) +
                     ", which is not a tensor of the program");
    if (s->is<HostOp>() && !s->as<HostOp>()->op) c.report("tensor", s, "a host op without an operation");
    if (s->is<Allocate>() && !s->as<Allocate>()->tv) c.report("tensor", s, "an ALLOCATE without a tensor");
    if (s->is<Deallocate>() && !s->as<Deallocate>()->tv) c.report("tensor", s, "a Deallocate without a tensor");
  }
}

}  // namespace wellformed

std::vector<WellFormednessProblem> findWellFormednessProblems(const HostProgram& p,
                                                              const WellFormednessOptions& options) {
  wellformed::Context c(p, options);
  wellformed::checkTensors(c);
  wellformed::checkScopes(c);
  wellformed::checkCommunications(c);
  wellformed::checkViews(c);
  if (options.allocationsPlaced) wellformed::checkAllocations(c);
  std::vector<WellFormednessProblem> problems = c.take();
  std::stable_sort(problems.begin(), problems.end(), [&](const auto& a, const auto& b) {
    int oa = a.stmt ? c.at(*a.stmt).order : -1;
    int ob = b.stmt ? c.at(*b.stmt).order : -1;
    return oa < ob;
  });
  return problems;
}

void verifyWellFormed(const HostProgram& p, const WellFormednessOptions& options, const std::string& context) {
  std::vector<WellFormednessProblem> problems = findWellFormednessProblems(p, options);
  if (!problems.empty()) throw WellFormednessError(std::move(problems), context);
}

HostProgram parseWellFormedHostProgramFile(const std::string& path) {
  HostProgram p = parseHostProgramFile(path);
  verifyWellFormed(p);
  return p;
}

}  // namespace braid
