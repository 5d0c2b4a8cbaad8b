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
#include <cstdint>
#include <map>
#include <set>
#include <unordered_map>

#include "passes/fusion_utils.h"
#include "passes/host_builder.h"
#include "passes/pass.h"

namespace braid {
namespace {

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

// Where a statement sits: its scope and index there, under the statement whose body holds it
// (`parent`, an index into the list of sites; -1 at the top level). The chain of parents is the
// statement's path from the top level, one level per nested body.
struct Site {
  int parent = -1;
  int level = 0;
  Scope* scope = nullptr;
  size_t index = 0;
};

// Every buffer the program names, in order of first use, with the statements that use it.
struct BufferUses {
  std::vector<Site> sites;                 // one per statement, in program order
  std::vector<TensorView*> order;          // the buffers, in order of first use
  std::vector<bool> written;               // per buffer: some statement writes it
  std::vector<std::pair<size_t, int>> uses;  // (buffer, site), in program order
  std::unordered_map<TensorView*, size_t> buffer;  // buffer -> its position in `order`

  const Site& at(int site) const { return sites[static_cast<size_t>(site)]; }
  size_t bufferIndex(TensorView* b) {
    auto [it, inserted] = buffer.try_emplace(b, order.size());
    if (inserted) {
      order.push_back(b);
      written.push_back(false);
    }
    return it->second;
  }
  // The ancestor of `site` (or itself) at `level`.
  int atLevel(int site, int level) const {
    while (at(site).level > level) site = at(site).parent;
    return site;
  }
  // The number of leading levels two statements' paths share (a level is shared when both paths
  // go through the same statement there).
  int commonLevels(int a, int b) const {
    const int level = std::min(at(a).level, at(b).level);
    a = atLevel(a, level);
    b = atLevel(b, level);
    while (a != b) {
      a = at(a).parent;
      b = at(b).parent;
    }
    return a < 0 ? 0 : at(a).level + 1;
  }
};

void collectUses(const LoweringContext& ctx, Scope& scope, int parent, BufferUses& out,
                 const std::map<int, std::vector<TensorView*>>& comm_tensors, std::vector<TensorView*>& named) {
  const int level = parent < 0 ? 0 : out.at(parent).level + 1;
  for (size_t i = 0; i < scope.size(); ++i) {
    const int site = static_cast<int>(out.sites.size());
    out.sites.push_back(Site{parent, level, &scope, i});
    Stmt& s = *scope[i];
    const std::vector<TensorView*>* ts = &named;
    stmtTensors(s, named);
    if (s.is<Wait>()) {
      auto it = comm_tensors.find(s.as<Wait>()->id);
      if (it != comm_tensors.end()) ts = &it->second;
    }
    for (TensorView* t : *ts) out.uses.emplace_back(out.bufferIndex(bufferOf(ctx, t)), site);
    // Allocate and Deallocate, which this pass adds, write only the buffer they are for, so the
    // flags stay right while the pass inserts them.
    stmtWrites(s, named);
    for (TensorView* t : named)
      if (auto it = out.buffer.find(bufferOf(ctx, t)); it != out.buffer.end()) out.written[it->second] = true;
    if (s.is<ForLoop>()) collectUses(ctx, s.as<ForLoop>()->body, site, out, comm_tensors, named);
    if (s.is<IfThenElse>()) {
      collectUses(ctx, s.as<IfThenElse>()->thenBody, site, out, comm_tensors, named);
      collectUses(ctx, s.as<IfThenElse>()->elseBody, site, out, comm_tensors, named);
    }
  }
}

// Statements to insert around one statement of a scope: `before` in the order given, `after`
// in reverse order (the buffer planned last is freed first, nearest its last use).
struct Insertions {
  std::vector<StmtPtr> before;
  std::vector<StmtPtr> after;
};

// Rebuilds each scope once with its planned insertions. Inserting one statement at a time and
// recomputing every use after each insertion made the pass quadratic in the program's size.
void applyInsertions(std::map<Scope*, std::unordered_map<const Stmt*, Insertions>>& plan) {
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

// For each statement i of a scope: i, or the StartCoalescing of the group statement i sits in:
// an allocation is host work that goes before the group, not between its sends and receives (a
// receive buffer used only by the group and what follows, as the P2P pipeline's chunk in its ELSE
// branch). One pass over the scope, not a scan back from each first use: a lowered 10,000-op
// fusion has tens of thousands of statements in one scope.
std::vector<size_t> outsideCoalescing(const Scope& scope) {
  std::vector<size_t> out(scope.size());
  size_t open = SIZE_MAX;  // the StartCoalescing of the group open here, if any
  for (size_t i = 0; i < scope.size(); ++i) {
    out[i] = open == SIZE_MAX ? i : open;
    if (scope[i]->is<StartCoalescing>()) open = i;
    if (scope[i]->is<EndCoalescing>()) open = SIZE_MAX;
  }
  return out;
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
    // Step 1: the buffers, in order of first use, and where they are used.
    std::map<int, std::vector<TensorView*>> comm_tensors;
    std::vector<TensorView*> group;
    collectCommTensors(p.body(), comm_tensors, group);
    BufferUses u;
    std::vector<TensorView*> named;
    collectUses(ctx, p.body(), -1, u, comm_tensors, named);
    // Step 2: the scope of each buffer's Allocate and Deallocate. Buffers of whole tensors (every
    // program tensor that stands for a fusion tensor, outputs included) live across the iterations
    // of any loop that uses them: the top level. Only per-iteration chunks and staging copies go
    // into the innermost scope that holds all their uses: the deepest level at which every use's
    // path agrees with the first use's and still goes deeper.
    const size_t buffers = u.order.size();
    std::vector<int> first_use(buffers, -1), level(buffers, 0);
    for (const auto& [b, site] : u.uses) {
      if (first_use[b] < 0) {
        first_use[b] = site;
        level[b] = u.at(site).level;
      }
      level[b] = std::min({level[b], u.at(site).level, u.commonLevels(site, first_use[b])});
    }
    for (size_t b = 0; b < buffers; ++b) {
      TensorView* buf = u.order[b];
      const auto origin = ctx.origin.find(buf);
      const bool whole = origin != ctx.origin.end() && ctx.hostTensor.count(origin->second.fusionTv) &&
                         ctx.hostTensor.at(origin->second.fusionTv) == buf;
      if (view_bases.count(buf) || whole || outputs.count(buf)) level[b] = 0;
    }
    // The first and last statement using each buffer in that scope.
    std::vector<size_t> first(buffers, SIZE_MAX), last(buffers, 0);
    for (const auto& [b, site] : u.uses) {
      const size_t index = u.at(u.atLevel(site, level[b])).index;
      first[b] = std::min(first[b], index);
      last[b] = std::max(last[b], index);
    }
    // Every insertion is planned against the program as it is now (anchored to the statements
    // of the first and last use), then applied at once: the result is the same as inserting
    // buffer by buffer in order of first use.
    std::map<Scope*, std::unordered_map<const Stmt*, Insertions>> plan;
    std::unordered_map<const Scope*, std::vector<size_t>> group_starts;  // outsideCoalescing per scope
    bool changed = false;
    for (size_t b = 0; b < buffers; ++b) {
      TensorView* buf = u.order[b];
      if (inputs.count(buf) || !u.written[b]) continue;
      const int depth = level[b];
      Scope* scope = u.at(u.atLevel(first_use[b], depth)).scope;
      auto starts = group_starts.find(scope);
      if (starts == group_starts.end()) starts = group_starts.emplace(scope, outsideCoalescing(*scope)).first;
      const size_t first_at = starts->second[first[b]];
      // Deallocate after the last use (never an output), Allocate before the first.
      std::unordered_map<const Stmt*, Insertions>& around = plan[scope];
      if (ctx.options.deallocate && !outputs.count(buf)) {
        auto d = std::make_unique<Deallocate>();
        d->tv = buf;
        around[(*scope)[last[b]].get()].after.push_back(std::move(d));
      }
      auto a = std::make_unique<Allocate>();
      a->tv = buf;
      a->memType = buf->memoryType();
      a->legacy = depth == 0 && usesPipelineALoops(ctx.options.protocol);
      if (a->legacy) a->size = localElements(buf);
      around[(*scope)[first_at].get()].before.push_back(std::move(a));
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
