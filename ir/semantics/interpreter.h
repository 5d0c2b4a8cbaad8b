// Runs every rank's host thread of a host program for given bindings and records what it does
// on the devices as an EventGraph (see event_graph.h and DESIGN.md, "The host program's
// meaning"). Scalars: loop indices, `rank` / `deviceIdx.x` = r, `numberOfStreams` = S, and the
// caller's bindings of symbolic extents.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "ir/host_ir.h"
#include "ir/semantics/buffer_rules.h"
#include "ir/semantics/event_graph.h"

namespace braid::sem {

struct SemanticsOptions {
  Bindings bindings;            // symbolic extents (i0, i2, ...); may also pin numberOfStreams
  int64_t numRanks = 0;         // D; 0: from the program's meshes and teams (at least 1)
  int64_t numberOfStreams = 4;  // S, unless bindings has "numberOfStreams"
  std::vector<int64_t> ranks;   // ranks whose host threads run; empty: all of 0..D-1
  // Per-rank programs (nvFuser lowers one program per device and prints each apart): rank r runs
  // rankPrograms[r] instead of the program given to buildEventGraph. Communications match across
  // them by communicator and order (their statements differ by construction).
  std::map<int64_t, const HostProgram*> rankPrograms;
  // Limit on the number of events (a typo in a binding must not eat the machine); 0: the
  // process's budget (budget.h: --max-events / --max-memory, by default from the machine's
  // memory). The program's estimated event count is checked against it before anything runs.
  int64_t maxEvents = 0;
  // Called whenever a rank binds a tensor to a buffer or a view of one (statement null for the
  // inputs): the differential test compares these with what exec's evaluator binds.
  std::function<void(int64_t rank, const Stmt* stmt, const TensorView* tv, const Region& region)> onBind;
};

// Builds the event graph: runs the host threads, matches collectives and P2P across ranks,
// adds per-communicator order. Throws Error for bad input (an unbound symbol, a malformed
// statement, more than kMaxRanks ranks, an estimated event count over the budget, int64
// overflow), located at the statement (a ParseError: file:line:col) when it has a location; problems of the program under study become EventGraph::issues, and what the
// semantics assumed where a dump leaves something out (a HostUnit not printed, a dtype not
// printed) issues of Severity::kNote.
EventGraph buildEventGraph(const HostProgram& p, const SemanticsOptions& options);

// The number of ranks the program's meshes and communication teams imply (max device + 1; 1 if
// none).
int64_t ranksFromProgram(const HostProgram& p);

// Free symbols the program needs that neither `bindings` nor the interpreter provides (loop
// indices, numberOfStreams, rank, deviceIdx.x/y are provided).
std::set<std::string> unboundSymbols(const HostProgram& p, const Bindings& bindings);

}  // namespace braid::sem
