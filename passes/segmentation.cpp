// Pass 3: segmentation. Standalone host ops (resharding ops, matmul, linear, set without
// permute, binary ops, reductions) each form a segment of their own; every other op is grouped
// into kernels, merging into a producer's kernel when the should-merge predicate allows it and
// the merge keeps the segment order topological.
#include <algorithm>
#include <unordered_map>

#include "ir/error.h"
#include "passes/fusion_utils.h"
#include "passes/pass.h"
#include "passes/schedule.h"

namespace braid {

bool isStandaloneHostOp(const Expr& e) {
  switch (e.type()) {
    case OpType::kMatmul:
    case OpType::kLinear:
    case OpType::kSet:
    case OpType::kBinary:
    case OpType::kReduction:
      return true;
    default:
      return isResharding(e);
  }
}

namespace {

bool segmentIsStreamParallel(const Segment& s) {
  for (const Expr* e : s.exprs)
    for (const TensorView* out : e->outputs())
      if (streamLoopAxis(out) != nullptr) return true;
  return false;
}

const DeviceMesh* segmentMesh(const Segment& s) {
  for (const Expr* e : s.exprs)
    if (e->output(0)->hasDeviceMesh()) return &*e->output(0)->deviceMesh();
  return nullptr;
}

}  // namespace

bool defaultShouldMerge(const Segment& a, const Segment& b) {
  for (const Segment* s : {&a, &b})
    for (const Expr* e : s->exprs)
      if (isStandaloneHostOp(*e)) return false;
  if (segmentIsStreamParallel(a) != segmentIsStreamParallel(b)) return false;
  const DeviceMesh* ma = segmentMesh(a);
  const DeviceMesh* mb = segmentMesh(b);
  if ((ma == nullptr) != (mb == nullptr)) return false;
  return ma == nullptr || *ma == *mb;
}

namespace {

class Segmentation : public Pass {
 public:
  std::string name() const override { return "segmentation"; }
  bool run(LoweringContext& ctx) override {
    const ShouldMergeFn& should_merge = ctx.shouldMerge ? ctx.shouldMerge : ShouldMergeFn(defaultShouldMerge);
    std::vector<Segment>& segs = ctx.segments;
    segs.clear();
    std::unordered_map<const TensorView*, size_t> producer_segment;
    for (Expr* e : topologicalExprs(ctx.fusion)) {
      Segment single;
      single.exprs = {e};
      const bool standalone = isStandaloneHostOp(*e);
      single.kind = standalone ? Segment::Kind::kHostOp : Segment::Kind::kKernel;
      std::optional<size_t> target;
      if (!standalone) {
        // Step 1: the latest kernel segment among e's producers is the merge candidate; every
        // other producer segment must come before it, so the merged segment can stay where it is.
        std::vector<size_t> producers;
        for (const TensorView* in : e->inputs()) {
          auto it = producer_segment.find(in);
          if (it != producer_segment.end()) producers.push_back(it->second);
        }
        std::optional<size_t> candidate;
        for (size_t p : producers)
          if (segs[p].kind == Segment::Kind::kKernel && (!candidate || p > *candidate)) candidate = p;
        if (candidate) {
          bool acyclic = std::all_of(producers.begin(), producers.end(), [&](size_t p) { return p <= *candidate; });
          if (acyclic && should_merge(segs[*candidate], single)) target = candidate;
        }
      }
      // Step 2: merge or append.
      if (target) {
        segs[*target].exprs.push_back(e);
      } else {
        segs.push_back(std::move(single));
        target = segs.size() - 1;
      }
      for (const TensorView* out : e->outputs()) producer_segment[out] = *target;
    }
    std::string note = "segments:";
    for (const Segment& s : segs) {
      note += s.kind == Segment::Kind::kHostOp ? " [host " : " [kernel";
      for (const Expr* e : s.exprs) note += " " + tvLabel(e->output(0));
      note += "]";
    }
    ctx.notes.push_back(note);
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> makeSegmentationPass() { return std::make_unique<Segmentation>(); }

}  // namespace braid
