// HostProfile: where the interpreter's host time goes, by statement kind (`braid run
// --host-profile`, docs/EXEC.md). The evaluator (exec/evaluator.h) adds one sample per executed
// statement: its kind as the host IR names it (hostProfileKind) and the host time spent in it,
// exclusive of the statements nested in it (a ForLoop's own time is its bounds and per-iteration
// bookkeeping, not its body). A few pseudo-kinds in parentheses cover host time that belongs to
// no statement (the run's entry and exit, statements that do not run on this rank).
//
// This file holds only the data: accumulate, merge, sort, format. It has no ATen types.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace braid {
class Stmt;
}

namespace braid::exec {

struct HostProfileEntry {
  std::string kind;    // "matmul", "SetCurrentStream", "Communication Allgather", "(run entry)"
  int64_t count = 0;   // samples (statements executed, or runs for the run pseudo-kinds)
  int64_t totalNs = 0; // host time, nanoseconds
};

class HostProfile {
 public:
  // One sample of `kind` that took `ns` nanoseconds of host time.
  void add(std::string_view kind, int64_t ns);
  // Adds every entry of `other` (another rank's profile, another configuration's).
  void merge(const HostProfile& other);
  void clear() { entries_.clear(); }

  bool empty() const { return entries_.empty(); }
  // In order of first appearance.
  const std::vector<HostProfileEntry>& entries() const { return entries_; }
  // By total time, largest first (ties: by kind).
  std::vector<HostProfileEntry> sorted() const;
  // The entry of `kind`, or null.
  const HostProfileEntry* find(std::string_view kind) const;
  int64_t totalNs() const;
  int64_t totalCount() const;

 private:
  // A handful of kinds: a linear search beats a map and keeps first-appearance order.
  std::vector<HostProfileEntry> entries_;
};

// The profile's kind for a statement: the host IR's name for it (stmtKindName: "Allocate",
// "SetCurrentStream", "Wait", "ForLoop", ...), except a host-evaluated op, named by its op
// ("matmul", "linear", "Set", "view", ...), and a Communication, named with its type
// ("Communication Allgather"). The view points at static storage.
std::string_view hostProfileKind(const Stmt& s);

// Pseudo-kinds: host time of Evaluator::run outside the program's statements.
inline constexpr std::string_view kHostProfileRunEntry = "(run entry)";  // reset, bind inputs
inline constexpr std::string_view kHostProfileRunExit = "(run exit)";    // wait for pending transfers
// A statement that does not run on this rank (ir/semantics/mesh_rule.h): only skipped.
inline constexpr std::string_view kHostProfileSkipped = "(not on this rank)";

// A table, one line per kind sorted by total time, then a total line:
//   kind  count  total us  us/stmt  share
// `indent` starts every line.
std::string formatHostProfile(const HostProfile& profile, const std::string& indent = "  ");

}  // namespace braid::exec
