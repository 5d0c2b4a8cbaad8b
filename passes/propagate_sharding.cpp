// Pass 1: propagate device meshes and DIDx / DIDy / Stream parallelization through the fusion,
// forward from inputs to consumers and backward from consumers to producers, as nvFuser's
// PropagateShardings does.
//
// What the user scheduled is kept: fusion inputs and outputs, and every tensor that already has
// a parallelized axis, are "scheduled" and only receive a mesh if they lack one. Propagation
// fills in the unscheduled intermediates (the catalog relies on this: inputs carry DIDx, outputs
// carry Stream). It never puts a device-parallel type on a broadcast or reduction axis, which
// would silently turn a reduction into a local partial sum.
#include <set>

#include "ir/error.h"
#include "passes/fusion_utils.h"
#include "passes/pass.h"

namespace braid {
namespace {

constexpr ParallelType kPropagated[] = {ParallelType::kDIDx, ParallelType::kDIDy, ParallelType::kStream};

// Step 1: Stream and DID parallelization must sit on logical axes (no split or merge of a
// parallel axis): the host program's tensors are the logical domains, and a Stream axis that
// was split or merged would need per-chunk indexing braid does not lower.
void checkParallelAxesAreLogical(const Fusion& f) {
  for (const TensorView* tv : f.tensors()) {
    int streams = 0;
    for (const IterDomain* id : tv->loop()) {
      if (id->parallelType() == ParallelType::kSerial) continue;
      if (id->isStream()) ++streams;
      if (id->isStream() && (id->isBroadcast() || id->isReduction()))
        throw NotLowerableError(tvLabel(tv) + ": the Stream axis " + id->str() + " is a " +
                                (id->isBroadcast() ? "broadcast" : "reduction") +
                                " axis; stream-parallelize an iteration axis");
      if (logicalPosition(tv, id) >= 0) continue;
      const IdTransform* def = id->definition();
      std::string how = def == nullptr ? "is not an axis of it"
                        : def->kind == IdTransform::Kind::kSplit
                            ? "comes from a split of " + (def->in ? def->in->str() : std::string("?"))
                            : "comes from a merge";
      throw NotLowerableError(
          tvLabel(tv) + ": the " + std::string(parallelTypeName(id->parallelType())) + " axis " + id->str() + " " +
          how + "; braid lowers Stream and device parallelization only on logical axes (no split or merge of a "
          "parallel axis). Make the chunked axis an explicit logical axis of extent S (or D) instead, as the "
          "catalog workloads do");
    }
    if (streams > 1) throw NotLowerableError(tvLabel(tv) + " has more than one Stream axis; at most one is supported");
  }
}

// Step 1b: a device-parallel logical axis holds one shard per device of the mesh: its extent
// must be the mesh's size along that parallel type (checked when both are known).
void checkDeviceAxesMatchMeshes(const Fusion& f) {
  for (const TensorView* tv : f.tensors()) {
    if (!tv->hasDeviceMesh()) continue;
    const DeviceMesh& m = *tv->deviceMesh();
    for (const IterDomain* id : tv->logical()) {
      if (!id->isDeviceParallel() || id->isBroadcast()) continue;
      int axis = id->parallelType() == ParallelType::kDIDx ? 0 : 1;
      if (static_cast<int>(m.shape().size()) <= axis) {
        throw NotLowerableError(tvLabel(tv) + ": " + id->str() + " is " + std::string(parallelTypeName(id->parallelType())) +
                                " but its mesh " + m.str() + " has no such dimension");
      }
      int64_t size = m.shape()[m.shape().size() - 1 - static_cast<size_t>(axis)];
      auto ext = id->extent().constValue();
      if (ext && *ext != size)
        throw NotLowerableError(tvLabel(tv) + ": the device-parallel axis " + id->str() + " has extent " +
                                std::to_string(*ext) + " but its mesh " + m.str() + " has " + std::to_string(size) +
                                " devices along it; a sharded axis holds one shard per device (extent D)");
    }
  }
}

// Step 2: meshes, forward then backward.
bool propagateMeshes(Fusion& f) {
  bool changed = false;
  auto exprs = f.exprs();
  for (Expr* e : exprs) {
    const TensorView* ref = nullptr;
    for (const TensorView* in : e->inputs())
      if (in->hasDeviceMesh()) { ref = in; break; }
    if (!ref) continue;
    for (TensorView* out : e->outputs())
      if (!out->hasDeviceMesh()) { out->setDeviceMesh(*ref->deviceMesh()); changed = true; }
  }
  for (auto it = exprs.rbegin(); it != exprs.rend(); ++it) {
    const TensorView* out = (*it)->output(0);
    if (!out->hasDeviceMesh()) continue;
    for (TensorView* in : (*it)->inputs())
      if (!in->hasDeviceMesh()) { in->setDeviceMesh(*out->deviceMesh()); changed = true; }
  }
  return changed;
}

bool canTake(const IterDomain* id) {
  return id->parallelType() == ParallelType::kSerial && !id->isBroadcast() && !id->isReduction();
}

// Step 3: forward. An unscheduled output takes each parallel type it lacks from the first input
// that has it, on the axis that input's axis maps to.
bool propagateForward(Fusion& f, const std::set<const TensorView*>& scheduled) {
  bool changed = false;
  for (Expr* e : f.exprs()) {
    for (TensorView* out : e->outputs()) {
      if (scheduled.count(out)) continue;
      for (ParallelType p : kPropagated) {
        if (logicalAxisOf(out, p) >= 0) continue;
        for (size_t k = 0; k < e->inputs().size(); ++k) {
          int pa = logicalAxisOf(e->input(k), p);
          if (pa < 0 || e->input(k)->logical()[static_cast<size_t>(pa)]->isBroadcast()) continue;
          int ca = producerToConsumerMap(*e, k)[static_cast<size_t>(pa)];
          if (ca < 0) continue;
          IterDomain* id = out->logical()[static_cast<size_t>(ca)];
          if (!canTake(id)) continue;
          id->parallelize(p);
          changed = true;
          break;
        }
      }
    }
  }
  return changed;
}

// Step 4: backward. An unscheduled producer takes each parallel type it lacks from a consumer.
bool propagateBackward(Fusion& f, const std::set<const TensorView*>& scheduled) {
  bool changed = false;
  auto exprs = f.exprs();
  for (auto it = exprs.rbegin(); it != exprs.rend(); ++it) {
    Expr* e = *it;
    const TensorView* out = e->output(0);
    for (size_t k = 0; k < e->inputs().size(); ++k) {
      TensorView* in = e->input(k);
      if (scheduled.count(in)) continue;
      std::vector<int> map = producerToConsumerMap(*e, k);
      for (ParallelType p : kPropagated) {
        if (logicalAxisOf(in, p) >= 0) continue;
        int ca = logicalAxisOf(out, p);
        if (ca < 0 || out->logical()[static_cast<size_t>(ca)]->isBroadcast()) continue;
        for (size_t q = 0; q < map.size(); ++q) {
          if (map[q] != ca) continue;
          IterDomain* id = in->logical()[q];
          if (!canTake(id)) continue;
          id->parallelize(p);
          changed = true;
          break;
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
    checkParallelAxesAreLogical(f);
    std::set<const TensorView*> scheduled;
    for (const TensorView* tv : f.tensors())
      if (f.isInput(tv) || f.isOutput(tv) || hasParallelAxes(tv)) scheduled.insert(tv);
    bool changed = propagateMeshes(f);
    for (int round = 0; round < 8; ++round) {
      bool c = propagateForward(f, scheduled);
      c = propagateBackward(f, scheduled) || c;
      changed = changed || c;
      if (!c) break;
    }
    checkParallelAxesAreLogical(f);
    checkDeviceAxesMatchMeshes(f);
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> makePropagateShardingPass() { return std::make_unique<PropagateSharding>(); }

}  // namespace braid
