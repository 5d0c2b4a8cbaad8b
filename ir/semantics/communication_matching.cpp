// Matching communications across ranks: the k-th collective of every member of a communicator
// forms one CollectiveGroup (NCCL's rule: same communicator, same order), and the k-th send from s
// to d on a backend pairs with the k-th receive on d from s on that backend. Matched operations
// must agree on type, root, reduction, dtype and counts, and come from one statement (SPMD).
#include <algorithm>
#include <set>

#include "ir/semantics/communication_rules.h"
#include "ir/semantics/interpreter_internal.h"

namespace braid::sem::detail {

namespace {

// The count every member of a collective moves per member: what must agree across the team.
int64_t chunkCount(const Event& e) {
  switch (e.comm->type) {
    case CommunicationType::kAllgather:
    case CommunicationType::kAllreduce:
    case CommunicationType::kAllToAll:
    case CommunicationType::kReduce:
    case CommunicationType::kGather:
      return e.inputCount;
    case CommunicationType::kReduceScatter:
    case CommunicationType::kScatter:
      return e.outputCount;
    case CommunicationType::kBroadcast:
    case CommunicationType::kSendRecv:
      return e.outputCount ? e.outputCount : e.inputCount;
  }
  return 0;
}

std::string lineOf(const Stmt* s) {
  return s && s->loc.known() ? "line " + std::to_string(s->loc.line) : "an unnamed statement";
}

}  // namespace

void Interpreter::matchCommunications() {
  auto issueAt = [&](FindingKind kind, int32_t e, int32_t other, std::string msg) {
    Issue i;
    i.kind = kind;
    const Event& x = g_.events[static_cast<size_t>(e)];
    i.rank = x.rank;
    i.stmt = x.stmt;
    i.stream = x.stream;
    i.loops = x.loops;
    i.event = e;
    if (other >= 0) {
      const Event& y = g_.events[static_cast<size_t>(other)];
      i.otherStmt = y.stmt;
      i.otherRank = y.rank;
      i.otherLoops = y.loops;
      i.otherEvent = other;
    }
    i.message = std::move(msg);
    g_.issues.push_back(std::move(i));
  };
  std::set<int64_t> ran(g_.ranks.begin(), g_.ranks.end());

  for (auto& [key, per_rank] : collectives_) {
    std::vector<int64_t> team = teams_[key];
    std::sort(team.begin(), team.end());
    std::vector<int64_t> members;
    for (int64_t r : team)
      if (ran.count(r)) members.push_back(r);
    size_t most = 0;
    for (int64_t r : members) most = std::max(most, per_rank[r].size());
    for (size_t k = 0; k < most; ++k) {
      std::vector<int32_t> evs;
      int64_t missing = -1;
      for (int64_t r : members) {
        if (k < per_rank[r].size()) {
          evs.push_back(per_rank[r][k]);
        } else if (missing < 0) {
          missing = r;
        }
      }
      if (missing >= 0) {
        for (int32_t e : evs)
          issueAt(FindingKind::kCollectiveMismatch, e, -1,
                  "is collective #" + std::to_string(k + 1) + " of rank " + std::to_string(ev(e).rank) + " on " + key +
                      ", but rank " + std::to_string(missing) + " issues only " +
                      std::to_string(per_rank[missing].size()) + " collective(s) there: rank " +
                      std::to_string(ev(e).rank) + " waits for it forever");
        continue;
      }
      // Same statement, type, root, reduction op, dtype and per-member count on every member.
      const Event& a = ev(evs.front());
      for (int32_t eid : evs) {
        const Event& b = ev(eid);
        const Communication& ca = *a.comm;
        const Communication& cb = *b.comm;
        std::string diff;
        if (ca.type != cb.type) {
          diff = std::string("type ") + communicationTypeName(ca.type) + " vs " + communicationTypeName(cb.type);
        } else if (a.root != b.root) {
          diff = "root " + std::to_string(a.root) + " vs " + std::to_string(b.root);
        } else if (isReducing(ca.type) &&
                   ca.redOp.value_or(ReductionOpType::kAdd) != cb.redOp.value_or(ReductionOpType::kAdd)) {
          diff = std::string("reduction op ") + reductionOpName(ca.redOp.value_or(ReductionOpType::kAdd)) + " vs " +
                 reductionOpName(cb.redOp.value_or(ReductionOpType::kAdd));
        } else if (a.dtype != b.dtype) {
          diff =
              std::string("dtype ") + std::string(dataTypeName(a.dtype)) + " vs " + std::string(dataTypeName(b.dtype));
        } else if (chunkCount(a) != chunkCount(b)) {
          diff = "counts: rank " + std::to_string(a.rank) + " moves " + std::to_string(chunkCount(a)) +
                 " elements per member, rank " + std::to_string(b.rank) + " " + std::to_string(chunkCount(b));
        }
        if (!diff.empty()) {
          issueAt(FindingKind::kCollectiveMismatch, evs.front(), eid,
                  "collective #" + std::to_string(k + 1) + " on " + key + " differs between ranks " +
                      std::to_string(a.rank) + " and " + std::to_string(b.rank) + ": " + diff);
          break;
        }
        // One statement: the same Communication (by its id: a dump prints the same IR node in each
        // branch that posts it, and per-rank programs are printed apart).
        if (ca.id != cb.id) {
          issueAt(FindingKind::kMismatchedStatements, evs.front(), eid,
                  "collective #" + std::to_string(k + 1) + " on " + key + " matches " + stmtSummary(*a.stmt) +
                      " (" + lineOf(a.stmt) + ") on rank " + std::to_string(a.rank) + " with " +
                      stmtSummary(*b.stmt) + " (" + lineOf(b.stmt) + ") on rank " + std::to_string(b.rank) +
                      ": the ranks issue different statements in the same position, so their buffers are mixed up");
          break;
        }
      }
      CollectiveGroup grp;
      grp.id = static_cast<int32_t>(g_.groups.size());
      grp.communicator = key;
      grp.sequence = static_cast<int64_t>(k);
      grp.members = evs;
      for (int32_t e : evs) ev(e).group = grp.id;
      g_.groups.push_back(std::move(grp));
    }
  }

  // P2P: the k-th send from s to d pairs with the k-th receive on d from s, on one backend.
  struct Side {
    int32_t event;
    size_t op;
  };
  using Key = std::tuple<int64_t, int64_t, CommBackend>;
  std::map<Key, std::vector<Side>> sends, recvs;
  for (int32_t e : p2pEvents_) {
    const Event& x = ev(e);
    for (size_t i = 0; i < x.p2p.size(); ++i) {
      const P2POp& op = x.p2p[i];
      if (op.type == P2PType::kSend) {
        sends[{x.rank, op.peer, op.backend}].push_back({e, i});
      } else {
        recvs[{op.peer, x.rank, op.backend}].push_back({e, i});
      }
    }
  }
  auto describeOp = [&](const Side& s) {
    const Event& x = ev(s.event);
    const P2POp& op = x.p2p[s.op];
    return std::string(op.type == P2PType::kSend ? "the send to " : "the receive from ") + "rank " +
           std::to_string(op.peer) + " (" + std::to_string(op.count) + " x " + std::string(dataTypeName(op.dtype)) +
           ", " + commBackendName(op.backend) + ")";
  };
  std::set<Key> keys;
  for (auto& [k, v] : sends) keys.insert(k);
  for (auto& [k, v] : recvs) keys.insert(k);
  for (const auto& key : keys) {
    auto& s = sends[key];
    auto& r = recvs[key];
    auto [from, to, backend] = key;
    size_t n = std::max(s.size(), r.size());
    for (size_t k = 0; k < n; ++k) {
      if (k >= s.size() || k >= r.size()) {
        const Side& lone = k < s.size() ? s[k] : r[k];
        bool is_send = k < s.size();
        int64_t peer = is_send ? to : from;
        std::string why = !ran.count(peer)
                              ? "rank " + std::to_string(peer) + " does not exist (or does not run)"
                              : "rank " + std::to_string(peer) + " posts only " +
                                    std::to_string(is_send ? r.size() : s.size()) +
                                    (is_send ? " receive(s) from " : " send(s) to ") + "rank " +
                                    std::to_string(ev(lone.event).rank) + " on " + commBackendName(backend) +
                                    "; this is #" + std::to_string(k + 1);
        issueAt(FindingKind::kP2PUnpaired, lone.event, -1,
                describeOp(lone) + " has no matching " + (is_send ? "receive" : "send") + ": " + why);
        continue;
      }
      const P2POp& so = ev(s[k].event).p2p[s[k].op];
      const P2POp& ro = ev(r[k].event).p2p[r[k].op];
      if (so.count != ro.count || so.dtype != ro.dtype)
        issueAt(FindingKind::kCollectiveMismatch, s[k].event, r[k].event,
                "rank " + std::to_string(from) + " sends " + std::to_string(so.count) + " x " +
                    std::string(dataTypeName(so.dtype)) + " to rank " + std::to_string(to) + ", which receives " +
                    std::to_string(ro.count) + " x " + std::string(dataTypeName(ro.dtype)));
      if (s[k].event == r[k].event) continue;
      CollectiveGroup grp;
      grp.id = static_cast<int32_t>(g_.groups.size());
      grp.p2p = true;
      grp.communicator = ev(s[k].event).communicator;
      grp.members = {s[k].event, r[k].event};
      ev(s[k].event).pairGroups.push_back(grp.id);
      ev(r[k].event).pairGroups.push_back(grp.id);
      g_.groups.push_back(std::move(grp));
    }
  }
}

}  // namespace braid::sem::detail
