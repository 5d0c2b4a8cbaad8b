// Pass 1: propagate device meshes and DIDx / DIDy / Stream schedules through the fusion, as
// nvFuser's PropagateShardings does.
//
// What the user scheduled is kept: a tensor whose mesh the user set (setDeviceMesh, not a mesh an
// op took over from its input) or that has a parallel loop axis is left alone; a fusion input
// only receives Stream (which shards nothing of an input's buffer but tells its consumers how to
// chunk it). Every other tensor takes the schedule of its neighbours: forward from an op's inputs
// (for matmul and linear the weight first, as nvFuser), then backward from its output. A
// schedule is replayed, not copied: the merges and splits that produce the parallel axis are
// applied to the mapped logical axes of the target (`outerSplit(0, D)` then DIDx), so split and
// merged parallel axes propagate like logical ones. A device type may land on a reduction axis
// (a contraction over a sharded axis: each device then holds a partial result, which
// decompose-reshardings turns into a local op and a reduction collective); a Stream axis never
// does, and nothing lands on a broadcast axis.
#include <algorithm>
#include <unordered_set>

#include "ir/error.h"
#include "passes/fusion_utils.h"
#include "passes/pass.h"
#include "passes/schedule.h"

namespace braid {
namespace {

constexpr ParallelType kPropagated[] = {ParallelType::kDIDx, ParallelType::kDIDy, ParallelType::kStream};

int parallelIterationAxes(const TensorView* tv) {
  int n = 0;
  for (const IterDomain* id : tv->loop())
    if (!id->isReduction() && id->parallelType() != ParallelType::kSerial) ++n;
  return n;
}

// Step 1: meshes, forward then backward. `exprs`: the fusion's exprs in a topological order
// (propagation changes schedules and meshes, never the exprs, so one order serves every step).
bool propagateMeshes(const std::vector<Expr*>& exprs) {
  bool changed = false;
  for (Expr* e : exprs) {
    const TensorView* ref = nullptr;
    for (const TensorView* in : e->inputs())
      if (in->hasDeviceMesh()) {
        ref = in;
        break;
      }
    if (!ref) continue;
    for (TensorView* out : e->outputs())
      if (!out->hasDeviceMesh()) {
        out->inheritDeviceMesh(*ref->deviceMesh());
        changed = true;
      }
  }
  for (auto it = exprs.rbegin(); it != exprs.rend(); ++it) {
    const TensorView* out = (*it)->output(0);
    if (!out->hasDeviceMesh()) continue;
    for (TensorView* in : (*it)->inputs())
      if (!in->hasDeviceMesh()) {
        in->inheritDeviceMesh(*out->deviceMesh());
        changed = true;
      }
  }
  return changed;
}

// The order in which an op's inputs lend their schedule to its output: the weight (and bias)
// before the input of matmul and linear, otherwise the most parallel input first.
std::vector<size_t> referenceOrder(const Expr& e) {
  const bool contraction = e.type() == OpType::kLinear || e.type() == OpType::kMatmul;
  std::vector<int> rank(e.inputs().size());  // sort key, smallest first
  for (size_t i = 0; i < rank.size(); ++i)
    rank[i] = contraction ? (i == 0 ? 1 : 0) : -parallelIterationAxes(e.input(i));
  // A stable insertion sort: an op has a few inputs, and std::stable_sort would allocate a
  // temporary buffer per op.
  std::vector<size_t> order;
  order.reserve(rank.size());
  for (size_t i = 0; i < rank.size(); ++i) {
    auto at = order.end();
    while (at != order.begin() && rank[*(at - 1)] > rank[i]) --at;
    order.insert(at, i);
  }
  return order;
}

// Whether `tv` lacks parallel type `p` on the kind of axis (iteration or reduction) `on`.
bool lacks(const TensorView* tv, ParallelType p, const IterDomain* on) {
  if (on->isReduction()) return parallelLoopAxis(tv, p, true) == nullptr && parallelLoopAxis(tv, p, false) == nullptr;
  return parallelLoopAxis(tv, p, false) == nullptr;
}

// Replays `ref`'s `p` axes (found with `path`) onto `target`: `mapped` gives the path on the
// target. Returns whether it changed anything.
bool shardAxisLike(TensorView* target, ParallelType p, const AxisPath& mapped) {
  for (int b : mapped.base) {
    const IterDomain* id = target->logical()[static_cast<size_t>(b)];
    if (id->isBroadcast()) return false;
    if (p == ParallelType::kStream && id->isReduction()) return false;
  }
  const IterDomain* base0 = target->logical()[static_cast<size_t>(mapped.base[0])];
  if (!lacks(target, p, base0)) return false;
  std::string why;
  // Replay on a trial basis: a conflicting schedule leaves the target as it was only if nothing
  // was applied, so check first that the path is free.
  IterDomain* axis = replayPath(target, mapped, &why);
  if (axis == nullptr || axis->parallelType() != ParallelType::kSerial) return false;
  if (axis->isBroadcast()) return false;
  axis->parallelize(p);
  return true;
}

// Forward: an unscheduled output takes each parallel type it lacks from the inputs, in order.
bool propagateForward(const std::vector<Expr*>& exprs, const std::unordered_set<const TensorView*>& scheduled) {
  bool changed = false;
  for (Expr* e : exprs) {
    for (TensorView* out : e->outputs()) {
      if (scheduled.count(out)) continue;
      for (size_t k : referenceOrder(*e)) {
        const TensorView* ref = e->input(k);
        for (ParallelType p : kPropagated) {
          // A producer's device-parallel reduction axis is gone from its data: only iteration
          // axes lend their schedule forward.
          const IterDomain* id = parallelLoopAxis(ref, p, false);
          if (id == nullptr) continue;
          auto path = axisPath(ref, id);
          if (!path) continue;
          auto mapped = pathToConsumer(*e, k, *path);
          if (!mapped) continue;
          changed = shardAxisLike(out, p, *mapped) || changed;
        }
      }
    }
  }
  return changed;
}

// Backward: an unscheduled producer (or a fusion input, Stream only) takes each parallel type it
// lacks from the op's output.
bool propagateBackward(const Fusion& f, const std::vector<Expr*>& exprs,
                       const std::unordered_set<const TensorView*>& scheduled) {
  bool changed = false;
  for (auto it = exprs.rbegin(); it != exprs.rend(); ++it) {
    Expr* e = *it;
    const TensorView* out = e->output(0);
    for (size_t k = 0; k < e->inputs().size(); ++k) {
      TensorView* in = e->input(k);
      const bool input = f.isInput(in);
      if (scheduled.count(in) && !input) continue;
      for (ParallelType p : kPropagated) {
        if (input && p != ParallelType::kStream) continue;
        for (bool reduction : {false, true}) {
          const IterDomain* id = parallelLoopAxis(out, p, reduction);
          if (id == nullptr || (reduction && p == ParallelType::kStream)) continue;
          auto path = axisPath(out, id);
          if (!path) continue;
          auto mapped = pathToProducer(*e, k, *path);
          if (!mapped) continue;
          // A producer axis that the op reduces is an iteration axis of the producer.
          if (in->logical()[static_cast<size_t>(mapped->base[0])]->isReduction()) continue;
          if (parallelLoopAxis(in, p, false) != nullptr) continue;
          changed = shardAxisLike(in, p, *mapped) || changed;
        }
      }
    }
  }
  return changed;
}

class PropagateSharding : public Pass {
 public:
  std::string name() const override { return "propagate-sharding"; }
  bool run(LoweringContext& ctx) override {
    Fusion& f = ctx.fusion;
    // Step 0: the user's schedules must be lowerable before anything is derived from them.
    checkSchedules(f);
    std::unordered_set<const TensorView*> scheduled;
    for (const TensorView* tv : f.tensors())
      if (f.isInput(tv) || tv->hasUserMesh() || hasParallelAxes(tv)) scheduled.insert(tv);
    const std::vector<Expr*> exprs = topologicalExprs(f);
    bool changed = propagateMeshes(exprs);
    for (int round = 0; round < 8; ++round) {
      bool c = propagateForward(exprs, scheduled);
      c = propagateBackward(f, exprs, scheduled) || c;
      changed = changed || c;
      if (!c) break;
    }
    checkSchedules(f);
    std::string note = "schedules:";
    for (const TensorView* tv : f.tensors())
      if (!scheduled.count(tv) && hasParallelAxes(tv)) note += " " + tv->str();
    ctx.notes.push_back(note);
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> makePropagateShardingPass() { return std::make_unique<PropagateSharding>(); }

}  // namespace braid
