// Pass 1b: decompose reshardings (nvFuser's DecomposeReshardings). Afterwards every resharding
// expr is one communication:
//
//  - An op whose output reduces across devices (a device-parallel reduction axis: a matmul or
//    linear contracting a sharded k, a sum over a split sharded axis) is rfactored: the op keeps
//    its inputs and writes a partial result P, whose device axis is the outer part of the reduced
//    axis turned into an iteration axis (each device's sum over its shard), and the output
//    becomes `sum(P)` over that axis, an Allreduce or ReduceScatter:
//
//      Y[t, n, r{k}] (r{k} -> [rDIDx{d}, r{k/d}]) = linear(X, W)
//        =>  P[t, n, iDIDx{d}rf, r{k/d}rf] = linear(X, W);  Y[t, n, rDIDx{d}] = sum(P)
//
//  - Any other resharding op that is not itself one communication (an add, a matmul or a kernel
//    op whose operands are sharded unlike its output) gets a `set` in front of each offending
//    input; the set takes the input to the output's schedule (replayed on the input's mapped
//    axes) and the op becomes local.
#include "ir/error.h"
#include "passes/buffer_layout.h"
#include "passes/communication_classifier.h"
#include "passes/fusion_utils.h"
#include "passes/pass.h"
#include "passes/schedule.h"

