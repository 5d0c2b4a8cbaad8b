// Pass 1b: decompose reshardings (nvFuser's DecomposeReshardings). A resharding expr that is not
// itself one communication (an add, a matmul, a kernel op whose operands are sharded
// differently from its output) gets a `set` in front of each offending input: the set takes the
// input to the output's sharding (a communication the classifier knows), and the op becomes
// local. Reductions over a device-parallel axis are communications already and stay as they are.
#include "ir/error.h"
#include "passes/communication_classifier.h"
#include "passes/fusion_utils.h"
#include "passes/pass.h"

namespace braid {
namespace {

bool isCommunicationAlready(const Expr& e) {
  if (e.type() != OpType::kSet && e.type() != OpType::kReduction) return false;
  try {
    classifyCommunication(e);
    return true;
  } catch (const NotLowerableError&) {
    // A set that is not one communication cannot be helped by another set; a reduction that
    // reduces its device-parallel axis needs an rfactor braid does not do. Both keep their error.
    if (e.type() == OpType::kSet) return true;
    const TensorView* p = e.input(0);
    int pa = logicalAxisOf(p, ParallelType::kDIDx);
    if (pa < 0) return false;
    int c = producerToConsumerMap(e, 0)[static_cast<size_t>(pa)];
    return c >= 0 && e.output(0)->logical()[static_cast<size_t>(c)]->isReduction();
  }
}

// Step 1: the input as the consumer wants it: same axes, the consumer's parallelization on the
// mapped axes, the consumer's mesh.
TensorView* reshardedCopy(Fusion& f, Expr& e, size_t k) {
  TensorView* in = e.input(k);
  const TensorView* out = e.output(0);
  std::vector<int> map = producerToConsumerMap(e, k);
  std::vector<IterDomain*> logical;
  for (size_t q = 0; q < in->logical().size(); ++q) {
    const IterDomain* id = in->logical()[q];
    if (id->isReduction()) continue;
    ParallelType p = ParallelType::kSerial;
    if (map[q] >= 0) {
      const IterDomain* c = out->logical()[static_cast<size_t>(map[q])];
      if (!c->isReduction() && !id->isBroadcast()) p = c->parallelType();
      if (c->isReduction() && c->isDeviceParallel()) p = c->parallelType();
    }
    logical.push_back(f.newIterDomain(id->extent(), id->isBroadcast() ? IterType::kBroadcast : IterType::kIteration, p));
  }
  TensorView* copy = f.newTensor(logical, in->dtype());
  if (out->hasDeviceMesh()) copy->setDeviceMesh(*out->deviceMesh());
  f.newExpr(OpType::kSet, {in}, {copy});
  e.replaceInput(in, copy);
  in->removeUse(&e);
  copy->addUse(&e);
  return copy;
}

class DecomposeReshardings : public Pass {
 public:
  std::string name() const override { return "decompose-reshardings"; }
  bool run(LoweringContext& ctx) override {
    bool changed = false;
    for (Expr* e : topologicalExprs(ctx.fusion)) {
      if (!isResharding(*e) || isCommunicationAlready(*e)) continue;
      for (size_t k = 0; k < e->inputs().size(); ++k) {
        if (!isReshardingPair(*e, k)) continue;
        TensorView* in = e->input(k);
        TensorView* copy = reshardedCopy(ctx.fusion, *e, k);
        ctx.notes.push_back(tvLabel(e->output(0)) + ": resharding input " + tvLabel(in) + " through " +
                            tvLabel(copy) + " = set(" + tvLabel(in) + ")");
        changed = true;
      }
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> makeDecomposeReshardingsPass() { return std::make_unique<DecomposeReshardings>(); }

}  // namespace braid
