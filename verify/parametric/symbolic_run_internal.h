// The symbolic run's machinery (symbolic_run.cpp: the host thread, loops and branches;
// symbolic_statements.cpp: what each statement does). Internal to verify/parametric.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "ir/error.h"
#include "ir/semantics/buffer_rules.h"
#include "ir/semantics/interpreter.h"
#include "verify/parametric/cpu_budget.h"
#include "verify/parametric/host_state.h"
#include "verify/parametric/liveness.h"
#include "verify/parametric/model.h"

namespace braid::verify::parametric::detail {

inline std::string teamKey(CommBackend backend, std::vector<int64_t> team) {
  std::sort(team.begin(), team.end());
  std::ostringstream os;
  os << commBackendName(backend) << " team (";
  for (size_t i = 0; i < team.size(); ++i) os << (i ? " " : "") << team[i];
  os << ")";
  return os.str();
}

inline void collectConsts(const z3::expr& e, std::set<std::string>& out, std::set<unsigned>& seen) {
  if (seen.count(e.id())) return;
  seen.insert(e.id());
  if (e.is_app()) {
    if (e.is_const() && !e.is_numeral() && e.decl().decl_kind() == Z3_OP_UNINTERPRETED)
      out.insert(e.decl().name().str());
    for (unsigned i = 0; i < e.num_args(); ++i) collectConsts(e.arg(i), out, seen);
  }
}

inline bool mentionsAny(const z3::expr& e, const std::set<std::string>& names) {
  std::set<std::string> found;
  std::set<unsigned> seen;
  collectConsts(e, found, seen);
  for (const auto& n : found)
    if (names.count(n)) return true;
  return false;
}

class SymbolicRun {
 public:
  SymbolicRun(const HostProgram& p, ProgramModel& m, const ModelOptions& o)
      : p_(p), m_(m), o_(o), c_(m.ctx), tr_(m.ctx), pc_(m.ctx.bool_val(true)), scratch_(m.ctx) {}

  void run();

 private:
  // Whether the scratch solver's assertions are unsatisfiable, within 300 ms of CPU; an unknown
  // answer is "not shown" (the caller keeps the condition, or the difference).
  bool scratchUnsat() {
    std::string reason;
    return checkWithin(dog_, scratch_, QueryBudget::ofCpuMs(300), reason) == z3::unsat;
  }

  // ---- terms ----
  z3::expr num(int64_t v) { return c_.int_val(v); }
  z3::expr tru() { return c_.bool_val(true); }
  z3::expr fls() { return c_.bool_val(false); }
  z3::expr evalInt(const Scalar& s, const Stmt* at) {
    tr_.clearDivisors();
    z3::expr r = [&] {
      try {
        return tr_.integer(s, env_).simplify();
      } catch (const Error& e) {
        throw Error((at ? at->loc.str() + ": " : std::string()) + "cannot evaluate " + s.str() + ": " + e.what());
      }
    }();
    noteDivisors();
    return r;
  }
  z3::expr evalBool(const Scalar& s, const Stmt* at) {
    tr_.clearDivisors();
    z3::expr r = [&] {
      try {
        return tr_.boolean(s, env_).simplify();
      } catch (const Error& e) {
        throw Error((at ? at->loc.str() + ": " : std::string()) + "cannot evaluate " + s.str() + ": " + e.what());
      }
    }();
    noteDivisors();
    return r;
  }
  // A divisor over the parameters alone restricts the domain (the bounded interpreter rejects
  // those values as bad input).
  void noteDivisors() {
    for (const z3::expr& d : tr_.divisors()) {
      z3::expr ds = d.simplify();
      int64_t v = 0;
      if (ds.is_numeral_i64(v)) continue;
      if (mentionsAny(ds, loopNames_)) continue;
      std::string key = ds.to_string();
      if (divisorsSeen_.count(key)) continue;
      divisorsSeen_.insert(key);
      z3::expr cond = ds != 0;
      scratch_.push();
      scratch_.add(m_.domain);
      scratch_.add(!cond);
      bool implied = scratchUnsat();
      scratch_.pop();
      if (implied) continue;
      m_.domain = conj(m_.domain, cond);
      m_.domainNotes.push_back(ds.to_string() + " != 0");
    }
  }
  // The shape of a buffer allocated here for `tv` (one chunk of its Stream axes inside the loop
  // over them: buffer_rules.h, allocatedPerStreamChunk).
  std::vector<z3::expr> allocationShape(const TensorView& tv, const Stmt* at) {
    std::vector<const ForLoop*> enclosing;
    for (const auto& [lv, term] : loops_) enclosing.push_back(lv->loop);
    return shapeOf(tv, sem::allocatedPerStreamChunk(tv, enclosing), at);
  }
  std::vector<z3::expr> shapeOf(const TensorView& tv, bool streamChunk, const Stmt* at) {
    return sem::bufferShapeRule<z3::expr>(tv, streamChunk, [&](const Scalar& e) { return evalInt(e, at); });
  }

