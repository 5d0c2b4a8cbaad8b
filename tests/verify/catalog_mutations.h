// The catalog configurations and the mutation suite shared by the bounded checker's tests
// (catalog_test.cpp) and the parametric checker's (parametric_mutants_test.cpp): lowering a
// catalog workload for a configuration, and every known way to break a lowered program's
// synchronization or aliasing (drop or move one Synchronize, swap SetCurrentStream and
// Synchronize, join only some workers, index the wrong slice, shrink a ring buffer, free before
// the join, make a collective rank-dependent).
#pragma once

#include <algorithm>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ir/host_ir_text.h"
#include "ir/semantics/finding_kind.h"
#include "passes/lower.h"
#include "catalog/workload.h"

namespace braid::testing {

struct Config {
  int64_t devices = 2;
  int64_t streams = 2;
  StreamProtocol protocol = StreamProtocol::kSeparateSyncLoop;
  StreamIndexing indexing = StreamIndexing::kModulo;
  PipelineKind pipeline = PipelineKind::kCollective;
  bool ring = false;
  // Schedules (docs/LOWERING.md): the worker pool (0: one stream per chunk), deferred waits,
  // prefetched communications.
  int64_t pool = 0;
  bool defer = false;
  bool prefetch = false;
  // --own-shard in-place (the P2P pipeline reads its own shard where it lies).
  bool ownShardInPlace = false;
  // numberOfStreams the program runs with.
  int64_t numberOfStreams() const { return pool > 0 ? pool : streams; }
};

inline std::string configStr(const std::string& name, const Config& c) {
  return name + " D=" + std::to_string(c.devices) + " S=" + std::to_string(c.streams) + " protocol " +
         streamProtocolName(c.protocol) + (c.indexing == StreamIndexing::kRaw ? " raw" : " modulo") + " " +
         pipelineKindName(c.pipeline) + (c.ring ? " ring" : "") +
         (c.pool > 0 ? " pool " + std::to_string(c.pool) : "") + (c.defer ? " defer-waits" : "") +
         (c.prefetch ? " prefetch" : "") + (c.ownShardInPlace ? " own-shard in-place" : "");
}

// Lowers `name` for `c` (sizes chosen to divide as every schedule needs); nullopt when the
// workload does not support the combination (it says so with an Error).
inline std::optional<HostProgram> lowerWorkload(const std::string& name, const Config& c) {
  WorkloadParams p;
  p.devices = c.devices;
  p.streams = c.streams;
  p.m = 2 * c.streams * c.devices;
  p.k = 2 * c.devices;
  p.n = 2 * c.streams * c.devices;
  p.lowering.protocol = c.protocol;
  p.lowering.indexing = c.indexing;
  p.lowering.pipeline = c.pipeline;
  p.lowering.ringBuffers = c.ring;
  p.pool = c.pool;
  p.lowering.deferWaits = c.defer;
  p.lowering.prefetch = c.prefetch;
  p.lowering.ownShardInPlace = c.ownShardInPlace;
  try {
    Workload w = makeWorkload(name, p);
    HostProgram h = lower(*w.fusion, w.params.lowering, w.params.devices);
    assignPrintedLocations(h, name + ".hir");
    return h;
  } catch (const NotLowerableError&) {
    return std::nullopt;
  } catch (const Error& e) {
    // Combinations the lowering refuses by design (ring buffers with raw indexing).
    if (c.ring && c.indexing == StreamIndexing::kRaw) return std::nullopt;
    if (c.defer && c.protocol == StreamProtocol::kInLoopSync) return std::nullopt;
    throw;
  }
}

inline std::vector<std::string> catalogNames() {
  std::vector<std::string> out;
  for (const auto& w : workloadCatalog()) out.push_back(w.name);
  return out;
}

// ---- mutations ----

// A statement position: the scope holding it and its index there, plus the loops around it.
struct Pos {
  Scope* scope;
  size_t index;
  std::vector<ForLoop*> loops;
};

inline void collect(Scope& scope, std::vector<ForLoop*>& loops, std::vector<Pos>& out) {
  for (size_t i = 0; i < scope.size(); ++i) {
    out.push_back({&scope, i, loops});
    Stmt* s = scope[i].get();
    if (s->is<ForLoop>()) {
      loops.push_back(s->as<ForLoop>());
      collect(s->as<ForLoop>()->body, loops, out);
      loops.pop_back();
    } else if (s->is<IfThenElse>()) {
      collect(s->as<IfThenElse>()->thenBody, loops, out);
      collect(s->as<IfThenElse>()->elseBody, loops, out);
    }
  }
}

inline std::vector<Pos> positions(HostProgram& p) {
  std::vector<Pos> out;
  std::vector<ForLoop*> loops;
  collect(p.body(), loops, out);
  return out;
}

inline Stmt* at(const Pos& p) {
  return (*p.scope)[p.index].get();
}

inline bool doesWork(const Stmt* s) {
  return s->is<HostOp>() || s->is<Communication>() || s->is<PostOnStream>() || s->is<P2PCommunication>() ||
         s->is<StartCoalescing>();
}

inline bool mentions(const Scalar& s, const std::string& name) {
  return s.freeSymbols().count(name) > 0;
}

// A mutation: applies to the k-th candidate of the program; false when there is none. `touched`
// (when not null) receives the location of the statement it dropped, moved or edited.
using Mutation = std::function<bool(HostProgram&, size_t k, const Config&, SourceLoc* touched)>;

inline void touch(SourceLoc* touched, const Stmt* s) {
  if (touched && s) *touched = s->loc;
}

inline bool dropSync(HostProgram& p, size_t k, const Config&, SourceLoc* touched = nullptr) {
  size_t n = 0;
  for (const Pos& pos : positions(p)) {
    if (!at(pos)->is<Synchronize>() || n++ != k) continue;
    touch(touched, at(pos));
    pos.scope->erase(pos.scope->begin() + static_cast<long>(pos.index));
    return true;
  }
  return false;
}

// Moves a Synchronize below the next statement of its scope that does device work.
inline bool moveSync(HostProgram& p, size_t k, const Config&, SourceLoc* touched = nullptr) {
  size_t n = 0;
  for (const Pos& pos : positions(p)) {
    if (!at(pos)->is<Synchronize>()) continue;
    Scope& sc = *pos.scope;
    size_t j = pos.index + 1;
    while (j < sc.size() && !doesWork(sc[j].get())) ++j;
    if (j >= sc.size() || n++ != k) continue;
    touch(touched, at(pos));
    StmtPtr s = std::move(sc[pos.index]);
    sc.erase(sc.begin() + static_cast<long>(pos.index));
    sc.insert(sc.begin() + static_cast<long>(j), std::move(s));
    return true;
  }
  return false;
}

inline bool swapSetAndSync(HostProgram& p, size_t k, const Config&, SourceLoc* touched = nullptr) {
  size_t n = 0;
  for (const Pos& pos : positions(p)) {
    Scope& sc = *pos.scope;
    if (!at(pos)->is<SetCurrentStream>() || pos.index + 1 >= sc.size() || !sc[pos.index + 1]->is<Synchronize>())
      continue;
    if (n++ != k) continue;
    touch(touched, sc[pos.index + 1].get());
    std::swap(sc[pos.index], sc[pos.index + 1]);
    return true;
  }
  return false;
}

// The join (the last Synchronize on an indexed stream) runs for the first iteration only.
inline bool joinOnlyFirst(HostProgram& p, size_t k, const Config&, SourceLoc* touched = nullptr) {
  if (k > 0) return false;
  std::optional<Pos> join;
  for (const Pos& pos : positions(p))
    if (at(pos)->is<Synchronize>() && at(pos)->as<Synchronize>()->stream.kind == StreamRef::Kind::kIndexed &&
        !pos.loops.empty())
      join = pos;
  if (!join) return false;
  ForLoop* loop = join->loops.back();
  touch(touched, at(*join));
  auto guard = std::make_unique<IfThenElse>();
  guard->predicate = eq(Scalar::symbol(loop->index), loop->begin());
  guard->thenBody.push_back(std::move((*join->scope)[join->index]));
  (*join->scope)[join->index] = std::move(guard);
  return true;
}

// Protocol C joins every iteration before the next one forks, so no two iterations use a ring
// slot at once: another slot, or a smaller ring, is still a correct program there.
inline bool ringSlotsAreSerialized(const Config& c) { return c.protocol == StreamProtocol::kPerIterationJoin; }
inline bool isRingSlot(const Scalar& index) {
  return index.op() == ScalarOp::kMod && mentions(index.rhs(), kNumberOfStreams);
}

// A slice that an op of the loop writes into takes slice 0 in every iteration.
inline bool wrongSlice(HostProgram& p, size_t k, const Config& c, SourceLoc* touched = nullptr) {
  size_t n = 0;
  auto written = [](const Scope& sc, size_t from, const TensorView* tv) {
    for (size_t j = from; j < sc.size(); ++j) {
      const Stmt* s = sc[j].get();
      if (s->is<HostOp>() && s->as<HostOp>()->op && !s->as<HostOp>()->op->outputs().empty() &&
          s->as<HostOp>()->op->output(0) == tv)
        return true;
      if (s->is<Communication>() && s->as<Communication>()->output == tv) return true;
    }
    return false;
  };
  for (const Pos& pos : positions(p)) {
    if (pos.loops.empty()) continue;
    Stmt* s = at(pos);
    const std::string& idx = pos.loops.back()->index;
    Scalar* index = nullptr;
    const TensorView* out = nullptr;
    if (s->is<AliasSelect>()) {
      index = &s->as<AliasSelect>()->index;
      out = s->as<AliasSelect>()->out;
    } else if (s->is<ShardByStream>()) {
      index = &s->as<ShardByStream>()->streamIndex;
      out = s->as<ShardByStream>()->out;
    }
    if (!index || !mentions(*index, idx) || !written(*pos.scope, pos.index + 1, out)) continue;
    if (ringSlotsAreSerialized(c) && isRingSlot(*index)) continue;
    if (n++ != k) continue;
    touch(touched, s);
    *index = Scalar(0);
    return true;
  }
  return false;
}

// Where the P2P pipeline reads its own shard in place (forward-own-shard): only iterations 1 .. D-1
// use the ring, and with D <= numberOfStreams = P they take distinct slots of a ring of P - 1 too
// (i % (P - 1) for i in 1 .. P - 1), so a ring one slot smaller is still correct.
inline bool p2pRingHasASpareSlot(const Config& c) {
  return c.pipeline == PipelineKind::kP2P && c.ownShardInPlace && c.devices <= c.numberOfStreams();
}

// A ring of numberOfStreams slots used as a ring of numberOfStreams - 1.
inline bool shrinkRing(HostProgram& p, size_t k, const Config& c, SourceLoc* touched = nullptr) {
  if (k > 0 || c.streams < 2 || ringSlotsAreSerialized(c) || p2pRingHasASpareSlot(c)) return false;
  for (const Pos& pos : positions(p)) {
    if (!at(pos)->is<AliasSelect>()) continue;
    auto* a = at(pos)->as<AliasSelect>();
    if (a->index.op() != ScalarOp::kMod || !mentions(a->index.rhs(), kNumberOfStreams)) continue;
    if (!a->axis || !mentions(a->axis->extent(), kNumberOfStreams)) continue;
    touch(touched, a);
    Scalar smaller = Scalar::symbol(kNumberOfStreams) - Scalar(1);
    a->index = Scalar::binary(ScalarOp::kMod, a->index.lhs(), smaller);
    a->axis->setExtent(smaller);
    return true;
  }
  return false;
}

// A Deallocate after a stream loop moves before that loop's join.
inline bool freeBeforeJoin(HostProgram& p, size_t k, const Config&, SourceLoc* touched = nullptr) {
  if (k > 0) return false;
  Scope& body = p.body();
  for (size_t i = 0; i < body.size(); ++i) {
    if (!body[i]->is<Deallocate>()) continue;
    size_t j = i;
    while (j > 0 && !body[j - 1]->is<ForLoop>()) --j;
    if (j == 0) continue;
    ForLoop* loop = body[j - 1]->as<ForLoop>();
    bool join_loop =
        std::all_of(loop->body.begin(), loop->body.end(), [](const StmtPtr& s) { return s->is<Synchronize>(); });
    touch(touched, body[i].get());
    StmtPtr d = std::move(body[i]);
    body.erase(body.begin() + static_cast<long>(i));
    if (join_loop) {
      body.insert(body.begin() + static_cast<long>(j - 1), std::move(d));
      return true;
    }
    // Per-iteration join (protocol A): before the body's trailing SetCurrentStream.
    Scope& lb = loop->body;
    size_t at_set = lb.size();
    for (size_t m = 0; m < lb.size(); ++m)
      if (lb[m]->is<SetCurrentStream>()) at_set = m;
    lb.insert(lb.begin() + static_cast<long>(at_set), std::move(d));
    return true;
  }
  return false;
}

// The first collective is issued by rank 0 only.
inline bool rankDependentCollective(HostProgram& p, size_t k, const Config& c, SourceLoc* touched = nullptr) {
  if (k > 0 || c.devices < 2) return false;
  for (const Pos& pos : positions(p)) {
    // A guard on a one-rank team's collective (a 2D mesh with one row) changes nothing.
    if (!at(pos)->is<Communication>() || at(pos)->as<Communication>()->team.size() < 2) continue;
    touch(touched, at(pos));
    auto guard = std::make_unique<IfThenElse>();
    guard->predicate = eq(Scalar::symbol(kDeviceIdxX), Scalar(0));
    guard->thenBody.push_back(std::move((*pos.scope)[pos.index]));
    (*pos.scope)[pos.index] = std::move(guard);
    return true;
  }
  return false;
}

struct MutationInfo {
  const char* name;
  Mutation apply;
  // The finding classes a mutant of this kind is caught as (which one depends on the workload).
  std::vector<sem::FindingKind> kinds;
  // Whether the finding names the statement the mutation moved or edited (a dropped or moved
  // Synchronize is not itself an access: the finding names the accesses it no longer orders).
  bool namesTouched = false;
};

inline const std::vector<MutationInfo>& mutations() {
  using K = sem::FindingKind;
  static const std::vector<MutationInfo> m = {
      {"drop Synchronize", dropSync, {K::kRace, K::kMissingJoin, K::kUninitializedRead, K::kUnsafeReuse, K::kMissingWait, K::kWaitOnWrongStream, K::kUnwaitedCommunication}},
      {"move Synchronize", moveSync, {K::kRace, K::kMissingJoin, K::kUninitializedRead, K::kUnsafeReuse, K::kMissingWait, K::kWaitOnWrongStream, K::kUnwaitedCommunication}},
      {"swap SetCurrentStream and Synchronize", swapSetAndSync, {K::kRace, K::kMissingJoin, K::kUninitializedRead, K::kUnsafeReuse, K::kMissingWait, K::kWaitOnWrongStream, K::kUnwaitedCommunication}},
      {"join only the first worker", joinOnlyFirst, {K::kMissingJoin, K::kRace, K::kUnsafeReuse, K::kUnwaitedCommunication}},
      {"index the wrong slice", wrongSlice, {K::kRace, K::kOutputNotWritten, K::kUninitializedRead}},
      {"shrink the ring buffer", shrinkRing, {K::kRace}},
      {"free before the join", freeBeforeJoin, {K::kUnsafeReuse, K::kUseAfterDeallocate, K::kMissingWait}, true},
      {"rank-dependent collective", rankDependentCollective, {K::kCollectiveMismatch, K::kDeadlock, K::kMismatchedStatements}, true},
  };
  return m;
}

}  // namespace braid::testing
