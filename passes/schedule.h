// Where the parallel types sit in a tensor's schedule, nvFuser-style: a Stream or device axis is a
// loop axis that derives from the logical domain through merges and splits
// (`tv->outerSplit(0, S)->parallelize(0, kStream)`). Passes compare and replay these derivations
// instead of looking at logical axes only.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/fusion.h"

namespace braid {

// One split on the way from the logical domain to a loop axis.
struct SplitStep {
  Scalar factor;
  bool innerSplit = false;  // the factor is the inner extent (nvFuser's split default)
  bool outer = true;        // the way continues with the outer output
  bool operator==(const SplitStep& o) const {
    return factor == o.factor && innerSplit == o.innerSplit && outer == o.outer;
  }
};

// Consecutive logical positions first, first + 1, ..., first + count - 1, in order: the axes a
// merge of adjacent logical axes covers. Two ints rather than a list: passes copy paths per
// statement of programs with tens of thousands of them.
struct AxisRange {
  int first = 0;
  int count = 0;
  size_t size() const { return static_cast<size_t>(count); }
  int operator[](size_t i) const { return first + static_cast<int>(i); }
  int front() const { return first; }
  int back() const { return first + count - 1; }
  // For range-for over the positions. Not std::views::iota: clang 14 (the fuzz build) cannot
  // compile libstdc++ 12's <ranges>.
  struct Iterator {
    int at = 0;
    int operator*() const { return at; }
    Iterator& operator++() {
      ++at;
      return *this;
    }
    bool operator==(const Iterator& o) const = default;
  };
  Iterator begin() const { return {first}; }
  Iterator end() const { return {first + count}; }
  bool operator==(const AxisRange& o) const = default;
};

// How a loop axis derives from the logical domain: the logical axes at `base` (more than one
// when they were merged), then `steps`. A logical axis has one base position and no steps.
struct AxisPath {
  AxisRange base;
  std::vector<SplitStep> steps;
  bool isLogical() const { return base.size() == 1 && steps.empty(); }
  bool operator==(const AxisPath& o) const { return base == o.base && steps == o.steps; }
  bool operator!=(const AxisPath& o) const { return !(*this == o); }
  // `axis 1 / outer split by 4` , `axes 0-1 merged / outer split by 2`: for messages.
  std::string str() const;
};

// The derivation of `id` (an axis of `tv`'s loop domain or of its history), or nullopt with
// `why` set when it is not a merge of consecutive logical axes followed by splits (a merge of
// split pieces, of axes out of order, or an axis that is not `tv`'s).
std::optional<AxisPath> axisPath(const TensorView* tv, const IterDomain* id, std::string* why = nullptr);
// The same, throwing NotLowerableError with the reason.
AxisPath requireAxisPath(const TensorView* tv, const IterDomain* id);

// The loop axis of `tv` with parallel type `p`: among its iteration axes, or among its reduction
// axes (a device-parallel reduction axis: partial results per device). Null when there is none.
IterDomain* parallelLoopAxis(const TensorView* tv, ParallelType p, bool reduction = false);
// The Stream axis (iteration axes only) or null.
inline IterDomain* streamLoopAxis(const TensorView* tv) { return parallelLoopAxis(tv, ParallelType::kStream); }

// `path` (of an axis of input `input_index` of `e`) re-expressed on e's output, or nullopt when
// the op does not map every base axis, or maps them to axes that are not consecutive.
std::optional<AxisPath> pathToConsumer(const Expr& e, size_t input_index, const AxisPath& path);
// `path` (of an axis of e's output) re-expressed on input `input_index`, or nullopt.
std::optional<AxisPath> pathToProducer(const Expr& e, size_t input_index, const AxisPath& path);

// Applies `path` to `tv`'s loop domain: merges and splits that `tv` already has are reused,
// missing ones are applied to its loop axes. Returns the axis the path leads to, or null (with
// `why` set) when `tv`'s schedule conflicts (the axis was split differently or merged away).
IterDomain* replayPath(TensorView* tv, const AxisPath& path, std::string* why = nullptr);

// The constant value of `e` when known.
std::optional<int64_t> constExtent(const Scalar& e);

// Checks that the parallel axes of every tensor of `f` are lowerable: Stream and device axes on
// the outer output of their splits (nvFuser supports neither on an inner output), no Stream axis
// on a broadcast or reduction axis, no device axis on a broadcast axis, one iteration axis per
// parallel type, one reduction axis per device type, constant extents that divide (a device
// split must give equal shards; a Stream split must leave no chunk empty under ShardByStream's
// chunk rule), device extents equal to the mesh's size along that type. Throws
// NotLowerableError naming the tensor and the axis.
void checkSchedules(const Fusion& f);

}  // namespace braid
