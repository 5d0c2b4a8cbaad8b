// The driver of the interpreter (see interpreter.h) and facts about a program the callers need
// before running it. The interpreter itself: interpreter_internal.h.
#include "ir/semantics/interpreter.h"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "ir/checked_math.h"
#include "ir/semantics/budget.h"
#include "ir/semantics/interpreter_internal.h"

namespace braid::sem {

namespace {

void collectSymbols(const Scalar& s, std::set<std::string>& out) {
  for (const auto& n : s.freeSymbols()) out.insert(n);
}

// Refuses, before anything runs, a program whose estimated events exceed the budget: the message
// says how many, where they come from and by how much they exceed it.
void checkBudget(const HostProgram& p, const SemanticsOptions& o, int64_t numRanks, int64_t ranksRun) {
  int64_t limit = o.maxEvents > 0 ? std::min(o.maxEvents, kMaxEventIds) : eventLimit();
  WorkEstimate w = estimateWork(p, o, numRanks, ranksRun);
  if (w.events <= limit) return;
  char times[64];
  std::snprintf(times, sizeof times, "%.3g", static_cast<double>(w.events) / static_cast<double>(limit));
  std::string msg = "too much work: the program unrolls into about " +
                    (w.events == std::numeric_limits<int64_t>::max() ? std::string("2^63 or more")
                                                                     : std::to_string(w.events)) +
                    " device operations on " + std::to_string(ranksRun) + " rank(s)";
  if (!w.largest.empty()) msg += " (most of them from " + w.largest + ")";
  msg += ", " + std::string(times) + " times the budget of " + std::to_string(limit) + " events";
  if (o.maxEvents <= 0)
    msg += " (" + formatBytes(workBudget().maxMemoryBytes) + " of memory at " + std::to_string(kBytesPerEvent) +
           " bytes per event; raise it with --max-events / --max-memory, or use smaller sizes)";
  throw Error(msg);
}

}  // namespace

int64_t ranksFromProgram(const HostProgram& p) {
  int64_t most = 0;
  for (const TensorView* tv : p.tensors().tensors())
    if (tv->hasDeviceMesh())
      for (int64_t d : tv->deviceMesh()->devices()) most = std::max(most, saturatingAdd(d, 1));
  forEachStmt(p.body(), [&](const Stmt& s, int) {
    if (s.is<Communication>())
      for (int64_t d : s.as<Communication>()->team) most = std::max(most, saturatingAdd(d, 1));
    if (s.is<CollectivePermute>())
      for (int64_t d : s.as<CollectivePermute>()->team) most = std::max(most, saturatingAdd(d, 1));
  });
  return std::max<int64_t>(most, 1);
}

std::set<std::string> unboundSymbols(const HostProgram& p, const Bindings& bindings) {
  std::set<std::string> used;
  std::set<std::string> loop_indices;
  auto addTensor = [&](const TensorView* tv) {
    for (const IterDomain* id : tv->loop()) collectSymbols(id->extent(), used);
  };
  for (const TensorView* tv : p.tensors().tensors()) addTensor(tv);
  auto streamRef = [&](const StreamRef& r) {
    if (r.kind == StreamRef::Kind::kIndexed) collectSymbols(r.index, used);
  };
  forEachStmt(p.body(), [&](const Stmt& s, int) {
    switch (s.kind()) {
      case StmtKind::kForLoop: {
        const auto* f = s.as<ForLoop>();
        loop_indices.insert(f->index);
        collectSymbols(f->begin(), used);
        collectSymbols(f->end(), used);
        break;
      }
      case StmtKind::kAliasSelect:
        collectSymbols(s.as<AliasSelect>()->index, used);
        break;
      case StmtKind::kShardByStream:
        collectSymbols(s.as<ShardByStream>()->streamIndex, used);
        break;
      case StmtKind::kSetCurrentStream:
        streamRef(s.as<SetCurrentStream>()->stream);
        break;
      case StmtKind::kSynchronize:
        streamRef(s.as<Synchronize>()->stream);
        break;
      case StmtKind::kIfThenElse:
        collectSymbols(s.as<IfThenElse>()->predicate, used);
        break;
      case StmtKind::kCommunication:
        if (s.as<Communication>()->root) collectSymbols(*s.as<Communication>()->root, used);
        break;
      case StmtKind::kP2PCommunication:
        collectSymbols(s.as<P2PCommunication>()->peer, used);
        break;
      case StmtKind::kCollectivePermute:
        collectSymbols(s.as<CollectivePermute>()->sendPeer, used);
        collectSymbols(s.as<CollectivePermute>()->recvPeer, used);
        break;
      case StmtKind::kShareMemHandles:
        for (const P2PCommunication& c : s.as<ShareMemHandles>()->communications) collectSymbols(c.peer, used);
        break;
      case StmtKind::kSelect:
        collectSymbols(s.as<Select>()->index, used);
        break;
      case StmtKind::kSlice:
        for (const SliceRange& r : s.as<Slice>()->ranges) {
          collectSymbols(r.start, used);
          collectSymbols(r.stop, used);
          collectSymbols(r.step, used);
        }
        break;
      case StmtKind::kScalarAssign:
        loop_indices.insert(s.as<ScalarAssign>()->name);  // computed by the program
        collectSymbols(s.as<ScalarAssign>()->value, used);
        break;
      default:
        break;
    }
  });
  // Index definitions: their names are computed, their free symbols needed.
  for (const auto& [name, value] : p.indexDefinitions()) {
    loop_indices.insert(name);
    collectSymbols(value, used);
  }
  std::set<std::string> out;
  for (const auto& n : used) {
    if (loop_indices.count(n) || bindings.count(n)) continue;
    if (n == kNumberOfStreams || n == kRank || n == kDeviceIdxX || n == kDeviceIdxY) continue;
    out.insert(n);
  }
  return out;
}

EventGraph buildEventGraph(const HostProgram& p, const SemanticsOptions& o) {
  EventGraph g;
  g.numRanks = o.numRanks;
  if (g.numRanks <= 0) {
    g.numRanks = ranksFromProgram(p);
    for (const auto& [rank, prog] : o.rankPrograms)
      g.numRanks = std::max({g.numRanks, rank + 1, prog ? ranksFromProgram(*prog) : 1});
  }
  g.numberOfStreams = o.numberOfStreams;
  if (auto it = o.bindings.find(kNumberOfStreams); it != o.bindings.end()) g.numberOfStreams = it->second;
  if (g.numberOfStreams <= 0) throw Error("numberOfStreams must be positive, got " + std::to_string(g.numberOfStreams));
  if (g.numberOfStreams > kMaxStreams)
    throw Error("numberOfStreams is " + std::to_string(g.numberOfStreams) + "; braid models at most " +
                std::to_string(kMaxStreams) + " streams per rank");
  if (g.numRanks > kMaxRanks)
    throw Error("the program runs on " + std::to_string(g.numRanks) + " ranks; braid runs at most " +
                std::to_string(kMaxRanks) + " (device ids 0.." + std::to_string(kMaxRanks - 1) + ")");
  checkBudget(p, o, g.numRanks, o.ranks.empty() ? g.numRanks : static_cast<int64_t>(o.ranks.size()));
  if (o.ranks.empty()) {
    for (int64_t r = 0; r < g.numRanks; ++r) g.ranks.push_back(r);
  } else {
    g.ranks = o.ranks;
    for (int64_t r : g.ranks)
      if (r < 0 || r >= g.numRanks)
        throw Error("rank " + std::to_string(r) + " is outside 0.." + std::to_string(g.numRanks - 1));
  }
  g.entryEvent.assign(g.ranks.size(), -1);
  g.exitEvent.assign(g.ranks.size(), -1);
  for (const auto& [rank, prog] : o.rankPrograms)
    if (rank < 0 || rank >= g.numRanks)
      throw Error("a program is given for rank " + std::to_string(rank) + ", outside 0.." +
                  std::to_string(g.numRanks - 1));
  detail::Interpreter interp(p, o, g, o.maxEvents > 0 ? std::min(o.maxEvents, kMaxEventIds) : eventLimit(),
                             showProgress());
  bool progress = showProgress() && g.ranks.size() > 1;
  for (size_t i = 0; i < g.ranks.size(); ++i) {
    if (progress) std::fprintf(stderr, "\rbraid: unrolling rank %zu of %zu, %zu events", i + 1, g.ranks.size(), g.events.size());
    interp.runRank(g.ranks[i], i);
  }
  if (progress) std::fprintf(stderr, "\rbraid: unrolled %zu ranks into %zu events        \n", g.ranks.size(), g.events.size());
  // A halted rank stopped short of its later communications: matching them would only repeat
  // that one error as a cascade of mismatches.
  if (!g.halted()) {
    interp.matchCommunications();
    interp.matchRendezvous();
  }
  return g;
}

}  // namespace braid::sem
