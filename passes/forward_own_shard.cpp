// Pass 6b: forward-own-shard. The P2P pipeline of a DID -> Stream set (did_to_stream.h) handles
// this rank's own shard in the iteration where the chunk index j equals the rank:
//
//   IF Manual ( j == deviceIdx.x ):
//     chunk = Set( own )                    <- own: this rank's shard, a view of the input
//   ELSE:
//     StartCoalescing / recv chunk / send own / EndCoalescing / Wait
//   <the rest of the iteration, reading chunk>
//
// The own shard already sits in this rank's input; with `--own-shard in-place` this pass reads it
// there. Not the default: the copy looks like overhead on the critical path (the first GEMM waits
// for it), but it runs beside the transfer of the ELSE branch, and without it iteration 0's GEMM
// is issued before iteration 1's transfer, takes the SMs first and delays the transfer's kernel:
// on two H200s the pipeline ran 6-32% slower in place unless its communications are prefetched
// (docs/PERFORMANCE.md, "The own shard, copied or in place"). The rest of the loop body goes
// into both branches; the THEN branch, without the Set, reads `own` where the ELSE branch reads
// `chunk`. The allocation pass then allocates and frees the chunk inside the ELSE branch only.
// j == rank holds exactly in iteration 0 on every rank (j = (i + rank) % D), so all ranks take the
// same branch in each iteration: a collective among the moved statements still pairs with the
// same statement on every rank.
//
// Stream lowering records the copies that may be forwarded as far as it can tell
// (LoweringContext::ownShardCopies): the p2p pipeline only (the collective one has no copy), no
// staging copy on either side (a strided shard goes through contiguous buffers), and a chunk that
// is a buffer of its own iteration, not a view of a tensor kept in full (a fusion output, a tensor
// read after the loop, a prefetched chunk): that full buffer must hold every shard, ours included.
// This pass keeps the copy, with a note, when
//  - a moved statement writes the chunk (in place, it would write the input);
//  - a moved statement reads the chunk through a view, or is one it does not duplicate (loops,
//    branches, P2P groups, allocations);
//  - the shard and the chunk differ in dtype or shape.
#include <map>
#include <optional>

#include "passes/fusion_utils.h"
#include "passes/host_builder.h"
#include "passes/pass.h"