  // ---- templates, sites, issues ----
  int templateId(const Stmt* stmt, int role) {
    auto [it, inserted] = templateIds_.try_emplace({stmt, role}, -1);
    if (inserted) {
      it->second = static_cast<int>(m_.templates.size());
      Template t;
      t.id = it->second;
      m_.templates.push_back(std::move(t));
    }
    return it->second;
  }
  std::vector<z3::expr> loopTerms() const {
    std::vector<z3::expr> v;
    for (const auto& [lv, term] : loops_) v.push_back(term);
    return v;
  }
  std::vector<const LoopVar*> loopVars() const {
    std::vector<const LoopVar*> v;
    for (const auto& [lv, term] : loops_) v.push_back(lv);
    return v;
  }
  // Fills template (stmt, role) when recording; returns its id either way.
  Template* emit(int id, TemplateKind kind, const Stmt* stmt, std::string op, const z3::expr& guard) {
    if (!record_) return nullptr;
    Template& t = m_.templates[static_cast<size_t>(id)];
    t.recorded = true;
    t.kind = kind;
    t.stmt = stmt;
    t.op = std::move(op);
    t.loops = loopVars();
    t.guard = guard.simplify();
    t.stream = st_.cur;
    t.path = path_;
    t.path.push_back({sub_++, nullptr});
    return &t;
  }
  void issue(FindingKind kind, const Stmt* stmt, const z3::expr& guard, std::string message,
             const Stmt* other = nullptr) {
    if (!record_) return;
    z3::expr g = conj(pc_, guard).simplify();
    if (g.is_false()) return;
    HostIssue i;
    i.kind = kind;
    i.stmt = stmt;
    i.loops = loopVars();
    i.guard = g;
    i.message = std::move(message);
    i.other = other;
    m_.issues.push_back(std::move(i));
  }
  bool findUnmodelled();
  void unsupported(const Stmt* at, const std::string& what) {
    std::string s = (at && at->loc.known() ? at->loc.str() + ": " : std::string()) + what;
    if (std::find(m_.unsupported.begin(), m_.unsupported.end(), s) == m_.unsupported.end()) m_.unsupported.push_back(s);
  }
  int site(const Stmt* stmt, int role, const TensorView* tv, bool input = false) {
    auto [it, inserted] = siteIds_.try_emplace({stmt ? static_cast<const void*>(stmt) : tv, role}, -1);
    if (inserted) {
      BufferSite s;
      s.id = static_cast<int>(m_.sites.size());
      s.tensor = tv;
      s.stmt = stmt;
      s.isInput = input;
      s.loops = loopVars();
      m_.sites.push_back(s);
      allocStreams_.push_back(SymStream{num(kDefaultStream), num(0)});
      it->second = s.id;
    }
    return it->second;
  }
  // A fresh buffer of `site` in the current iteration, allocated on the current stream.
  BufRef freshBuffer(int s) {
    if (record_) allocStreams_[static_cast<size_t>(s)] = st_.cur;
    return {s, loopTerms()};
  }

  // ---- streams ----
  SymStream defaultStream() { return {num(kDefaultStream), num(0)}; }
  SymStream poolStream(const std::string& name) {
    auto [it, inserted] = poolIds_.try_emplace(name, static_cast<int64_t>(poolIds_.size()));
    if (inserted) m_.poolNames.push_back(name);
    return {num(kPoolStream), num(it->second)};
  }
  SymStream resolve(const StreamRef& ref, const Stmt& s) {
    if (ref.kind == StreamRef::Kind::kNamed) {
      SymStream pool = poolStream(ref.name);
      auto it = st_.named.find(ref.name);
      if (it == st_.named.end()) return pool;
      const Capture& cap = it->second;
      if (cap.captured.is_true()) return cap.value;
      return {z3::ite(cap.captured, cap.value.cls, pool.cls).simplify(),
              z3::ite(cap.captured, cap.value.key, pool.key).simplify()};
    }
    return {num(kWorkerStream), evalInt(ref.index, &s)};
  }

