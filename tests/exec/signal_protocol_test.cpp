// The copy-engine backend's ordering protocol (exec/signal_protocol.h) on a model: several ranks
// run the same random sequence of collectives and coalesced groups over one team, each rank's
// communicator stream executing its steps in order, interleaved at random. Checked: a copy reads
// a producer only while the producer is inside the same operation, after its ready signal and
// before its consumed wait finished (so its input is complete and not yet handed back); a flag is
// never set while already set (no signal lost); every schedule finishes (no deadlock); the pads
// are all zero at the end (so a CUDA graph can replay the same steps). A protocol that copies
// before waiting for "ready" is caught, so the model can fail.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <random>

#include "exec/signal_protocol.h"

namespace braid::exec::ce {
namespace {

using StepsOf = std::function<std::vector<Step>(const Plan&)>;

struct Op {
  std::map<int64_t, Plan> plans;  // by world rank
};

// Runs `ops` on `team` under one random schedule; "" or the first violation.
std::string runModel(const std::vector<int64_t>& team, const std::vector<Op>& ops, const StepsOf& stepsOf,
                     std::mt19937& rng) {
  const int64_t n = static_cast<int64_t>(team.size());
  auto idx = [&](int64_t r) { return static_cast<int64_t>(std::find(team.begin(), team.end(), r) - team.begin()); };
  std::map<int64_t, std::vector<int>> pad;
  struct State {
    size_t op = 0, step = 0;
    std::vector<Step> steps;
    std::vector<bool> done;  // steps of the current op completed
  };
  std::map<int64_t, State> st;
  for (int64_t r : team) {
    pad[r].assign(static_cast<size_t>(padWords(n)), 0);
    st[r].steps = ops.empty() ? std::vector<Step>{} : stepsOf(ops[0].plans.at(r));
    st[r].done.assign(st[r].steps.size(), false);
  }
  auto finished = [&](int64_t r) { return st[r].op >= ops.size(); };
  auto advance = [&](int64_t r) {
    State& s = st[r];
    s.done[s.step] = true;
    if (++s.step < s.steps.size()) return;
    s.step = 0;
    if (++s.op < ops.size()) {
      s.steps = stepsOf(ops[s.op].plans.at(r));
      s.done.assign(s.steps.size(), false);
    }
  };
  // Skips ops with no steps at all.
  auto settle = [&](int64_t r) {
    while (!finished(r) && st[r].steps.empty()) {
      st[r].step = 0;
      if (++st[r].op < ops.size()) {
        st[r].steps = stepsOf(ops[st[r].op].plans.at(r));
        st[r].done.assign(st[r].steps.size(), false);
      }
    }
  };
  for (int64_t r : team) settle(r);
  for (;;) {
    std::vector<int64_t> enabled;
    bool all = true;
    for (int64_t r : team) {
      if (finished(r)) continue;
      all = false;
      const Step& s = st[r].steps[st[r].step];
      if (s.kind == StepKind::kWaitReady && pad[r][static_cast<size_t>(readySlot(idx(s.peer)))] == 0) continue;
      if (s.kind == StepKind::kWaitConsumed && pad[r][static_cast<size_t>(consumedSlot(n, idx(s.peer)))] == 0) continue;
      enabled.push_back(r);
    }
    if (all) break;
    if (enabled.empty()) return "deadlock";
    int64_t r = enabled[rng() % enabled.size()];
    State& s = st[r];
    const Step& step = s.steps[s.step];
    const Plan& plan = ops[s.op].plans.at(r);
    int me = static_cast<int>(idx(r));
    switch (step.kind) {
      case StepKind::kSignalReady: {
        int& f = pad[step.peer][static_cast<size_t>(readySlot(me))];
        if (f) return "ready flag of " + std::to_string(r) + " set twice at " + std::to_string(step.peer);
        f = 1;
        break;
      }
      case StepKind::kSignalConsumed: {
        int& f = pad[step.peer][static_cast<size_t>(consumedSlot(n, me))];
        if (f) return "consumed flag of " + std::to_string(r) + " set twice at " + std::to_string(step.peer);
        f = 1;
        break;
      }
      case StepKind::kWaitReady:
        pad[r][static_cast<size_t>(readySlot(idx(step.peer)))] = 0;
        break;
      case StepKind::kWaitConsumed:
        pad[r][static_cast<size_t>(consumedSlot(n, idx(step.peer)))] = 0;
        break;
      case StepKind::kCopy: {
        int64_t src = plan.copies[step.copy].src;
        if (src == r) break;
        State& p = st[src];
        if (p.op != s.op) return "rank " + std::to_string(r) + " read rank " + std::to_string(src) + " in another operation";
        bool readied = false, released = false;
        for (size_t k = 0; k < p.steps.size(); ++k) {
          if (p.steps[k].peer != r) continue;
          if (p.steps[k].kind == StepKind::kSignalReady) readied = p.done[k];
          if (p.steps[k].kind == StepKind::kWaitConsumed) released = p.done[k];
        }
        if (!readied) return "rank " + std::to_string(r) + " read rank " + std::to_string(src) + " before it was ready";
        if (released)
          return "rank " + std::to_string(r) + " read rank " + std::to_string(src) + " after it was handed back";
        break;
      }
      case StepKind::kReduce:
        break;
    }
    advance(r);
    settle(r);
  }
  for (int64_t r : team)
    for (int f : pad[r])
      if (f) return "a pad of rank " + std::to_string(r) + " is not clear at the end";
  return "";
}

// A random sequence of operations over `team` (every member issues the same sequence).
std::vector<Op> randomOps(const std::vector<int64_t>& team, std::mt19937& rng) {
  static const Collective kinds[] = {Collective::kAllgather, Collective::kAllreduce, Collective::kReduceScatter,
                                     Collective::kBroadcast, Collective::kReduce,    Collective::kScatter,
                                     Collective::kGather,    Collective::kAllToAll};
  const int64_t n = static_cast<int64_t>(team.size());
  std::vector<Op> ops(1 + rng() % 6);
  for (Op& op : ops) {
    if (rng() % 3 == 0) {  // a coalesced group of random transfers (the world of the team)
      std::vector<std::pair<int64_t, int64_t>> ts;
      for (int k = static_cast<int>(rng() % 5); k > 0; --k) ts.push_back({team[rng() % n], team[rng() % n]});
      for (int64_t me : team) {
        std::vector<Transfer> sends, recvs;
        for (auto [a, b] : ts) {
          if (a == me) sends.push_back({b, 4});
          if (b == me) recvs.push_back({a, 4});
        }
        op.plans[me] = planGroup(me, sends, recvs);
      }
    } else {
      Collective c = kinds[rng() % 8];
      int64_t root = team[rng() % n];
      for (int64_t me : team) op.plans[me] = planCollective(c, team, me, root, 4 * n, 4 * n);
    }
  }
  return ops;
}

TEST(SignalProtocol, RandomOperationsAndSchedulesNeverRaceNeverDeadlockAndLeaveThePadsClear) {
  std::mt19937 rng(11);
  for (int round = 0; round < 2000; ++round) {
    std::vector<int64_t> team;
    for (int64_t r = 0, n = 1 + static_cast<int64_t>(rng() % 4); r < n; ++r) team.push_back(r);
    std::shuffle(team.begin(), team.end(), rng);
    std::vector<Op> ops = randomOps(team, rng);
    std::string v = runModel(team, ops, signalSteps, rng);
    ASSERT_EQ(v, "") << "round " << round;
  }
}

TEST(SignalProtocol, CopyingBeforeTheReadySignalIsCaught) {
  StepsOf early = [](const Plan& p) {
    std::vector<Step> s = signalSteps(p);
    std::stable_partition(s.begin(), s.end(), [](const Step& x) { return x.kind == StepKind::kCopy; });
    return s;
  };
  std::mt19937 rng(3);
  int caught = 0;
  for (int round = 0; round < 200; ++round) {
    std::vector<int64_t> team = {0, 1, 2};
    std::vector<Op> ops(1);
    for (int64_t me : team) ops[0].plans[me] = planCollective(Collective::kAllgather, team, me, 0, 4, 12);
    caught += runModel(team, ops, early, rng).empty() ? 0 : 1;
  }
  EXPECT_GT(caught, 0);
}

TEST(SignalProtocol, StepsFollowThePlan) {
  Plan p = planCollective(Collective::kReduceScatter, {0, 1}, 0, 0, 8, 4);
  std::vector<Step> s = signalSteps(p);
  std::vector<StepKind> kinds;
  for (const Step& x : s) kinds.push_back(x.kind);
  EXPECT_EQ(kinds, (std::vector<StepKind>{StepKind::kSignalReady, StepKind::kWaitReady, StepKind::kCopy, StepKind::kCopy,
                                          StepKind::kSignalConsumed, StepKind::kWaitConsumed, StepKind::kReduce}));
  EXPECT_EQ(s[0].peer, 1);
}

}  // namespace
}  // namespace braid::exec::ce
