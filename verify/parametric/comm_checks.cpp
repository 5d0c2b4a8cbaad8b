// Cross-rank properties: collective matching and deadlock.
//
// Collectives. A communicator's k-th collective on one member matches the k-th on every other
// (NCCL's rule), and DESIGN.md wants matched operations to come from one statement. With two
// symbolic ranks a != b of a statement's team, the query "the statement runs at iteration I on
// a but not on b" being unsatisfiable for every collective statement means every member issues
// the same sequence of statement instances on every communicator, so the k-th collectives are
// the same instance everywhere; roots and sizes are then compared instance by instance.
//
// Deadlock. When every communication is such a matched collective, no wait-for cycle exists:
// every ordering fact on a rank goes forward in program order, and a rendezvous joins
// instances at the same program position, so a cycle would have to go strictly forward and
// come back. Otherwise (point-to-point operations, or unmatched collectives) the communications
// are enumerated per rank, which needs their loop bounds and conditions to depend on the rank
// and loop indices only, and the rendezvous system is solved: on each rank, every communicator's
// operations in issue order and every communication waited for before a later one is posted (a
// superset of the orderings that exist, so a solution proves freedom from deadlock), plus every
// matched group's "all start before any completes". Unsatisfiable means a cycle, which the unsat
// core names.
#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "verify/parametric/prover.h"

