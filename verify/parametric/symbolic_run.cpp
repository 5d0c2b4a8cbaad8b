// The symbolic run: executes a host program's host thread once with symbolic rank, stream
// count, extents and loop indices, recording a template for every device operation
// (model.h). It follows the bounded interpreter (ir/semantics/interpreter.cpp) statement by
// statement, with the shape and view rules of ir/semantics/symbolic_rules.h, so that a template
// instantiated at concrete values is exactly the interpreter's event.
//
// Loops. The state at the head of iteration k is pre (the state before the loop) for k = begin
// and G(k) for later k, where G is found by running the body symbolically: with s1 = F(pre,
// begin) and s2 = F(s1, k), each component that s2 leaves as s1 had it stays, the others are
// s2 shifted back one iteration (G(k) = s2[k := k - 1]). The guess is then checked: G(begin + 1)
// = s1 and F(G(k), k) = G(k + 1). A loop whose state evolves otherwise (a counter, a binding that
// depends on every earlier iteration) is reported as unsupported: nothing is claimed for it.
#include <algorithm>
#include <climits>
#include <functional>
#include <set>
#include <sstream>

#include "ir/error.h"
#include "ir/semantics/interpreter.h"
#include "verify/parametric/host_state.h"
#include "verify/parametric/liveness.h"
#include "verify/parametric/model.h"

