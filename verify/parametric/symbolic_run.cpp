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

#include "ir/semantics/mesh_rule.h"
#include "verify/parametric/symbolic_run_internal.h"

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
namespace detail {


// Constructs of the host program's meaning that the encoding does not model: the run stops
// before it starts, every property is "unsupported" (exit 4), and `--mode bounded` checks them.
bool SymbolicRun::findUnmodelled() {
  std::set<const TensorView*> allocated;
  forEachStmt(p_.body(), [&](const Stmt& s, int) {
    if (s.is<Allocate>()) allocated.insert(s.as<Allocate>()->tv);
  });
  forEachStmt(p_.body(), [&](const Stmt& s, int) {
    switch (s.kind()) {
      case StmtKind::kLaunchKernel:
      case StmtKind::kShareMemHandles:
      case StmtKind::kCollectivePermute:
      case StmtKind::kSymmetricContiguousView:
      case StmtKind::kSelect:
      case StmtKind::kSlice:
      case StmtKind::kScalarAssign:
        // nvFuser's newer statements (docs/INTEROP.md).
        unsupported(&s, std::string(stmtKindName(s.kind())) + " (one of nvFuser's newer statements)");
        return;
      default:
        break;
    }
    // The mesh rule (ir/semantics/mesh_rule.h): the encoding has one symbolic rank that runs
    // every statement (a communication's team is modelled).
    if (!s.is<Communication>() && !s.is<P2PCommunication>())
      for (int64_t r = 0; r < m_.numRanks; ++r)
        if (!sem::runsOnRank(s, r)) {
          unsupported(&s, std::string(stmtKindName(s.kind())) + " that rank " + std::to_string(r) +
                              " skips (its tensors' meshes leave the rank out)");
          return;
        }
    // The 2024 executor allocated communication outputs the program does not allocate.
    if (p_.printedBeforeAllocate && s.is<Communication>() && s.as<Communication>()->output &&
        !allocated.count(s.as<Communication>()->output))
      unsupported(&s, "a communication output the 2024 executor allocates (the program has no ALLOCATE for it)");
  });
  return !m_.unsupported.empty();
}

void SymbolicRun::run() {
  m_.program = &p_;
  m_.numRanks = o_.ranks > 0 ? o_.ranks : sem::ranksFromProgram(p_);
  if (findUnmodelled()) return;
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
    default:
      break;  // findUnmodelled stopped the run before any other statement kind

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
  bool same = scratchUnsat();
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
}  // namespace detail


std::unique_ptr<ProgramModel> buildModel(const HostProgram& p, z3::context& c, const ModelOptions& o) {
  auto m = std::make_unique<ProgramModel>(c);
  detail::SymbolicRun run(p, *m, o);
  run.run();
  return m;
}

}  // namespace braid::verify::parametric
