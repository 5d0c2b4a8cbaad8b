// The host thread's state during the symbolic run (symbolic_run.cpp), as terms: the current
// stream, captured stream variables, what every tensor name is bound to, what was deallocated,
// which communications are posted and not yet waited. Where the state depends on a branch or on
// the iteration, a component holds guarded alternatives (each with the condition under which it
// is the value).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "verify/parametric/model.h"

namespace braid::verify::parametric {

// The tensor is bound to `view` of buffer `buf` under `cond`; `freed` holds when the buffer was
// deallocated (by its owner) while this name still refers to it.
struct ViewAlt {
  z3::expr cond = trueTerm();
  BufRef buf;
  View view;
  z3::expr freed = Z3ContextScope::current().bool_val(false);
};

struct Capture {
  z3::expr captured = Z3ContextScope::current().bool_val(false);
  SymStream value;
};

struct PostAlt {
  z3::expr cond = trueTerm();
  int tmpl = -1;  // -1: an empty coalescing group (nothing to wait for)
  std::vector<z3::expr> idx;
};

struct DeallocAlt {
  z3::expr cond = trueTerm();
  const Stmt* stmt = nullptr;
};

struct HostState {
  SymStream cur;
  std::map<std::string, Capture> named;
  std::map<const TensorView*, std::vector<ViewAlt>> bound;
  std::map<const TensorView*, std::vector<DeallocAlt>> deallocated;
  std::map<int, std::vector<PostAlt>> posted;
};

// Replaces `from` by `to` in every term of the state.
HostState substitute(const HostState& s, const z3::expr_vector& from, const z3::expr_vector& to);
// `c ? a : b`, alternatives guarded by c / !c (identical components stay as they are).
HostState mergeStates(const z3::expr& c, const HostState& a, const HostState& b);
// Drops alternatives whose condition simplifies to false.
void pruneState(HostState& s);

z3::expr bufEquals(const BufRef& a, const BufRef& b);
bool sameBufRef(const BufRef& a, const BufRef& b);  // structurally (after simplification)

}  // namespace braid::verify::parametric
