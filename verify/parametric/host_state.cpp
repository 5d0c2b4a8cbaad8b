#include "verify/parametric/host_state.h"

namespace braid::verify::parametric {

namespace {

z3::expr sub(const z3::expr& e, const z3::expr_vector& from, const z3::expr_vector& to) {
  z3::expr x = e;
  return x.substitute(from, to).simplify();
}

void subAll(std::vector<z3::expr>& v, const z3::expr_vector& from, const z3::expr_vector& to) {
  for (auto& e : v) e = sub(e, from, to);
}

View subView(const View& v, const z3::expr_vector& from, const z3::expr_vector& to) {
  View r = v;
  subAll(r.base, from, to);
  subAll(r.lo, from, to);
  subAll(r.len, from, to);
  subAll(r.unit, from, to);
  return r;
}

SymStream subStream(const SymStream& s, const z3::expr_vector& from, const z3::expr_vector& to) {
  return {sub(s.cls, from, to), sub(s.key, from, to)};
}

bool sameTerm(const z3::expr& a, const z3::expr& b) { return z3::eq(a.simplify(), b.simplify()); }

bool sameTerms(const std::vector<z3::expr>& a, const std::vector<z3::expr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!sameTerm(a[i], b[i])) return false;
  return true;
}

bool sameView(const View& a, const View& b) {
  return a.dims == b.dims && sameTerms(a.base, b.base) && sameTerms(a.lo, b.lo) && sameTerms(a.len, b.len) &&
         sameTerms(a.unit, b.unit);
}

bool sameAlts(const std::vector<ViewAlt>& a, const std::vector<ViewAlt>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!sameTerm(a[i].cond, b[i].cond) || !sameBufRef(a[i].buf, b[i].buf) || !sameView(a[i].view, b[i].view) ||
        !sameTerm(a[i].freed, b[i].freed))
      return false;
  }
  return true;
}

bool sameAlts(const std::vector<DeallocAlt>& a, const std::vector<DeallocAlt>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].stmt != b[i].stmt || !sameTerm(a[i].cond, b[i].cond)) return false;
  return true;
}

bool sameAlts(const std::vector<PostAlt>& a, const std::vector<PostAlt>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].tmpl != b[i].tmpl || !sameTerm(a[i].cond, b[i].cond) || !sameTerms(a[i].idx, b[i].idx)) return false;
  return true;
}

// Alternatives of both sides under c / !c; a key missing on one side has no alternative there.
template <class K, class Alt>
std::map<K, std::vector<Alt>> mergeAlts(const z3::expr& c, const std::map<K, std::vector<Alt>>& a,
                                        const std::map<K, std::vector<Alt>>& b) {
  std::map<K, std::vector<Alt>> out;
  auto keys = [&]() {
    std::vector<K> k;
    for (const auto& [key, v] : a) k.push_back(key);
    for (const auto& [key, v] : b)
      if (!a.count(key)) k.push_back(key);
    return k;
  }();
  static const std::vector<Alt> none;
  for (const K& key : keys) {
    auto ia = a.find(key);
    auto ib = b.find(key);
    const auto& va = ia == a.end() ? none : ia->second;
    const auto& vb = ib == b.end() ? none : ib->second;
    if (sameAlts(va, vb)) {
      if (!va.empty()) out[key] = va;
      continue;
    }
    std::vector<Alt> m;
    for (Alt x : va) {
      x.cond = conj(c, x.cond).simplify();
      if (!x.cond.is_false()) m.push_back(std::move(x));
    }
    for (Alt x : vb) {
      x.cond = conj(!c, x.cond).simplify();
      if (!x.cond.is_false()) m.push_back(std::move(x));
    }
    if (!m.empty()) out[key] = std::move(m);
  }
  return out;
}

template <class K, class Alt>
void pruneMap(std::map<K, std::vector<Alt>>& m) {
  for (auto it = m.begin(); it != m.end();) {
    auto& v = it->second;
    std::vector<Alt> kept;
    for (auto& x : v) {
      x.cond = x.cond.simplify();
      if (!x.cond.is_false()) kept.push_back(x);
    }
    v = std::move(kept);
    if (v.empty()) {
      it = m.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace

bool sameBufRef(const BufRef& a, const BufRef& b) { return a.site == b.site && sameTerms(a.idx, b.idx); }

z3::expr bufEquals(const BufRef& a, const BufRef& b) {
  z3::context& c = Z3ContextScope::current();
  if (a.site != b.site || a.idx.size() != b.idx.size()) return c.bool_val(false);
  z3::expr r = c.bool_val(true);
  for (size_t i = 0; i < a.idx.size(); ++i) r = conj(r, a.idx[i] == b.idx[i]);
  return r;
}

HostState substitute(const HostState& s, const z3::expr_vector& from, const z3::expr_vector& to) {
  HostState r = s;
  r.cur = subStream(s.cur, from, to);
  for (auto& [n, cap] : r.named) {
    cap.captured = sub(cap.captured, from, to);
    cap.value = subStream(cap.value, from, to);
  }
  for (auto& [tv, alts] : r.bound) {
    for (auto& a : alts) {
      a.cond = sub(a.cond, from, to);
      subAll(a.buf.idx, from, to);
      a.view = subView(a.view, from, to);
      a.freed = sub(a.freed, from, to);
    }
  }
  for (auto& [tv, alts] : r.deallocated)
    for (auto& a : alts) a.cond = sub(a.cond, from, to);
  for (auto& [id, alts] : r.posted) {
    for (auto& a : alts) {
      a.cond = sub(a.cond, from, to);
      subAll(a.idx, from, to);
    }
  }
  pruneState(r);
  return r;
}

HostState mergeStates(const z3::expr& c, const HostState& a, const HostState& b) {
  z3::expr cs = c.simplify();
  if (cs.is_true()) return a;
  if (cs.is_false()) return b;
  HostState r;
  r.cur = {z3::ite(cs, a.cur.cls, b.cur.cls).simplify(), z3::ite(cs, a.cur.key, b.cur.key).simplify()};
  std::vector<std::string> names;
  for (const auto& [n, v] : a.named) names.push_back(n);
  for (const auto& [n, v] : b.named)
    if (!a.named.count(n)) names.push_back(n);
  for (const auto& n : names) {
    Capture ca, cb;
    if (auto it = a.named.find(n); it != a.named.end()) ca = it->second;
    if (auto it = b.named.find(n); it != b.named.end()) cb = it->second;
    Capture m;
    m.captured = z3::ite(cs, ca.captured, cb.captured).simplify();
    m.value = {z3::ite(cs, ca.value.cls, cb.value.cls).simplify(), z3::ite(cs, ca.value.key, cb.value.key).simplify()};
    r.named[n] = m;
  }
  r.bound = mergeAlts(cs, a.bound, b.bound);
  r.deallocated = mergeAlts(cs, a.deallocated, b.deallocated);
  r.posted = mergeAlts(cs, a.posted, b.posted);
  return r;
}

void pruneState(HostState& s) {
  pruneMap(s.bound);
  pruneMap(s.deallocated);
  pruneMap(s.posted);
}

}  // namespace braid::verify::parametric
