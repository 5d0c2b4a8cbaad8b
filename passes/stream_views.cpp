#include "passes/stream_views.h"

#include "ir/error.h"
#include "passes/buffer_layout.h"
#include "passes/fusion_utils.h"

namespace braid {

std::optional<AxisPath> streamPathOf(const TensorView* ft) {
  const IterDomain* s = streamLoopAxis(ft);
  if (s == nullptr) return std::nullopt;
  return requireAxisPath(ft, s);
}

void StreamViews::recordContiguity(TensorView* view, TensorView* base, int axis) {
  // A view is contiguous when every axis before the chunked one has one element per rank, or
  // when the chunked axis itself has (selecting in it leaves no gaps).
  bool contiguous = !ctx_.nonContiguousViews.count(base);
  if (!hasLocalExtentOne(ctx_, base->logical()[static_cast<size_t>(axis)])) {
    for (int k = 0; k < axis; ++k) {
      const IterDomain* id = base->logical()[static_cast<size_t>(k)];
      if (!id->isReduction() && !hasLocalExtentOne(ctx_, id)) contiguous = false;
    }
  }
  if (!contiguous) ctx_.nonContiguousViews.insert(view);
  ctx_.viewBase[view] = base;
}

TensorView* StreamViews::select(TensorView* t, int axis, const Scalar& index, bool memoize) {
  const std::string key = "select " + std::to_string(axis);
  if (memoize) {
    auto it = views_.find({t, key});
    if (it != views_.end()) return it->second.first;
  }
  TensorView* v = cloneTensor(ctx_.program.tensors(), t, axis, -1, false, MemoryType::kLocal);
  AxisOrigin o = ctx_.origin.at(t);
  o.paths.erase(o.paths.begin() + axis);
  ctx_.origin[v] = o;
  recordContiguity(v, t, axis);
  auto sel = std::make_unique<AliasSelect>();
  sel->out = v;
  sel->in = t;
  sel->axis = t->logical()[static_cast<size_t>(axis)];
  sel->index = index;
  body_.push_back(std::move(sel));
  if (memoize) views_[{t, key}] = {v, axis};
  return v;
}

std::pair<TensorView*, int> StreamViews::chunk(TensorView* t, const AxisPath& path) {
  const std::string key = path.str();
  auto memo = views_.find({t, key});
  if (memo != views_.end()) return memo->second;
  const AxisOrigin& o = ctx_.origin.at(t);
  Fusion& f = ctx_.program.tensors();
  auto shard = [&](TensorView* v, int q) {
    auto s = std::make_unique<ShardByStream>();
    s->out = v;
    s->in = t;
    s->streamIndex = sidx_;
    body_.push_back(std::move(s));
    recordContiguity(v, t, q);
    views_[{t, key}] = {v, -1};
    return std::make_pair(v, -1);
  };
  if (int q = o.positionOf(path); q >= 0) {
    if (path.isLogical()) {
      // A logical Stream axis: HirAliasSelect drops it (the dropped fusion axis is its position).
      TensorView* v = select(t, q, sidx_, false);
      views_[{t, key}] = {v, path.base[0]};
      return {v, path.base[0]};
    }
    // The buffer has the Stream axis itself: the view holds one element of it.
    TensorView* v = cloneTensor(f, t, -1, -1, false, MemoryType::kLocal);
    IterDomain* axis = v->logical()[static_cast<size_t>(q)];
    axis->parallelize(ParallelType::kStream);
    ctx_.chunkAxisExtent[axis] = Scalar(1);
    ctx_.origin[v] = o;
    ctx_.chunkAxis[v] = {q, Scalar(1)};
    return shard(v, q);
  }
  if (!path.steps.empty()) {
    AxisPath parent = path;
    const SplitStep last = parent.steps.back();
    parent.steps.pop_back();
    int q = o.positionOf(parent);
    if (q >= 0 && last.outer && !last.innerSplit) {
      // The buffer holds the axis the Stream axis splits: chunk i of S along it.
      TensorView* v = cloneTensor(f, t, -1, -1, false, MemoryType::kLocal);
      std::vector<IterDomain*> dom = v->logical();
      IterDomain* axis = f.newIterDomain(last.factor, IterType::kIteration, ParallelType::kStream);
      dom[static_cast<size_t>(q)] = axis;
      v->setLogical(dom);
      v->setLoop(dom);
      AxisOrigin vo = o;
      vo.paths[static_cast<size_t>(q)].steps.push_back(SplitStep{last.factor, false, false});
      ctx_.origin[v] = vo;
      const Scalar extent = chunkExtent(t->logical()[static_cast<size_t>(q)]->extent(), last.factor, sidx_);
      ctx_.chunkAxis[v] = {q, extent};
      ctx_.chunkAxisExtent[axis] = extent;
      return shard(v, q);
    }
  }
  throw NotLowerableError(tvLabel(o.fusionTv) + ": its buffer " + t->str() + " cannot be viewed chunk by chunk along " +
                          path.str() + " (the Stream chunks); its device axes split that axis differently. Split the "
                          "Stream axis off first (outer), then the device axis from the rest");
}

std::pair<TensorView*, int> StreamViews::perIteration(TensorView* t, const TensorView* ft) {
  auto it = slices_.find(t);
  if (it != slices_.end()) return it->second;
  std::vector<LayoutAxis> layout = bufferLayout(ft, true);
  const int qs = layoutPosition(layout, streamLoopAxis(ft));
  if (qs < 0) throw Error("internal lowering error: " + tvLabel(ft) + " has no Stream axis in its per-iteration buffer");
  const AxisPath path = requireAxisPath(ft, streamLoopAxis(ft));
  const int dropped = path.isLogical() ? path.base[0] : -1;
  TensorView* s;
  if (ctx_.options.ringBuffers) {
    // A ring of numberOfStreams chunks, allocated once before the loop; iteration i uses slot
    // i % numberOfStreams, which only stream (i % numberOfStreams) touches, in order.
    TensorView* ring = cloneLayout(ctx_, ft, layout, -1, -1, false, MemoryType::kGlobal);
    IterDomain* slot = ring->logical()[static_cast<size_t>(qs)];
    slot->setExtent(Scalar::symbol(kNumberOfStreams));
    slot->parallelize(ParallelType::kSerial);
    s = select(ring, qs, Scalar::binary(ScalarOp::kMod, idx_, Scalar::symbol(kNumberOfStreams)), false);
    ctx_.notes.push_back(tvLabel(ft) + ": ring of numberOfStreams chunks " + tvLabel(ring));
  } else {
    s = cloneLayout(ctx_, ft, layout, qs, -1, false, MemoryType::kGlobal);
  }
  slices_[t] = {s, dropped};
  return {s, dropped};
}

TensorView* StreamViews::stagingBuffer(TensorView* t) {
  TensorView* s = stagingBufferFor(ctx_, t);
  ctx_.notes.push_back(tvLabel(t) + ": strided chunk staged through " + tvLabel(s));
  return s;
}

}  // namespace braid
