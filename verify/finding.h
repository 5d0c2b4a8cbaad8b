// What the checker reports: one Finding per bug (or warning), with the statements involved
// (source line, rank, stream, loop indices), an explanation in a few lines, and, where ordering
// matters, the chain of ordering facts (or the wait-for cycle).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/error.h"
#include "ir/semantics/event_graph.h"
#include "ir/semantics/finding_kind.h"

namespace braid::verify {

// The kinds are the semantics' one taxonomy (ir/semantics/finding_kind.h): the interpreter
// reports some while it runs a rank, the checker the rest.
using sem::FindingKind;
using sem::Severity;
using sem::findingKindName;
using sem::severityOf;

// One statement instance involved in a finding.
struct Site {
  std::string role;  // "write", "read", "free", "deallocate", "collective", ...
  SourceLoc loc;
  std::string statement;  // one-line summary of the statement
  int64_t rank = -1;
  std::string stream;
  std::vector<sem::LoopIndex> loops;
  std::string detail;  // e.g. "T3 (a view of T1): elements [4, 8)"
  int32_t event = -1;  // the event graph node, when the site is one (viz highlights it)
};

struct Finding {
  FindingKind kind = FindingKind::kRace;
  Severity severity = Severity::kError;
  std::string summary;                   // one line
  std::vector<Site> sites;               // the statements, in the order the summary names them
  std::vector<std::string> explanation;  // a few lines
  std::vector<std::string> chain;        // ordering chain / cycle, one step per line
  int64_t occurrences = 1;               // identical findings at other ranks / iterations
};

}  // namespace braid::verify