  // ---- bindings ----
  const std::vector<ViewAlt>& alts(const TensorView* tv) {
    static const std::vector<ViewAlt> none;
    auto it = st_.bound.find(tv);
    return it == st_.bound.end() ? none : it->second;
  }
  z3::expr boundCond(const TensorView* tv) {
    z3::expr r = fls();
    for (const auto& a : alts(tv)) r = disj(r, a.cond);
    return r.simplify();
  }
  z3::expr deallocCond(const TensorView* tv) {
    z3::expr r = fls();
    if (auto it = st_.deallocated.find(tv); it != st_.deallocated.end())
      for (const auto& d : it->second) r = disj(r, d.cond);
    return r.simplify();
  }
  // Some binding other than `except`'s (or one of `extra`) names buffer b.
  z3::expr referencedElsewhere(const BufRef& b, const TensorView* except, const std::vector<ViewAlt>& extra) {
    z3::expr r = fls();
    for (const auto& [tv, as] : st_.bound) {
      if (tv == except) continue;
      for (const auto& a : as)
        if (a.buf.site == b.site) r = disj(r, conj(a.cond, bufEquals(a.buf, b)));
    }
    for (const auto& a : extra)
      if (a.buf.site == b.site) r = disj(r, conj(a.cond, bufEquals(a.buf, b)));
    return r;
  }
  void emitFree(const Stmt* stmt, const BufRef& b, const z3::expr& cond, const TensorView* tv) {
    if (!record_) return;
    if (m_.sites[static_cast<size_t>(b.site)].isInput) return;
    z3::expr g = conj(pc_, cond).simplify();
    if (g.is_false()) return;
    int id = templateId(stmt, 1000 + freeRole_++);
    if (Template* t = emit(id, TemplateKind::kFree, stmt, "free " + (tv ? tv->nameStr() : std::string("buffer")), g))
      t->buf = b;
  }
  // Binds `tv` to `fresh` where `when` holds (else it keeps its binding); the old buffers lose a
  // reference and are freed when none is left.
  void bindWhen(const TensorView* tv, const z3::expr& when, std::vector<ViewAlt> fresh, const Stmt* stmt) {
    z3::expr w = when.simplify();
    if (w.is_false()) return;
    for (auto& a : fresh) a.cond = conj(w, a.cond).simplify();
    std::vector<ViewAlt> old = alts(tv);
    for (const auto& a : old) {
      z3::expr freed = conj(conj(w, a.cond), conj(!a.freed, !referencedElsewhere(a.buf, tv, fresh)));
      emitFree(stmt, a.buf, freed, tv);
    }
    std::vector<ViewAlt> out;
    for (auto a : old) {
      a.cond = conj(!w, a.cond).simplify();
      if (!a.cond.is_false()) out.push_back(std::move(a));
    }
    for (auto& a : fresh)
      if (!a.cond.is_false()) out.push_back(std::move(a));
    if (out.empty()) {
      st_.bound.erase(tv);
    } else {
      st_.bound[tv] = std::move(out);
    }
    if (auto it = st_.deallocated.find(tv); it != st_.deallocated.end()) {
      for (auto& d : it->second) d.cond = conj(!w, d.cond).simplify();
    }
    pruneState(st_);
  }
  // The usable views of `tv` (issues where it is unbound, deallocated or freed), and the
  // condition that it is usable, both under `when`.
  struct Need {
    std::vector<ViewAlt> alts;
    z3::expr ok;
  };
  Need need(const TensorView* tv, const Stmt& s, const char* role, const z3::expr& when) {
    Need n{{}, fls()};
    if (!tv) {
      issue(FindingKind::kUnboundTensor, &s, when, std::string("the statement has no ") + role + " tensor");
      return n;
    }
    z3::expr bound = fls();
    for (const auto& a : alts(tv)) {
      bound = disj(bound, a.cond);
      z3::expr usable = conj(a.cond, !a.freed).simplify();
      if (!usable.is_false()) {
        ViewAlt u = a;
        u.cond = usable;
        n.alts.push_back(u);
        n.ok = disj(n.ok, usable);
      }
      issue(FindingKind::kUseAfterDeallocate, &s, conj(when, conj(a.cond, a.freed)),
            "uses " + tv->nameStr() + " (" + role + "), a view of " +
                m_.sites[static_cast<size_t>(a.buf.site)].tensor->nameStr() + ", whose memory was deallocated");
    }
    z3::expr unbound = !bound;
    z3::expr dealloc = fls();
    if (auto it = st_.deallocated.find(tv); it != st_.deallocated.end()) {
      for (const auto& d : it->second) {
        dealloc = disj(dealloc, d.cond);
        issue(FindingKind::kUseAfterDeallocate, &s, conj(when, conj(unbound, d.cond)),
              "uses " + tv->nameStr() + " (" + role + ") after it was deallocated", d.stmt);
      }
    }
    issue(FindingKind::kUnboundTensor, &s, conj(when, conj(unbound, !dealloc)),
          "uses " + tv->nameStr() + " (" + role + "), which nothing allocated or bound");
    n.ok = n.ok.simplify();
    return n;
  }
  static z3::expr numelOf(const std::vector<ViewAlt>& as) {
    z3::expr r = Z3ContextScope::current().int_val(0);
    for (size_t i = as.size(); i-- > 0;) r = z3::ite(as[i].cond, as[i].view.numel(), r);
    return r.simplify();
  }
  // The view an op writes: where `tv` is bound (and not freed), that view; elsewhere a fresh
  // buffer of `shape` (rebinding `tv`), all under `when`.
  std::vector<ViewAlt> outputViews(const TensorView* tv, const std::vector<z3::expr>& shape, const Stmt& s,
                                   const z3::expr& when) {
    std::vector<ViewAlt> w;
    z3::expr writable = fls();
    for (const auto& a : alts(tv)) {
      z3::expr ok = conj(a.cond, !a.freed).simplify();
      if (!ok.is_false()) {
        ViewAlt x = a;
        x.cond = ok;
        w.push_back(x);
        writable = disj(writable, ok);
      }
      issue(FindingKind::kUseAfterDeallocate, &s, conj(when, conj(a.cond, a.freed)),
            "writes " + tv->nameStr() + ", a view of " + m_.sites[static_cast<size_t>(a.buf.site)].tensor->nameStr() +
                ", whose memory was deallocated");
    }
    z3::expr freshCond = conj(when, !writable).simplify();
    if (!freshCond.is_false()) {
      int st = site(&s, 0, tv);
      ViewAlt f;
      f.buf = freshBuffer(st);
      f.view = View::whole(shape);
      f.cond = tru();
      allocMarker(&s, f.buf, freshCond, tv);
      bindWhen(tv, freshCond, {f}, &s);
      f.cond = freshCond;
      w.push_back(f);
    }
    for (auto& x : w) x.cond = conj(when, x.cond).simplify();
    return w;
  }
  void allocMarker(const Stmt* stmt, const BufRef& b, const z3::expr& cond, const TensorView* tv) {
    if (!record_) return;
    int id = templateId(stmt, 2);
    if (Template* t = emit(id, TemplateKind::kAlloc, stmt, "allocate " + tv->nameStr(), conj(pc_, cond))) t->buf = b;
  }
  void addAccesses(Template* t, const std::vector<ViewAlt>& as, bool write, const TensorView* tv,
                   const z3::expr& when) {
    if (!t) return;
    for (const auto& a : as) {
      Access x;
      x.cond = conj(when, a.cond).simplify();
      if (x.cond.is_false()) continue;
      x.buf = a.buf;
      x.view = a.view;
      x.write = write;
      x.tensor = tv;
      t->accesses.push_back(std::move(x));
    }
  }

