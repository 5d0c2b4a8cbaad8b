// Properties of memory contents and of the host thread: output coverage (every element of an
// output written on every rank of its mesh), initialization (no read of an element nothing
// wrote before), and the host-thread issues the symbolic run recorded (views out of bounds,
// non-contiguous communication buffers, unbound or deallocated tensors, Waits without posts).
//
// Coverage is "for every element, some write covers it": the query asks for an element that no
// candidate write covers, where the candidates of a write in a loop are found by inverting its
// view's offset in the loop index (element e of a slice lo(k) = a * k + c is written by
// k = (e - c) / a), by the guard's equalities (k == rank) and by the loop's first and last
// iteration. Fewer candidates can only make the query easier to satisfy, so an unsatisfiable
// query proves coverage; a satisfiable one is replayed.
#include <functional>

#include "verify/parametric/host_state.h"
#include "verify/parametric/prover.h"

namespace braid::verify::parametric {

namespace {

// Loops with a fixed trip count up to this many iterations offer every iteration as a candidate
// writer.
constexpr int64_t kEnumerateIterations = 64;

z3::expr shifted(const z3::expr& e, const z3::expr& var, const z3::expr& to) {
  z3::expr_vector from(e.ctx()), dst(e.ctx());
  from.push_back(var);
  dst.push_back(to);
  z3::expr x = e;
  return x.substitute(from, dst).simplify();
}

}  // namespace

std::vector<std::vector<z3::expr>> Prover::writerCandidates(int w, const Access& a, const std::vector<z3::expr>& point,
                                                            const std::vector<std::vector<z3::expr>>& extra) {
  const Template& t = m_.t(w);
  std::vector<std::vector<z3::expr>> out;
  if (t.loops.empty()) {
    out.push_back({});
    return out;
  }
  for (const auto& e : extra)
    if (e.size() >= t.loops.size()) out.push_back(enc_.prefix(e, t.loops.size()));
  // Level by level, outer loops first: the candidates for loop l given the outer choices.
  std::function<void(size_t, std::vector<z3::expr>)> rec = [&](size_t l, std::vector<z3::expr> chosen) {
    if (l == t.loops.size()) {
      out.push_back(chosen);
      return;
    }
    const LoopVar* lv = t.loops[l];
    z3::expr_vector from(m_.ctx), to(m_.ctx);
    for (size_t o = 0; o < l; ++o) {
      from.push_back(t.loops[o]->var);
      to.push_back(chosen[o]);
    }
    auto outer = [&](const z3::expr& e) {
      z3::expr x = e;
      return x.substitute(from, to).simplify();
    };
    std::vector<z3::expr> cands;
    for (size_t d = 0; d < a.view.lo.size() && d < point.size(); ++d) {
      for (const z3::expr& lo : iteVariants(outer(a.view.lo[d]))) {
        if (!mentions(lo, lv->var)) continue;
        z3::expr step = (shifted(lo, lv->var, lv->var + 1) - lo).simplify();
        if (mentions(step, lv->var)) continue;
        int64_t sv = 0;
        if (step.is_numeral_i64(sv) && sv == 0) continue;
        z3::expr base = shifted(lo, lv->var, m_.ctx.int_val(0));
        cands.push_back(((point[d] - base) / step).simplify());
      }
    }
    for (const auto& e : equalitiesOf(outer(t.guard), lv->var)) cands.push_back(e);
    z3::expr b = outer(lv->begin), e = outer(lv->end);
    int64_t bv = 0, ev = 0;
    if (b.is_numeral_i64(bv) && e.is_numeral_i64(ev) && ev - bv <= kEnumerateIterations) {
      // A short loop with a fixed trip count: every iteration is a candidate (exact).
      cands.clear();
      for (int64_t k = bv; k < ev; ++k) cands.push_back(m_.ctx.int_val(k));
    } else {
      cands.push_back(b);
      cands.push_back((e - 1).simplify());
    }
    for (const auto& c : cands) {
      std::vector<z3::expr> next = chosen;
      next.push_back(c);
      rec(l + 1, next);
    }
  };
  rec(0, {});
  return out;
}

z3::expr Prover::covers(int w, const std::vector<z3::expr>& idx, const Access& a, const BufRef& buf,
                        const std::vector<z3::expr>& point) {
  z3::expr c = enc_.validAt(w, idx) && enc_.at(w, idx, a.cond);
  c = c && bufEquals(enc_.at(w, idx, a.buf), buf);
  c = c && enc_.at(w, idx, a.view).contains(point);
  return c;
}

void Prover::checkCoverage(PropertyState& st) {
  int n = 0;
  for (const OutputAlt& o : m_.outputs) {
    std::vector<z3::expr> point;
    for (size_t d = 0; d < o.view.lo.size(); ++d)
      point.push_back(m_.ctx.int_const(("p" + std::to_string(n) + "." + std::to_string(d)).c_str()));
    ++n;
    z3::expr q = o.cond && o.view.contains(point);
    for (const Template& w : m_.templates) {
      if (!w.recorded || w.kind == TemplateKind::kExit) continue;
      for (const Access& a : w.accesses) {
        if (!a.write || a.buf.site != o.buf.site) continue;
        for (const auto& idx : writerCandidates(w.id, a, point, {})) q = q && !covers(w.id, idx, a, o.buf, point);
      }
    }
    Candidate c;
    c.kind = FindingKind::kOutputNotWritten;
    c.property = st.name;
    c.summary = "output " + o.tensor->nameStr() + " is not fully written when the program returns";
    c.sites = {FocusSite::of("output", m_.exit, {})};
    c.point = point;
    c.pointOf = o.tensor;
    c.missingEdge = "no write covers some element of it: check the loop bounds and the slice each iteration writes";
    plainQuery(st, q, c);
  }
}

void Prover::checkInitialization(PropertyState& st) {
  const auto& I = enc_.I();
  int n = 0;
  for (const Template& x : m_.templates) {
    if (!x.recorded || x.kind == TemplateKind::kExit) continue;
    auto ix = enc_.prefix(I, x.loops.size());
    for (size_t ai = 0; ai < x.accesses.size(); ++ai) {
      const Access& r = x.accesses[ai];
      if (r.write) continue;
      View view = enc_.at(x.id, ix, r.view);
      BufRef buf = enc_.at(x.id, ix, r.buf);
      std::vector<z3::expr> point;
      for (size_t d = 0; d < view.lo.size(); ++d)
        point.push_back(m_.ctx.int_const(("q" + std::to_string(n) + "." + std::to_string(d)).c_str()));
      ++n;
      z3::expr q = enc_.validAt(x.id, ix) && enc_.at(x.id, ix, r.cond) && view.contains(point);
      for (const Template& w : m_.templates) {
        if (!w.recorded || w.kind == TemplateKind::kExit) continue;
        for (const Access& a : w.accesses) {
          if (!a.write || a.buf.site != r.buf.site) continue;
          for (const auto& idx : writerCandidates(w.id, a, point, {ix}))
            q = q && !(covers(w.id, idx, a, buf, point) && enc_.before(w.id, idx, x.id, ix));
        }
      }
      Candidate c;
      c.kind = FindingKind::kUninitializedRead;
      c.property = st.name;
      c.summary = "'" + m_.describe(x) + "' reads " + (r.tensor ? r.tensor->nameStr() : std::string("?")) +
                  " where nothing was written before";
      c.sites = {FocusSite::of("read", x.id, ix, static_cast<int>(ai))};
      c.point = point;
      c.pointOf = m_.sites[static_cast<size_t>(r.buf.site)].tensor;
      c.missingEdge = "no earlier statement writes the elements it reads";
      plainQuery(st, q, c);
    }
  }
}

void Prover::checkHostIssues(PropertyState& views, PropertyState& host) {
  const auto& I = enc_.I();
  for (const HostIssue& i : m_.issues) {
    if (i.kind == FindingKind::kShapeMismatch) continue;  // a warning; not a property
    z3::expr_vector from(m_.ctx), to(m_.ctx);
    z3::expr q = m_.ctx.bool_val(true);
    std::vector<z3::expr> idx = enc_.prefix(I, i.loops.size());
    for (size_t l = 0; l < i.loops.size(); ++l) {
      from.push_back(i.loops[l]->var);
      to.push_back(idx[l]);
    }
    auto sub = [&](const z3::expr& e) {
      z3::expr x = e;
      return x.substitute(from, to);
    };
    for (size_t l = 0; l < i.loops.size(); ++l) q = q && sub(i.loops[l]->begin) <= idx[l] && idx[l] < sub(i.loops[l]->end);
    q = q && sub(i.guard);
    bool isView = i.kind == FindingKind::kViewOutOfBounds || i.kind == FindingKind::kNonContiguousComm;
    Candidate c;
    c.kind = i.kind;
    c.property = isView ? views.name : host.name;
    c.summary = i.message;
    FocusSite s;
    s.role = "here";
    s.idx = idx;
    s.stmt = i.stmt;
    s.loops = i.loops;
    c.sites.push_back(s);
    if (i.other) {
      FocusSite o;
      o.role = "deallocated";
      o.stmt = i.other;
      c.sites.push_back(o);
    }
    plainQuery(isView ? views : host, q, c);
  }
}

}  // namespace braid::verify::parametric
