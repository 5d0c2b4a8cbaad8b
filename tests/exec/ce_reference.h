// The collectives' definitions (exec/communicator.h) on small integer buffers, for the tests of the
// copy-engine backend's plans and of its signal protocol: which sizes a member's input and output
// have, a recognisable input per member, and what a member's output must be.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "exec/copy_engine_plan.h"

namespace braid::exec::ce {

using Buf = std::vector<int32_t>;  // elements of 4 bytes
using Bufs = std::map<int64_t, Buf>;  // by world rank

inline const std::vector<Collective> kAllCollectives = {
    Collective::kAllgather, Collective::kAllreduce, Collective::kReduceScatter, Collective::kBroadcast,
    Collective::kReduce,    Collective::kScatter,   Collective::kGather,        Collective::kAllToAll};

// A member's input and output elements as the evaluator passes them (the size rule holds), for
// rows of `elems` over `n` members.
inline std::pair<int64_t, int64_t> elementsOf(Collective c, int64_t n, int64_t elems) {
  bool bigIn = c == Collective::kReduceScatter || c == Collective::kAllToAll || c == Collective::kScatter;
  bool bigOut = c == Collective::kAllgather || c == Collective::kGather || c == Collective::kAllToAll;
  return {bigIn ? n * elems : elems, bigOut ? n * elems : elems};
}

// Whether the collective works on one buffer (its output starts as its input).
inline bool inPlace(Collective c) { return c == Collective::kAllreduce || c == Collective::kBroadcast; }

// Member r's input: 1000 r + 1, 1000 r + 2, ...
inline Bufs inputsOf(const std::vector<int64_t>& team, int64_t inElems) {
  Bufs in;
  for (int64_t r : team) {
    Buf b(static_cast<size_t>(inElems));
    for (size_t e = 0; e < b.size(); ++e) b[e] = static_cast<int32_t>(1000 * r + static_cast<int64_t>(e) + 1);
    in[r] = b;
  }
  return in;
}

// The definition of member `me`'s output (a member that receives nothing keeps its -7s).
inline Buf expected(Collective c, const std::vector<int64_t>& team, int64_t me, int64_t root, const Bufs& in,
                    int64_t outElems) {
  const size_t n = team.size();
  const size_t i = static_cast<size_t>(std::find(team.begin(), team.end(), me) - team.begin());
  const Buf& mine = in.at(me);
  Buf out;
  auto sumOf = [&](size_t from, size_t count) {
    Buf s(count, 0);
    for (int64_t r : team)
      for (size_t e = 0; e < count; ++e) s[e] += in.at(r)[from + e];
    return s;
  };
  switch (c) {
    case Collective::kAllgather:
    case Collective::kGather:
      if (c == Collective::kGather && me != root) return Buf(static_cast<size_t>(outElems), -7);
      for (int64_t r : team) out.insert(out.end(), in.at(r).begin(), in.at(r).end());
      break;
    case Collective::kAllreduce: out = sumOf(0, mine.size()); break;
    case Collective::kReduceScatter: out = sumOf(i * static_cast<size_t>(outElems), static_cast<size_t>(outElems)); break;
    case Collective::kBroadcast: out = in.at(root); break;
    case Collective::kReduce:
      if (me != root) return Buf(static_cast<size_t>(outElems), -7);
      out = sumOf(0, mine.size());
      break;
    case Collective::kScatter: {
      const Buf& src = in.at(root);
      size_t chunk = static_cast<size_t>(outElems);
      out.assign(src.begin() + static_cast<long>(i * chunk), src.begin() + static_cast<long>((i + 1) * chunk));
      break;
    }
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

}  // namespace braid::exec::ce
