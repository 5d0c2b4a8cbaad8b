// Pass 2: finalize allocation domains (nvFuser's FinalizeMultideviceDomains, reduced to what
// host lowering needs).
//
//  - A device-parallel axis always shards the allocation: each rank holds one shard (the buffer
//    has local extent 1 on it).
//  - A Stream axis shards the allocation (the tensor is allocated per iteration of its stream
//    loop, one chunk at a time) only if the tensor is neither a fusion input nor output, its
//    Stream axis maps to the Stream axis of every consumer (derived by the same splits), and its
//    chunks provably have one size. Otherwise the allocation is full: the whole tensor exists
//    across iterations and each iteration works on a view of its chunk.
#include "ir/error.h"
#include "passes/fusion_utils.h"
#include "passes/pass.h"
#include "passes/schedule.h"

namespace braid {
namespace {

// Step 1: every tensor that has a mesh or not, consistently (nvFuser validates the same).
void checkMeshes(const Fusion& f) {
  bool any = false, all = true;
  for (const TensorView* tv : f.tensors()) {
    any = any || tv->hasDeviceMesh();
    all = all && tv->hasDeviceMesh();
  }
  if (any && !all) {
    for (const TensorView* tv : f.tensors())
      if (!tv->hasDeviceMesh())
        throw NotLowerableError(tvLabel(tv) + " has no device mesh while other tensors have one; give every tensor "
                                "a mesh (or none)");
  }
  for (const TensorView* tv : f.tensors()) {
    bool sharded = false;
    for (const IterDomain* id : tv->loop()) sharded = sharded || id->isDeviceParallel();
    if (sharded && !tv->hasDeviceMesh())
      throw NotLowerableError(tvLabel(tv) + " is device-parallel but has no device mesh");
  }
}

// Step 2: does the Stream axis of `tv` map to the Stream axis of every consumer (derived the
// same way), so that each iteration needs only its own chunk?
bool streamAxisMapsToEveryConsumer(const TensorView* tv, const AxisPath& path) {
  for (const Expr* use : tv->uses()) {
    for (size_t k = 0; k < use->inputs().size(); ++k) {
      if (use->input(k) != tv) continue;
      auto mapped = pathToConsumer(*use, k, path);
      if (!mapped) return false;
      auto same = [&](const IterDomain* id) {
        auto p = id == nullptr ? std::nullopt : axisPath(use->output(0), id);
        return p && *p == *mapped;
      };
      // The consumer's Stream axis, or (Stream -> DID) its device axis: each iteration's chunk
      // is consumed by that iteration alone.
      if (!same(streamLoopAxis(use->output(0))) && !same(parallelLoopAxis(use->output(0), ParallelType::kDIDx)) &&
          !same(parallelLoopAxis(use->output(0), ParallelType::kDIDy)))
        return false;
    }
  }
  return true;
}

// Step 3: a per-iteration buffer has one size for every iteration, so the split that makes the
// Stream axis must divide provably (constant extents). With a shorter last chunk the tensor is
// allocated in full and viewed chunk by chunk instead.
bool chunksAreEqual(const IterDomain* stream_axis) {
  const IdTransform* def = stream_axis->definition();
  if (def == nullptr) return true;  // a logical Stream axis: one element per iteration
  auto e = constExtent(def->in->extent());
  auto f = constExtent(def->factor);
  return e && f && *f > 0 && *e % *f == 0;
}

class FinalizeAllocation : public Pass {
 public:
  std::string name() const override { return "finalize-allocation"; }
  bool run(LoweringContext& ctx) override {
    Fusion& f = ctx.fusion;
    checkMeshes(f);
    bool changed = false;
    for (TensorView* tv : f.tensors()) {
      const IterDomain* s = streamLoopAxis(tv);
      if (s == nullptr || f.isInput(tv) || f.isOutput(tv)) continue;
      auto path = axisPath(tv, s);
      if (!path || !streamAxisMapsToEveryConsumer(tv, *path)) continue;
      if (!chunksAreEqual(s)) {
        ctx.notes.push_back(tvLabel(tv) + ": Stream chunks of unequal or unknown size, allocated in full");
        continue;
      }
      changed = ctx.streamShardedAllocation.insert(tv).second || changed;
    }
    std::string note = "stream-sharded allocations:";
    for (const TensorView* tv : f.tensors())
      if (ctx.streamShardedAllocation.count(tv)) note += " " + tvLabel(tv);
    ctx.notes.push_back(note);
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> makeFinalizeAllocationPass() { return std::make_unique<FinalizeAllocation>(); }

}  // namespace braid