namespace braid::verify::parametric {

namespace {

z3::expr atRank(const ProgramModel& m, const z3::expr& e, const z3::expr& r) {
  z3::expr_vector from(m.ctx), to(m.ctx);
  from.push_back(m.rank);
  to.push_back(r);
  z3::expr x = e;
  return x.substitute(from, to);
}

bool symmetricSizes(CommunicationType t) {
  return t == CommunicationType::kAllgather || t == CommunicationType::kAllreduce ||
         t == CommunicationType::kReduceScatter || t == CommunicationType::kAllToAll;
}

struct CommInstance {
  int64_t rank = 0;
  int tmpl = 0;
  std::vector<int64_t> idx;
  int node = 0;  // index into the deadlock system
};

}  // namespace

void Prover::checkCollectives(PropertyState& matching, PropertyState& deadlock) {
  const auto& I = enc_.I();
  z3::expr ra = m_.ctx.int_const("rankA");
  z3::expr rb = m_.ctx.int_const("rankB");
  bool hasP2P = false;
  bool allUniform = true;
  int64_t D = m_.numRanks;
  for (const Template& t : m_.templates) {
    if (!t.recorded || t.kind != TemplateKind::kComm || !t.comm) continue;
    if (t.comm->p2p) {
      hasP2P = true;
      continue;
    }
    const Communication& c = *t.comm->collective;
    auto idx = enc_.prefix(I, t.loops.size());
    z3::expr v = enc_.validAt(t.id, idx);
    z3::expr va = atRank(m_, v, ra), vb = atRank(m_, v, rb);
    z3::expr inA = m_.ctx.bool_val(false), inB = m_.ctx.bool_val(false);
    for (int64_t r : c.team) {
      if (r >= D) continue;
      inA = inA || ra == m_.ctx.int_val(r);
      inB = inB || rb == m_.ctx.int_val(r);
    }
    z3::expr pair = inA && inB && ra != rb;
    auto site = [&](const char* role, const z3::expr& r) {
      return FocusSite::of(role, t.id, idx, -1, r);
    };
    // Every member runs this statement at the same iterations.
    {
      Candidate cand;
      cand.kind = FindingKind::kCollectiveMismatch;
      cand.property = matching.name;
      cand.summary = "'" + m_.describe(t) + "' is issued by some members of " + t.comm->communicator +
                     " but not by others at the same point of the program";
      cand.sites = {site("issued", ra), site("not issued", rb)};
      cand.missingEdge = "the statement's condition depends on the rank: the members' k-th collectives on " +
                         t.comm->communicator + " differ";
      int64_t before = matching.violated + matching.unknown + matching.unconfirmed;
      plainQuery(matching, pair && va && !vb, cand);
      if (matching.violated + matching.unknown + matching.unconfirmed != before) allUniform = false;
    }
    // Roots and sizes agree on every pair of members.
    const CommInfo& ci = *t.comm;
    std::vector<std::pair<z3::expr, std::string>> diffs;
    if (ci.root) diffs.emplace_back(atRank(m_, *ci.root, ra) != atRank(m_, *ci.root, rb), "the root differs");
    z3::expr inA_ = atRank(m_, ci.inputCount, ra), inB_ = atRank(m_, ci.inputCount, rb);
    z3::expr outA = atRank(m_, ci.outputCount, ra), outB = atRank(m_, ci.outputCount, rb);
    if (symmetricSizes(c.type)) {
      diffs.emplace_back(inA_ != inB_ || outA != outB, "the sizes differ");
    } else if (c.type != CommunicationType::kScatter && c.type != CommunicationType::kGather) {
      z3::expr sa = z3::ite(inA_ != 0, inA_, outA), sb = z3::ite(inB_ != 0, inB_, outB);
      diffs.emplace_back(sa != sb, "the sizes differ");
    }
    for (const auto& [diff, what] : diffs) {
      Candidate cand;
      cand.kind = FindingKind::kCollectiveMismatch;
      cand.property = matching.name;
      cand.summary = "'" + m_.describe(t) + "': " + what + " between members of " + t.comm->communicator;
      cand.sites = {site("member", ra), site("member", rb)};
      cand.missingEdge = "NCCL needs every member to issue it with the same root, sizes, dtype and reduction";
      plainQuery(matching, pair && va && vb && diff, cand);
    }
  }

  if (!hasP2P && allUniform) {
    deadlock.notes.push_back(
        "every communication is a collective matched with the same statement instance on all members; every "
        "ordering goes forward in program order, so no wait-for cycle exists");
    return;
  }

  // ---- enumeration: point-to-point operations, or collectives that did not match up ----
  std::vector<CommInstance> insts;
  std::vector<CommInstance> waitInsts;  // Wait markers, to find what orders one communication before another
  std::string why;
  const int64_t kLimit = 100000;
  for (int64_t r = 0; r < D && why.empty(); ++r) {
    z3::expr rv = m_.ctx.int_val(r);
    for (const Template& t : m_.templates) {
      if (!t.recorded || (t.kind != TemplateKind::kComm && t.kind != TemplateKind::kWait) || !why.empty()) continue;
      std::function<void(size_t, std::vector<int64_t>)> rec = [&](size_t l, std::vector<int64_t> idx) {
        if (!why.empty()) return;
        std::vector<z3::expr> terms;
        for (int64_t v : idx) terms.push_back(m_.ctx.int_val(v));
        if (l == t.loops.size()) {
          z3::expr g = atRank(m_, enc_.at(t.id, terms, t.guard), rv).simplify();
          if (g.is_false()) return;
          if (!g.is_true()) {
            why = "whether '" + m_.describe(t) + "' runs depends on symbolic sizes";
            return;
          }
          (t.kind == TemplateKind::kWait ? waitInsts : insts).push_back({r, t.id, idx, 0});
          if (static_cast<int64_t>(insts.size() + waitInsts.size()) > kLimit) why = "more than 100000 communications";
          return;
        }
        const LoopVar* lv = t.loops[l];
        terms.push_back(m_.ctx.int_val(0));
        auto eval = [&](const z3::expr& e) { return atRank(m_, enc_.at(t.id, terms, e), rv).simplify(); };
        int64_t b = 0, e = 0;
        if (!eval(lv->begin).is_numeral_i64(b) || !eval(lv->end).is_numeral_i64(e)) {
          why = "the trip count of loop " + lv->name() + " around '" + m_.describe(t) + "' is symbolic";
          return;
        }
        for (int64_t k = b; k < e && why.empty(); ++k) {
          auto next = idx;
          next.push_back(k);
          rec(l + 1, next);
        }
      };
      rec(0, {});
    }
  }
  if (!why.empty()) {
    ++deadlock.unknown;
    deadlock.notes.push_back("not proven: the communications could not be enumerated per rank (" + why + ")");
    return;
  }
  auto terms = [&](const CommInstance& x) {
    std::vector<z3::expr> v;
    for (int64_t i : x.idx) v.push_back(m_.ctx.int_val(i));
    return v;
  };
  std::map<int64_t, std::vector<int>> perRank;
  for (size_t i = 0; i < insts.size(); ++i) perRank[insts[i].rank].push_back(static_cast<int>(i));
  for (auto& [r, v] : perRank) {
    std::stable_sort(v.begin(), v.end(), [&](int a, int b) {
      return enc_.before(insts[static_cast<size_t>(a)].tmpl, terms(insts[static_cast<size_t>(a)]),
                         insts[static_cast<size_t>(b)].tmpl, terms(insts[static_cast<size_t>(b)]))
          .simplify()
          .is_true();
    });
  }
  auto siteOf = [&](const CommInstance& x, const char* role) {
    return FocusSite::of(role, x.tmpl, terms(x), -1, m_.ctx.int_val(x.rank));
  };
  // Matching: collectives by communicator sequence, sends and receives by (source, destination).
  std::vector<std::vector<int>> groups;
  std::map<std::string, std::map<int64_t, std::vector<int>>> byComm;
  struct Side {
    int inst;
    size_t op;
  };
  std::map<std::pair<int64_t, int64_t>, std::vector<Side>> sends, recvs;
  for (auto& [r, v] : perRank) {
    for (int i : v) {
      const CommInstance& x = insts[static_cast<size_t>(i)];
      const Template& t = m_.t(x.tmpl);
      if (!t.comm->p2p) {
        byComm[t.comm->communicator][r].push_back(i);
        continue;
      }
      for (size_t o = 0; o < t.comm->ops.size(); ++o) {
        z3::expr peer = atRank(m_, enc_.at(t.id, terms(x), t.comm->ops[o].peer), m_.ctx.int_val(r)).simplify();
        int64_t pv = 0;
        if (!peer.is_numeral_i64(pv)) {
          ++deadlock.unknown;
          deadlock.notes.push_back("not proven: the peer of '" + m_.describe(t) + "' depends on symbolic sizes");
          return;
        }
        if (t.comm->ops[o].type == P2PType::kSend) {
          sends[{r, pv}].push_back({i, o});
        } else {
          recvs[{pv, r}].push_back({i, o});
        }
      }
    }
  }
  bool matched = true;
  for (auto& [comm, ranks] : byComm) {
    size_t most = 0;
    for (auto& [r, v] : ranks) most = std::max(most, v.size());
    for (size_t k = 0; k < most; ++k) {
      std::vector<int> g;
      for (auto& [r, v] : ranks)
        if (k < v.size()) g.push_back(v[k]);
      groups.push_back(g);
    }
  }
  std::set<std::pair<int64_t, int64_t>> keys;
  for (auto& [k, v] : sends) keys.insert(k);
  for (auto& [k, v] : recvs) keys.insert(k);
  for (const auto& key : keys) {
    auto& s = sends[key];
    auto& r = recvs[key];
    for (size_t k = 0; k < std::max(s.size(), r.size()); ++k) {
      if (k >= s.size() || k >= r.size()) {
        const Side& lone = k < s.size() ? s[k] : r[k];
        bool isSend = k < s.size();
        Candidate cand;
        cand.kind = FindingKind::kP2PUnpaired;
        cand.property = matching.name;
        cand.summary = std::string(isSend ? "a send from rank " : "a receive on rank ") +
                       std::to_string(isSend ? key.first : key.second) + (isSend ? " to rank " : " from rank ") +
                       std::to_string(isSend ? key.second : key.first) + " has no matching " +
                       (isSend ? "receive" : "send");
        cand.sites = {siteOf(insts[static_cast<size_t>(lone.inst)], isSend ? "send" : "receive")};
        cand.missingEdge = "the peer never posts the counterpart";
        plainQuery(matching, m_.ctx.bool_val(true), cand);
        matched = false;
        continue;
      }
      const CommInstance& xs = insts[static_cast<size_t>(s[k].inst)];
      const CommInstance& xr = insts[static_cast<size_t>(r[k].inst)];
      const auto& so = m_.t(xs.tmpl).comm->ops[s[k].op];
      const auto& ro = m_.t(xr.tmpl).comm->ops[r[k].op];
      z3::expr cs = atRank(m_, enc_.at(xs.tmpl, terms(xs), so.count), m_.ctx.int_val(xs.rank));
      z3::expr cr = atRank(m_, enc_.at(xr.tmpl, terms(xr), ro.count), m_.ctx.int_val(xr.rank));
      if (so.dtype != ro.dtype) {
        Candidate cand;
        cand.kind = FindingKind::kCollectiveMismatch;
        cand.property = matching.name;
        cand.summary = "rank " + std::to_string(key.first) + " sends a different dtype than rank " +
                       std::to_string(key.second) + " receives";
        cand.sites = {siteOf(xs, "send"), siteOf(xr, "receive")};
        plainQuery(matching, m_.ctx.bool_val(true), cand);
      } else {
        Candidate cand;
        cand.kind = FindingKind::kCollectiveMismatch;
        cand.property = matching.name;
        cand.summary = "rank " + std::to_string(key.first) + " sends another number of elements than rank " +
                       std::to_string(key.second) + " receives";
        cand.sites = {siteOf(xs, "send"), siteOf(xr, "receive")};
        plainQuery(matching, cs != cr, cand);
      }
      if (xs.tmpl == xr.tmpl && xs.rank == xr.rank && xs.idx == xr.idx) continue;
      groups.push_back({s[k].inst, r[k].inst});
    }
  }
  (void)matched;

  // The rendezvous system, with tracked facts so that an unsat core names the cycle.
  ++deadlock.queries;
  ++queries_;
  z3::solver dl(m_.ctx);
  if (o_.resourceLimit > 0) dl.set("rlimit", o_.resourceLimit);
  std::vector<z3::expr> s, e;
  for (size_t i = 0; i < insts.size(); ++i) {
    s.push_back(m_.ctx.int_const(("ds" + std::to_string(i)).c_str()));
    e.push_back(m_.ctx.int_const(("de" + std::to_string(i)).c_str()));
    dl.add(s.back() < e.back());
  }
  std::map<std::string, std::string> meaning;
  int facts = 0;
  auto track = [&](const z3::expr& f, const std::string& what) {
    std::string name = "f" + std::to_string(facts++);
    dl.add(f, name.c_str());
    meaning[name] = what;
  };
  auto instStr = [&](int i) {
    const CommInstance& x = insts[static_cast<size_t>(i)];
    std::string s = m_.describe(m_.t(x.tmpl)) + " (rank " + std::to_string(x.rank);
    const Template& t = m_.t(x.tmpl);
    for (size_t l = 0; l < x.idx.size(); ++l) s += ", " + t.loops[l]->name() + "=" + std::to_string(x.idx[l]);
    return s + ")";
  };
  // A rank orders one communication before a later one only through its communicator (one at a
  // time, in issue order) or through a Wait on the first issued before the second is posted (a
  // communication orders nothing after it by itself): these edges are a superset of the rank's
  // orderings between communications, so a schedule that satisfies them exists in every run.
  const size_t kUndecided = SIZE_MAX;  // a Wait whose target depends on symbolic sizes: assume the edge
  auto firstWait = [&](const CommInstance& c) -> std::optional<size_t> {
    std::optional<size_t> best;
    for (size_t w = 0; w < waitInsts.size(); ++w) {
      const CommInstance& x = waitInsts[w];
      if (x.rank != c.rank) continue;
      for (const WaitSource& src : m_.t(x.tmpl).waits) {
        if (src.tmpl != c.tmpl) continue;
        z3::expr rv = m_.ctx.int_val(x.rank);
        z3::expr on = atRank(m_, enc_.at(x.tmpl, terms(x), src.cond), rv).simplify();
        z3::expr same = m_.ctx.bool_val(true);
        for (size_t l = 0; l < src.idx.size(); ++l)
          same = same && atRank(m_, enc_.at(x.tmpl, terms(x), src.idx[l]), rv) == m_.ctx.int_val(c.idx[l]);
        z3::expr hit = (on && same).simplify();
        if (!hit.is_true() && !hit.is_false()) return kUndecided;
        if (hit.is_false()) continue;
        if (!best || *best == kUndecided || enc_.before(x.tmpl, terms(x), waitInsts[*best].tmpl, terms(waitInsts[*best])).simplify().is_true())
          best = w;
      }
    }
    return best;
  };
  for (auto& [r, v] : perRank) {
    std::map<std::string, int> lastOn;
    for (size_t k = 0; k < v.size(); ++k) {
      int b = v[k];
      const CommInstance& xb = insts[static_cast<size_t>(b)];
      const std::string& comm = m_.t(xb.tmpl).comm->communicator;
      if (auto it = lastOn.find(comm); it != lastOn.end())
        track(e[static_cast<size_t>(it->second)] <= s[static_cast<size_t>(b)],
              instStr(it->second) + " runs before " + instStr(b) + " on communicator " + comm + " (rank " +
                  std::to_string(r) + ")");
      lastOn[comm] = b;
      for (size_t j = 0; j < k; ++j) {
        int a = v[j];
        const CommInstance& xa = insts[static_cast<size_t>(a)];
        if (m_.t(xa.tmpl).comm->communicator == comm) continue;
        auto w = firstWait(xa);
        if (!w) continue;
        if (*w != kUndecided) {
          const CommInstance& xw = waitInsts[*w];
          if (!enc_.before(xw.tmpl, terms(xw), xb.tmpl, terms(xb)).simplify().is_true()) continue;
        }
        track(e[static_cast<size_t>(a)] <= s[static_cast<size_t>(b)],
              instStr(a) + " is waited for before " + instStr(b) + " is posted on rank " + std::to_string(r));
      }
    }
  }
  for (const auto& g : groups) {
    if (g.size() < 2) continue;
    z3::expr f = m_.ctx.bool_val(true);
    std::string members;
    for (int a : g) {
      members += (members.empty() ? "" : ", ") + instStr(a);
      for (int b : g)
        if (a != b) f = f && s[static_cast<size_t>(b)] < e[static_cast<size_t>(a)];
    }
    track(f, "rendezvous: " + members + " all start before any completes");
  }
  std::string unknownReason;
  z3::check_result r = checkWithin(dog_, dl, QueryBudget::ofCpuMs(o_.queryCpuMs), unknownReason);
  if (r == z3::sat) {
    deadlock.notes.push_back("enumerated " + std::to_string(insts.size()) +
                             " communications on all ranks: a schedule exists with every communicator's order and every "
                             "Wait that precedes a later post");
    return;
  }
  if (r == z3::unknown) {
    ++deadlock.unknown;
    deadlock.notes.push_back("Z3 returned unknown on the rendezvous system (" + unknownReason + ")");
    return;
  }
  Candidate cand;
  cand.kind = FindingKind::kDeadlock;
  cand.property = deadlock.name;
  cand.summary = "deadlock: the communications below wait for each other in a cycle";
  z3::expr_vector core = dl.unsat_core();
  std::set<int> seen;
  for (unsigned i = 0; i < core.size(); ++i) {
    std::string name = core[static_cast<int>(i)].to_string();
    cand.cycle.push_back(meaning[name]);
  }
  for (auto& [rk, v] : perRank)
    for (int i : v)
      if (seen.size() < 4 && !seen.count(i)) {
        bool inCore = false;
        for (const auto& line : cand.cycle) inCore |= line.find(instStr(i)) != std::string::npos;
        if (inCore) {
          seen.insert(i);
          cand.sites.push_back(siteOf(insts[static_cast<size_t>(i)], "waits"));
        }
      }
  cand.missingEdge = "issue the communications in the same order on every rank, or group sends and receives with "
                     "StartCoalescing / EndCoalescing";
  candidate(deadlock, plain_, m_.ctx.bool_val(true), cand);
}

}  // namespace braid::verify::parametric
