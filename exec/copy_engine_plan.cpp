// The copy-engine backend's plans (see copy_engine_plan.h).
#include "exec/copy_engine_plan.h"

#include <algorithm>
#include <map>

#include "ir/error.h"

namespace braid::exec::ce {

const char* collectiveName(Collective c) {
  switch (c) {
    case Collective::kAllgather: return "Allgather";
    case Collective::kAllreduce: return "Allreduce";
    case Collective::kReduceScatter: return "ReduceScatter";
    case Collective::kBroadcast: return "Broadcast";
    case Collective::kReduce: return "Reduce";
    case Collective::kScatter: return "Scatter";
    case Collective::kGather: return "Gather";
    case Collective::kAllToAll: return "AllToAll";
  }
  return "?";
}

namespace {

int64_t indexIn(const std::vector<int64_t>& team, int64_t r, const char* what) {
  auto it = std::find(team.begin(), team.end(), r);
  if (it == team.end()) {
    std::string t;
    for (int64_t x : team) t += (t.empty() ? "" : " ") + std::to_string(x);
    throw Error(std::string(what) + " " + std::to_string(r) + " is not in team (" + t + ")");
  }
  return it - team.begin();
}

// Peers of `me` in team order.
std::vector<int64_t> othersOf(const std::vector<int64_t>& team, int64_t me) {
  std::vector<int64_t> v;
  for (int64_t r : team)
    if (r != me) v.push_back(r);
  return v;
}

}  // namespace

std::pair<int64_t, int64_t> allreducePart(int64_t bytes, int64_t n, int64_t j, int64_t elementBytes) {
  const int64_t es = std::max<int64_t>(elementBytes, 1);
  const int64_t elems = bytes / es, q = elems / n, r = elems % n;
  return {(j * q + std::min(j, r)) * es, (q + (j < r ? 1 : 0)) * es};
}

Plan planCollective(Collective c, const std::vector<int64_t>& team, int64_t me, int64_t root, int64_t inBytes,
                    int64_t outBytes, int64_t elementBytes) {
  const int64_t n = static_cast<int64_t>(team.size());
  const int64_t i = indexIn(team, me, "rank");
  const bool rooted = c == Collective::kBroadcast || c == Collective::kReduce || c == Collective::kScatter ||
                      c == Collective::kGather;
  if (rooted) indexIn(team, root, "root");
  Plan p;
  auto pullFromAll = [&](auto&& copyOf) {  // symmetric: everyone pulls from everyone
    p.publishes = n > 1;
    p.consumers = p.producers = othersOf(team, me);
    for (int64_t j = 0; j < n; ++j) p.copies.push_back(copyOf(j));
  };
  // Staging row k holds the k-th peer's (team order) `rowBytes` read at `srcOffset`; the own row is
  // read in place by the reduction.
  auto reduceFromPeers = [&](int64_t srcOffset, int64_t rowBytes, int64_t ownOffset, int64_t outOffset) {
    std::vector<int64_t> peers = othersOf(team, me);
    for (size_t k = 0; k < peers.size(); ++k)
      p.copies.push_back(Copy{peers[k], 0, srcOffset, kStaging, static_cast<int64_t>(k) * rowBytes, rowBytes});
    p.reduction = {static_cast<int64_t>(peers.size()), ownOffset, outOffset, rowBytes};
    p.stagingBytes = static_cast<int64_t>(peers.size()) * rowBytes;
  };
  switch (c) {
    case Collective::kAllgather:  // out row j = member j's in
      pullFromAll([&](int64_t j) { return Copy{team[j], 0, 0, kOut, j * inBytes, inBytes}; });
      break;
    case Collective::kAllToAll: {  // out row j = member j's in row i
      int64_t chunk = inBytes / n;
      pullFromAll([&](int64_t j) { return Copy{team[j], 0, i * chunk, kOut, j * chunk, chunk}; });
      break;
    }
    case Collective::kReduceScatter:  // out = own in row i (+) the peers' rows i
      if (n == 1) {
        p.copies.push_back(Copy{me, 0, 0, kOut, 0, outBytes});
        break;
      }
      p.publishes = true;
      p.consumers = p.producers = othersOf(team, me);
      reduceFromPeers(i * outBytes, outBytes, i * outBytes, 0);
      break;
    case Collective::kAllreduce: {  // reduce-scatter of the parts in place, then allgather them
      if (n == 1) break;
      p.publishes = true;
      p.consumers = p.producers = othersOf(team, me);
      auto [off, len] = allreducePart(inBytes, n, i, elementBytes);
      reduceFromPeers(off, len, off, off);
      for (int64_t j = 0; j < n; ++j) {
        if (j == i) continue;
        auto [o, b] = allreducePart(inBytes, n, j, elementBytes);
        p.gathers.push_back(Copy{team[j], 0, o, kOut, o, b});
      }
      break;
    }
    case Collective::kBroadcast:  // every buffer = root's buffer
      if (me == root) {
        p.publishes = n > 1;
        p.consumers = othersOf(team, me);
      } else {
        p.producers = {root};
        p.copies.push_back(Copy{root, 0, 0, kOut, 0, inBytes});
      }
      break;
    case Collective::kScatter:  // member i's out = root's in row i
      if (me == root) {
        p.publishes = n > 1;
        p.consumers = othersOf(team, me);
      } else {
        p.producers = {root};
      }
      p.copies.push_back(Copy{root, 0, i * outBytes, kOut, 0, outBytes});
      break;
    case Collective::kGather:  // root's out row j = member j's in
      if (me == root) {
        p.producers = othersOf(team, me);
        for (int64_t j = 0; j < n; ++j) p.copies.push_back(Copy{team[j], 0, 0, kOut, j * inBytes, inBytes});
      } else {
        p.publishes = true;
        p.consumers = {root};
      }
      break;
    case Collective::kReduce:  // root's out = own in (+) the peers' in
      if (me == root) {
        if (n == 1) {
          p.copies.push_back(Copy{me, 0, 0, kOut, 0, inBytes});
          break;
        }
        p.producers = othersOf(team, me);
        reduceFromPeers(0, inBytes, 0, 0);
      } else {
        p.publishes = true;
        p.consumers = {root};
      }
      break;
  }
  return p;
}

Plan planGroup(int64_t me, const std::vector<Transfer>& sends, const std::vector<Transfer>& recvs) {
  Plan p;
  auto addOnce = [](std::vector<int64_t>& v, int64_t r) {
    if (std::find(v.begin(), v.end(), r) == v.end()) v.push_back(r);
  };
  for (const Transfer& s : sends)
    if (s.peer != me) {
      p.publishes = true;
      addOnce(p.consumers, s.peer);
    }
  std::map<int64_t, int32_t> seen;  // receives from each peer so far
  for (size_t k = 0; k < recvs.size(); ++k) {
    const Transfer& r = recvs[k];
    if (r.peer != me) addOnce(p.producers, r.peer);
    p.copies.push_back(Copy{r.peer, seen[r.peer]++, 0, static_cast<int32_t>(k), 0, r.bytes});
  }
  std::sort(p.consumers.begin(), p.consumers.end());
  std::sort(p.producers.begin(), p.producers.end());
  return p;
}

std::string receiveSizeProblem(int64_t me, int64_t peer, int64_t want, int64_t sent) {
  if (want == sent) return "";
  return "rank " + std::to_string(me) + " receives " + std::to_string(want) + " bytes from rank " +
         std::to_string(peer) + ", which sends " + std::to_string(sent) +
         " (a send and its receive must have the same size)";
}

}  // namespace braid::exec::ce
