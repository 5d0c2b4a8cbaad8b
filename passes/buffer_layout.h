// The buffer a fusion tensor is lowered to, as the host program names it: the tensor's logical
// axes in logical order, with the merges and splits that produce its device axes applied in
// place (a device axis always shards the buffer, nvFuser's rule), and those that produce its
// Stream axis when the tensor is allocated per iteration (finalize-allocation). Every axis is an
// IterDomain of the tensor's own history, so its extent and kind come with it.
//
//   x [m, k], loop [DIDx{D}, ceilDiv(m, D), k]        -> buffer [DIDx{D}, m/D, k]   (local [1, m/D, k])
//   y [m, n], loop [Stream{S}, ceilDiv(m, S), n]      -> buffer [m, n] (its chunks are views)
//   the same y allocated per iteration                 -> buffer [Stream{S}, m/S, n] (one chunk)
//   z [a, b], loop [Stream{S}, ceilDiv(a*b, S)]        -> buffer [a*b] (the merge the chunks cut)
//
// Keeping logical order (nvFuser moves parallel axes to the front) makes each buffer a reshape of
// the logical tensor: a device axis of local size 1 anywhere leaves the memory order unchanged.
#pragma once

#include <vector>

#include "ir/fusion.h"
#include "passes/schedule.h"

namespace braid {

struct LayoutAxis {
  IterDomain* id = nullptr;                      // an IterDomain of the tensor's history
  ParallelType parallel = ParallelType::kSerial;  // its parallel type when it is a loop axis
};

// Throws NotLowerableError when a device or Stream axis cannot be exposed in place (a merge of
// axes that the layout no longer holds side by side).
std::vector<LayoutAxis> bufferLayout(const TensorView* tv, bool per_iteration);

// Whether a whole buffer of `tv` can be viewed chunk by chunk along `path` (the derivation of a
// Stream axis, relative to tv's logical domain): the buffer has that axis, or the axis its last
// split cuts (an outer split).
bool canChunk(const TensorView* tv, const AxisPath& path);

// The position in `layout` of `id`, or -1.
int layoutPosition(const std::vector<LayoutAxis>& layout, const IterDomain* id);

}  // namespace braid
