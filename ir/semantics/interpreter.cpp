// The driver of the interpreter (see interpreter.h) and facts about a program the callers need
// before running it. The interpreter itself: interpreter_internal.h.
#include "ir/semantics/interpreter.h"

#include "ir/semantics/interpreter_internal.h"

namespace braid::sem {

namespace {

void collectSymbols(const Scalar& s, std::set<std::string>& out) {
  for (const auto& n : s.freeSymbols()) out.insert(n);
}

}  // namespace

int64_t ranksFromProgram(const HostProgram& p) {
  int64_t most = 0;
  for (const TensorView* tv : p.tensors().tensors())
    if (tv->hasDeviceMesh())
      for (int64_t d : tv->deviceMesh()->devices()) most = std::max(most, d + 1);
  forEachStmt(p.body(), [&](const Stmt& s, int) {
    if (s.is<Communication>())
      for (int64_t d : s.as<Communication>()->team) most = std::max(most, d + 1);
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
      default:
        break;
    }
  });
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
  g.numRanks = o.numRanks > 0 ? o.numRanks : ranksFromProgram(p);
  g.numberOfStreams = o.numberOfStreams;
  if (auto it = o.bindings.find(kNumberOfStreams); it != o.bindings.end()) g.numberOfStreams = it->second;
  if (g.numberOfStreams <= 0) throw Error("numberOfStreams must be positive, got " + std::to_string(g.numberOfStreams));
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
  detail::Interpreter interp(p, o, g);
  for (size_t i = 0; i < g.ranks.size(); ++i) interp.runRank(g.ranks[i], i);
  // A halted rank stopped short of its later communications: matching them would only repeat
  // that one error as a cascade of mismatches.
  if (!g.halted()) interp.matchCommunications();
  return g;
}

}  // namespace braid::sem
