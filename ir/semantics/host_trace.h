// The host instructions one rank executes, in order: the statement walk of the interpreter
// (loops and branches, evaluated with the rank's scalars) without any of its data (tensors,
// views, streams). The simulator charges each instruction its host cost, including the ones that
// enqueue nothing (SetCurrentStream, HirAliasSelect, Allocate, ...), which the event graph does
// not record.
//
// Numbering matches the event graph: the k-th statement a rank executes (1-based, loops and
// branches count once per execution of their header) is `stmts[k - 1]`, and an Event's `issue`
// is the number of its statement (0 for the entry marker; the exit marker's issue is the total).
#pragma once

#include <cstdint>
#include <vector>

#include "ir/host_ir.h"

namespace braid::sem {

struct HostTrace {
  int64_t rank = 0;
  std::vector<const Stmt*> stmts;
};

// Walks `p` as rank `rank` of a run with `numberOfStreams` streams (a binding of
// "numberOfStreams" wins, as in the interpreter). Throws Error for a loop bound or predicate that
// does not evaluate (an unbound symbol), naming the statement.
HostTrace traceHost(const HostProgram& p, const Bindings& bindings, int64_t rank, int64_t numberOfStreams);

}  // namespace braid::sem