namespace braid {
namespace {

// The scope holding `target` directly, and its position there.
std::optional<std::pair<Scope*, size_t>> locate(Scope& scope, const Stmt* target) {
  for (size_t i = 0; i < scope.size(); ++i) {
    Stmt* s = scope[i].get();
    if (s == target) return std::make_pair(&scope, i);
    std::optional<std::pair<Scope*, size_t>> in;
    if (s->is<ForLoop>()) in = locate(s->as<ForLoop>()->body, target);
    if (!in && s->is<IfThenElse>()) in = locate(s->as<IfThenElse>()->thenBody, target);
    if (!in && s->is<IfThenElse>()) in = locate(s->as<IfThenElse>()->elseBody, target);
    if (in) return in;
  }
  return std::nullopt;
}

bool sameShape(const TensorView* a, const TensorView* b) {
  if (a->dtype() != b->dtype()) return false;
  auto data = [](const TensorView* t) {
    std::vector<Scalar> v;
    for (const IterDomain* id : t->logical())
      if (!id->isReduction()) v.push_back(id->extent());
    return v;
  };
  return data(a) == data(b);
}

// Why the statements after the copy cannot be duplicated with `own` read in place of `chunk`,
// or "" when they can.
std::string whyNot(const LoweringContext& ctx, const Scope& tail, TensorView* own, TensorView* chunk) {
  if (!sameShape(own, chunk)) return "the shard " + own->str() + " and the chunk " + chunk->str() + " differ in shape";
  const TensorView* buffer = bufferOf(ctx, chunk);
  bool read = false;
  for (const StmtPtr& s : tail) {
    switch (s->kind()) {
      case StmtKind::kHostOp:
      case StmtKind::kPostOnStream:
      case StmtKind::kAliasSelect:
      case StmtKind::kShardByStream:
      case StmtKind::kCommunication:
      case StmtKind::kWait:
        break;
      default:
        return std::string("a ") + stmtKindName(s->kind()) + " follows the copy in the loop";
    }
    for (TensorView* t : stmtWrites(*s))
      if (bufferOf(ctx, t) == buffer) return "a statement after the copy writes the chunk";
    for (TensorView* t : stmtTensors(*s))
      if (t != chunk && bufferOf(ctx, t) == buffer) return "a statement after the copy reads the chunk through a view";
    for (TensorView* t : stmtTensors(*s)) read = read || t == chunk;
  }
  return read ? "" : "nothing after the copy reads the chunk";
}

// A copy of `s` that names `own` where `s` names `chunk`; communications get fresh ids, and a
// Wait on a copied communication waits for the copy (`ids`: old id -> new).
StmtPtr duplicate(LoweringContext& ctx, const Stmt& s, TensorView* chunk, TensorView* own, std::map<int, int>& ids) {
  auto sub = [&](TensorView* t) { return t == chunk ? own : t; };
  switch (s.kind()) {
    case StmtKind::kHostOp: {
      const Expr& e = *s.as<HostOp>()->op;
      std::vector<TensorView*> ins;
      for (TensorView* t : e.inputs()) ins.push_back(sub(t));
      Expr* c = cloneExpr(ctx.program.tensors(), e, ins, e.outputs(), {}, -1);
      if (auto o = ctx.originExpr.find(&e); o != ctx.originExpr.end()) ctx.originExpr[c] = o->second;
      return makeHostOp(c);
    }
    case StmtKind::kPostOnStream: {
      auto p = std::make_unique<PostOnStream>(*s.as<PostOnStream>());
      for (TensorView*& t : p->inputs) t = sub(t);
      return p;
    }
    case StmtKind::kAliasSelect: return std::make_unique<AliasSelect>(*s.as<AliasSelect>());
    case StmtKind::kShardByStream: return std::make_unique<ShardByStream>(*s.as<ShardByStream>());
    case StmtKind::kCommunication: {
      auto c = std::make_unique<Communication>(*s.as<Communication>());
      c->input = sub(c->input);
      c->id = ids[c->id] = ctx.nextCommunicationId++;
      return c;
    }
    case StmtKind::kWait: {
      auto w = std::make_unique<Wait>(*s.as<Wait>());
      if (auto it = ids.find(w->id); it != ids.end()) w->id = it->second;
      return w;
    }
    default: throw Error(std::string("internal lowering error: forward-own-shard cannot copy a ") + stmtKindName(s.kind()));
  }
}

class ForwardOwnShard : public Pass {
 public:
  std::string name() const override { return "forward-own-shard"; }
  bool run(LoweringContext& ctx) override {
    bool changed = false;
    if (!ctx.options.ownShardInPlace) {
      if (!ctx.ownShardCopies.empty()) ctx.notes.push_back("own shards copied (--own-shard copy, the default)");
      return false;
    }
    for (const OwnShardCopy& copy : ctx.ownShardCopies) {
      auto where = locate(ctx.program.body(), copy.branch);
      if (!where) continue;
      auto [scope, k] = *where;
      const std::string label = tvLabel(ctx.origin.at(copy.chunk).fusionTv);
      Scope tail;
      for (size_t i = k + 1; i < scope->size(); ++i) tail.push_back(std::move((*scope)[i]));
      scope->resize(k + 1);
      const std::string why = whyNot(ctx, tail, copy.own, copy.chunk);
      if (!why.empty()) {
        for (StmtPtr& s : tail) scope->push_back(std::move(s));
        ctx.notes.push_back(label + ": own shard copied (" + why + ")");
        continue;
      }
      IfThenElse& branch = *copy.branch;
      branch.thenBody.clear();  // the Set
      std::map<int, int> ids;
      for (const StmtPtr& s : tail) branch.thenBody.push_back(duplicate(ctx, *s, copy.chunk, copy.own, ids));
      for (StmtPtr& s : tail) branch.elseBody.push_back(std::move(s));
      ctx.notes.push_back(label + ": own shard read in place from " + copy.own->nameStr() + ", no copy");
      changed = true;
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> makeForwardOwnShardPass() { return std::make_unique<ForwardOwnShard>(); }

}  // namespace braid
