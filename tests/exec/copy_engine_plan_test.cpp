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

namespace braid::exec::ce {
namespace {

using Buf = std::vector<int32_t>;  // elements of 4 bytes

const std::vector<Collective> kAll = {Collective::kAllgather, Collective::kAllreduce, Collective::kReduceScatter,
                                      Collective::kBroadcast, Collective::kReduce,    Collective::kScatter,
                                      Collective::kGather,    Collective::kAllToAll};

// Runs one rank's plan: copies read the source's published buffer (its input), then the staging
// rows are summed into the output.
Buf runPlan(const Plan& p, const std::map<int64_t, Buf>& published, Buf out) {
  Buf staging(static_cast<size_t>(p.stagingBytes / 4), 0);
  for (const Copy& c : p.copies) {
    const Buf& src = published.at(c.src);
    EXPECT_LE(c.srcOffset + c.bytes, static_cast<int64_t>(src.size() * 4));
    Buf& dst = c.dst == kOut ? out : staging;
    EXPECT_LE(c.dstOffset + c.bytes, static_cast<int64_t>(dst.size() * 4));
    std::memcpy(reinterpret_cast<char*>(dst.data()) + c.dstOffset, reinterpret_cast<const char*>(src.data()) + c.srcOffset,
                static_cast<size_t>(c.bytes));
  }
  if (p.reduceRows > 0) {
    size_t row = staging.size() / static_cast<size_t>(p.reduceRows);
    out.assign(row, 0);
    for (size_t r = 0; r < static_cast<size_t>(p.reduceRows); ++r)
      for (size_t e = 0; e < row; ++e) out[e] += staging[r * row + e];
  }
  return out;
}

// The definition (communicator.h) of member `me`'s output.
Buf expected(Collective c, const std::vector<int64_t>& team, int64_t me, int64_t root,
             const std::map<int64_t, Buf>& in, int64_t outElems) {
  const size_t n = team.size();
  const size_t i = static_cast<size_t>(std::find(team.begin(), team.end(), me) - team.begin());
  const Buf& mine = in.at(me);
  Buf out;
  switch (c) {
    case Collective::kAllgather:
      for (int64_t r : team) out.insert(out.end(), in.at(r).begin(), in.at(r).end());
      break;
    case Collective::kAllreduce:
      out.assign(mine.size(), 0);
      for (int64_t r : team)
        for (size_t e = 0; e < out.size(); ++e) out[e] += in.at(r)[e];
      break;
    case Collective::kReduceScatter:
      out.assign(static_cast<size_t>(outElems), 0);
      for (int64_t r : team)
        for (size_t e = 0; e < out.size(); ++e) out[e] += in.at(r)[i * out.size() + e];
      break;
    case Collective::kBroadcast:
      out = in.at(root);
      break;
    case Collective::kReduce:
      if (me != root) return Buf(static_cast<size_t>(outElems), -7);
      out.assign(mine.size(), 0);
      for (int64_t r : team)
        for (size_t e = 0; e < out.size(); ++e) out[e] += in.at(r)[e];
      break;
    case Collective::kScatter: {
      const Buf& src = in.at(root);
      size_t chunk = static_cast<size_t>(outElems);
      out.assign(src.begin() + static_cast<long>(i * chunk), src.begin() + static_cast<long>((i + 1) * chunk));
      break;
    }
    case Collective::kGather:
      if (me != root) return Buf(static_cast<size_t>(outElems), -7);
      for (int64_t r : team) out.insert(out.end(), in.at(r).begin(), in.at(r).end());
      break;
    case Collective::kAllToAll: {
      size_t chunk = mine.size() / n;
      for (int64_t r : team) {
        const Buf& src = in.at(r);
        out.insert(out.end(), src.begin() + static_cast<long>(i * chunk), src.begin() + static_cast<long>((i + 1) * chunk));
      }
      break;
    }
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
    for (Collective c : kAll) {
      for (int64_t root : team) {
        // Sizes as the evaluator passes them (the size rule holds).
        bool bigIn = c == Collective::kReduceScatter || c == Collective::kAllToAll ||
                     (c == Collective::kScatter);
        int64_t inElems = bigIn ? n * elems : elems;
        int64_t outElems = c == Collective::kAllgather || c == Collective::kGather ? n * elems
                           : c == Collective::kAllToAll                           ? n * elems
                                                                                  : elems;
        std::map<int64_t, Buf> in;
        for (int64_t r : team) {
          Buf b(static_cast<size_t>(inElems));
          for (size_t e = 0; e < b.size(); ++e) b[e] = static_cast<int32_t>(1000 * r + static_cast<int64_t>(e) + 1);
          in[r] = b;
        }
        std::map<int64_t, Plan> plans;
        for (int64_t me : team) plans[me] = planCollective(c, team, me, root, inElems * 4, outElems * 4);
        for (int64_t me : team) {
          // Allreduce and Broadcast work on one buffer, which starts as the input.
          bool inPlace = c == Collective::kAllreduce || c == Collective::kBroadcast;
          Buf start = inPlace ? in[me] : Buf(static_cast<size_t>(outElems), -7);
          Buf got = runPlan(plans[me], in, start);
          EXPECT_EQ(got, expected(c, team, me, root, in, outElems))
              << collectiveName(c) << " n=" << n << " root " << root << " rank " << me;
        }
        // Handshakes agree: b pulls from a <=> a lists b as a consumer <=> b lists a as a producer.
        for (int64_t a : team)
          for (int64_t b : team) {
            if (a == b) continue;
            bool pulls = std::any_of(plans[b].copies.begin(), plans[b].copies.end(),
                                     [&](const Copy& k) { return k.src == a; });
            EXPECT_EQ(pulls, has(plans[a].consumers, b)) << collectiveName(c) << " " << a << "->" << b;
            EXPECT_EQ(pulls, has(plans[b].producers, a)) << collectiveName(c) << " " << a << "->" << b;
          }
        for (int64_t a : team) EXPECT_EQ(plans[a].publishes, !plans[a].consumers.empty()) << collectiveName(c);
      }
    }
  }
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
