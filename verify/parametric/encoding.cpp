#include "verify/parametric/encoding.h"

#include <algorithm>

#include "verify/parametric/host_state.h"

namespace braid::verify::parametric {

Encoding::Encoding(const ProgramModel& m, z3::solver& solver) : m_(m), solver_(solver) {
  for (const auto& lv : m_.loops) maxDepth_ = std::max(maxDepth_, lv->depth);
  for (int d = 0; d < maxDepth_; ++d) {
    I_.push_back(m_.ctx.int_const(("I" + std::to_string(d + 1)).c_str()));
    J_.push_back(m_.ctx.int_const(("J" + std::to_string(d + 1)).c_str()));
  }
}

std::string Encoding::key(int tmpl, const std::vector<z3::expr>& idx) {
  std::string k = std::to_string(tmpl);
  for (const auto& e : idx) k += "|" + e.simplify().to_string();
  return k;
}

z3::expr_vector Encoding::fromOf(int tmpl) const {
  z3::expr_vector from(m_.ctx);
  for (const LoopVar* lv : m_.t(tmpl).loops) from.push_back(lv->var);
  return from;
}

z3::expr Encoding::at(int tmpl, const std::vector<z3::expr>& idx, const z3::expr& e) const {
  const auto& loops = m_.t(tmpl).loops;
  if (loops.empty()) return e;
  z3::expr_vector from(m_.ctx), to(m_.ctx);
  for (size_t i = 0; i < loops.size() && i < idx.size(); ++i) {
    from.push_back(loops[i]->var);
    to.push_back(idx[i]);
  }
  z3::expr x = e;
  return x.substitute(from, to);
}

z3::expr Encoding::at(int x, const z3::expr& e) const {
  const Instance& i = inst(x);
  return at(i.tmpl, i.idx, e);
}

View Encoding::at(int tmpl, const std::vector<z3::expr>& idx, const View& v) const {
  View r = v;
  for (auto& e : r.base) e = at(tmpl, idx, e);
  for (auto& e : r.lo) e = at(tmpl, idx, e);
  for (auto& e : r.len) e = at(tmpl, idx, e);
  for (auto& e : r.unit) e = at(tmpl, idx, e);
  return r;
}

BufRef Encoding::at(int tmpl, const std::vector<z3::expr>& idx, const BufRef& b) const {
  BufRef r = b;
  for (auto& e : r.idx) e = at(tmpl, idx, e);
  return r;
}

z3::expr Encoding::validAt(int tmpl, const std::vector<z3::expr>& idx) const {
  const Template& t = m_.t(tmpl);
  z3::expr v = at(tmpl, idx, t.guard);
  for (size_t i = 0; i < t.loops.size(); ++i) {
    const LoopVar* lv = t.loops[i];
    v = conj(v, at(tmpl, idx, lv->begin) <= idx[i]);
    v = conj(v, idx[i] < at(tmpl, idx, lv->end));
  }
  return v;
}

z3::expr Encoding::before(int tx, const std::vector<z3::expr>& ix, int ty, const std::vector<z3::expr>& iy) const {
  const auto& px = m_.t(tx).path;
  const auto& py = m_.t(ty).path;
  // result = less_0 || (eq_0 && (less_1 || (eq_1 && ...))), built from the innermost level out.
  struct Level {
    z3::expr less, eq;
  };
  std::vector<Level> levels;
  z3::context& c = m_.ctx;
  size_t n = std::min(px.size(), py.size());
  bool decided = false;
  for (size_t l = 0; l < n && !decided; ++l) {
    const PathStep& a = px[l];
    const PathStep& b = py[l];
    if (a.loop && a.loop == b.loop) {
      size_t d = static_cast<size_t>(a.loop->depth - 1);
      z3::expr va = ix.at(d), vb = iy.at(d);
      levels.push_back({va < vb, va == vb});
      continue;
    }
    if (a.loop || b.loop) {  // different structure: cannot happen for positions of one program
      levels.push_back({c.bool_val(false), c.bool_val(false)});
      decided = true;
      continue;
    }
    if (a.pos != b.pos) {
      levels.push_back({c.bool_val(a.pos < b.pos), c.bool_val(false)});
      decided = true;
      continue;
    }
    levels.push_back({c.bool_val(false), c.bool_val(true)});
  }
  z3::expr r = c.bool_val(false);
  for (size_t l = levels.size(); l-- > 0;) r = disj(levels[l].less, conj(levels[l].eq, r));
  return r.simplify();
}

void Encoding::assertOwn(int x) {
  const Instance& i = inst(x);
  const Template& t = m_.t(i.tmpl);
  if (isMarkerKind(t.kind)) {
    solver_.add(i.s <= i.e);
  } else {
    solver_.add(i.s < i.e);
  }
  for (const auto& [cond, c] : i.waits) {
    z3::expr f = conj(i.valid, cond).simplify();
    if (!f.is_false()) solver_.add(z3::implies(f, inst(c).e <= i.s));
  }
}

// Facts that order instance x before instance y (called for both orders of each pair).
void Encoding::assertFacts(int x, int y) {
  const Instance& a = inst(x);
  const Instance& b = inst(y);
  const Template& ta = m_.t(a.tmpl);
  const Template& tb = m_.t(b.tmpl);
  if (ta.kind == TemplateKind::kComm) return;  // a communication orders nothing after it by itself
  z3::expr order = before(a.tmpl, a.idx, b.tmpl, b.idx);
  if (order.is_false()) return;
  z3::expr both = conj(a.valid, b.valid);
  std::vector<z3::expr> links;
  if (tb.kind == TemplateKind::kComm) {
    links.push_back(a.stream.equals(b.post).simplify());
  } else {
    links.push_back(a.stream.equals(b.stream).simplify());
    if (tb.kind == TemplateKind::kSync) links.push_back(a.stream.equals(b.target).simplify());
  }
  z3::expr link = m_.ctx.bool_val(false);
  for (const auto& l : links) link = disj(link, l);
  link = link.simplify();
  if (link.is_false()) return;
  z3::expr pre = conj(both, conj(order, link)).simplify();
  if (pre.is_false()) return;
  solver_.add(z3::implies(pre, a.e <= b.s));
}

int Encoding::instance(int tmpl, const std::vector<z3::expr>& idxIn) {
  const Template& t = m_.t(tmpl);
  std::vector<z3::expr> idx;
  for (size_t i = 0; i < t.loops.size(); ++i) idx.push_back(idxIn.at(i).simplify());
  std::string k = key(tmpl, idx);
  if (auto it = byKey_.find(k); it != byKey_.end()) return it->second;
  Instance x;
  x.id = static_cast<int>(instances_.size());
  x.tmpl = tmpl;
  x.idx = idx;
  // Named by template and indices, so that every encoding of the model (the prover keeps a
  // larger one for refinement) gives one instance the same time variables.
  std::string name = "t" + k;
  x.s = m_.ctx.int_const(("s." + name).c_str());
  x.e = m_.ctx.int_const(("e." + name).c_str());
  x.valid = validAt(tmpl, idx).simplify();
  x.stream = {at(tmpl, idx, t.stream.cls).simplify(), at(tmpl, idx, t.stream.key).simplify()};
  x.post = {at(tmpl, idx, t.post.cls).simplify(), at(tmpl, idx, t.post.key).simplify()};
  x.target = {at(tmpl, idx, t.target.cls).simplify(), at(tmpl, idx, t.target.key).simplify()};
  instances_.push_back(x);
  byKey_[k] = x.id;
  byTemplate_[tmpl].push_back(x.id);
  int id = x.id;
  // The communications a Wait waits for are instances too.
  std::vector<std::pair<z3::expr, int>> waits;
  for (const WaitSource& w : t.waits) {
    std::vector<z3::expr> cidx;
    for (const auto& e : w.idx) cidx.push_back(at(tmpl, idx, e));
    if (w.tmpl < 0 || !m_.t(w.tmpl).recorded) continue;
    int c = instance(w.tmpl, cidx);
    waits.emplace_back(at(tmpl, idx, w.cond).simplify(), c);
  }
  instances_[static_cast<size_t>(id)].waits = waits;
  assertOwn(id);
  for (int other = 0; other < id; ++other) {
    assertFacts(other, id);
    assertFacts(id, other);
  }
  // Proved chain lemmas apply to new instances too.
  if (lemmas_.count(tmpl) && !t.loops.empty()) {
    size_t d = t.loops.size() - 1;
    for (int other : byTemplate_[tmpl]) {
      if (other == id) continue;
      const Instance& o = inst(other);
      const Instance& n = inst(id);
      z3::expr outerEq = m_.ctx.bool_val(true);
      for (size_t i = 0; i < d; ++i) outerEq = conj(outerEq, o.idx[i] == n.idx[i]);
      solver_.add(z3::implies(conj(conj(o.valid, n.valid), conj(outerEq, o.idx[d] < n.idx[d])), o.e <= n.s));
      solver_.add(z3::implies(conj(conj(o.valid, n.valid), conj(outerEq, n.idx[d] < o.idx[d])), n.e <= o.s));
    }
  }
  return id;
}

void Encoding::seedBasic() {
  for (const Template& t : m_.templates) {
    if (!t.recorded) continue;
    if (t.loops.empty()) {
      instance(t.id, {});
      continue;
    }
    instance(t.id, prefix(I_, t.loops.size()));
    instance(t.id, prefix(J_, t.loops.size()));
  }
}

void Encoding::seedNeighbours() {
  if (neighbours_) return;
  neighbours_ = true;
  // The first and the last iteration of every loop (with the outer indices of I): chains that
  // end at a loop's last iteration (a join of only the last stream) or start at its first.
  // Chains between consecutive iterations are the chain lemmas' business.
  for (const Template& t : m_.templates) {
    if (!t.recorded || t.loops.empty()) continue;
    size_t d = t.loops.size() - 1;
    std::vector<z3::expr> v = prefix(I_, t.loops.size());
    const LoopVar* inner = t.loops[d];
    for (const z3::expr& s : {at(t.id, v, inner->begin), at(t.id, v, inner->end) - 1}) {
      std::vector<z3::expr> w = v;
      w[d] = s;
      instance(t.id, w);
    }
  }
}

void Encoding::addChainLemma(int tmpl) {
  if (lemmas_.count(tmpl)) return;
  lemmas_[tmpl] = true;
  const Template& t = m_.t(tmpl);
  if (t.loops.empty()) return;
  size_t d = t.loops.size() - 1;
  const auto& ids = byTemplate_[tmpl];
  for (size_t p = 0; p < ids.size(); ++p) {
    for (size_t q = 0; q < ids.size(); ++q) {
      if (p == q) continue;
      const Instance& o = inst(ids[p]);
      const Instance& n = inst(ids[q]);
      z3::expr outerEq = m_.ctx.bool_val(true);
      for (size_t i = 0; i < d; ++i) outerEq = conj(outerEq, o.idx[i] == n.idx[i]);
      solver_.add(z3::implies(conj(conj(o.valid, n.valid), conj(outerEq, o.idx[d] < n.idx[d])), o.e <= n.s));
    }
  }
}

}  // namespace braid::verify::parametric
