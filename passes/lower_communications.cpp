// Pass 7: resharding ops -> communications (nvFuser's ConvertOpToCommunication). Every host op
// whose fusion expr reshards becomes `Communication` (type, team and root from the classifier)
// followed by `Wait`, at the top level or inside a stream loop, on that iteration's slices.
// Allocation of the receive buffer is the allocation pass's job (it allocates every buffer
// before its first write).
//
// Layout rules are checked on the actual operands: communications need contiguous buffers (a
// non-contiguous slice is staged through a contiguous copy), and Allgather / Gather / Scatter /
// ReduceScatter need the gathered or scattered axis to be the outermost one that is not of local
// extent 1 (otherwise: "Resharding on an inner axis is not lowerable").
#include "ir/error.h"
#include "passes/fusion_utils.h"
#include "passes/host_builder.h"
#include "passes/pass.h"

namespace braid {
namespace {

// Position in program tensor `t` of fusion logical axis `fusion_axis`, or -1.
int positionOf(const LoweringContext& ctx, const TensorView* t, int fusion_axis) {
  const AxisOrigin& o = ctx.origin.at(t);
  for (size_t k = 0; k < o.positions.size(); ++k)
    if (o.positions[k] == fusion_axis) return static_cast<int>(k);
  return -1;
}

// Step 1: the layout rule for gathering / scattering communications.
void checkOutermost(const LoweringContext& ctx, const Expr& fe, const TensorView* t, int fusion_axis,
                    const char* role) {
  int pos = positionOf(ctx, t, fusion_axis);
  if (pos < 0) return;
  for (int k = 0; k < pos; ++k) {
    const IterDomain* id = t->logical()[static_cast<size_t>(k)];
    if (id->isReduction() || hasLocalExtentOne(id)) continue;
    throw NotLowerableError("Resharding on an inner axis is not lowerable: in `" + tvLabel(fe.output(0)) + " = " +
                            opTypeName(fe.type()) + "(" + tvLabel(fe.input(0)) + ")`, the " + role + " axis " +
                            t->logical()[static_cast<size_t>(pos)]->str() + " of " + t->str() +
                            " is not the outermost axis of the buffer (" + id->str() +
                            " comes first); reorder the logical axes so the sharded axis is outermost");
  }
}

TensorView* stagingCopy(LoweringContext& ctx, TensorView* t) {
  TensorView* s = cloneTensor(ctx.program.tensors(), t, -1, -1, false, MemoryType::kGlobal);
  ctx.origin[s] = ctx.origin.at(t);
  return s;
}

class LowerCommunications : public Pass {
 public:
  std::string name() const override { return "lower-communications"; }
  bool run(LoweringContext& ctx) override {
    changed_ = false;
    rewrite(ctx, ctx.program.body());
    return changed_;
  }

 private:
  void rewrite(LoweringContext& ctx, Scope& scope) {
    Scope out;
    for (auto& s : scope) {
      if (s->is<ForLoop>()) rewrite(ctx, s->as<ForLoop>()->body);
      if (s->is<IfThenElse>()) {
        rewrite(ctx, s->as<IfThenElse>()->thenBody);
        rewrite(ctx, s->as<IfThenElse>()->elseBody);
      }
      if (!s->is<HostOp>()) {
        out.push_back(std::move(s));
        continue;
      }
      const Expr* e = s->as<HostOp>()->op;
      auto oe = ctx.originExpr.find(e);
      const Expr* fe = oe == ctx.originExpr.end() ? nullptr : oe->second;
      auto ci = fe ? ctx.communications.find(fe) : ctx.communications.end();
      if (ci == ctx.communications.end() || ci->second.didToStream || e->output(0) == nullptr ||
          e->inputs().size() != 1 || ctx.origin.at(e->output(0)).fusionTv != fe->output(0)) {
        out.push_back(std::move(s));
        continue;
      }
      const CommunicationInfo& info = ci->second;
      TensorView* in = e->input(0);
      TensorView* dst = e->output(0);
      switch (info.type) {
        case CommunicationType::kAllgather:
        case CommunicationType::kGather:
          checkOutermost(ctx, *fe, in, info.producerAxis, "sharded");
          checkOutermost(ctx, *fe, dst, info.consumerAxis, "gathered");
          break;
        case CommunicationType::kScatter:
          checkOutermost(ctx, *fe, in, info.producerAxis, "scattered");
          checkOutermost(ctx, *fe, dst, info.consumerAxis, "sharded");
          break;
        case CommunicationType::kReduceScatter:
          checkOutermost(ctx, *fe, in, info.producerAxis, "scattered");
          break;
        default:
          break;
      }
      // Step 2: stage non-contiguous slices through contiguous buffers.
      if (ctx.nonContiguousViews.count(in)) {
        TensorView* staged = stagingCopy(ctx, in);
        Expr* copy = ctx.program.tensors().newExpr(OpType::kSet, {in}, {staged});
        out.push_back(makeHostOp(copy));
        ctx.notes.push_back(tvLabel(fe->output(0)) + ": non-contiguous input staged through " + tvLabel(staged));
        in = staged;
      }
      TensorView* final_dst = nullptr;
      if (ctx.nonContiguousViews.count(dst)) {
        final_dst = dst;
        dst = stagingCopy(ctx, dst);
        ctx.notes.push_back(tvLabel(fe->output(0)) + ": non-contiguous output staged through " + tvLabel(dst));
      }
      // Step 3: the communication and its wait.
      auto c = std::make_unique<Communication>();
      c->id = ctx.nextCommunicationId++;
      c->type = info.type;
      c->team = info.team;
      if (info.root) c->root = Scalar(*info.root);
      if (isReducing(info.type)) c->redOp = info.redOp.value_or(ReductionOpType::kAdd);
      c->input = in;
      c->output = dst;
      auto w = std::make_unique<Wait>();
      w->id = c->id;
      out.push_back(std::move(c));
      out.push_back(std::move(w));
      if (final_dst != nullptr) out.push_back(makeHostOp(ctx.program.tensors().newExpr(OpType::kSet, {dst}, {final_dst})));
      changed_ = true;
    }
    scope = std::move(out);
  }

  bool changed_ = false;
};

}  // namespace

std::unique_ptr<Pass> makeLowerCommunicationsPass() { return std::make_unique<LowerCommunications>(); }

}  // namespace braid
