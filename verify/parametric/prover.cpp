#include "verify/parametric/prover.h"

#include "verify/parametric/restarts.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>

namespace braid::verify::parametric {

bool dumpQueries() {
  static const bool on = [] {
    const char* env = std::getenv("BRAID_DUMP");
    return env && std::string(env).find("queries") != std::string::npos;
  }();
  return on;
}

Prover::Prover(const HostProgram& p, ProgramModel& m, const ParametricOptions& o)
    : p_(p), m_(m), o_(o), order_(m.ctx), plain_(m.ctx), enc_(m, order_) {
  if (o.resourceLimit > 0) {
    order_.set("rlimit", o.resourceLimit);
    plain_.set("rlimit", o.resourceLimit);
  }
  order_.add(m_.domain);
  plain_.add(m_.domain);
}

std::vector<PropertyState> Prover::run() {
  auto property = [](const char* name, const char* meaning) {
    PropertyState st;
    st.name = name;
    st.meaning = meaning;
    return st;
  };
  std::vector<PropertyState> out = {
      property("races", "no two accesses on different streams overlap unordered with one writing"),
      property("joins", "all work (communications included) completes before the program returns"),
      property("allocator reuse",
               "every use of a buffer is ordered after its allocation and before its memory returns to the "
               "allocator"),
      property("output coverage", "every output is fully written on every rank of its mesh"),
      property("initialization", "nothing reads memory that nothing wrote before"),
      property("views", "views stay inside their buffers; communication buffers are contiguous"),
      property("bindings", "no use of unbound or deallocated tensors; every Wait names a posted communication"),
      property("collective matching",
               "team members issue the same collectives in the same order with matching roots and sizes; sends "
               "and receives pair up"),
      property("deadlock", "no wait-for cycle across ranks (stream order, communicator order, rendezvous)"),
  };
  if (!m_.unsupported.empty()) {  // the model stopped at a construct it does not encode
    for (auto& st : out) st.unsupported = true;
    return out;
  }
  enc_.seedBasic();
  checkHostIssues(out[5], out[6]);
  checkRaces(out[0]);
  checkJoins(out[1]);
  checkReuse(out[2]);
  checkCoverage(out[3]);
  checkInitialization(out[4]);
  checkCollectives(out[7], out[8]);
  return out;
}

z3::check_result Prover::ask(z3::solver& s, const z3::expr& q) {
  ++queries_;
  auto t0 = std::chrono::steady_clock::now();
  s.push();
  s.add(q);
  Restarts how;
  how.attempts = std::max(1u, o_.attempts);
  how.cpuMs = cpuMsFor(s);
  how.resourceLimit = o_.resourceLimit;
  z3::check_result r = checkWithRestarts(dog_, s, how, lastUnknown_);
  s.pop();
  if (dumpQueries())
    std::fprintf(stderr, "ask %s %.1f ms\n", r == z3::sat ? "sat" : r == z3::unsat ? "unsat" : "unknown",
                 std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  return r;
}

z3::check_result Prover::checkOnce(z3::solver& s) {
  return checkWithin(dog_, s, QueryBudget::ofCpuMs(cpuMsFor(s)), lastUnknown_);
}

unsigned Prover::cpuMsFor(const z3::solver& s) const {
  return &s == refinedSolver_.get() ? std::max(1u, o_.queryCpuMs / 4) : o_.queryCpuMs;
}

void Prover::tryChainLemmas() {
  if (lemmasTried_) return;
  lemmasTried_ = true;
  const auto& I = enc_.I();
  const auto& J = enc_.J();
  for (const Template& t : m_.templates) {
    if (!t.recorded || t.loops.empty() || t.kind == TemplateKind::kFree || t.kind == TemplateKind::kAlloc) continue;
    size_t depth = t.loops.size();
    auto iv = enc_.prefix(I, depth);
    auto jv = enc_.prefix(J, depth);
    int x = enc_.instance(t.id, iv);
    int y = enc_.instance(t.id, jv);
    z3::expr q = enc_.inst(x).valid && enc_.inst(y).valid && jv[depth - 1] == iv[depth - 1] + 1;
    for (size_t d = 0; d + 1 < depth; ++d) q = q && iv[d] == jv[d];
    // t@k completes before t@(k+1) starts, for every k: then for every i < j by induction.
    q = q && enc_.notBefore(x, y);
    if (ask(order_, q) == z3::unsat) enc_.addChainLemma(t.id);
  }
}

z3::solver& Prover::refined() {
  if (!refinedSolver_) {
    refinedSolver_ = std::make_unique<z3::solver>(m_.ctx);
    // Refinement only decides candidates the main encoding already found: it gets a quarter of
    // the CPU budget of a query (cpuMsFor).
    if (o_.resourceLimit > 0) refinedSolver_->set("rlimit", o_.resourceLimit);
    refinedSolver_->add(m_.domain);
    refinedEnc_ = std::make_unique<Encoding>(m_, *refinedSolver_);
  }
  for (size_t i = 0; i < enc_.instanceCount(); ++i) refinedEnc_->instance(enc_.inst(static_cast<int>(i)).tmpl, enc_.inst(static_cast<int>(i)).idx);
  for (int t : enc_.chainLemmas()) refinedEnc_->addChainLemma(t);
  refinedEnc_->seedNeighbours();
  return *refinedSolver_;
}

void Prover::orderingQuery(PropertyState& st, const z3::expr& q, const Candidate& c) {
  ++st.queries;
  z3::solver* s = &order_;
  z3::check_result r = ask(*s, q);
  // A candidate the bounded checker confirms needs no refinement.
  if (r == z3::sat && candidate(st, *s, q, c, /*final=*/false)) return;
  if (r == z3::sat && !lemmasTried_) {
    tryChainLemmas();
    r = ask(*s, q);
  }
  if (r == z3::sat) {
    z3::solver& fine = refined();
    z3::check_result rr = ask(fine, q);
    if (rr == z3::unknown) {
      // The refinement could not decide: the candidate of the main encoding stands, unconfirmed.
      ask(*s, q);
      candidate(st, *s, q, c);
      return;
    }
    s = &fine;
    r = rr;
  }
  if (r == z3::unsat) return;
  if (r == z3::unknown) {
    ++st.unknown;
    st.notes.push_back("Z3 returned unknown (" + lastUnknown_ + ") for: " + c.summary);
    return;
  }
  candidate(st, *s, q, c);
}

void Prover::plainQuery(PropertyState& st, const z3::expr& q, const Candidate& c) {
  ++st.queries;
  z3::check_result r = ask(plain_, q);
  if (r == z3::unsat) return;
  if (r == z3::unknown) {
    ++st.unknown;
    st.notes.push_back("Z3 returned unknown (" + lastUnknown_ + ") for: " + c.summary);
    return;
  }
  candidate(st, plain_, q, c);
}

}  // namespace braid::verify::parametric
