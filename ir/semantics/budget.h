// Budgets before work: how many events (and so how much memory) a host program will unroll into
// for given bindings and ranks, estimated from its loops before anything runs, and the budget a
// command runs under. A 10^9-iteration loop or a 16,000-rank team is refused in microseconds,
// saying what is too big and by how much, instead of after minutes and gigabytes.
#pragma once

#include <cstdint>
#include <string>

#include "ir/host_ir.h"
#include "ir/semantics/interpreter.h"

namespace braid::sem {

// Memory the event graph and the checks on it take per event: 745 bytes measured for verify,
// 697 for sim (docs/HARDENING.md, "Bytes per event"), rounded up for the vector clocks of
// programs with more streams.
inline constexpr int64_t kBytesPerEvent = 1024;

// The happens-before check keeps one vector clock per event, an int per stream of every rank: it
// refuses graphs with more entries than this (2.4 GB), and verify refuses up front what it would.
inline constexpr double kMaxClockEntries = 6e8;

// Events are numbered with int32 ids: no budget goes past this many.
inline constexpr int64_t kMaxEventIds = int64_t{1} << 30;

// The budget every event graph is built under. Zero fields take the defaults: memory, half the
// machine's physical memory; events, that memory divided by kBytesPerEvent.
struct WorkBudget {
  int64_t maxEvents = 0;
  int64_t maxMemoryBytes = 0;
};

// Set once by the command line (--max-events, --max-memory); the library default otherwise.
void setWorkBudget(const WorkBudget& b);
// The budget in force, both fields resolved (> 0); the event limit is the smaller of maxEvents
// and maxMemoryBytes / kBytesPerEvent, and at most kMaxEventIds.
WorkBudget workBudget();
int64_t eventLimit();

// Whether buildEventGraph reports its progress on stderr (the CLI turns it on for a terminal).
void setShowProgress(bool on);
bool showProgress();

struct WorkEstimate {
  int64_t events = 0;  // device operations, summed over the ranks that run (saturates at INT64_MAX)
  int64_t ranks = 0;
  std::string largest;  // the statement that contributes most, e.g. "FOR StreamIdx at f.hir:4:3 (10^9 times)"
};

// Counts the events `p` unrolls into under `o` for the ranks given (loop trip counts from the
// bindings; a bound that depends on an outer loop index is taken at that loop's last value, an
// unbound one as one trip).
WorkEstimate estimateWork(const HostProgram& p, const SemanticsOptions& o, int64_t numRanks, int64_t ranksRun);

// "12 GiB", "640 MiB", "900 KiB", "512 bytes".
std::string formatBytes(int64_t bytes);
// "512M" / "4G" / "1024" (bytes) / "2GiB": the --max-memory syntax; throws Error otherwise.
int64_t parseByteSize(const std::string& text);

}  // namespace braid::sem
