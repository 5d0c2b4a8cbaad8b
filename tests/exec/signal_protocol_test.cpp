// The copy-engine backend's ordering protocol (exec/signal_protocol.h) on a model: several ranks
// run the same random sequence of collectives and coalesced groups over one team, each rank's
// communicator stream executing its steps in order, interleaved at random, with the collectives'
// data: copies, gathers and reductions move and sum real values. Checked: a copy reads a producer
// only while the producer is inside the same operation, after its ready signal (a gather: after
// its reduced signal) and before its consumed wait finished (so its input is complete and not yet
// handed back); every collective's outputs follow the definitions (tests/exec/ce_reference.h), so
// a read of a part its owner has not reduced yet, or has already overwritten, shows; a flag is
// never set while already set (no signal lost); every schedule finishes (no deadlock); the pads
// are all zero at the end (so a CUDA graph can replay the same steps). Protocols that copy before
// "ready" or gather before "reduced" are caught, so the model can fail.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <random>

#include "exec/signal_protocol.h"
#include "tests/exec/ce_reference.h"

namespace braid::exec::ce {
namespace {

using StepsOf = std::function<std::vector<Step>(const Plan&)>;

struct Op {
  std::map<int64_t, Plan> plans;  // by world rank
  bool collective = false;        // a collective (with data), else a coalesced group (no data)
  Collective kind = Collective::kAllgather;
  int64_t root = 0, outElems = 0;
  Bufs in;  // the members' inputs (a collective)
};

// A rank's buffers in one collective: its input, its output (in place: the input itself) and staging.
struct Mem {
  Buf in, out, staging;
  bool inPlace = false;
  Buf& input() { return inPlace ? out : in; }
};

void copyBytes(const Copy& c, const Buf& src, Buf& dst) {
  if (c.bytes == 0) return;
  std::memcpy(reinterpret_cast<char*>(dst.data()) + c.dstOffset, reinterpret_cast<const char*>(src.data()) + c.srcOffset,
              static_cast<size_t>(c.bytes));
}

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
  std::vector<std::map<int64_t, Mem>> mem(ops.size());
  for (size_t k = 0; k < ops.size(); ++k) {
    if (!ops[k].collective) continue;
    for (int64_t r : team) {
      Mem& m = mem[k][r];
      m.inPlace = inPlace(ops[k].kind);
      m.in = ops[k].in.at(r);
      m.out = m.inPlace ? m.in : Buf(static_cast<size_t>(ops[k].outElems), -7);
      m.staging.assign(static_cast<size_t>(ops[k].plans.at(r).stagingBytes / 4), 0);
    }
  }
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
  auto flagOf = [&](int64_t at, StepKind k, int64_t writer) -> int& {
    return pad[at][static_cast<size_t>(flagSlot(k, n, idx(writer)))];
  };
  // Whether `src`, in the same operation as `r`, has signalled `r` with `signal` and not yet
  // finished waiting for r's "consumed".
  auto readable = [&](int64_t r, int64_t src, StepKind signal) -> std::string {
    State& p = st[src];
    if (p.op != st[r].op) return "rank " + std::to_string(r) + " read rank " + std::to_string(src) + " in another operation";
    bool signalled = false, released = false;
    for (size_t k = 0; k < p.steps.size(); ++k) {
      if (p.steps[k].peer != r) continue;
      if (p.steps[k].kind == signal) signalled = p.done[k];
      if (p.steps[k].kind == StepKind::kWaitConsumed) released = p.done[k];
    }
    if (!signalled)
      return "rank " + std::to_string(r) + " read rank " + std::to_string(src) +
             (signal == StepKind::kSignalReady ? " before it was ready" : " before it reduced its part");
    if (released) return "rank " + std::to_string(r) + " read rank " + std::to_string(src) + " after it was handed back";
    return "";
  };
  for (int64_t r : team) settle(r);
  for (;;) {
    std::vector<int64_t> enabled;
    bool all = true;
    for (int64_t r : team) {
      if (finished(r)) continue;
      all = false;
      const Step& s = st[r].steps[st[r].step];
      bool isWait = s.kind == StepKind::kWaitReady || s.kind == StepKind::kWaitReduced || s.kind == StepKind::kWaitConsumed;
      if (isWait && flagOf(r, s.kind, s.peer) == 0) continue;
      enabled.push_back(r);
    }
    if (all) break;
    if (enabled.empty()) return "deadlock";
    int64_t r = enabled[rng() % enabled.size()];
    State& s = st[r];
    const Step& step = s.steps[s.step];
    const Op& op = ops[s.op];
    const Plan& plan = op.plans.at(r);
    switch (step.kind) {
      case StepKind::kSignalReady:
      case StepKind::kSignalReduced:
      case StepKind::kSignalConsumed: {
        int& f = flagOf(step.peer, step.kind, r);
        if (f) return "a flag of " + std::to_string(r) + " set twice at " + std::to_string(step.peer);
        f = 1;
        break;
      }
      case StepKind::kWaitReady:
      case StepKind::kWaitReduced:
      case StepKind::kWaitConsumed:
        flagOf(r, step.kind, step.peer) = 0;
        break;
      case StepKind::kCopy:
      case StepKind::kGather: {
        const bool gather = step.kind == StepKind::kGather;
        const Copy& c = gather ? plan.gathers[step.copy] : plan.copies[step.copy];
        if (c.src != r) {
          std::string v = readable(r, c.src, gather ? StepKind::kSignalReduced : StepKind::kSignalReady);
          if (!v.empty()) return v;
        }
        if (op.collective) {
          Mem& me = mem[s.op][r];
          Mem& from = mem[s.op][c.src];
          copyBytes(c, gather ? from.out : from.input(), c.dst == kOut ? me.out : me.staging);
        }
        break;
      }
      case StepKind::kReduce: {
        Mem& m = mem[s.op][r];
        const Reduction& rd = plan.reduction;
        for (int64_t e = 0; e < rd.rowBytes / 4; ++e) {
          int32_t v = m.input()[static_cast<size_t>(rd.ownOffset / 4 + e)];
          for (int64_t k = 0; k < rd.peerRows; ++k) v += m.staging[static_cast<size_t>(k * rd.rowBytes / 4 + e)];
          m.out[static_cast<size_t>(rd.outOffset / 4 + e)] = v;
        }
        break;
      }
    }
    advance(r);
    settle(r);
  }
  for (int64_t r : team)
    for (int f : pad[r])
      if (f) return "a pad of rank " + std::to_string(r) + " is not clear at the end";
  for (size_t k = 0; k < ops.size(); ++k) {
    if (!ops[k].collective) continue;
    for (int64_t r : team)
      if (mem[k][r].out != expected(ops[k].kind, team, r, ops[k].root, ops[k].in, ops[k].outElems))
        return std::string(collectiveName(ops[k].kind)) + " (operation " + std::to_string(k) + ") gave rank " +
               std::to_string(r) + " a wrong output";
  }
  return "";
}

// A random sequence of operations over `team` (every member issues the same sequence).
std::vector<Op> randomOps(const std::vector<int64_t>& team, std::mt19937& rng) {
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
      op.collective = true;
      op.kind = kAllCollectives[rng() % kAllCollectives.size()];
      op.root = team[rng() % n];
      auto [inElems, outElems] = elementsOf(op.kind, n, 1 + static_cast<int64_t>(rng() % 3));
      op.outElems = outElems;
      op.in = inputsOf(team, inElems);
      for (int64_t me : team) op.plans[me] = planCollective(op.kind, team, me, op.root, 4 * inElems, 4 * outElems, 4);
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

// Runs one collective over a team of three under many schedules with a broken protocol; counts
// the schedules in which the model objects.
int caughtOf(Collective c, const StepsOf& broken) {
  std::mt19937 rng(3);
  std::vector<int64_t> team = {0, 1, 2};
  int caught = 0;
  for (int round = 0; round < 200; ++round) {
    std::vector<Op> ops(1);
    ops[0].collective = true;
    ops[0].kind = c;
    auto [inElems, outElems] = elementsOf(c, 3, 2);
    ops[0].outElems = outElems;
    ops[0].in = inputsOf(team, inElems);
    for (int64_t me : team) ops[0].plans[me] = planCollective(c, team, me, 0, 4 * inElems, 4 * outElems, 4);
    caught += runModel(team, ops, broken, rng).empty() ? 0 : 1;
  }
  return caught;
}

TEST(SignalProtocol, CopyingBeforeTheReadySignalIsCaught) {
  StepsOf early = [](const Plan& p) {
    std::vector<Step> s = signalSteps(p);
    std::stable_partition(s.begin(), s.end(), [](const Step& x) { return x.kind == StepKind::kCopy; });
    return s;
  };
  EXPECT_GT(caughtOf(Collective::kAllgather, early), 0);
  EXPECT_EQ(caughtOf(Collective::kAllgather, signalSteps), 0);
}

// An allreduce whose members say "reduced" before they reduce: the handshakes all pass, and only
// the data shows that a peer gathered a part that was not final yet.
TEST(SignalProtocol, SignallingReducedBeforeReducingIsCaughtByTheData) {
  StepsOf early = [](const Plan& p) {
    std::vector<Step> s = signalSteps(p);
    auto reduce = std::find_if(s.begin(), s.end(), [](const Step& x) { return x.kind == StepKind::kReduce; });
    auto lastSignal = std::find_if(s.rbegin(), s.rend(), [](const Step& x) { return x.kind == StepKind::kSignalReduced; });
    if (reduce != s.end() && lastSignal != s.rend()) std::rotate(reduce, reduce + 1, lastSignal.base());
    return s;
  };
  EXPECT_GT(caughtOf(Collective::kAllreduce, early), 0);
  EXPECT_EQ(caughtOf(Collective::kAllreduce, signalSteps), 0);
}

TEST(SignalProtocol, StepsFollowThePlan) {
  Plan p = planCollective(Collective::kReduceScatter, {0, 1}, 0, 0, 8, 4);
  std::vector<Step> s = signalSteps(p);
  std::vector<StepKind> kinds;
  for (const Step& x : s) kinds.push_back(x.kind);
  EXPECT_EQ(kinds, (std::vector<StepKind>{StepKind::kSignalReady, StepKind::kWaitReady, StepKind::kCopy,
                                          StepKind::kSignalConsumed, StepKind::kWaitConsumed, StepKind::kReduce}));
  EXPECT_EQ(s[0].peer, 1);
  // An allreduce reduces its part, then exchanges "reduced" and gathers the others' parts.
  kinds.clear();
  for (const Step& x : signalSteps(planCollective(Collective::kAllreduce, {0, 1}, 0, 0, 8, 8, 4))) kinds.push_back(x.kind);
  EXPECT_EQ(kinds, (std::vector<StepKind>{StepKind::kSignalReady, StepKind::kWaitReady, StepKind::kCopy, StepKind::kReduce,
                                          StepKind::kSignalReduced, StepKind::kWaitReduced, StepKind::kGather,
                                          StepKind::kSignalConsumed, StepKind::kWaitConsumed}));
}

}  // namespace
}  // namespace braid::exec::ce
