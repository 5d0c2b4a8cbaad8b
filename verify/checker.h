// The exact bounded checker: runs a host program for given bindings (ir/semantics), then checks
// its event graph. Exact for those bindings: every finding is a real behaviour of the program
// under DESIGN.md's semantics, and every violation of the checked properties is found.
#pragma once

#include <string>
#include <vector>

#include "ir/host_ir.h"
#include "ir/semantics/event_graph.h"
#include "ir/semantics/happens_before.h"
#include "verify/finding.h"

namespace braid::verify {

struct VerifyOptions {
  Bindings bindings;    // symbolic extents
  int64_t ranks = 0;    // 0: from the program's meshes / teams
  int64_t streams = 4;  // numberOfStreams
  bool parallelismWarnings = true;
  size_t maxFindingsPerKind = 20;  // further distinct findings of a kind are counted, not listed
};

struct VerifyResult {
  std::vector<Finding> findings;
  std::string program;  // its name, for reports
  int64_t ranks = 0;
  int64_t numberOfStreams = 0;
  Bindings bindings;
  int64_t events = 0;
  int64_t streamCount = 0;
  int64_t suppressed = 0;  // distinct findings not listed (over maxFindingsPerKind)
  // Ranks whose host thread stopped at an error; ordering checks were skipped (DESIGN.md: the
  // program cannot run past that statement).
  std::vector<int64_t> haltedRanks;

  int64_t errors() const;
  int64_t warnings() const;
  bool ok() const { return errors() == 0; }
  bool has(FindingKind k) const;
};

// Checks a built event graph. Deadlocks are looked for with per-communicator serialization,
// races, joins and lifetimes without relying on it (see HappensBefore).
VerifyResult checkEventGraph(const sem::EventGraph& g, const VerifyOptions& o);

// Builds the event graph of `p` and checks it. Throws Error for bad input: unbound symbols
// (all named at once), malformed statements.
VerifyResult verifyProgram(const HostProgram& p, const VerifyOptions& o);

// Human-readable report: a header line, then each finding in a few lines.
std::string formatReport(const VerifyResult& r);
// The same as JSON (for tools).
std::string formatJson(const VerifyResult& r, int indent = 2);

}  // namespace braid::verify
