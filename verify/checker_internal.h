// Shared helpers of the checker's check families (race_check.cpp, lifetime_check.cpp, ...).
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "ir/semantics/event_graph.h"
#include "ir/semantics/happens_before.h"
#include "verify/checker.h"

namespace braid::verify::detail {

// Collects findings, merging those that name the same statements (at other ranks or
// iterations) into one with a count.
class Reporter {
 public:
  Reporter(const sem::EventGraph& g, const VerifyOptions& o) : g_(g), o_(o) {}

  // Returns the finding to fill, or nullptr when an identical one was already reported (then
  // its count was increased) or the kind is over its limit.
  Finding* add(FindingKind kind, const std::vector<const Stmt*>& stmts, const std::string& extra_key = "");

  Site eventSite(const std::string& role, int32_t event, const std::string& detail = "") const;
  Site stmtSite(const std::string& role, const Stmt* stmt, int32_t rank, int32_t stream,
                const std::vector<sem::LoopIndex>& loops, const std::string& detail = "") const;
  // "T3 (a view of T1 allocated at line 4): elements [4, 8)".
  std::string accessDetail(const sem::Access& a) const;
  std::string bufferName(int32_t buffer) const;
  std::vector<std::string> chainLines(const sem::HappensBefore& hb, const std::vector<sem::ChainStep>& steps) const;

  std::vector<Finding> take(int64_t* suppressed);

 private:
  const sem::EventGraph& g_;
  const VerifyOptions& o_;
  std::vector<Finding> findings_;
  std::map<std::tuple<int, std::vector<const Stmt*>, std::string>, size_t> index_;
  std::map<int, size_t> perKind_;
  int64_t suppressed_ = 0;
};

void checkIssues(const sem::EventGraph& g, Reporter& r);
void checkRacesAndCoverage(const sem::EventGraph& g, const sem::HappensBefore& hb, Reporter& r);
void checkJoins(const sem::EventGraph& g, const sem::HappensBefore& hb, Reporter& r);
void checkLifetimes(const sem::EventGraph& g, const sem::HappensBefore& hb, Reporter& r);
void checkUnwaitedCommunications(const sem::EventGraph& g, const sem::HappensBefore& hb, Reporter& r);
// When a conflict involves a communication, the finding it is: kMissingWait or kWaitOnWrongStream
// when the other access was issued after the post (the program forgot, or misplaced, its Wait),
// kRace otherwise. `wait` receives the misplaced Wait marker, if any.
FindingKind classifyCommunicationConflict(const sem::EventGraph& g, const sem::HappensBefore& hb, int32_t comm,
                                          int32_t other, int32_t* wait);
// Reports a communication's buffer used by `other` (role "reads", "writes", "frees") with no Wait
// (or a misplaced one, `wait` >= 0) ordering the use after the communication.
void reportUnwaitedUse(Reporter& r, const sem::EventGraph& g, FindingKind kind, int32_t comm,
                       const sem::Access& commAccess, int32_t other, const sem::Access& otherAccess,
                       const std::string& role, int32_t wait);
void checkDeadlock(const sem::EventGraph& g, const sem::HappensBefore& hb, Reporter& r);
void checkParallelism(const sem::EventGraph& g, const sem::HappensBefore& hb, Reporter& r);

}  // namespace braid::verify::detail
