// Pass 8: allocation and deallocation (nvFuser's AllocateAndDeallocate, over the nested scopes).
//
// Every buffer the program writes (not an input, not a view) is allocated right before its first
// use in the innermost scope that holds all its uses, and deallocated right after its last use
// there, unless it is a fusion output. Buffers that views alias (full tensors sliced per
// iteration, rings) are allocated at the top level, before the loop. Inside a loop body the
// allocation is the always-fresh form (`ALLOCATE(mem_type=...)`), since the legacy form would
// keep the first iteration's buffer; at the top level protocols A and C use the legacy form, as
// nvFuser's pipeline A does.
#include <algorithm>
#include <map>
#include <set>

#include "passes/fusion_utils.h"
#include "passes/host_builder.h"
#include "passes/pass.h"

namespace braid {
namespace {

using Path = std::vector<std::pair<Scope*, size_t>>;

// A communication's buffers stay in use until its Wait: map each waitable id to its tensors
// (the P2P operations of a coalesced group belong to the group's EndCoalescing id).
void collectCommTensors(Scope& scope, std::map<int, std::vector<TensorView*>>& out, std::vector<TensorView*>& group) {
  for (auto& s : scope) {
    if (s->is<Communication>()) out[s->as<Communication>()->id] = stmtTensors(*s);
    if (s->is<StartCoalescing>()) group.clear();
    if (s->is<P2PCommunication>()) {
      out[s->as<P2PCommunication>()->id] = stmtTensors(*s);
      group.push_back(s->as<P2PCommunication>()->buffer);
    }
    if (s->is<EndCoalescing>()) out[s->as<EndCoalescing>()->id] = group;
    if (s->is<ForLoop>()) collectCommTensors(s->as<ForLoop>()->body, out, group);
    if (s->is<IfThenElse>()) {
      collectCommTensors(s->as<IfThenElse>()->thenBody, out, group);
      collectCommTensors(s->as<IfThenElse>()->elseBody, out, group);
    }
  }
}

void collectUses(const LoweringContext& ctx, Scope& scope, Path& path, std::map<TensorView*, std::vector<Path>>& uses,
                 std::vector<TensorView*>& order, const std::map<int, std::vector<TensorView*>>& comm_tensors) {
  for (size_t i = 0; i < scope.size(); ++i) {
    path.emplace_back(&scope, i);
    Stmt& s = *scope[i];
    std::vector<TensorView*> ts = stmtTensors(s);
    if (s.is<Wait>()) {
      auto it = comm_tensors.find(s.as<Wait>()->id);
      if (it != comm_tensors.end()) ts = it->second;
    }
    for (TensorView* t : ts) {
      TensorView* b = bufferOf(ctx, t);
      if (!uses.count(b)) order.push_back(b);
      uses[b].push_back(path);
    }
    if (s.is<ForLoop>()) collectUses(ctx, s.as<ForLoop>()->body, path, uses, order, comm_tensors);
    if (s.is<IfThenElse>()) {
      collectUses(ctx, s.as<IfThenElse>()->thenBody, path, uses, order, comm_tensors);
      collectUses(ctx, s.as<IfThenElse>()->elseBody, path, uses, order, comm_tensors);
    }
    path.pop_back();
  }
}

// The buffers some statement writes (Allocate and Deallocate, which this pass adds, write only
// the buffer they are for, so the set stays right while the pass inserts them).
std::set<const TensorView*> writtenBuffers(const LoweringContext& ctx, const Scope& scope) {
  std::set<const TensorView*> written;
  forEachStmt(scope, [&](const Stmt& s, int) {
    for (TensorView* t : stmtWrites(s)) written.insert(bufferOf(ctx, t));
  });
  return written;
}

// Statements to insert around one statement of a scope: `before` in the order given, `after`
// in reverse order (the buffer planned last is freed first, nearest its last use).
struct Insertions {
  std::vector<StmtPtr> before;
  std::vector<StmtPtr> after;
};

// Rebuilds each scope once with its planned insertions. Inserting one statement at a time and
// recomputing every use after each insertion made the pass quadratic in the program's size.
void applyInsertions(std::map<Scope*, std::map<const Stmt*, Insertions>>& plan) {
  for (auto& [scope, around] : plan) {
    Scope rebuilt;
    rebuilt.reserve(scope->size() + 2 * around.size());
    for (StmtPtr& s : *scope) {
      auto it = around.find(s.get());
      if (it == around.end()) {
        rebuilt.push_back(std::move(s));
        continue;
      }
      for (StmtPtr& b : it->second.before) rebuilt.push_back(std::move(b));
      rebuilt.push_back(std::move(s));
      for (auto a = it->second.after.rbegin(); a != it->second.after.rend(); ++a) rebuilt.push_back(std::move(*a));
    }
    *scope = std::move(rebuilt);
  }
}

// `first`, or the StartCoalescing of the group that statement `first` sits in: an allocation is
// host work that goes before the group, not between its sends and receives (a receive buffer used
// only by the group and what follows, as the P2P pipeline's chunk in its ELSE branch).
size_t outsideCoalescing(const Scope& scope, size_t first) {
  for (size_t i = first; i-- > 0;) {
    if (scope[i]->is<EndCoalescing>()) return first;
    if (scope[i]->is<StartCoalescing>()) return i;
  }
  return first;
}

Scalar localElements(const TensorView* tv) {
  Scalar n(1);
  for (const IterDomain* id : tv->logical()) {
    if (id->isReduction() || hasLocalExtentOne(id)) continue;
    n = n * id->extent();
  }
  return n;
}

class AllocateAndDeallocate : public Pass {
 public:
  std::string name() const override { return "allocate-and-deallocate"; }
  bool run(LoweringContext& ctx) override {
    HostProgram& p = ctx.program;
    std::set<const TensorView*> inputs(p.inputs().begin(), p.inputs().end());
    std::set<const TensorView*> outputs(p.outputs().begin(), p.outputs().end());
    std::set<const TensorView*> view_bases;
    for (const auto& [v, b] : ctx.viewBase) view_bases.insert(bufferOf(ctx, b));
    // Step 1: the buffers, in order of first use.
    std::map<TensorView*, std::vector<Path>> uses;
    std::vector<TensorView*> order;
    Path path;
    std::map<int, std::vector<TensorView*>> comm_tensors;
    std::vector<TensorView*> group;
    collectCommTensors(p.body(), comm_tensors, group);
    collectUses(ctx, p.body(), path, uses, order, comm_tensors);
    const std::set<const TensorView*> written = writtenBuffers(ctx, p.body());
    // Every insertion is planned against the program as it is now (anchored to the statements
    // of the first and last use), then applied at once: the result is the same as inserting
    // buffer by buffer in `order`.
    std::map<Scope*, std::map<const Stmt*, Insertions>> plan;
    bool changed = false;
    for (TensorView* b : order) {
      if (inputs.count(b) || !written.count(b)) continue;
      const std::vector<Path>& ps = uses.at(b);
      // Buffers of whole tensors (every program tensor that stands for a fusion tensor, outputs
      // included) live across the iterations of any loop that uses them: the top level. Only
      // per-iteration chunks and staging copies go into the innermost scope of their uses.
      const auto origin = ctx.origin.find(b);
      const bool whole = origin != ctx.origin.end() && ctx.hostTensor.count(origin->second.fusionTv) &&
                         ctx.hostTensor.at(origin->second.fusionTv) == b;
      size_t depth = 0;
      if (!view_bases.count(b) && !whole && !outputs.count(b)) {
        for (;; ++depth) {
          bool same = true;
          for (const Path& q : ps)
            if (q.size() <= depth + 1 || q[depth] != ps[0][depth]) same = false;
          if (!same) break;
        }
      }
      Scope* scope = ps[0][depth].first;
      size_t first = ps[0][depth].second, last = first;
      for (const Path& q : ps) {
        first = std::min(first, q[depth].second);
        last = std::max(last, q[depth].second);
      }
      first = outsideCoalescing(*scope, first);
      // Deallocate after the last use (never an output), Allocate before the first.
      std::map<const Stmt*, Insertions>& around = plan[scope];
      if (ctx.options.deallocate && !outputs.count(b)) {
        auto d = std::make_unique<Deallocate>();
        d->tv = b;
        around[(*scope)[last].get()].after.push_back(std::move(d));
      }
      auto a = std::make_unique<Allocate>();
      a->tv = b;
      a->memType = b->memoryType();
      a->legacy = depth == 0 && usesPipelineALoops(ctx.options.protocol);
      if (a->legacy) a->size = localElements(b);
      around[(*scope)[first].get()].before.push_back(std::move(a));
      changed = true;
    }
    applyInsertions(plan);
    // What the verifier may check from here on (ir/verifier.h).
    ctx.allocationsPlaced = true;
    ctx.deallocationsPlaced = ctx.options.deallocate;
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> makeAllocateAndDeallocatePass() { return std::make_unique<AllocateAndDeallocate>(); }

}  // namespace braid
