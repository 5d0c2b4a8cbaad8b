// Views: which region of its base a view names. HirAliasSelect, ShardByStream and the ops that
// view their input (buffer_rules.h, makesView) are described as a list of primitive steps, which
// the interpreter applies to a Region and the evaluator to an at::Tensor, so both follow one rule.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/host_ir.h"
#include "ir/semantics/finding_kind.h"
#include "ir/semantics/region.h"

namespace braid::sem {

struct ViewStep {
  enum class Kind {
    kSelect,     // drop dimension `dim`, keeping index `start`
    kNarrow,     // dimension `dim` keeps [start, start + length)
    kPermute,    // new dimension i = old dimension perm[i]
    kUnsqueeze,  // a size-1 dimension at `dim`
    kReshape,    // reinterpret a contiguous view as `shape` (same element count)
  };
  Kind kind = Kind::kSelect;
  int dim = 0;
  int64_t start = 0;
  int64_t length = 0;
  std::vector<int64_t> perm;   // kPermute
  std::vector<int64_t> shape;  // kReshape
};

// The steps, or why the view is malformed for these sizes (a finding of the program, e.g. an
// index out of bounds); `steps` is empty for a view of the whole base.
struct ViewRule {
  std::vector<ViewStep> steps;
  std::optional<FindingKind> problem;
  std::string message;  // set with `problem`: "selects index 5 of T2 along iS0{4}, which has 4 elements there"
};

// `out = HirAliasSelect(in, axis, index)` on a base of `baseSizes`: the axis's buffer dimension
// disappears at the index; on a broadcast or size-1 axis the index is 0 whatever it says; on a
// reduction axis (not in the buffer) the view is the base unchanged.
ViewRule aliasSelectView(const AliasSelect& a, const std::vector<int64_t>& baseSizes, const Bindings& env);

// `out = ShardByStream(in, stream_index)`: the stream_index-th of `chunks` chunks along the Stream
// axis (the output's Stream axis, else the input's), chunks of ceilDiv(size, chunks) elements and a
// shorter last one; when the base has no such axis (pipeline B splits an unsharded input), the
// chunk keeps a size-1 Stream dimension so the view has the output's rank.
ViewRule shardByStreamView(const ShardByStream& s, const std::vector<int64_t>& baseSizes, const Bindings& env);

// The view an op with an unbound output makes of its first input (see makesView), given the
// input's sizes, whether it is contiguous, and the output's buffer shape (for a reshape); nullopt
// when it makes none (then it writes a new buffer).
std::optional<ViewRule> opView(const Expr& op, const std::vector<int64_t>& inSizes, bool inContiguous,
                               const std::vector<int64_t>& outShape);

// The region a view names: `steps` applied to its base's region.
Region applyView(Region base, const std::vector<ViewStep>& steps);

}  // namespace braid::sem
