// The per-iteration operands of a stream loop: views of whole buffers and buffers allocated per
// iteration (stream-lowering's building blocks).
//
//  - A chunk of a whole buffer along a Stream axis that derives from a split is a ShardByStream
//    view with the buffer's rank: the chunked axis is printed as the Stream axis of S chunks and
//    holds chunk i (`in.chunk(S, axis)[i]`: ceilDiv(extent, S) elements, the last chunk shorter
//    when S does not divide). When the buffer already has the Stream axis itself (a split that a
//    device axis needed too), the view holds one element of it.
//  - A logical Stream axis (the chunk axis made explicit, as in nvFuser's pipeline A tests) is
//    sliced with HirAliasSelect, which drops the axis.
//  - A tensor allocated per iteration gets a buffer of one chunk, without the Stream axis (or, with
//    ring buffers, a slot of a ring of numberOfStreams chunks allocated before the loop).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>

#include "passes/host_builder.h"
#include "passes/pass.h"

namespace braid {

class StreamViews {
 public:
  // `index`: the loop index; `chunk_index`: the chunk each iteration works on (the loop index, or
  // `(i + rank) % D` for the P2P pipeline).
  StreamViews(LoweringContext& ctx, Scope& body, Scalar index, Scalar chunk_index)
      : ctx_(ctx), body_(body), idx_(std::move(index)), sidx_(std::move(chunk_index)) {}

  // The chunk of program tensor `t` (a whole buffer) along `path` (relative to t's fusion
  // tensor) at the current iteration, and the program axis HirAliasSelect dropped (-1 for none).
  // Memoized per loop.
  std::pair<TensorView*, int> chunk(TensorView* t, const AxisPath& path);
  // Element `index` of `t` along program axis `axis`, dropping it (HirAliasSelect).
  TensorView* select(TensorView* t, int axis, const Scalar& index, bool memoize = true);
  // The buffer of one iteration's chunk of per-iteration fusion tensor `ft` whose whole program
  // tensor is `t`, and the program axis it drops (memoized per loop).
  std::pair<TensorView*, int> perIteration(TensorView* t, const TensorView* ft);
  // A fresh contiguous buffer shaped like `t` (for communications on strided chunks).
  TensorView* stagingBuffer(TensorView* t);

  bool isPerIterationBuffer(TensorView* t) const { return slices_.count(t) > 0; }
  const Scalar& chunkIndex() const { return sidx_; }

 private:
  void recordContiguity(TensorView* view, TensorView* base, int axis);

  LoweringContext& ctx_;
  Scope& body_;
  Scalar idx_;
  Scalar sidx_;
  std::map<std::pair<TensorView*, std::string>, std::pair<TensorView*, int>> views_;
  std::map<TensorView*, std::pair<TensorView*, int>> slices_;
};

// The Stream axis of fusion tensor `ft` and how it derives from its logical domain, or nullopt.
std::optional<AxisPath> streamPathOf(const TensorView* ft);

}  // namespace braid