namespace braid {
namespace {

constexpr ParallelType kAllTypes[] = {ParallelType::kDIDx, ParallelType::kDIDy, ParallelType::kStream};

bool isCommunicationAlready(const Expr& e) {
  if (e.type() != OpType::kSet && e.type() != OpType::kReduction) return false;
  try {
    classifyCommunication(e);
    return true;
  } catch (const NotLowerableError&) {
    // A set that is not one communication cannot be helped by another set: it keeps its error.
    // A reduction may still be rfactored.
    return e.type() == OpType::kSet;
  }
}

// `add`'s neutral element as nvFuser prints it for `dtype`.
std::string zeroOf(DataType dtype) {
  if (dtype == DataType::kBool) return "bool(false)";
  if (dtype == DataType::kHalf || dtype == DataType::kBFloat16) return "float(0)";
  return std::string(dataTypeName(dtype)) + "(0)";
}

// A fresh copy of `tv`'s logical domain (same extents and kinds, serial).
std::vector<IterDomain*> freshLogical(Fusion& f, const TensorView* tv) {
  std::vector<IterDomain*> out;
  for (const IterDomain* id : tv->logical()) out.push_back(f.newIterDomain(id->extent(), id->iterType()));
  return out;
}

// Step 1: rfactor `e` along device type `t` (its output has a `t`-parallel reduction axis).
// Returns the partial tensor.
TensorView* rfactor(Fusion& f, Expr& e, ParallelType t) {
  TensorView* y = e.output(0);
  IterDomain* rd = parallelLoopAxis(y, t, true);
  const AxisPath rpath = requireAxisPath(y, rd);
  const int r = rpath.base[0];
  // The partial: Y's logical domain and schedule, with the device part of the reduced axis an
  // iteration axis of its own.
  TensorView* part = f.newTensor(freshLogical(f, y), y->dtype());
  if (y->hasDeviceMesh()) part->inheritDeviceMesh(*y->deviceMesh());
  for (IterDomain* id : y->loop()) {
    if (id->parallelType() == ParallelType::kSerial) continue;
    // The partial holds every row the output scatters along `t` (its own `t` axis is the partial
    // one): the output's `t` iteration axis stays the output's.
    if (id->parallelType() == t && !id->isReduction()) continue;
    AxisPath path = requireAxisPath(y, id);
    std::string why;
    IterDomain* pid = replayPath(part, path, &why);
    if (pid == nullptr) throw NotLowerableError("rfactoring " + tvLabel(y) + ": " + why);
    pid->parallelize(id->parallelType());
    if (id == rd) pid->setIterType(IterType::kIteration);
  }
  // A Stream axis the output lacks comes from the op's inputs, as propagation would have given
  // it: the partial is computed chunk by chunk along an input's chunks (a Stream -> DID reduce).
  if (streamLoopAxis(part) == nullptr) {
    for (size_t k = 0; k < e.inputs().size() && streamLoopAxis(part) == nullptr; ++k) {
      const IterDomain* s = streamLoopAxis(e.input(k));
      if (s == nullptr) continue;
      auto path = pathToConsumer(e, k, requireAxisPath(e.input(k), s));
      if (!path || part->logical()[static_cast<size_t>(path->base[0])]->isReduction()) continue;
      if (IterDomain* pid = replayPath(part, *path); pid != nullptr && pid->parallelType() == ParallelType::kSerial)
        pid->parallelize(ParallelType::kStream);
    }
  }
  // Everything the reduced axis became is rfactor.
  for (IterDomain* id : part->loop()) {
    auto p = axisPath(part, id);
    if (p && p->base[0] == r) id->setRFactor(true);
  }
  e.replaceOutput(y, part);
  part->setDefinition(&e);

  // Y = sum(P) over the device axis: Y's reduced axis becomes one device-parallel reduction axis
  // of the device extent, as nvFuser prints it (`rdeviceIdx.x{d}`).
  IterDomain* red = f.newIterDomain(rd->extent(), IterType::kReduction, t);
  std::vector<IterDomain*> logical = y->logical();
  logical[static_cast<size_t>(r)] = red;
  std::vector<IterDomain*> loop;
  bool placed = false;
  for (IterDomain* id : y->loop()) {
    auto p = axisPath(y, id);
    if (p && p->base[0] == r) {
      if (!placed) loop.push_back(red);
      placed = true;
      continue;
    }
    loop.push_back(id);
  }
  y->setLogical(logical);
  y->setLoop(loop);
  Expr* combine = f.newExpr(OpType::kReduction, {part}, {y});
  combine->reductionOp = e.type() == OpType::kReduction ? e.reductionOp : ReductionOpType::kAdd;
  combine->initValue = e.type() == OpType::kReduction ? e.initValue : zeroOf(y->dtype());
  return part;
}

// The device type along which `e`'s output reduces across devices and that `e` does not already
// do as one communication, if any.
std::optional<ParallelType> rfactorType(const Expr& e) {
  if (e.outputs().size() != 1) return std::nullopt;
  for (ParallelType t : kDeviceParallelTypes)
    if (parallelLoopAxis(e.output(0), t, true) != nullptr) return t;
  return std::nullopt;
}

// Step 2: the input as the consumer wants it: same axes, the consumer's schedule replayed on the
// mapped axes, the consumer's mesh.
TensorView* reshardedCopy(Fusion& f, Expr& e, size_t k) {
  TensorView* in = e.input(k);
  const TensorView* out = e.output(0);
  std::vector<IterDomain*> logical;
  for (const IterDomain* id : in->logical())
    if (!id->isReduction()) logical.push_back(f.newIterDomain(id->extent(), id->iterType()));
  TensorView* copy = f.newTensor(logical, in->dtype());
  if (out->hasDeviceMesh()) copy->inheritDeviceMesh(*out->deviceMesh());
  f.newExpr(OpType::kSet, {in}, {copy});
  // The consumer's schedule, in the copy's terms (the set maps axes one to one).
  const Expr& set = *copy->definition();
  for (ParallelType p : kAllTypes) {
    for (bool reduction : {false, true}) {
      if (reduction && p == ParallelType::kStream) continue;
      const IterDomain* id = parallelLoopAxis(out, p, reduction);
      if (id == nullptr) continue;
      auto on_in = pathToProducer(e, k, requireAxisPath(out, id));
      if (!on_in) continue;
      // A Stream axis only when the input can be read chunk by chunk along it; otherwise the
      // resharding happens once, before the loop, and the loop reads chunks of its result.
      if (p == ParallelType::kStream && !canChunk(in, *on_in)) continue;
      auto on_copy = pathToConsumer(set, 0, *on_in);
      if (!on_copy || copy->logical()[static_cast<size_t>(on_copy->base[0])]->isBroadcast()) continue;
      if (parallelLoopAxis(copy, p, false) != nullptr) continue;
      IterDomain* axis = replayPath(copy, *on_copy);
      if (axis != nullptr && axis->parallelType() == ParallelType::kSerial) axis->parallelize(p);
    }
  }
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
      if (auto t = rfactorType(*e)) {
        TensorView* y = e->output(0);
        TensorView* part = rfactor(ctx.fusion, *e, *t);
        ctx.notes.push_back(tvLabel(y) + ": rfactored into the partial " + tvLabel(part) + " = " + opTypeName(e->type()) +
                            "(...) and " + tvLabel(y) + " = sum(" + tvLabel(part) + ") across " +
                            std::string(parallelTypeName(*t)));
        changed = true;
      }
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
