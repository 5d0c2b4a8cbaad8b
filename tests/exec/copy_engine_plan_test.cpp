// The copy-engine backend's plans (exec/copy_engine_plan.h) against the definitions of
// exec/communicator.h: every collective over teams of 1..4 members (in an order other than the
// world's), every root, run on byte buffers with the plans' copies and reductions; the handshake
// sets agree between every pair of ranks; coalesced groups match their transfers in posting
// order. Also the store records and the opened-handle cache (exec/ipc_handles.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <random>

#include "exec/copy_engine_plan.h"
#include "exec/ipc_handles.h"
#include "ir/error.h"
#include "tests/exec/ce_reference.h"

namespace braid::exec::ce {
namespace {

// Runs every rank's plan as the signal protocol orders it: first each rank's copies (reading the
// sources' inputs) and its reduction (its own input's row combined with the staging rows), then
// each rank's gathers, which read the sources' buffers as their first phase left them.
void copyInto(const Copy& c, const Buf& src, Buf& dst) {
  EXPECT_LE(c.srcOffset + c.bytes, static_cast<int64_t>(src.size() * 4));
  EXPECT_LE(c.dstOffset + c.bytes, static_cast<int64_t>(dst.size() * 4));
  if (c.bytes == 0) return;
  std::memcpy(reinterpret_cast<char*>(dst.data()) + c.dstOffset, reinterpret_cast<const char*>(src.data()) + c.srcOffset,
              static_cast<size_t>(c.bytes));
}
Bufs runPlans(const std::map<int64_t, Plan>& plans, const Bufs& in, Bufs out) {
  for (auto& [me, p] : plans) {
    Buf staging(static_cast<size_t>(p.stagingBytes / 4), 0);
    for (const Copy& c : p.copies) copyInto(c, in.at(c.src), c.dst == kOut ? out[me] : staging);
    const Reduction& rd = p.reduction;
    for (int64_t e = 0; rd.peerRows > 0 && e < rd.rowBytes / 4; ++e) {
      int32_t v = in.at(me).at(static_cast<size_t>(rd.ownOffset / 4 + e));
      for (int64_t k = 0; k < rd.peerRows; ++k) v += staging.at(static_cast<size_t>(k * rd.rowBytes / 4 + e));
      out[me].at(static_cast<size_t>(rd.outOffset / 4 + e)) = v;
    }
  }
  Bufs first = out;
  for (auto& [me, p] : plans)
    for (const Copy& c : p.gathers) {
      EXPECT_EQ(c.dst, kOut);
      copyInto(c, first.at(c.src), out[me]);
    }
  return out;
}

bool has(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

TEST(CopyEnginePlan, EveryCollectiveOnTeamsOfOneToFourFollowsTheDefinition) {
  const int64_t elems = 3;  // per row
  for (int64_t n = 1; n <= 4; ++n) {
    // A team in an order other than the world's, with world ranks that are not 0..n-1.
    std::vector<int64_t> team;
    for (int64_t j = n - 1; j >= 0; --j) team.push_back(2 * j + 1);
    for (Collective c : kAllCollectives) {
      for (int64_t root : team) {
        auto [inElems, outElems] = elementsOf(c, n, elems);
        Bufs in = inputsOf(team, inElems);
        std::map<int64_t, Plan> plans;
        for (int64_t me : team) plans[me] = planCollective(c, team, me, root, inElems * 4, outElems * 4, 4);
        Bufs start;
        for (int64_t me : team) start[me] = inPlace(c) ? in[me] : Buf(static_cast<size_t>(outElems), -7);
        Bufs got = runPlans(plans, in, start);
        for (int64_t me : team)
          EXPECT_EQ(got[me], expected(c, team, me, root, in, outElems))
              << collectiveName(c) << " n=" << n << " root " << root << " rank " << me;
        // Handshakes agree: b pulls from a <=> a lists b as a consumer <=> b lists a as a producer.
        for (int64_t a : team)
          for (int64_t b : team) {
            if (a == b) continue;
            auto from = [&](const Copy& k) { return k.src == a; };
            bool pulls = std::any_of(plans[b].copies.begin(), plans[b].copies.end(), from) ||
                         std::any_of(plans[b].gathers.begin(), plans[b].gathers.end(), from);
            EXPECT_EQ(pulls, has(plans[a].consumers, b)) << collectiveName(c) << " " << a << "->" << b;
            EXPECT_EQ(pulls, has(plans[b].producers, a)) << collectiveName(c) << " " << a << "->" << b;
          }
        for (int64_t a : team) EXPECT_EQ(plans[a].publishes, !plans[a].consumers.empty()) << collectiveName(c);
      }
    }
  }
}

// An Allreduce is a reduce-scatter of the members' parts and an allgather of them: each member
// pulls (n - 1) / n of the buffer twice, and reduces only its own part, reading its own part in
// place (no copy of it into the staging); parts split at element boundaries, the first ones
// longer.
TEST(CopyEnginePlan, AllreducePullsEachPartOnceInEachPhase) {
  std::vector<int64_t> team = {2, 0, 1};
  const int64_t bytes = 10 * 2;  // ten 2-byte elements: parts of 4, 3, 3 elements
  EXPECT_EQ(allreducePart(bytes, 3, 0, 2), (std::pair<int64_t, int64_t>{0, 8}));
  EXPECT_EQ(allreducePart(bytes, 3, 1, 2), (std::pair<int64_t, int64_t>{8, 6}));
  EXPECT_EQ(allreducePart(bytes, 3, 2, 2), (std::pair<int64_t, int64_t>{14, 6}));
  Plan p = planCollective(Collective::kAllreduce, team, 0, -1, bytes, bytes, 2);  // rank 0 is member 1
  EXPECT_EQ(p.reduction.peerRows, 2);
  EXPECT_EQ(p.reduction.ownOffset, 8);
  EXPECT_EQ(p.reduction.outOffset, 8);
  EXPECT_EQ(p.reduction.rowBytes, 6);
  EXPECT_EQ(p.stagingBytes, 12);
  int64_t pulled = 0, gathered = 0;
  for (const Copy& c : p.copies) {
    EXPECT_NE(c.src, 0);  // the own part is never copied
    EXPECT_EQ(c.srcOffset, 8);
    pulled += c.bytes;
  }
  for (const Copy& c : p.gathers) gathered += c.bytes;
  EXPECT_EQ(pulled, 12);
  EXPECT_EQ(gathered, 14);  // the other members' parts: 8 + 6
  // A reduce-scatter reads its own row in place too; a team of one copies its input.
  Plan rs = planCollective(Collective::kReduceScatter, {0, 1}, 1, -1, 16, 8, 4);
  ASSERT_EQ(rs.copies.size(), 1u);
  EXPECT_EQ(rs.copies[0].src, 0);
  EXPECT_EQ(rs.reduction.ownOffset, 8);
  EXPECT_TRUE(rs.gathers.empty());
  Plan one = planCollective(Collective::kReduceScatter, {3}, 3, -1, 8, 8, 4);
  EXPECT_EQ(one.reduction.peerRows, 0);
  ASSERT_EQ(one.copies.size(), 1u);
  EXPECT_EQ(one.copies[0].src, 3);
}

TEST(CopyEnginePlan, ARankOrRootOutsideTheTeamIsAnError) {
  EXPECT_THROW(planCollective(Collective::kAllgather, {0, 1}, 2, 0, 4, 8), Error);
  try {
    planCollective(Collective::kBroadcast, {0, 1}, 0, 5, 4, 4);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("root 5 is not in team (0 1)"), std::string::npos) << e.what();
  }
}

// Random groups on a world of 4: each transfer (a -> b, tag) is a send on a and a receive on b in
// posting order; receive k must get the data of the k-th transfer from its peer.
TEST(CopyEnginePlan, GroupsMatchTransfersBetweenAPairInPostingOrder) {
  std::mt19937 rng(7);
  for (int round = 0; round < 300; ++round) {
    const int64_t world = 1 + static_cast<int64_t>(rng() % 4);
    struct T {
      int64_t from, to;
      int32_t tag;
      int64_t elems;
    };
    std::vector<T> ts;
    int count = static_cast<int>(rng() % 6);
    for (int k = 0; k < count; ++k)
      ts.push_back({static_cast<int64_t>(rng() % world), static_cast<int64_t>(rng() % world), 100 + k,
                    1 + static_cast<int64_t>(rng() % 3)});
    for (int64_t me = 0; me < world; ++me) {
      std::vector<Transfer> sends, recvs;
      std::vector<const T*> mine;
      for (const T& t : ts) {
        if (t.from == me) sends.push_back({t.to, t.elems * 4});
        if (t.to == me) recvs.push_back({t.from, t.elems * 4}), mine.push_back(&t);
      }
      Plan p = planGroup(me, sends, recvs);
      ASSERT_EQ(p.copies.size(), recvs.size());
      for (size_t k = 0; k < p.copies.size(); ++k) {
        const Copy& c = p.copies[k];
        // The srcSlot-th transfer from c.src to me, in posting order.
        const T* sent = nullptr;
        int32_t seen = 0;
        for (const T& t : ts)
          if (t.from == c.src && t.to == me && seen++ == c.srcSlot) sent = &t;
        ASSERT_NE(sent, nullptr);
        EXPECT_EQ(sent, mine[k]) << "round " << round << " rank " << me << " receive " << k;
        EXPECT_EQ(c.dst, static_cast<int32_t>(k));
        EXPECT_EQ(c.bytes, mine[k]->elems * 4);
      }
      for (int64_t r = 0; r < world; ++r) {
        bool sendsTo = r != me && std::any_of(ts.begin(), ts.end(), [&](const T& t) { return t.from == me && t.to == r; });
        bool recvsFrom =
            r != me && std::any_of(ts.begin(), ts.end(), [&](const T& t) { return t.to == me && t.from == r; });
        EXPECT_EQ(has(p.consumers, r), sendsTo);
        EXPECT_EQ(has(p.producers, r), recvsFrom);
      }
    }
  }
}

TEST(CopyEnginePlan, AReceiveOfAnotherSizeThanItsSendIsNamed) {
  EXPECT_EQ(receiveSizeProblem(1, 0, 64, 64), "");
  EXPECT_EQ(receiveSizeProblem(1, 0, 64, 32),
            "rank 1 receives 64 bytes from rank 0, which sends 32 (a send and its receive must have the same size)");
}

TEST(IpcHandles, PublishedRecordsRoundTripAndMalformedOnesAreNamed) {
  std::vector<Published> items = {{std::string("\x01\x00\xff", 3), 256, 1024}, {std::string(64, 'h'), 0, 8}};
  std::vector<Published> back = decodePublished(encodePublished(items), "x");
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].handle, items[0].handle);
  EXPECT_EQ(back[0].offset, 256);
  EXPECT_EQ(back[1].bytes, 8);
  std::vector<uint8_t> bytes = encodePublished(items);
  bytes.pop_back();
  try {
    decodePublished(bytes, "rank 1's buffer for Allgather");
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "rank 1's buffer for Allgather in the rendezvous store is malformed");
  }
  EXPECT_THROW(decodePublished({}, "x"), Error);
}

TEST(IpcHandles, TheCacheKeysOnPeerAndHandleBytes) {
  HandleCache cache;
  int a = 0, b = 0;
  EXPECT_EQ(cache.find(0, "h1"), nullptr);
  cache.insert(0, "h1", &a);
  cache.insert(1, "h1", &b);  // the same bytes from another peer are another allocation
  EXPECT_EQ(cache.find(0, "h1"), &a);
  EXPECT_EQ(cache.find(1, "h1"), &b);
  EXPECT_EQ(cache.find(0, "h2"), nullptr);
  EXPECT_EQ(cache.size(), 2u);
  cache.insert(0, "h1", &a);  // opened once: a second insert of the same key keeps one entry
  EXPECT_EQ(cache.mapped().size(), 2u);
  cache.clear();
  EXPECT_EQ(cache.size(), 0u);
}

}  // namespace
}  // namespace braid::exec::ce
