// The verifier's driver: places every statement (program order, enclosing loops), runs the rules
// of each concern, and the simplest rule: every tensor named belongs to the program.
#include "ir/verifier.h"

#include <algorithm>

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

void place(const Scope& scope, int loop, std::vector<const Stmt*>& order, std::vector<int>& loops) {
  for (const auto& s : scope) {
    const int at = static_cast<int>(order.size());
    order.push_back(s.get());
    loops.push_back(loop);
    if (s->is<ForLoop>()) {
      place(s->as<ForLoop>()->body, at, order, loops);
    } else if (s->is<IfThenElse>()) {
      place(s->as<IfThenElse>()->thenBody, loop, order, loops);
      place(s->as<IfThenElse>()->elseBody, loop, order, loops);
    }
  }
}

}  // namespace

Context::Context(const HostProgram& p, const WellFormednessOptions& o) : program(p), options(o) {
  place(p.body(), -1, order_, loop_);
}

int Context::orderOf(const Stmt& s) const {
  if (positions_.empty()) {
    positions_.reserve(order_.size());
    for (size_t i = 0; i < order_.size(); ++i) positions_.emplace_back(order_[i], static_cast<int>(i));
    std::sort(positions_.begin(), positions_.end());
  }
  auto it = std::lower_bound(positions_.begin(), positions_.end(), std::make_pair(&s, -1));
  return it != positions_.end() && it->first == &s ? it->second : -1;
}

const ForLoop* Context::innermostLoop(int order) const {
  const int l = loop_[static_cast<size_t>(order)];
  return l < 0 ? nullptr : order_[static_cast<size_t>(l)]->as<ForLoop>();
}

bool Context::insideLoopOver(int order, const std::string& index) const {
  for (int l = loop_[static_cast<size_t>(order)]; l >= 0; l = loop_[static_cast<size_t>(l)])
    if (order_[static_cast<size_t>(l)]->as<ForLoop>()->index == index) return true;
  return false;
}

const ForLoop* Context::sharedLoop(int a, int b) const {
  // The innermost loop around both is the deepest common ancestor of the two chains of enclosing
  // loops: step up from the later of the two loops (it cannot enclose the earlier one) until they
  // meet, at a loop or outside every loop.
  int la = loop_[static_cast<size_t>(a)], lb = loop_[static_cast<size_t>(b)];
  while (la != lb) {
    if (la > lb) la = loop_[static_cast<size_t>(la)];
    else lb = loop_[static_cast<size_t>(lb)];
  }
  return la < 0 ? nullptr : order_[static_cast<size_t>(la)]->as<ForLoop>();
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
  // Names are dense (a Fusion hands out names from 0 up and never a negative one): one flag per
  // name finds duplicates without a map.
  std::vector<bool> named(static_cast<size_t>(p.tensors().nextTensorName()), false);
  for (const TensorView* tv : p.tensors().tensors()) {
    const auto name = static_cast<size_t>(tv->name());
    if (named[name])
      c.report("tensor", nullptr,
               "two tensors are named T" + std::to_string(tv->name()) +
                   ": statements that name one would be read as naming the other");
    named[name] = true;
  }
  // A tensor belongs to the program when the program's Fusion made it (Fusion::newTensor is the
  // only maker, and it records itself as the tensor's owner).
  auto mine = [&](const TensorView* tv) { return tv && tv->fusion() == &p.tensors(); };
  for (const TensorView* tv : p.inputs())
    if (!mine(tv)) c.report("tensor", nullptr, "a program input is not a tensor of the program");
  for (const TensorView* tv : p.outputs())
    if (!mine(tv)) c.report("tensor", nullptr, "a program output is not a tensor of the program");
  std::vector<TensorView*> named_here;
  for (const Stmt* s : c.statements()) {
    stmtTensors(*s, named_here);
    for (const TensorView* tv : named_here)
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
    int oa = a.stmt ? c.orderOf(*a.stmt) : -1;
    int ob = b.stmt ? c.orderOf(*b.stmt) : -1;
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
