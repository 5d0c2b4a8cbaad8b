// proveProgram: the symbolic stream count first, then, for the properties Z3 could not decide
// that way, every stream count up to the bound; the verdict says which scope each property got.
#include "verify/parametric/parametric_checker.h"

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>

#include "verify/parametric/prover.h"
#include "verify/parametric/site_format.h"

namespace braid::verify {

namespace {

using parametric::PropertyState;

ClaimStatus statusOf(const PropertyState& st) {
  if (st.violated > 0) return ClaimStatus::kViolated;
  if (st.unsupported) return ClaimStatus::kUnsupported;
  if (st.unknown > 0 || st.unconfirmed > 0) return ClaimStatus::kUnknown;
  return ClaimStatus::kProven;
}

struct Run {
  std::vector<PropertyState> states;
  std::vector<Witness> witnesses;
  std::vector<std::string> unsupported;
  std::vector<std::string> domainNotes;
  std::vector<std::string> symbols;
  int64_t ranks = 0;
  int64_t queries = 0;
};

Run runOnce(const HostProgram& p, const ParametricOptions& o, std::optional<int64_t> streams) {
  z3::context ctx;
  parametric::Z3ContextScope scope(ctx);
  parametric::ModelOptions mo;
  mo.ranks = o.ranks;
  mo.streams = streams;
  mo.bindings = o.bindings;
  mo.assumptions = o.assumptions;
  auto m = parametric::buildModel(p, ctx, mo);
  if (const char* env = std::getenv("BRAID_DUMP"); env && std::string(env).find("model") != std::string::npos)
    std::cerr << parametric::dumpModel(*m);
  parametric::Prover prover(p, *m, o);
  Run r;
  r.states = prover.run();
  r.witnesses = std::move(prover.witnesses());
  r.unsupported = m->unsupported;
  r.domainNotes = m->domainNotes;
  for (const auto& [name, x] : m->extents) r.symbols.push_back(name);
  r.ranks = m->numRanks;
  r.queries = prover.queries();
  return r;
}

}  // namespace

ParametricResult proveProgram(const HostProgram& p, const ParametricOptions& o) {
  auto t0 = std::chrono::steady_clock::now();
  ParametricResult res;
  res.program = p.sourceName;
  std::string symbolic = o.streams ? "numberOfStreams = " + std::to_string(*o.streams) : "numberOfStreams >= 1";
  Run first = runOnce(p, o, o.streams);
  res.ranks = first.ranks;
  res.symbols = first.symbols;
  res.domainNotes = first.domainNotes;
  res.unsupported = first.unsupported;
  res.queries = first.queries;
  res.witnesses = first.witnesses;
  res.streamScope = symbolic;
  for (const auto& st : first.states) {
    PropertyVerdict v;
    v.name = st.name;
    v.meaning = st.meaning;
    v.status = statusOf(st);
    v.scope = symbolic;
    v.queries = st.queries;
    v.note = joinText(st.notes, "; ");
    res.properties.push_back(v);
  }

  // Properties Z3 could not decide with a symbolic stream count: every S up to the bound.
  std::vector<size_t> retry;
  for (size_t i = 0; i < first.states.size(); ++i)
    if (!o.streams && first.states[i].violated == 0 && first.states[i].unknown > 0 && !first.states[i].unsupported)
      retry.push_back(i);
  if (!retry.empty()) {
    std::vector<PropertyState> merged(first.states.size());
    std::vector<std::map<std::string, std::vector<int64_t>>> notesByS(first.states.size());
    for (size_t i : retry) merged[i].name = first.states[i].name;
    for (int64_t s = 1; s <= o.maxStreams; ++s) {
      Run r = runOnce(p, o, s);
      res.queries += r.queries;
      for (size_t i : retry) {
        const PropertyState& st = r.states[i];
        merged[i].queries += st.queries;
        merged[i].violated += st.violated;
        merged[i].unknown += st.unknown;
        merged[i].unconfirmed += st.unconfirmed;
        for (const auto& n : st.notes) notesByS[i][n].push_back(s);
      }
      for (auto& w : r.witnesses) {
        bool relevant = false;
        for (size_t i : retry) relevant |= w.property == r.states[i].name;
        if (relevant) res.witnesses.push_back(std::move(w));
      }
    }
    std::string bounded = "numberOfStreams = 1.." + std::to_string(o.maxStreams);
    for (size_t i : retry) {
      for (const auto& [note, values] : notesByS[i]) {
        std::string which;
        if (static_cast<int64_t>(values.size()) == o.maxStreams) {
          which = bounded;
        } else {
          for (int64_t v : values) which += (which.empty() ? "numberOfStreams = " : ", ") + std::to_string(v);
        }
        merged[i].notes.push_back(which + ": " + note);
      }
      PropertyVerdict& v = res.properties[i];
      v.status = statusOf(merged[i]);
      v.queries += merged[i].queries;
      v.scope = bounded;
      v.note = "Z3 could not decide it for a symbolic stream count, so it was checked for every " + bounded +
               (merged[i].notes.empty() ? std::string("") : "; " + joinText(merged[i].notes, "; "));
    }
    res.streamScope = symbolic + " (" + bounded + " for some properties)";
  }
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

}  // namespace braid::verify