namespace braid::verify::parametric {

const char* templateKindName(TemplateKind k) {
  switch (k) {
    case TemplateKind::kEntry:
      return "entry";
    case TemplateKind::kExit:
      return "exit";
    case TemplateKind::kWork:
      return "work";
    case TemplateKind::kComm:
      return "communication";
    case TemplateKind::kSync:
      return "synchronize";
    case TemplateKind::kWait:
      return "wait";
    case TemplateKind::kFree:
      return "free";
    case TemplateKind::kAlloc:
      return "allocation";
  }
  return "?";
}

std::string ProgramModel::describe(const Template& x) const {
  std::string s = x.stmt ? sem::stmtSummary(*x.stmt) : x.op;
  if (x.stmt && x.stmt->loc.known()) s += " at line " + std::to_string(x.stmt->loc.line);
  return s;
}

namespace {

std::string teamKey(CommBackend backend, std::vector<int64_t> team) {
  std::sort(team.begin(), team.end());
  std::ostringstream os;
  os << commBackendName(backend) << " team (";
  for (size_t i = 0; i < team.size(); ++i) os << (i ? " " : "") << team[i];
  os << ")";
  return os.str();
}

void collectConsts(const z3::expr& e, std::set<std::string>& out, std::set<unsigned>& seen) {
  if (seen.count(e.id())) return;
  seen.insert(e.id());
  if (e.is_app()) {
    if (e.is_const() && !e.is_numeral() && e.decl().decl_kind() == Z3_OP_UNINTERPRETED)
      out.insert(e.decl().name().str());
    for (unsigned i = 0; i < e.num_args(); ++i) collectConsts(e.arg(i), out, seen);
  }
}

bool mentionsAny(const z3::expr& e, const std::set<std::string>& names) {
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
      : p_(p), m_(m), o_(o), c_(m.ctx), tr_(m.ctx), pc_(m.ctx.bool_val(true)), scratch_(m.ctx) {
    scratch_.set("timeout", 300u);
  }

  void run();

 private:
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
      bool implied = scratch_.check() == z3::unsat;
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
  // Coalescing (StartCoalescing .. EndCoalescing, within one scope).
  bool coalescing_ = false;
  const Stmt* coalesceStart_ = nullptr;
  const Scope* coalesceScope_ = nullptr;
  std::vector<CommInfo::P2POp> pendingOps_;
  std::vector<std::tuple<std::vector<ViewAlt>, bool, const TensorView*>> pendingAccesses_;
  std::vector<int> pendingIds_;
  z3::expr pendingOk_ = Z3ContextScope::current().bool_val(true);
};

void SymbolicRun::run() {
  m_.program = &p_;
  m_.numRanks = o_.ranks > 0 ? o_.ranks : sem::ranksFromProgram(p_);
  env_.insert_or_assign(kRank, m_.rank);
  env_.insert_or_assign(kDeviceIdxX, m_.rank);
  env_.insert_or_assign(kDeviceIdxY, num(0));
  if (auto it = o_.bindings.find(kDeviceIdxY); it != o_.bindings.end())
    env_.insert_or_assign(kDeviceIdxY, num(it->second));
  if (o_.streams) {
    m_.streams = num(*o_.streams);
  } else if (auto it = o_.bindings.find(kNumberOfStreams); it != o_.bindings.end()) {
    m_.streams = num(it->second);
  }
  env_.insert_or_assign(kNumberOfStreams, m_.streams);
  z3::expr dom = m_.rank >= 0 && m_.rank < num(m_.numRanks) && m_.streams >= 1;
  for (const auto& [name, value] : o_.bindings)
    if (name != kNumberOfStreams && name != kDeviceIdxY) env_.insert_or_assign(name, num(value));
  for (const auto& name : sem::unboundSymbols(p_, o_.bindings)) {
    z3::expr x = c_.int_const(name.c_str());
    env_.insert_or_assign(name, x);
    m_.extents.emplace(name, x);
    dom = dom && x >= 1;
  }
  m_.domain = dom;
  for (const Scalar& a : o_.assumptions) {
    z3::expr c = [&] {
      try {
        return tr_.boolean(a, env_).simplify();
      } catch (const Error& e) {
        throw Error("cannot use the assumption " + a.str() + ": " + e.what() +
                    " (assumptions may name the program's extents, numberOfStreams and rank)");
      }
    }();
    m_.domain = conj(m_.domain, c);
    m_.domainNotes.push_back(a.str());
  }
  forEachStmt(p_.body(), [&](const Stmt& s, int) {
    if (s.is<Wait>()) waited_.insert(s.as<Wait>()->id);
  });
  std::vector<z3::expr> positive = {m_.streams};
  for (const auto& [name, x] : m_.extents) positive.push_back(x);
  tr_.setPositive(positive);

  // Entry: the caller's inputs are ready on the default stream.
  st_.cur = defaultStream();
  int entry = templateId(nullptr, -1);
  m_.entry = entry;
  std::vector<ViewAlt> inputs;
  std::vector<const TensorView*> inputTensors;
  for (const TensorView* in : p_.inputs()) {
    if (st_.bound.count(in)) continue;
    ViewAlt a;
    a.buf = {site(nullptr, 0, in, true), {}};
    a.view = View::whole(shapeOf(*in, false, nullptr));
    st_.bound[in] = {a};
    inputs.push_back(a);
    inputTensors.push_back(in);
  }
  {
    Template& t = m_.templates[static_cast<size_t>(entry)];
    t.recorded = true;
    t.kind = TemplateKind::kEntry;
    t.op = "program entry";
    t.guard = tru();
    t.stream = defaultStream();
    t.path = {{-1, nullptr}};
    for (size_t i = 0; i < inputs.size(); ++i) addAccesses(&t, {inputs[i]}, true, inputTensors[i], tru());
  }
  for (const auto& [out, in] : p_.aliases())
    if (st_.bound.count(in)) st_.bound[out] = st_.bound[in];

  runScope(p_.body());
  if (coalescing_)
    issue(FindingKind::kUnclosedCoalescing, coalesceStart_, tru(),
          "opens a group of sends and receives that no EndCoalescing closes before the program returns");

  // Exit: the caller's stream reaches the end of the program and reads the outputs.
  st_.cur = defaultStream();
  int exit = templateId(nullptr, -2);
  m_.exit = exit;
  Template& t = m_.templates[static_cast<size_t>(exit)];
  t.recorded = true;
  t.kind = TemplateKind::kExit;
  t.op = "program exit";
  t.guard = tru();
  t.stream = defaultStream();
  t.path = {{INT_MAX, nullptr}};
  for (const TensorView* out : p_.outputs()) {
    z3::expr owes = tru();
    if (out->hasDeviceMesh()) {
      owes = fls();
      for (int64_t d : out->deviceMesh()->devices()) owes = disj(owes, m_.rank == num(d));
    }
    z3::expr bound = boundCond(out);
    issue(FindingKind::kUnboundTensor, nullptr, conj(owes, !bound),
          "output " + out->nameStr() + " is never allocated or written");
    for (const auto& a : alts(out)) {
      issue(FindingKind::kUseAfterDeallocate, nullptr, conj(a.cond, a.freed),
            "output " + out->nameStr() + " is a view of " + m_.sites[static_cast<size_t>(a.buf.site)].tensor->nameStr() +
                ", which was deallocated: the caller receives freed memory");
      z3::expr ok = conj(a.cond, !a.freed).simplify();
      if (ok.is_false()) continue;
      Access x;
      x.cond = ok;
      x.buf = a.buf;
      x.view = a.view;
      x.tensor = out;
      m_.templates[static_cast<size_t>(exit)].accesses.push_back(x);
      OutputAlt o;
      o.tensor = out;
      o.cond = conj(owes, ok).simplify();
      o.buf = a.buf;
      o.view = a.view;
      m_.outputs.push_back(o);
    }
  }
  finish();
}

// Free and allocation markers run on their buffer's allocation stream.
void SymbolicRun::finish() {
  for (Template& t : m_.templates) {
    if (t.kind != TemplateKind::kFree && t.kind != TemplateKind::kAlloc) continue;
    const BufferSite& s = m_.sites[static_cast<size_t>(t.buf.site)];
    z3::expr_vector from(c_), to(c_);
    for (size_t i = 0; i < s.loops.size(); ++i) {
      from.push_back(s.loops[i]->var);
      to.push_back(t.buf.idx[i]);
    }
    SymStream a = allocStreams_[static_cast<size_t>(t.buf.site)];
    t.stream = {a.cls.substitute(from, to).simplify(), a.key.substitute(from, to).simplify()};
  }
}

void SymbolicRun::runStmt(const Stmt& s) {
  switch (s.kind()) {
    case StmtKind::kAllocate:
      runAllocate(*s.as<Allocate>());
      break;
    case StmtKind::kDeallocate:
      runDeallocate(*s.as<Deallocate>());
      break;
    case StmtKind::kAliasSelect:
      runAliasSelect(*s.as<AliasSelect>());
      break;
    case StmtKind::kShardByStream:
      runShardByStream(*s.as<ShardByStream>());
      break;
    case StmtKind::kGetCurrentStream: {
      // nvFuser keeps the first capture (a map insert that never overwrites).
      const std::string& name = s.as<GetCurrentStream>()->stream.name;
      Capture cap;
      if (auto it = st_.named.find(name); it != st_.named.end()) cap = it->second;
      Capture n;
      n.captured = tru();
      n.value = {z3::ite(cap.captured, cap.value.cls, st_.cur.cls).simplify(),
                 z3::ite(cap.captured, cap.value.key, st_.cur.key).simplify()};
      st_.named[name] = n;
      break;
    }
    case StmtKind::kSetCurrentStream:
      st_.cur = resolve(s.as<SetCurrentStream>()->stream, s);
      break;
    case StmtKind::kSynchronize: {
      SymStream target = resolve(s.as<Synchronize>()->stream, s);
      int id = templateId(&s, 0);
      if (Template* t = emit(id, TemplateKind::kSync, &s, "Synchronize " + s.as<Synchronize>()->stream.str(), pc_))
        t->target = target;
      break;
    }
    case StmtKind::kForLoop:
      runFor(*s.as<ForLoop>());
      break;
    case StmtKind::kIfThenElse:
      runIf(*s.as<IfThenElse>());
      break;
    case StmtKind::kHostOp:
      runHostOp(*s.as<HostOp>());
      break;
    case StmtKind::kPostOnStream:
      runPostOnStream(*s.as<PostOnStream>());
      break;
    case StmtKind::kCommunication:
      runCommunication(*s.as<Communication>());
      break;
    case StmtKind::kP2PCommunication:
      runP2P(*s.as<P2PCommunication>());
      break;
    case StmtKind::kStartCoalescing:
      if (coalescing_)
        issue(FindingKind::kUnclosedCoalescing, coalesceStart_, tru(),
              "opens a group of sends and receives that is still open when another StartCoalescing begins");
      coalescing_ = true;
      coalesceStart_ = &s;
      pendingOps_.clear();
      pendingAccesses_.clear();
      pendingIds_.clear();
      pendingOk_ = tru();
      break;
    case StmtKind::kEndCoalescing:
      runEndCoalescing(*s.as<EndCoalescing>());
      break;
    case StmtKind::kWait:
      runWait(*s.as<Wait>());
      break;
  }
}

void SymbolicRun::runIf(const IfThenElse& f) {
  z3::expr p = evalBool(f.predicate, &f);
  HostState before = st_;
  z3::expr pc = pc_;
  if (coalescing_) unsupported(&f, "a branch inside a StartCoalescing .. EndCoalescing group");
  pc_ = conj(pc, p).simplify();
  path_.push_back({0, nullptr});
  if (!pc_.is_false()) runScope(f.thenBody);
  path_.pop_back();
  HostState a = st_;
  st_ = before;
  pc_ = conj(pc, !p).simplify();
  path_.push_back({1, nullptr});
  if (!pc_.is_false()) runScope(f.elseBody);
  path_.pop_back();
  HostState b = st_;
  pc_ = pc;
  st_ = mergeStates(p, a, b);
}

HostState SymbolicRun::runBody(const ForLoop& f, LoopVar* lv, const HostState& head, const z3::expr& k, bool record) {
  bool savedRecord = record_;
  record_ = savedRecord && record;
  st_ = head;
  std::optional<z3::expr> savedEnv;
  if (auto it = env_.find(f.index); it != env_.end()) savedEnv = it->second;
  env_.insert_or_assign(f.index, k);
  loops_.emplace_back(lv, k);
  path_.push_back({0, lv});
  runScope(f.body);
  path_.pop_back();
  loops_.pop_back();
  if (savedEnv) {
    env_.insert_or_assign(f.index, *savedEnv);
  } else {
    env_.erase(f.index);
  }
  record_ = savedRecord;
  if (coalescing_) unsupported(&f, "a StartCoalescing .. EndCoalescing group that spans loop iterations");
  HostState out = st_;
  pruneState(out);
  return out;
}

bool SymbolicRun::equalTerms(const z3::expr& a, const z3::expr& b) {
  z3::expr x = a.simplify(), y = b.simplify();
  if (z3::eq(x, y)) return true;
  if (x.get_sort().is_bool() != y.get_sort().is_bool()) return false;
  scratch_.push();
  scratch_.add(m_.domain);
  for (const auto& [lv, term] : loops_) scratch_.add(lv->var >= lv->begin && lv->var < lv->end);
  for (const auto& [var, lo, hi] : summarizing_) scratch_.add(var >= lo && var < hi);
  scratch_.add(x != y);
  bool same = scratch_.check() == z3::unsat;
  scratch_.pop();
  return same;
}

bool SymbolicRun::equalStates(const HostState& a, const HostState& b) { return firstDifference(a, b).empty(); }

// The first component in which two states differ ("" when none), for messages.
std::string SymbolicRun::firstDifference(const HostState& a, const HostState& b) {
  auto eqStream = [&](const SymStream& x, const SymStream& y) {
    return equalTerms(x.cls, y.cls) && equalTerms(x.key, y.key);
  };
  if (!eqStream(a.cur, b.cur)) return "the current stream";
  std::set<std::string> names;
  for (const auto& [n, v] : a.named) names.insert(n);
  for (const auto& [n, v] : b.named) names.insert(n);
  for (const auto& n : names) {
    Capture x, y;
    if (auto it = a.named.find(n); it != a.named.end()) x = it->second;
    if (auto it = b.named.find(n); it != b.named.end()) y = it->second;
    if (!equalTerms(x.captured, y.captured)) return "stream variable Stream " + n;
    if (!x.captured.simplify().is_false() && !eqStream(x.value, y.value)) return "stream variable Stream " + n;
  }
  auto eqTermVec = [&](const std::vector<z3::expr>& x, const std::vector<z3::expr>& y) {
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (!equalTerms(x[i], y[i])) return false;
    return true;
  };
  auto eqViewAlts = [&](const std::vector<ViewAlt>& x, const std::vector<ViewAlt>& y) {
    if (x.size() != y.size()) return false;
    for (size_t i = 0; i < x.size(); ++i) {
      if (x[i].buf.site != y[i].buf.site || x[i].view.dims != y[i].view.dims) return false;
      if (!equalTerms(x[i].cond, y[i].cond) || !equalTerms(x[i].freed, y[i].freed)) return false;
      if (!eqTermVec(x[i].buf.idx, y[i].buf.idx) || !eqTermVec(x[i].view.base, y[i].view.base) ||
          !eqTermVec(x[i].view.lo, y[i].view.lo) || !eqTermVec(x[i].view.len, y[i].view.len) ||
          !eqTermVec(x[i].view.unit, y[i].view.unit))
        return false;
    }
    return true;
  };
  std::set<const TensorView*> tvs;
  for (const auto& [tv, v] : a.bound) tvs.insert(tv);
  for (const auto& [tv, v] : b.bound) tvs.insert(tv);
  static const std::vector<ViewAlt> noneV;
  for (const TensorView* tv : tvs) {
    auto ia = a.bound.find(tv);
    auto ib = b.bound.find(tv);
    if (!eqViewAlts(ia == a.bound.end() ? noneV : ia->second, ib == b.bound.end() ? noneV : ib->second))
      return "the binding of " + tv->nameStr();
  }
  static const std::vector<DeallocAlt> noneD;
  std::set<const TensorView*> dtvs;
  for (const auto& [tv, v] : a.deallocated) dtvs.insert(tv);
  for (const auto& [tv, v] : b.deallocated) dtvs.insert(tv);
  for (const TensorView* tv : dtvs) {
    auto ia = a.deallocated.find(tv);
    auto ib = b.deallocated.find(tv);
    const auto& x = ia == a.deallocated.end() ? noneD : ia->second;
    const auto& y = ib == b.deallocated.end() ? noneD : ib->second;
    bool same = x.size() == y.size();
    for (size_t i = 0; same && i < x.size(); ++i) same = x[i].stmt == y[i].stmt && equalTerms(x[i].cond, y[i].cond);
    if (!same) return "whether " + tv->nameStr() + " is deallocated";
  }
  static const std::vector<PostAlt> noneP;
  std::set<int> ids;
  for (const auto& [id, v] : a.posted) ids.insert(id);
  for (const auto& [id, v] : b.posted) ids.insert(id);
  for (int id : ids) {
    auto ia = a.posted.find(id);
    auto ib = b.posted.find(id);
    const auto& x = ia == a.posted.end() ? noneP : ia->second;
    const auto& y = ib == b.posted.end() ? noneP : ib->second;
    bool same = x.size() == y.size();
    for (size_t i = 0; same && i < x.size(); ++i)
      same = x[i].tmpl == y[i].tmpl && equalTerms(x[i].cond, y[i].cond) && eqTermVec(x[i].idx, y[i].idx);
    if (!same) return "which communication " + std::to_string(id) + " is posted";
  }
  return "";
}

HostState SymbolicRun::forget(HostState s, const std::set<const TensorView*>& names) const {
  for (const TensorView* tv : names) {
    auto it = s.bound.find(tv);
    if (it != s.bound.end()) {
      bool inputsOnly = std::all_of(it->second.begin(), it->second.end(), [&](const ViewAlt& a) {
        return m_.sites[static_cast<size_t>(a.buf.site)].isInput;
      });
      if (!inputsOnly) continue;
      s.bound.erase(it);
    }
    s.deallocated.erase(tv);
  }
  return s;
}

// G(k): the components s2 = F(s1, k) leaves as s1 had them stay; the others are s2 one
// iteration back.
HostState SymbolicRun::guessHead(const HostState& s1, const HostState& s2, const z3::expr& k) {
  z3::expr_vector from(c_), to(c_);
  from.push_back(k);
  to.push_back(k - 1);
  HostState back = substitute(s2, from, to);
  HostState g = s1;
  if (!(equalTerms(s1.cur.cls, s2.cur.cls) && equalTerms(s1.cur.key, s2.cur.key))) g.cur = back.cur;
  guessMap(&HostState::named, s1, s2, back, g);
  guessMap(&HostState::bound, s1, s2, back, g);
  guessMap(&HostState::deallocated, s1, s2, back, g);
  guessMap(&HostState::posted, s1, s2, back, g);
  return g;
}

void SymbolicRun::runFor(const ForLoop& f) {
  auto [it, inserted] = loopVars_.try_emplace(&f, nullptr);
  if (inserted) {
    auto lv = std::make_unique<LoopVar>();
    lv->id = static_cast<int>(m_.loops.size());
    lv->loop = &f;
    lv->depth = static_cast<int>(loops_.size()) + 1;
    std::string name = "L" + std::to_string(lv->id) + "." + f.index;
    lv->var = c_.int_const(name.c_str());
    loopNames_.insert(name);
    it->second = lv.get();
    m_.loops.push_back(std::move(lv));
  }
  LoopVar* lv = it->second;
  z3::expr b = evalInt(f.begin(), &f);
  z3::expr e = evalInt(f.end(), &f);
  z3::expr k = lv->var;
  if (record_) {
    lv->begin = b;
    lv->end = e;
  }
  // Ranges used by equalTerms while this loop's body is summarized.
  z3::expr savedBegin = lv->begin, savedEnd = lv->end;
  lv->begin = b;
  lv->end = e;

  HostState pre = st_;
  auto [nc, fresh] = notCarried_.try_emplace(&f);
  if (fresh) nc->second = namesNotCarried(p_, f);
  const auto& dead = nc->second;
  summarizing_.emplace_back(k, b + 1, e);
  HostState s1 = forget(runBody(f, lv, pre, b, false), dead);
  HostState s2 = forget(runBody(f, lv, s1, k, false), dead);
  HostState g = guessHead(s1, s2, k);
  z3::expr_vector kv(c_), first(c_), next(c_), last(c_);
  kv.push_back(k);
  first.push_back(b + 1);
  next.push_back(k + 1);
  last.push_back(e);
  std::string diff = firstDifference(substitute(g, kv, first), s1);
  if (diff.empty()) {
    HostState s3 = forget(runBody(f, lv, g, k, false), dead);
    diff = firstDifference(s3, substitute(g, kv, next));
  }
  summarizing_.pop_back();
  if (!diff.empty())
    unsupported(&f, diff + " changes across the iterations of loop " + f.index +
                        " in a way the parametric checker cannot summarize (it depends on more than the previous "
                        "iteration)");
  HostState head = mergeStates(k == b, pre, g);
  runBody(f, lv, head, k, true);
  st_ = forget(mergeStates(e > b, substitute(g, kv, last), pre), dead);
  if (!record_) {
    lv->begin = savedBegin;
    lv->end = savedEnd;
  }
}

void SymbolicRun::runAllocate(const Allocate& a) {
  if (!a.tv) throw Error(a.loc.str() + ": ALLOCATE without a tensor");
  // `ALLOCATE(buffer=...)` allocates only where the tensor is not bound yet.
  z3::expr when = a.legacy ? (!boundCond(a.tv)).simplify() : tru();
  if (when.is_false()) return;
  int st = site(&a, 0, a.tv);
  ViewAlt f;
  f.buf = freshBuffer(st);
  f.view = View::whole(allocationShape(*a.tv, &a));
  allocMarker(&a, f.buf, when, a.tv);
  bindWhen(a.tv, when, {f}, &a);
  if (a.zeroInit && record_) {
    int id = templateId(&a, 0);
    Template* t = emit(id, TemplateKind::kWork, &a, "zero-fill " + a.tv->nameStr(), conj(pc_, when));
    f.cond = tru();
    addAccesses(t, {f}, true, a.tv, tru());
  }
}

void SymbolicRun::runDeallocate(const Deallocate& d) {
  const auto as = alts(d.tv);
  if (as.empty()) return;
  z3::expr bound = boundCond(d.tv);
  for (const auto& a : as) {
    const BufferSite& s = m_.sites[static_cast<size_t>(a.buf.site)];
    // The owner's Deallocate frees its buffer even while views of it are bound; any other name's
    // frees it when it held the last reference.
    z3::expr frees = conj(a.cond, !a.freed);
    if (s.tensor != d.tv) frees = conj(frees, !referencedElsewhere(a.buf, d.tv, {}));
    frees = frees.simplify();
    emitFree(&d, a.buf, frees, d.tv);
    if (s.tensor == d.tv) {
      for (auto& [tv, other] : st_.bound) {
        if (tv == d.tv) continue;
        for (auto& o : other)
          if (o.buf.site == a.buf.site) o.freed = disj(o.freed, conj(frees, bufEquals(o.buf, a.buf))).simplify();
      }
    }
  }
  st_.bound.erase(d.tv);
  auto& dl = st_.deallocated[d.tv];
  for (auto& x : dl) x.cond = conj(!bound, x.cond).simplify();
  dl.push_back({bound, &d});
  pruneState(st_);
}

void SymbolicRun::runAliasSelect(const AliasSelect& a) {
  Need in = need(a.in, a, "input", tru());
  if (in.alts.empty()) return;
  const std::vector<IterDomain*> dom = sem::bufferDomain(*a.in);
  auto pos = std::find(dom.begin(), dom.end(), a.axis);
  if (pos == dom.end()) {
    for (auto it = dom.begin(); it != dom.end(); ++it)
      if (a.axis && (*it)->id() == a.axis->id()) pos = it;
  }
  if (pos == dom.end()) throw Error(a.loc.str() + ": HirAliasSelect axis is not an axis of " + a.in->nameStr());
  std::vector<ViewAlt> out;
  if ((*pos)->isReduction()) {
    out = in.alts;
  } else {
    int dim = sem::bufferDimsOf(dom)[static_cast<size_t>(pos - dom.begin())];
    z3::expr index = evalInt(a.index, &a);
    for (const auto& alt : in.alts) {
      if (dim >= alt.view.rank()) {
        issue(FindingKind::kShapeMismatch, &a, alt.cond,
              a.in->nameStr() + " is bound to a view with fewer dimensions than its domain");
        unsupported(&a, a.in->nameStr() + " is bound to a view with fewer dimensions than its domain");
        continue;
      }
      auto r = sem::aliasSelectRule(alt.view, dim, (*pos)->isBroadcast(), index);
      issue(FindingKind::kViewOutOfBounds, &a, conj(alt.cond, !r.inBounds),
            "selects index " + a.index.str() + " of " + a.in->nameStr() + " along " + (*pos)->str() +
                ", outside its extent");
      ViewAlt x = alt;
      x.cond = conj(alt.cond, r.inBounds).simplify();
      x.view = r.view;
      if (!x.cond.is_false()) out.push_back(x);
      ViewAlt y = alt;
      y.cond = conj(alt.cond, !r.inBounds).simplify();
      y.view = r.outside;
      if (!y.cond.is_false()) out.push_back(y);
    }
  }
  bindWhen(a.out, in.ok, out, &a);
}

void SymbolicRun::runShardByStream(const ShardByStream& a) {
  Need in = need(a.in, a, "input", tru());
  if (in.alts.empty()) return;
  // The chunk count is the extent of the Stream axis of the output's buffer domain, else the
  // input's (view_rules.cpp, shardByStreamView).
  auto streamAxis = [](const std::vector<IterDomain*>& d) {
    return std::find_if(d.begin(), d.end(), [](const IterDomain* id) { return id->isStream(); });
  };
  std::vector<IterDomain*> dom = sem::bufferDomain(*a.out);
  auto stream = streamAxis(dom);
  if (stream == dom.end()) {
    dom = sem::bufferDomain(*a.in);
    stream = streamAxis(dom);
  }
  if (stream == dom.end()) {
    issue(FindingKind::kShapeMismatch, &a, tru(), "neither " + a.in->nameStr() + " nor its shard has a Stream axis");
    unsupported(&a, "a ShardByStream without a Stream axis");
    return;
  }
  size_t streamPos = static_cast<size_t>(stream - dom.begin());
  int dim = sem::bufferDimsOf(dom)[streamPos];
  int outRank = 0;
  for (IterDomain* id : a.out->loop()) outRank += id->isReduction() ? 0 : 1;
  z3::expr chunks = evalInt(dom[streamPos]->extent(), &a);
  z3::expr index = evalInt(a.streamIndex, &a);
  std::vector<ViewAlt> out;
  for (const auto& alt : in.alts) {
    if (dim >= alt.view.rank()) {
      issue(FindingKind::kShapeMismatch, &a, alt.cond,
            "the Stream axis of " + a.in->nameStr() + " is beyond the dimensions of its view");
      unsupported(&a, "a ShardByStream along a dimension its input's view does not have");
      continue;
    }
    int d = dim;
    auto r = sem::shardByStreamRule(alt.view, d, chunks, index, outRank == alt.view.rank() + 1);
    issue(FindingKind::kViewOutOfBounds, &a, conj(alt.cond, !r.inBounds),
          "takes chunk " + a.streamIndex.str() + " of " + dom[streamPos]->extent().str() + " of " +
              a.in->nameStr() + " along dimension " + std::to_string(d) + ", outside its extent");
    ViewAlt x = alt;
    x.cond = conj(alt.cond, r.inBounds).simplify();
    x.view = r.view;
    if (!x.cond.is_false()) out.push_back(x);
    ViewAlt y = alt;
    y.cond = conj(alt.cond, !r.inBounds).simplify();
    y.view = r.outside;
    if (!y.cond.is_false()) out.push_back(y);
  }
  bindWhen(a.out, in.ok, out, &a);
}

void SymbolicRun::runHostOp(const HostOp& h) {
  const Expr* e = h.op;
  if (!e) throw Error(h.loc.str() + ": host op without an expression");
  std::vector<Need> ins;
  z3::expr ok = tru();
  for (size_t i = 0; i < e->inputs().size(); ++i) {
    ins.push_back(need(e->input(i), h, "operand", ok));
    ok = conj(ok, ins.back().ok).simplify();
  }
  if (e->outputs().empty() || ok.is_false()) return;
  const TensorView* out = e->output(0);
  std::string name = opTypeName(e->type());
  if (e->type() == OpType::kUnary) name = unaryOpName(e->unaryOp);
  if (e->type() == OpType::kBinary) name = std::string("binary ") + binaryOpSymbol(e->binaryOp);
  if (e->type() == OpType::kReduction) name = std::string("reduction ") + reductionOpName(e->reductionOp);

  // Views, as nvFuser's host evaluator makes them when the output is not allocated or bound.
  z3::expr outBound = boundCond(out);
  bool viewOp = !ins.empty() &&
                (e->type() == OpType::kSet || e->type() == OpType::kPermute ||
                 (e->type() == OpType::kBroadcast && !e->broadcastFlags.empty()) ||
                 (e->type() == OpType::kSqueeze && !e->squeezeFlags.empty()) || e->type() == OpType::kReshape);
  z3::expr viewCond = viewOp ? conj(ok, !outBound).simplify() : fls();
  if (!viewCond.is_false()) {
    std::vector<ViewAlt> views;
    for (const auto& alt : ins[0].alts) {
      ViewAlt v = alt;
      switch (e->type()) {
        case OpType::kSet:
          break;
        case OpType::kPermute:
          if (e->permutation.size() == static_cast<size_t>(alt.view.rank())) {
            v.view = alt.view.permute(e->permutation);
          } else {
            issue(FindingKind::kShapeMismatch, &h, alt.cond,
                  "Set.Permute's permutation has " + std::to_string(e->permutation.size()) + " axes but " +
                      e->input(0)->nameStr() + " has " + std::to_string(alt.view.rank()));
          }
          break;
        case OpType::kBroadcast: {
          int d = 0;
          for (bool flag : e->broadcastFlags) {
            if (flag) v.view = v.view.unsqueeze(std::min(d, v.view.rank()));
            ++d;
          }
          break;
        }
        case OpType::kSqueeze:
          for (size_t d = e->squeezeFlags.size(); d-- > 0;) {
            if (!e->squeezeFlags[d] || static_cast<int>(d) >= v.view.rank()) continue;
            z3::expr size = v.view.size(static_cast<int>(d)).simplify();
            int64_t sv = 0;
            if (size.is_numeral_i64(sv) && sv == 1) {
              v.view = v.view.select(static_cast<int>(d), num(0));
            } else if (!(size.is_numeral_i64(sv))) {
              unsupported(&h, "a squeeze of a dimension whose size is symbolic");
            }
          }
          break;
        default:
          // A reshape reinterprets the memory: not a box of its base.
          unsupported(&h, "a reshape (view) of a tensor: the parametric checker models views as boxes of their buffer");
          break;
      }
      views.push_back(v);
    }
    bindWhen(out, viewCond, views, &h);
  }
  z3::expr computeCond = viewOp ? conj(ok, outBound).simplify() : ok;
  if (computeCond.is_false()) return;
  std::vector<std::vector<z3::expr>> inSizes;
  for (const auto& n : ins) inSizes.push_back(n.alts.empty() ? std::vector<z3::expr>{} : n.alts.front().view.sizes());
  bool copy = e->type() == OpType::kSet || e->type() == OpType::kPermute;
  std::vector<z3::expr> shape = sem::opOutputShapeRule<z3::expr>(
      *e, inSizes, [&]() { return allocationShape(*out, &h); });
  std::vector<ViewAlt> w = outputViews(out, shape, h, computeCond);
  int id = templateId(&h, 0);
  Template* t = emit(id, copy ? TemplateKind::kWork : TemplateKind::kWork, &h, name, conj(pc_, computeCond));
  for (size_t i = 0; i < ins.size(); ++i) addAccesses(t, ins[i].alts, false, e->input(i), tru());
  addAccesses(t, w, true, out, tru());
}

void SymbolicRun::runPostOnStream(const PostOnStream& k) {
  std::vector<Need> ins;
  z3::expr ok = tru();
  for (const TensorView* tv : k.inputs) {
    ins.push_back(need(tv, k, "kernel input", ok));
    ok = conj(ok, ins.back().ok).simplify();
  }
  if (ok.is_false()) return;
  std::vector<std::vector<ViewAlt>> outs;
  for (const TensorView* tv : k.outputs) {
    // A bound output is written where it is bound (as the interpreter does, even when freed).
    std::vector<ViewAlt> w;
    z3::expr bound = boundCond(tv);
    for (auto a : alts(tv)) {
      a.cond = conj(ok, a.cond).simplify();
      w.push_back(a);
    }
    z3::expr freshWhen = conj(ok, !bound).simplify();
    if (!freshWhen.is_false()) {
      auto f = outputViews(tv, allocationShape(*tv, &k), k, freshWhen);
      w.insert(w.end(), f.begin(), f.end());
    }
    outs.push_back(w);
  }
  int id = templateId(&k, 0);
  Template* t = emit(id, TemplateKind::kWork, &k, "kernel HostUnit" + std::to_string(k.hostUnit), conj(pc_, ok));
  for (size_t i = 0; i < ins.size(); ++i) addAccesses(t, ins[i].alts, false, k.inputs[i], tru());
  for (size_t i = 0; i < outs.size(); ++i) addAccesses(t, outs[i], true, k.outputs[i], tru());
}

void SymbolicRun::runCommunication(const Communication& c) {
  z3::expr inTeam = fls();
  for (int64_t r : c.team) inTeam = disj(inTeam, m_.rank == num(r));
  inTeam = inTeam.simplify();
  if (inTeam.is_false()) return;
  z3::expr root = num(-1);
  if (c.root) {
    root = evalInt(*c.root, &c);
    z3::expr member = fls();
    for (int64_t r : c.team) member = disj(member, root == num(r));
    issue(FindingKind::kBadRoot, &c, conj(inTeam, !member),
          "has root " + c.root->str() + ", which is not a member of its team");
  } else if (isRooted(c.type)) {
    throw Error(c.loc.str() + ": a " + communicationTypeName(c.type) + " needs a root");
  }
  z3::expr isRoot = (root == m_.rank).simplify();
  z3::expr reads = tru(), writes = tru();
  switch (c.type) {
    case CommunicationType::kAllgather:
    case CommunicationType::kAllreduce:
    case CommunicationType::kReduceScatter:
    case CommunicationType::kAllToAll:
      break;
    case CommunicationType::kBroadcast:
    case CommunicationType::kScatter:
      reads = isRoot;
      break;
    case CommunicationType::kReduce:
    case CommunicationType::kGather:
      writes = isRoot;
      break;
    case CommunicationType::kSendRecv:
      reads = isRoot;
      writes = !isRoot;
      break;
  }
  // A root's output may be absent (a Broadcast whose root keeps its input).
  if (c.type == CommunicationType::kBroadcast && c.output)
    writes = conj(writes, !conj(isRoot, conj(!boundCond(c.output), !deallocCond(c.output)))).simplify();
  z3::expr when = inTeam;
  Need in{{}, tru()}, out{{}, tru()};
  if (!reads.is_false()) in = need(c.input, c, "communication input", conj(when, reads));
  if (!writes.is_false()) out = need(c.output, c, "communication output", conj(when, writes));
  z3::expr ok = conj(when, conj(disj(!reads, in.ok), disj(!writes, out.ok))).simplify();
  auto info = std::make_shared<CommInfo>();
  info->communicator = teamKey(c.backend, c.team);
  info->collective = &c;
  if (c.root) info->root = root;
  if (!reads.is_false()) info->inputCount = z3::ite(reads, numelOf(in.alts), num(0)).simplify();
  if (!writes.is_false()) info->outputCount = z3::ite(writes, numelOf(out.alts), num(0)).simplify();
  z3::expr sized = sem::communicationSizeRule<z3::expr>(c.type, static_cast<int64_t>(c.team.size()), isRoot, reads,
                                                         writes, info->inputCount, info->outputCount);
  issue(FindingKind::kCommunicationSize, &c, conj(ok, !sized),
        std::string("the buffers of this ") + communicationTypeName(c.type) + " break its size rule over " +
            std::to_string(c.team.size()) + " ranks");
  for (const auto& a : in.alts)
    issue(FindingKind::kNonContiguousComm, &c, conj(conj(ok, reads), conj(a.cond, !a.view.contiguous())),
          "input " + c.input->nameStr() + " is a non-contiguous view");
  for (const auto& a : out.alts)
    issue(FindingKind::kNonContiguousComm, &c, conj(conj(ok, writes), conj(a.cond, !a.view.contiguous())),
          "output " + c.output->nameStr() + " is a non-contiguous view");
  int id = templateId(&c, 0);
  SymStream post = st_.cur;
  SymStream commStream{num(kCommStream), num(0)};
  if (Template* t = emit(id, TemplateKind::kComm, &c, communicationTypeName(c.type), conj(pc_, ok))) {
    t->post = post;
    t->stream = commStream;
    t->comm = info;
    t->waitId = c.id;
    addAccesses(t, in.alts, false, c.input, reads);
    addAccesses(t, out.alts, true, c.output, writes);
  }
  remember(c.id, id, ok);
}

void SymbolicRun::runP2P(const P2PCommunication& c) {
  Need r = need(c.buffer, c, c.type == P2PType::kSend ? "send buffer" : "receive buffer", tru());
  if (r.ok.is_false()) return;
  for (const auto& a : r.alts)
    issue(FindingKind::kNonContiguousComm, &c, conj(a.cond, !a.view.contiguous()),
          "buffer " + c.buffer->nameStr() + " is a non-contiguous view");
  CommInfo::P2POp op;
  op.type = c.type;
  op.peer = evalInt(c.peer, &c);
  op.count = numelOf(r.alts);
  op.dtype = c.buffer->dtype();
  op.stmt = &c;
  if (coalescing_) {
    pendingOps_.push_back(op);
    pendingAccesses_.emplace_back(r.alts, c.type == P2PType::kRecv, c.buffer);
    pendingIds_.push_back(c.id);
    pendingOk_ = conj(pendingOk_, r.ok).simplify();
    return;
  }
  auto info = std::make_shared<CommInfo>();
  info->p2p = true;
  info->communicator = "NCCL world";
  info->ops.push_back(op);
  int id = templateId(&c, 0);
  if (Template* t = emit(id, TemplateKind::kComm, &c, c.type == P2PType::kSend ? "send" : "recv", conj(pc_, r.ok))) {
    t->post = st_.cur;
    t->stream = {num(kCommStream), num(1)};
    t->comm = info;
    t->waitId = c.id;
    addAccesses(t, r.alts, c.type == P2PType::kRecv, c.buffer, tru());
  }
  remember(c.id, id, r.ok);
}

void SymbolicRun::runEndCoalescing(const EndCoalescing& c) {
  coalescing_ = false;
  if (pendingOps_.empty()) {
    remember(c.id, -1, tru());
    return;
  }
  auto info = std::make_shared<CommInfo>();
  info->p2p = true;
  info->communicator = "NCCL world";
  info->ops = pendingOps_;
  int id = templateId(&c, 0);
  if (Template* t = emit(id, TemplateKind::kComm, &c, "P2P group", conj(pc_, pendingOk_))) {
    t->post = st_.cur;
    t->stream = {num(kCommStream), num(1)};
    t->comm = info;
    t->waitId = c.id;
    for (const auto& [as, write, tv] : pendingAccesses_) addAccesses(t, as, write, tv, tru());
  }
  remember(c.id, id, pendingOk_);
  for (int pid : pendingIds_) remember(pid, id, pendingOk_);
  pendingOps_.clear();
  pendingAccesses_.clear();
  pendingIds_.clear();
}

void SymbolicRun::runWait(const Wait& w) {
  std::vector<PostAlt> as;
  if (auto it = st_.posted.find(w.id); it != st_.posted.end()) as = it->second;
  z3::expr posted = fls(), real = fls();
  for (const auto& a : as) {
    posted = disj(posted, a.cond);
    if (a.tmpl >= 0) real = disj(real, a.cond);
  }
  issue(FindingKind::kWaitWithoutPost, &w, !posted,
        "waits for communication " + std::to_string(w.id) + ", which this rank did not post (or already waited for)");
  int id = templateId(&w, 0);
  if (Template* t = emit(id, TemplateKind::kWait, &w, "Wait " + std::to_string(w.id), conj(pc_, real))) {
    for (const auto& a : as)
      if (a.tmpl >= 0) t->waits.push_back({a.cond, a.tmpl, a.idx});
  }
  st_.posted.erase(w.id);
}

}  // namespace

std::unique_ptr<ProgramModel> buildModel(const HostProgram& p, z3::context& c, const ModelOptions& o) {
  auto m = std::make_unique<ProgramModel>(c);
  SymbolicRun run(p, *m, o);
  run.run();
  return m;
}

}  // namespace braid::verify::parametric
