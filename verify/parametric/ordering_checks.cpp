// Ordering properties over the instance encoding: races (two accesses that overlap, one
// writing, with nothing ordering them), joins (all work before the program's exit on the
// default stream) and allocator reuse (every use after the allocation's point and before the
// free point on the allocation stream). Each is one query per pair of templates, at the two
// iteration vectors I and J, so it covers every pair of iterations.
#include <string>

#include "verify/parametric/host_state.h"
#include "verify/parametric/prover.h"

namespace braid::verify::parametric {

namespace {

bool isCommunication(const Template& t) { return t.kind == TemplateKind::kComm; }

// The edge that would order `first` before `second`.
std::string missingEdge(const ProgramModel& m, const Template& first, const Template& second) {
  std::string a = m.describe(first), b = m.describe(second);
  if (isCommunication(first))
    return "nothing makes the stream of '" + b + "' wait for communication '" + a +
           "': add a Wait for it on that stream before '" + b + "'";
  return "nothing orders '" + a + "' before '" + b + "': make the stream of '" + b + "' wait for the stream of '" + a +
         "' (Synchronize) between them";
}

}  // namespace

void Prover::checkRaces(PropertyState& st) {
  const auto& I = enc_.I();
  const auto& J = enc_.J();
  struct Ref {
    int tmpl;
    int access;
  };
  std::vector<Ref> refs;
  for (const Template& t : m_.templates) {
    if (!t.recorded || t.kind == TemplateKind::kExit) continue;
    for (size_t a = 0; a < t.accesses.size(); ++a) refs.push_back({t.id, static_cast<int>(a)});
  }
  for (size_t i = 0; i < refs.size(); ++i) {
    for (size_t j = i; j < refs.size(); ++j) {
      const Template& tx = m_.t(refs[i].tmpl);
      const Template& ty = m_.t(refs[j].tmpl);
      const Access& ax = tx.accesses[static_cast<size_t>(refs[i].access)];
      const Access& ay = ty.accesses[static_cast<size_t>(refs[j].access)];
      if (ax.buf.site != ay.buf.site || (!ax.write && !ay.write)) continue;
      bool same = tx.id == ty.id;
      if (same && tx.loops.empty()) continue;  // one event does not race with itself
      auto ix = enc_.prefix(I, tx.loops.size());
      auto iy = enc_.prefix(J, ty.loops.size());
      int x = enc_.instance(tx.id, ix);
      int y = enc_.instance(ty.id, iy);
      z3::expr q = enc_.inst(x).valid && enc_.inst(y).valid;
      if (same) {
        z3::expr differ = m_.ctx.bool_val(false);
        for (size_t d = 0; d < ix.size(); ++d) differ = differ || ix[d] != iy[d];
        q = q && differ;
      }
      q = q && enc_.at(x, ax.cond) && enc_.at(y, ay.cond);
      q = q && bufEquals(enc_.at(tx.id, ix, ax.buf), enc_.at(ty.id, iy, ay.buf));
      q = q && enc_.at(tx.id, ix, ax.view).overlaps(enc_.at(ty.id, iy, ay.view));
      q = q && enc_.mayOverlap(x, y);
      Candidate c;
      c.kind = FindingKind::kRace;
      c.property = st.name;
      c.summary = "data race on " + m_.sites[static_cast<size_t>(ax.buf.site)].tensor->nameStr() + ": " +
                  (ax.write ? "write" : "read") + " by '" + m_.describe(tx) + "' and " + (ay.write ? "write" : "read") +
                  " by '" + m_.describe(ty) + "' are not ordered";
      c.sites = {FocusSite::of(ax.write ? "write" : "read", tx.id, ix, refs[i].access), FocusSite::of(ay.write ? "write" : "read", ty.id, iy, refs[j].access)};
      c.missingEdge = missingEdge(m_, tx, ty);
      orderingQuery(st, q, c);
    }
  }
}

void Prover::checkJoins(PropertyState& st) {
  const auto& I = enc_.I();
  int exit = enc_.instance(m_.exit, {});
  for (const Template& t : m_.templates) {
    if (!t.recorded || (t.kind != TemplateKind::kWork && t.kind != TemplateKind::kComm)) continue;
    auto ix = enc_.prefix(I, t.loops.size());
    int x = enc_.instance(t.id, ix);
    z3::expr q = enc_.inst(x).valid && enc_.notBefore(x, exit);
    Candidate c;
    c.kind = isCommunication(t) ? FindingKind::kUnwaitedCommunication : FindingKind::kMissingJoin;
    c.property = st.name;
    c.summary = isCommunication(t) ? "'" + m_.describe(t) + "' is never waited before the program returns"
                                   : "'" + m_.describe(t) + "' is not joined to the default stream before the program returns";
    c.sites = {FocusSite::of("unjoined", t.id, ix, t.accesses.empty() ? -1 : 0)};
    c.missingEdge = isCommunication(t) ? "no Wait for this communication orders it before the exit on the default stream"
                                       : "the default stream does not wait (Synchronize) for this stream before the exit";
    orderingQuery(st, q, c);
  }
}

void Prover::checkReuse(PropertyState& st) {
  const auto& I = enc_.I();
  const auto& J = enc_.J();
  for (const Template& f : m_.templates) {
    if (!f.recorded || (f.kind != TemplateKind::kFree && f.kind != TemplateKind::kAlloc)) continue;
    bool isFree = f.kind == TemplateKind::kFree;
    auto iF = enc_.prefix(I, f.loops.size());
    int fi = enc_.instance(f.id, iF);
    for (const Template& t : m_.templates) {
      if (!t.recorded || t.kind == TemplateKind::kExit || t.kind == TemplateKind::kEntry) continue;
      for (size_t a = 0; a < t.accesses.size(); ++a) {
        const Access& ax = t.accesses[a];
        if (ax.buf.site != f.buf.site) continue;
        auto ix = enc_.prefix(J, t.loops.size());
        int x = enc_.instance(t.id, ix);
        z3::expr q = enc_.inst(fi).valid && enc_.inst(x).valid && enc_.at(x, ax.cond);
        q = q && bufEquals(enc_.at(f.id, iF, f.buf), enc_.at(t.id, ix, ax.buf));
        q = q && (isFree ? enc_.notBefore(x, fi) : enc_.notBefore(fi, x));
        std::string buf = m_.sites[static_cast<size_t>(f.buf.site)].tensor->nameStr();
        Candidate c;
        c.kind = FindingKind::kUnsafeReuse;
        c.property = st.name;
        c.summary = isFree ? buf + " returns to the caching allocator (" + m_.describe(f) + ") while '" +
                                 m_.describe(t) + "' may still use it"
                           : "'" + m_.describe(t) + "' may use " + buf + " before its allocation point (" +
                                 m_.describe(f) + ") on the allocation stream";
        c.sites = {FocusSite::of(isFree ? "free" : "allocation", f.id, iF),
                   FocusSite::of("use", t.id, ix, static_cast<int>(a))};
        c.missingEdge = isFree ? "the allocation stream does not wait for the stream of '" + m_.describe(t) +
                                     "' before the free point (Synchronize it there, or deallocate after the join)"
                               : "the stream of '" + m_.describe(t) +
                                     "' does not wait for the allocation stream after the allocation";
        orderingQuery(st, q, c);
      }
    }
  }
}

}  // namespace braid::verify::parametric