  // ---- statements ----
  void runScope(const Scope& scope) {
    for (size_t i = 0; i < scope.size(); ++i) {
      path_.push_back({static_cast<int>(i), nullptr});
      sub_ = 0;
      freeRole_ = 0;
      runStmt(*scope[i]);
      path_.pop_back();
    }
  }
  void runStmt(const Stmt& s);
  void runFor(const ForLoop& f);
  void runIf(const IfThenElse& f);
  void runAllocate(const Allocate& a);
  void runDeallocate(const Deallocate& d);
  void runAliasSelect(const AliasSelect& a);
  void runShardByStream(const ShardByStream& a);
  void runHostOp(const HostOp& h);
  void runPostOnStream(const PostOnStream& k);
  void runCommunication(const Communication& c);
  void runP2P(const P2PCommunication& c);
  void runEndCoalescing(const EndCoalescing& c);
  void runWait(const Wait& w);
  // Records that `waitId` names template `tmpl`'s instance of this iteration where `ok` holds
  // (replacing an earlier post); ids no Wait names are not remembered.
  void remember(int waitId, int tmpl, const z3::expr& ok) {
    if (!waited_.count(waitId)) return;
    auto& pa = st_.posted[waitId];
    for (auto& x : pa) x.cond = conj(!ok, x.cond).simplify();
    pa.push_back({ok, tmpl, loopTerms()});
    pruneState(st_);
  }
  HostState runBody(const ForLoop& f, LoopVar* lv, const HostState& head, const z3::expr& k, bool record);
  bool equalTerms(const z3::expr& a, const z3::expr& b);
  bool equalStates(const HostState& a, const HostState& b);
  std::string firstDifference(const HostState& a, const HostState& b);
  HostState guessHead(const HostState& s1, const HostState& s2, const z3::expr& k);
  // One map-valued component of guessHead: each key compared through states holding only it.
  template <class M>
  void guessMap(M HostState::*field, const HostState& s1, const HostState& s2, const HostState& back, HostState& g) {
    std::set<typename M::key_type> keys;
    for (const auto& [key, v] : s1.*field) keys.insert(key);
    for (const auto& [key, v] : s2.*field) keys.insert(key);
    for (const auto& key : keys) {
      HostState x, y;
      x.cur = y.cur = s1.cur;
      if (auto it = (s1.*field).find(key); it != (s1.*field).end()) (x.*field).emplace(key, it->second);
      if (auto it = (s2.*field).find(key); it != (s2.*field).end()) (y.*field).emplace(key, it->second);
      if (equalStates(x, y)) continue;
      if (auto it = (back.*field).find(key); it != (back.*field).end()) {
        (g.*field).insert_or_assign(key, it->second);
      } else {
        (g.*field).erase(key);
      }
    }
  }
  // Drops the bindings of names the loop does not carry (liveness.h) when they are views of
  // inputs: forgetting them loses no reference that could free a buffer.
  HostState forget(HostState s, const std::set<const TensorView*>& names) const;
  void finish();

