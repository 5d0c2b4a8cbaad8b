// The parametric checker: proves with Z3 that a host program's synchronization, aliasing and
// collectives are correct for every value of its symbolic extents, loop trip counts and stream
// count (docs/VERIFY.md, "Parametric mode"), or finds a counterexample, turns it into concrete
// bindings and replays it through the exact bounded checker (checker.h), which must confirm it.
//
// Ranks are enumerated symbolically: the rank is one Z3 variable ranging over 0..D-1. The stream
// count is symbolic first; properties Z3 cannot decide that way are retried for every S up to
// a bound, and the verdict says which scope was achieved. Nothing is claimed that was not
// proved: unknown answers, queries that ran out of their CPU budget, unconfirmed candidates and
// constructs the encoding does not model are reported as such.
//
// This header does not need Z3; the implementation exists when braid is built with
// BRAID_WITH_Z3 (parametricAvailable()).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/host_ir.h"
#include "verify/checker.h"
#include "verify/finding.h"

namespace braid::verify {

struct ParametricOptions {
  Bindings bindings;                // extents fixed by the caller; the others stay symbolic
  std::vector<Scalar> assumptions;  // conditions on the extents assumed (`i0 % 16 == 0`), stated in the verdict
  int64_t ranks = 0;                // D; 0: from the program's meshes and teams
  std::optional<int64_t> streams;   // a fixed numberOfStreams; nullopt: every S >= 1
  int64_t maxStreams = 8;           // the bound of the per-S fallback
  // CPU milliseconds per Z3 query (per attempt) of the solving thread, so that the answers do not
  // depend on the machine's load; a wall-clock ceiling of 20x ends a starved one (cpu_budget.h).
  unsigned queryCpuMs = 4000;
  unsigned attempts = 3;            // checks per query when Z3 answers unknown (restarts.h); 1: no retry
  unsigned resourceLimit = 0;       // Z3's deterministic work limit per solver (rlimit); 0: none
  bool replay = true;               // replay counterexamples through the bounded checker
};

enum class ClaimStatus {
  kProven,    // unsatisfiable violation queries: holds in the whole scope
  kViolated,  // a counterexample the bounded checker confirmed
  kUnknown,   // Z3 answered unknown / ran out of its budget, or a candidate was not confirmed
  kUnsupported,  // the program uses a construct the encoding does not model
};
const char* claimStatusName(ClaimStatus s);

// The verdict on one property.
struct PropertyVerdict {
  std::string name;     // "races", "joins", ...
  std::string meaning;  // one line: what holds when proven
  ClaimStatus status = ClaimStatus::kProven;
  std::string scope;    // the stream counts it holds for ("all numberOfStreams >= 1", "numberOfStreams = 1..8")
  std::string note;     // why it is unknown, which fallback was used, ...
  int64_t queries = 0;
};

// A counterexample: the concrete bindings, the statements involved with their iterations, ranks
// and streams, the ordering edge that is missing, and the bounded checker's replay.
struct Witness {
  FindingKind kind = FindingKind::kRace;
  std::string property;  // the property it violates
  std::string summary;
  std::vector<Site> sites;
  std::string missingEdge;
  std::vector<std::string> cycle;  // deadlocks: the wait-for cycle from the unsat core
  Bindings bindings;               // extents and numberOfStreams
  int64_t ranks = 0;
  bool replayed = false;
  bool confirmed = false;
  std::string replayNote;  // what the bounded checker said
  VerifyResult replay;     // its full result (for drawing the witness)
};

struct ParametricResult {
  std::string program;
  int64_t ranks = 0;
  std::vector<std::string> symbols;  // extents left symbolic
  std::string streamScope;           // what the stream count ranged over
  std::vector<std::string> domainNotes;  // conditions the program's divisions impose
  std::vector<PropertyVerdict> properties;
  std::vector<Witness> witnesses;
  std::vector<std::string> unsupported;
  int64_t queries = 0;
  double seconds = 0;

  bool proven() const;    // every property proven
  bool bugFound() const;  // a confirmed counterexample
  // "for all i0 >= 1, i2 >= 1, all numberOfStreams >= 1, ranks 0..7".
  std::string scope() const;
};

// Builds the parametric model of `p` and checks every property. Throws Error for bad input
// (malformed statements, a rank count that does not fit the program).
ParametricResult proveProgram(const HostProgram& p, const ParametricOptions& o);

std::string formatParametricReport(const ParametricResult& r);
std::string formatParametricJson(const ParametricResult& r, int indent = 2);
// 0 proven, 1 a confirmed bug, 4 inconclusive (unknown, unsupported, unconfirmed candidate).
int parametricExitCode(const ParametricResult& r);

// The command line that replays a witness in the bounded checker: "--bind i0=3 --bind i2=1
// --ranks 2 --streams 2".
std::string replayArguments(const Witness& w);

// True when braid was built with Z3 (BRAID_WITH_Z3).
bool parametricAvailable();

}  // namespace braid::verify
