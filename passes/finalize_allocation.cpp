// Pass 2: finalize allocation domains (nvFuser's FinalizeMultideviceDomains, reduced to what
// host lowering needs).
//
//  - A device-parallel axis always shards the allocation: each rank holds one shard (the buffer
//    has local extent 1 on it).
//  - A Stream axis shards the allocation (the tensor is allocated per iteration of its stream
//    loop, one chunk at a time) only if the tensor is neither a fusion input nor output and its
//    Stream axis maps to the Stream axis of every consumer. Otherwise the allocation is full:
//    the whole tensor exists across iterations and each iteration works on a slice of it.
#include "ir/error.h"
#include "passes/fusion_utils.h"
#include "passes/pass.h"

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
    bool sharded = logicalAxisOf(tv, ParallelType::kDIDx) >= 0 || logicalAxisOf(tv, ParallelType::kDIDy) >= 0;
    if (sharded && !tv->hasDeviceMesh())
      throw NotLowerableError(tvLabel(tv) + " is device-parallel but has no device mesh");
  }
}

// Step 2: does the Stream axis of `tv` map to the Stream axis of every consumer?
bool streamAxisMapsToEveryConsumer(const TensorView* tv, int axis) {
  for (const Expr* use : tv->uses()) {
    for (size_t k = 0; k < use->inputs().size(); ++k) {
      if (use->input(k) != tv) continue;
      int ca = producerToConsumerMap(*use, k)[static_cast<size_t>(axis)];
      if (ca < 0 || !use->output(0)->logical()[static_cast<size_t>(ca)]->isStream()) return false;
    }
  }
  return true;
}

class FinalizeAllocation : public Pass {
 public:
  std::string name() const override { return "finalize-allocation"; }
  bool run(LoweringContext& ctx) override {
    Fusion& f = ctx.fusion;
    checkMeshes(f);
    bool changed = false;
    for (TensorView* tv : f.tensors()) {
      int s = logicalAxisOf(tv, ParallelType::kStream);
      if (s < 0 || f.isInput(tv) || f.isOutput(tv)) continue;
      if (!streamAxisMapsToEveryConsumer(tv, s)) continue;
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