  const HostProgram& p_;
  ProgramModel& m_;
  const ModelOptions& o_;
  z3::context& c_;
  ScalarTranslator tr_;
  ScalarTranslator::Env env_;
  HostState st_;
  z3::expr pc_;
  std::vector<PathStep> path_;
  std::vector<std::pair<LoopVar*, z3::expr>> loops_;
  // Loops whose iterations k >= begin + 1 are being summarized (runFor), for equalTerms.
  std::vector<std::tuple<z3::expr, z3::expr, z3::expr>> summarizing_;
  std::set<std::string> loopNames_;
  bool record_ = true;
  int sub_ = 0;
  int freeRole_ = 0;
  std::map<std::pair<const Stmt*, int>, int> templateIds_;
  std::map<std::pair<const void*, int>, int> siteIds_;
  std::vector<SymStream> allocStreams_;
  std::map<const ForLoop*, LoopVar*> loopVars_;
  std::map<const ForLoop*, std::set<const TensorView*>> notCarried_;
  std::set<int> waited_;  // ids some Wait names: only those are remembered as posted
  std::map<std::string, int64_t> poolIds_;
  std::set<std::string> divisorsSeen_;
  z3::solver scratch_;
  BudgetWatchdog dog_;
  // Coalescing (StartCoalescing .. EndCoalescing, within one scope).
  bool coalescing_ = false;
  const Stmt* coalesceStart_ = nullptr;
  const Scope* coalesceScope_ = nullptr;
  std::vector<CommInfo::P2POp> pendingOps_;
  std::vector<std::tuple<std::vector<ViewAlt>, bool, const TensorView*>> pendingAccesses_;
  std::vector<int> pendingIds_;
  z3::expr pendingOk_ = Z3ContextScope::current().bool_val(true);
};

}  // namespace braid::verify::parametric::detail
