// Pass 7: resharding ops -> communications (nvFuser's ConvertOpToCommunication). Every host op
// whose fusion expr reshards becomes `Communication` (type, team and root from the classifier)
// followed by `Wait`, at the top level or inside a stream loop, on that iteration's chunks. On a
// 2D mesh a collective along one device type runs within each slice of the mesh: one
// `IF Manual ( <rank in team> ):` per team (team_branches.h). Allocation of the receive buffer is
// the allocation pass's job (it allocates every buffer before its first write).
//
// Layout rules are checked on the actual operands: communications need contiguous buffers (a
// non-contiguous view is staged through a contiguous copy), and Allgather / Gather / Scatter /
// ReduceScatter need the gathered or scattered block to be outermost: every axis before it holds
// one element per rank (otherwise: "Resharding on an inner axis is not lowerable").
#include "ir/error.h"
#include "passes/fusion_utils.h"
#include "passes/host_builder.h"
#include "passes/pass.h"
#include "passes/team_branches.h"

namespace braid {
namespace {

// The path of the axis that a device split subdivides (the split's input).
std::optional<AxisPath> parentOf(std::optional<AxisPath> p) {
  if (!p) return std::nullopt;
  if (p->steps.empty()) return p;  // a logical device axis: the block is the axis itself
  p->steps.pop_back();
  return p;
}

// Step 1: the layout rule for gathering / scattering communications: in program tensor `t`, the
// axis derived by `path` (the block of one device, or the axis holding all blocks) comes first
// among the axes that hold more than one element per rank.
void checkOutermost(const LoweringContext& ctx, const Expr& fe, const TensorView* t, const std::optional<AxisPath>& path,
                    const char* role) {
  if (!path) return;
  const std::string where = "in `" + tvLabel(fe.output(0)) + " = " + opTypeName(fe.type()) + "(" + tvLabel(fe.input(0)) + ")`";
  int pos = ctx.origin.at(t).positionOf(*path);
  if (pos < 0)
    throw NotLowerableError("Resharding on an inner axis is not lowerable: " + where + ", the " + role + " axis (" +
                            path->str() + ") is not an axis of the buffer " + t->str() +
                            "; its device split must be the outer part of the axis the other side holds");
  for (int k = 0; k < pos; ++k) {
    const IterDomain* id = t->logical()[static_cast<size_t>(k)];
    if (id->isReduction() || hasLocalExtentOne(ctx, id)) continue;
    throw NotLowerableError("Resharding on an inner axis is not lowerable: " + where + ", the " + role + " axis " +
                            t->logical()[static_cast<size_t>(pos)]->str() + " of " + t->str() +
                            " is not the outermost axis of the buffer (" + id->str() +
                            " comes first); reorder the logical axes so the sharded axis is outermost");
  }
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
      if (ci == ctx.communications.end() || ci->second.didToStream || ci->second.streamToDid || e->output(0) == nullptr ||
          e->inputs().size() != 1 || ctx.origin.at(e->output(0)).fusionTv != fe->output(0)) {
        out.push_back(std::move(s));
        continue;
      }
      const CommunicationInfo& info = ci->second;
      TensorView* in = e->input(0);
      TensorView* dst = e->output(0);
      auto mapped = [&](const std::optional<AxisPath>& p, bool to_consumer) -> std::optional<AxisPath> {
        if (!p) return std::nullopt;
        return to_consumer ? pathToConsumer(*fe, 0, *p) : pathToProducer(*fe, 0, *p);
      };
      switch (info.type) {
        case CommunicationType::kAllgather:
        case CommunicationType::kGather:
          checkOutermost(ctx, *fe, in, info.producerPath, "sharded");
          checkOutermost(ctx, *fe, dst, parentOf(mapped(info.producerPath, true)), "gathered");
          break;
        case CommunicationType::kScatter:
          checkOutermost(ctx, *fe, in, parentOf(mapped(info.consumerPath, false)), "scattered");
          checkOutermost(ctx, *fe, dst, info.consumerPath, "sharded");
          break;
        case CommunicationType::kReduceScatter:
          checkOutermost(ctx, *fe, in, parentOf(mapped(info.consumerPath, false)), "scattered");
          break;
        case CommunicationType::kAllToAll:
          checkOutermost(ctx, *fe, in, info.producerPath, "sharded");
          checkOutermost(ctx, *fe, dst, info.consumerPath, "sharded");
          break;
        default:
          break;
      }
      // Step 2: stage non-contiguous views through contiguous buffers.
      if (ctx.nonContiguousViews.count(in)) {
        TensorView* staged = stagingBufferFor(ctx, in);
        Expr* copy = ctx.program.tensors().newExpr(OpType::kSet, {in}, {staged});
        out.push_back(makeHostOp(copy));
        ctx.notes.push_back(tvLabel(fe->output(0)) + ": non-contiguous input staged through " + tvLabel(staged));
        in = staged;
      }
      TensorView* final_dst = nullptr;
      if (ctx.nonContiguousViews.count(dst)) {
        final_dst = dst;
        dst = stagingBufferFor(ctx, dst);
        ctx.notes.push_back(tvLabel(fe->output(0)) + ": non-contiguous output staged through " + tvLabel(dst));
      }
      // Step 3: the communication and its wait, once per team.
      forEachTeam(info, *fe->input(0)->deviceMesh(), out, [&](const std::vector<int64_t>& team, Scope& into) {
        auto c = std::make_unique<Communication>();
        c->id = ctx.nextCommunicationId++;
        c->type = info.type;
        c->team = team;
        if (info.rootIndex && info.teams.size() > 1) c->root = Scalar(team[static_cast<size_t>(*info.rootIndex)]);
        else if (info.root) c->root = Scalar(*info.root);
        if (isReducing(info.type)) c->redOp = info.redOp.value_or(ReductionOpType::kAdd);
        c->input = in;
        c->output = dst;
        auto w = std::make_unique<Wait>();
        w->id = c->id;
        into.push_back(std::move(c));
        into.push_back(std::move(w));
        if (final_dst != nullptr)
          into.push_back(makeHostOp(ctx.program.tensors().newExpr(OpType::kSet, {dst}, {final_dst})));
      });
      changed_ = true;
    }
    scope = std::move(out);
  }

  bool changed_ = false;
};

}  // namespace

std::unique_ptr<Pass> makeLowerCommunicationsPass() { return std::make_unique<LowerCommunications>(); }

}  // namespace braid
