// Pass 5: host lowering. Builds the host program from the segments, in segment order: every
// fusion tensor gets a program tensor (same name, same axes), a standalone segment becomes a
// host-evaluated op (resharding ones become communications in pass 7), a kernel segment becomes
// `PostOnStream` of a HostUnit holding its exprs. Stream loops come in the next pass.
#include <unordered_set>

#include "passes/fusion_utils.h"
#include "passes/host_builder.h"
#include "passes/pass.h"

namespace braid {
namespace {

// Step 1: program tensors, one per fusion tensor, same names and IterDomain ids: the buffer of
// the whole tensor (its device axes split off in place; stream loops later view it chunk by
// chunk, or replace it by per-iteration buffers).
void cloneTensors(LoweringContext& ctx) {
  for (const TensorView* tv : ctx.fusion.tensors()) {
    TensorView* c = cloneLayout(ctx, tv, bufferLayout(tv, false), -1, tv->name(), true, MemoryType::kGlobal);
    ctx.hostTensor[tv] = c;
  }
  for (const TensorView* tv : ctx.fusion.inputs()) ctx.program.inputs().push_back(ctx.hostTensor.at(tv));
  for (const TensorView* tv : ctx.fusion.outputs()) ctx.program.outputs().push_back(ctx.hostTensor.at(tv));
}

// Step 2: one statement per segment.
void lowerSegments(LoweringContext& ctx) {
  int next_unit = 0;
  for (const Segment& seg : ctx.segments) {
    if (seg.kind == Segment::Kind::kHostOp) {
      const Expr* e = seg.exprs.at(0);
      std::vector<TensorView*> ins, outs;
      for (const TensorView* t : e->inputs()) ins.push_back(ctx.hostTensor.at(t));
      for (const TensorView* t : e->outputs()) outs.push_back(ctx.hostTensor.at(t));
      Expr* c = cloneExpr(ctx.program.tensors(), *e, ins, outs, {}, -1);
      ctx.originExpr[c] = e;
      ctx.program.body().push_back(makeHostOp(c));
      continue;
    }
    std::unordered_set<const TensorView*> produced;
    std::vector<const Expr*> exprs(seg.exprs.begin(), seg.exprs.end());
    for (const Expr* e : exprs) {
      for (const TensorView* t : e->outputs()) produced.insert(t);
    }
    auto post = std::make_unique<PostOnStream>();
    post->hostUnit = next_unit;
    std::unordered_set<const TensorView*> seen;
    for (const Expr* e : exprs)
      for (const TensorView* t : e->inputs())
        if (!produced.count(t) && seen.insert(t).second) post->inputs.push_back(ctx.hostTensor.at(t));
    // Outputs: produced here and used outside the segment, or fusion outputs.
    for (const Expr* e : exprs)
      for (const TensorView* t : e->outputs()) {
        bool used_outside = ctx.fusion.isOutput(t);
        for (const Expr* u : t->uses())
          if (std::find(exprs.begin(), exprs.end(), u) == exprs.end()) used_outside = true;
        if (used_outside) post->outputs.push_back(ctx.hostTensor.at(t));
      }
    std::unordered_set<const TensorView*> boundary;
    for (TensorView* t : post->inputs) boundary.insert(ctx.origin.at(t).fusionTv);
    for (TensorView* t : post->outputs) boundary.insert(ctx.origin.at(t).fusionTv);
    ctx.program.hostUnits()[next_unit] = buildHostUnit(
        next_unit, exprs,
        [&](const TensorView* ft) -> TensorView* { return boundary.count(ft) ? ctx.hostTensor.at(ft) : nullptr; },
        [](const TensorView*) { return -1; });
    ctx.unitExprs[next_unit] = exprs;
    ctx.program.body().push_back(std::move(post));
    ++next_unit;
  }
}

class HostLowering : public Pass {
 public:
  std::string name() const override { return "host-lowering"; }
  bool run(LoweringContext& ctx) override {
    cloneTensors(ctx);
    lowerSegments(ctx);
    ctx.hasProgram = true;
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> makeHostLoweringPass() { return std::make_unique<HostLowering>(); }

}  // namespace braid
