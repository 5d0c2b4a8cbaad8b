// From a satisfying assignment to a checked counterexample: a small model (bounded sizes are
// tried first, so the witness replays quickly), the concrete bindings, the statements involved
// with their iterations, ranks and streams, and the replay through the exact bounded checker,
// which must report the same kind of bug at the same statements to confirm it.
#include <algorithm>
#include <cstdint>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <sstream>

#include "ir/semantics/event_graph.h"
#include "verify/parametric/prover.h"

namespace braid::verify::parametric {

namespace {

// Witnesses replayed per property; once a property is violated, further distinct candidates
// are only counted.
constexpr int64_t kWitnessesPerProperty = 4;

int64_t valueOf(const z3::model& mdl, const z3::expr& e) {
  int64_t v = 0;
  z3::expr x = mdl.eval(e, true);
  if (!x.is_numeral_i64(v)) return 0;
  return v;
}

// Bounded-checker findings that count as the same bug as a parametric one.
bool compatible(FindingKind parametric, FindingKind bounded) {
  if (parametric == bounded) return true;
  switch (parametric) {
    case FindingKind::kUnboundTensor:
      return bounded == FindingKind::kUseAfterDeallocate;
    case FindingKind::kMissingWait:
      return bounded == FindingKind::kWaitOnWrongStream;
    case FindingKind::kUnwaitedCommunication:
      return bounded == FindingKind::kMissingJoin;
    case FindingKind::kCollectiveMismatch:
      return bounded == FindingKind::kDeadlock || bounded == FindingKind::kP2PUnpaired ||
             bounded == FindingKind::kMismatchedStatements;
    case FindingKind::kP2PUnpaired:
      return bounded == FindingKind::kCollectiveMismatch;
    case FindingKind::kDeadlock:
      return bounded == FindingKind::kCollectiveMismatch || bounded == FindingKind::kMismatchedStatements;
    default:
      return false;
  }
}

bool crossRank(FindingKind k) {
  return k == FindingKind::kCollectiveMismatch || k == FindingKind::kP2PUnpaired || k == FindingKind::kDeadlock ||
         k == FindingKind::kMismatchedStatements;
}

bool sameSite(const Site& a, const Site& b) {
  if (a.loc.known() && b.loc.known()) return a.loc.line == b.loc.line && a.loc.col == b.loc.col;
  return a.statement == b.statement;
}

}  // namespace

std::string Prover::streamName(const z3::model& mdl, const SymStream& s) const {
  int64_t cls = valueOf(mdl, s.cls), key = valueOf(mdl, s.key);
  switch (cls) {
    case kDefaultStream:
      return "default stream";
    case kWorkerStream:
      return "worker stream " + std::to_string(key);
    case kPoolStream:
      return "pool stream " + (key >= 0 && key < static_cast<int64_t>(m_.poolNames.size())
                                   ? m_.poolNames[static_cast<size_t>(key)]
                                   : std::to_string(key));
    case kCommStream:
      return "its communicator's stream";
  }
  return "stream ?";
}

Witness Prover::makeWitness(z3::model& mdl, const Candidate& c) {
  Witness w;
  w.kind = c.kind;
  w.property = c.property;
  w.summary = c.summary;
  w.missingEdge = c.missingEdge;
  w.cycle = c.cycle;
  w.ranks = m_.numRanks;
  for (const auto& [name, x] : m_.extents) w.bindings[name] = std::max<int64_t>(1, valueOf(mdl, x));
  w.bindings[kNumberOfStreams] = std::max<int64_t>(1, valueOf(mdl, m_.streams));
  for (const FocusSite& f : c.sites) {
    Site s;
    s.role = f.role;
    z3::expr rank = f.rankTerm ? *f.rankTerm : m_.rank;
    s.rank = valueOf(mdl, rank);
    z3::expr_vector rfrom(m_.ctx), rto(m_.ctx);
    rfrom.push_back(m_.rank);
    rto.push_back(rank);
    auto atSite = [&](const z3::expr& e) {
      z3::expr x = f.tmpl >= 0 ? enc_.at(f.tmpl, f.idx, e) : e;
      return x.substitute(rfrom, rto);
    };
    const Stmt* stmt = f.tmpl >= 0 ? m_.t(f.tmpl).stmt : f.stmt;
    std::vector<const LoopVar*> loops = f.tmpl >= 0 ? m_.t(f.tmpl).loops : f.loops;
    if (stmt) {
      s.loc = stmt->loc;
      s.statement = sem::stmtSummary(*stmt);
    } else if (f.tmpl >= 0) {
      s.statement = m_.t(f.tmpl).op;
    }
    for (size_t l = 0; l < loops.size() && l < f.idx.size(); ++l)
      s.loops.push_back({loops[l]->name(), valueOf(mdl, atSite(f.idx[l]))});
    if (f.tmpl >= 0) {
      const Template& t = m_.t(f.tmpl);
      if (t.kind != TemplateKind::kExit && t.kind != TemplateKind::kEntry)
        s.stream = streamName(mdl, {atSite(t.stream.cls), atSite(t.stream.key)});
      else
        s.stream = "default stream";
      if (t.kind == TemplateKind::kComm)
        s.stream = "its communicator's stream (posted on " + streamName(mdl, {atSite(t.post.cls), atSite(t.post.key)}) +
                   ")";
      if (f.access >= 0 && f.access < static_cast<int>(t.accesses.size())) {
        const Access& a = t.accesses[static_cast<size_t>(f.access)];
        std::ostringstream os;
        os << (a.tensor ? a.tensor->nameStr() : std::string("?"));
        const BufferSite& site = m_.sites[static_cast<size_t>(a.buf.site)];
        if (site.tensor != a.tensor) os << " (a view of " << site.tensor->nameStr() << ")";
        os << ": " << site.tensor->nameStr() << "[";
        for (size_t d = 0; d < a.view.lo.size(); ++d) {
          int64_t lo = valueOf(mdl, atSite(a.view.lo[d]));
          int64_t len = valueOf(mdl, atSite(a.view.len[d]));
          os << (d ? ", " : "") << lo << ":" << lo + len;
        }
        os << "]";
        s.detail = os.str();
      }
    }
    w.sites.push_back(s);
  }
  if (!c.point.empty() && !w.sites.empty()) {
    std::string e;
    for (size_t d = 0; d < c.point.size(); ++d) e += (d ? ", " : "") + std::to_string(valueOf(mdl, c.point[d]));
    std::string what = "element [" + e + "] of " + (c.pointOf ? c.pointOf->nameStr() : std::string("the buffer"));
    w.sites.front().detail = w.sites.front().detail.empty() ? what : w.sites.front().detail + "; " + what;
  }
  return w;
}

void Prover::replay(Witness& w, const Candidate& c) {
  (void)c;
  w.replayed = true;
  VerifyOptions vo;
  for (const auto& [k, v] : w.bindings)
    if (k != kNumberOfStreams) vo.bindings[k] = v;
  vo.ranks = w.ranks;
  vo.streams = w.bindings.count(kNumberOfStreams) ? w.bindings.at(kNumberOfStreams) : 1;
  vo.parallelismWarnings = false;
  vo.maxFindingsPerKind = 1000;
  std::string key = replayArguments(w);
  if (auto it = replayErrors_.find(key); it != replayErrors_.end()) {
    w.replayNote = it->second;
    return;
  }
  if (auto it = replays_.find(key); it != replays_.end()) {
    w.replay = it->second;
  } else {
    try {
      w.replay = verifyProgram(p_, vo);
      replays_[key] = w.replay;
    } catch (const Error& e) {
      w.replayNote = std::string("the bounded checker could not run these bindings: ") + e.what();
      replayErrors_[key] = w.replayNote;
      return;
    }
  }
  for (const Finding& f : w.replay.findings) {
    if (f.severity != Severity::kError || !compatible(w.kind, f.kind)) continue;
    size_t found = 0, known = 0;
    for (const Site& s : w.sites) {
      if (s.statement.empty()) continue;
      ++known;
      if (std::any_of(f.sites.begin(), f.sites.end(), [&](const Site& b) { return sameSite(s, b); })) ++found;
    }
    bool ok = crossRank(w.kind) ? (known == 0 || found > 0) : found == known;
    if (!ok) continue;
    w.confirmed = true;
    w.replayNote = std::string("confirmed: the bounded checker reports error[") + findingKindName(f.kind) +
                   "]: " + f.summary;
    return;
  }
  std::string kinds;
  for (const Finding& f : w.replay.findings)
    if (f.severity == Severity::kError) kinds += (kinds.empty() ? "" : ", ") + std::string(findingKindName(f.kind));
  w.replayNote = "not confirmed: the bounded checker reports " +
                 (kinds.empty() ? std::string("no error") : "only " + kinds + " (at other statements)") +
                 " for these bindings";
}

bool Prover::candidate(PropertyState& st, z3::solver& s, const z3::expr& q, const Candidate& c, bool final) {
  // One witness per kind and statements (other iterations, ranks and sizes are the same bug).
  std::string key = std::string(findingKindName(c.kind));
  for (const FocusSite& f : c.sites) {
    const Stmt* stmt = f.tmpl >= 0 ? m_.t(f.tmpl).stmt : f.stmt;
    key += "|" + (stmt ? std::to_string(reinterpret_cast<uintptr_t>(stmt)) : f.tmpl >= 0 ? m_.t(f.tmpl).op : "");
  }
  if (auto it = reported_.find(key); it != reported_.end()) {
    if (!it->second && !final) return false;
    (it->second ? st.violated : st.unconfirmed) += 1;
    return true;
  }
  if (st.violated >= kWitnessesPerProperty) {
    ++st.violated;  // the property is violated already; further distinct cases are counted
    st.notes.push_back("further candidate not replayed: " + c.summary);
    reported_[key] = true;
    return true;
  }
  // A small model first: every symbol bounded, so the replay is quick and the witness readable.
  std::optional<z3::model> mdl;
  for (int64_t bound : {1, 2, 4, 16, 64}) {
    s.push();
    s.add(q);
    for (const auto& [name, x] : m_.extents) s.add(x <= m_.ctx.int_val(bound));
    s.add(m_.streams <= m_.ctx.int_val(bound));
    z3::expr lo = m_.ctx.int_val(-4 * bound), hi = m_.ctx.int_val(4 * bound);
    for (const auto& v : enc_.I()) s.add(v >= lo && v <= hi);
    for (const auto& v : enc_.J()) s.add(v >= lo && v <= hi);
    ++queries_;
    if (checkOnce(s) == z3::sat) mdl = s.get_model();
    s.pop();
    if (mdl) break;
  }
  if (!mdl) {
    s.push();
    s.add(q);
    ++queries_;
    if (checkOnce(s) == z3::sat) mdl = s.get_model();
    s.pop();
  }
  if (!mdl) {
    if (!final) return false;
    ++st.unknown;
    st.notes.push_back("no model could be extracted (" + (lastUnknown_.empty() ? std::string("unsatisfiable") : lastUnknown_) +
                       ") for: " + c.summary);
    return true;
  }
  Candidate ordered = c;
  // Name the statement issued first first.
  if (c.kind == FindingKind::kRace && c.sites.size() == 2 && c.sites[0].tmpl >= 0 && c.sites[1].tmpl >= 0) {
    z3::expr later = enc_.before(c.sites[1].tmpl, c.sites[1].idx, c.sites[0].tmpl, c.sites[0].idx);
    if (mdl->eval(later, true).is_true()) std::swap(ordered.sites[0], ordered.sites[1]);
  }
  // A communication's buffer used after its post without a Wait ordering the use: the bounded
  // checker calls it a missing Wait (or a Wait on the wrong stream).
  if (c.kind == FindingKind::kRace && ordered.sites.size() == 2 && ordered.sites[0].tmpl >= 0 &&
      m_.t(ordered.sites[0].tmpl).kind == TemplateKind::kComm)
    ordered.kind = FindingKind::kMissingWait;
  Witness w = makeWitness(*mdl, ordered);
  if (c.kind == FindingKind::kRace && w.sites.size() == 2) {
    bool firstComm = m_.t(ordered.sites[0].tmpl).kind == TemplateKind::kComm;
    bool secondComm = m_.t(ordered.sites[1].tmpl).kind == TemplateKind::kComm;
    const Site& a = w.sites[0];
    const Site& b = w.sites[1];
    std::string wait = secondComm ? "the stream that posts '" + b.statement + "'" : std::string(b.stream);
    if (firstComm) {
      w.missingEdge = "no Wait for '" + a.statement + "' orders it before '" + b.statement + "': Wait for it on " +
                      wait + " before that";
    } else {
      w.missingEdge = "nothing makes " + wait + " wait for " + a.stream + " between '" + a.statement + "' and '" +
                      b.statement + "': Synchronize " + a.stream + " there (or give them disjoint memory)";
    }
  }
  auto t0 = std::chrono::steady_clock::now();
  if (o_.replay) replay(w, c);
  if (!w.confirmed && !final) return false;
  if (dumpQueries())
    std::fprintf(stderr, "replay %.1f ms\n", std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  reported_[key] = w.confirmed;
  if (w.confirmed) {
    ++st.violated;
  } else {
    ++st.unconfirmed;
    st.notes.push_back("candidate not confirmed (" + c.summary + "): " + w.replayNote);
  }
  witnesses_.push_back(std::move(w));
  return true;
}

}  // namespace braid::verify::parametric
