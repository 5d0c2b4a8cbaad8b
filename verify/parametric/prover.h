// The prover: states every property of the bounded checker as violation queries over the
// program model (model.h) and its instance encoding (encoding.h), asks Z3, and turns satisfying
// assignments into witnesses replayed by the bounded checker. One file per family of checks:
// ordering_checks.cpp (races, joins, allocator reuse), memory_checks.cpp (output coverage,
// uninitialized reads, host-thread issues), comm_checks.cpp (collective matching, P2P pairing,
// deadlock), witness.cpp (models to witnesses, replay).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "verify/parametric/cpu_budget.h"
#include "verify/parametric/encoding.h"
#include "verify/parametric/model.h"
#include "verify/parametric/parametric_checker.h"

namespace braid::verify::parametric {

// One statement instance a violation involves.
struct FocusSite {
  std::string role;  // "write", "read", "free", ...
  int tmpl = -1;     // -1: a statement without a template (host-thread issues): stmt and loops
  std::vector<z3::expr> idx;
  int access = -1;                     // index into the template's accesses (for the detail)
  std::optional<z3::expr> rankTerm;    // when not the model's rank (cross-rank checks)
  const Stmt* stmt = nullptr;
  std::vector<const LoopVar*> loops;

  static FocusSite of(std::string role, int tmpl, std::vector<z3::expr> idx, int access = -1,
                      std::optional<z3::expr> rank = std::nullopt) {
    FocusSite s;
    s.role = std::move(role);
    s.tmpl = tmpl;
    s.idx = std::move(idx);
    s.access = access;
    s.rankTerm = std::move(rank);
    return s;
  }
};

// A satisfiable violation query, before it becomes a witness.
struct Candidate {
  FindingKind kind = FindingKind::kRace;
  std::string summary;
  std::vector<FocusSite> sites;
  std::string missingEdge;
  std::vector<std::string> cycle;
  std::string property;
  std::vector<z3::expr> point;             // coverage / initialization: the element concerned
  const TensorView* pointOf = nullptr;     // ... of this buffer
};

// What one property's queries found.
struct PropertyState {
  std::string name;
  std::string meaning;
  int64_t queries = 0;
  int64_t unknown = 0;      // Z3 gave no answer (budget spent, incompleteness)
  int64_t unconfirmed = 0;  // satisfiable, but the bounded checker did not confirm the witness
  int64_t violated = 0;     // confirmed counterexamples
  bool unsupported = false;
  std::vector<std::string> notes;
};

// BRAID_DUMP=queries: every Z3 query's answer and time, and every replay's time, on stderr.
bool dumpQueries();

class Prover {
 public:
  Prover(const HostProgram& p, ProgramModel& m, const ParametricOptions& o);

  // Runs every check; one PropertyState per property, in a fixed order.
  std::vector<PropertyState> run();
  std::vector<Witness>& witnesses() { return witnesses_; }
  int64_t queries() const { return queries_; }

 private:
  // ---- checks ----
  void checkHostIssues(PropertyState& views, PropertyState& host);
  void checkRaces(PropertyState& st);
  void checkJoins(PropertyState& st);
  void checkReuse(PropertyState& st);
  void checkCoverage(PropertyState& st);
  void checkInitialization(PropertyState& st);
  void checkCollectives(PropertyState& matching, PropertyState& deadlock);

  // ---- asking ----
  // Asks whether `q` is satisfiable together with the solver's assertions; an unknown answer is
  // asked again in fresh solvers (restarts.h), and its reason is left in lastUnknown_.
  z3::check_result ask(z3::solver& s, const z3::expr& q);
  // One check of the solver's assertions as they stand, within the query budget (no retry): for
  // extracting models. An unknown answer's reason is left in lastUnknown_.
  z3::check_result checkOnce(z3::solver& s);
  // The CPU milliseconds of a query on `s`: the refinement solver has a quarter (refined()).
  unsigned cpuMsFor(const z3::solver& s) const;
  // An ordering query: unsatisfiable proves it; satisfiable first tries chain lemmas and more
  // instances, then becomes a candidate.
  void orderingQuery(PropertyState& st, const z3::expr& q, const Candidate& c);
  // A query without ordering facts.
  void plainQuery(PropertyState& st, const z3::expr& q, const Candidate& c);
  void tryChainLemmas();
  // The refinement encoding: every instance of the main one, the chain lemmas, and the
  // neighbouring iterations (I +- 1, J +- 1, first, last). Kept apart so that the main solver
  // stays small; the shared instance names let a query built on the main encoding be asked here.
  z3::solver& refined();
  // Turns the satisfying assignment of `q` into a witness and replays it. Records it and returns
  // true when the bounded checker confirms it, or (`final`) in any case.
  bool candidate(PropertyState& st, z3::solver& s, const z3::expr& q, const Candidate& c, bool final = true);

  // ---- helpers ----
  // Candidate writers of a point: instances of `w` that may write it (inverting the write
  // view's offsets in the loop index), plus the given iterations.
  std::vector<std::vector<z3::expr>> writerCandidates(int w, const Access& a, const std::vector<z3::expr>& point,
                                                      const std::vector<std::vector<z3::expr>>& extra);
  z3::expr covers(int w, const std::vector<z3::expr>& idx, const Access& a, const BufRef& buf,
                  const std::vector<z3::expr>& point);
  std::string streamName(const z3::model& mdl, const SymStream& s) const;
  Witness makeWitness(z3::model& mdl, const Candidate& c);
  void replay(Witness& w, const Candidate& c);

  const HostProgram& p_;
  ProgramModel& m_;
  const ParametricOptions& o_;
  BudgetWatchdog dog_;  // every check's budget (Z3 is given no timeout of its own: cpu_budget.h)
  z3::solver order_;
  z3::solver plain_;
  Encoding enc_;
  std::unique_ptr<z3::solver> refinedSolver_;
  std::unique_ptr<Encoding> refinedEnc_;
  bool lemmasTried_ = false;
  // Replays by bindings (many candidates share the smallest ones).
  std::map<std::string, VerifyResult> replays_;
  std::map<std::string, std::string> replayErrors_;
  int64_t queries_ = 0;
  std::string lastUnknown_;  // Z3's reason for the last unknown answer of ask()
  std::vector<Witness> witnesses_;
  std::map<std::string, bool> reported_;  // kind + statements, to fold repeats
};

}  // namespace braid::verify::parametric
