// What buffer a tensor names and when an operation makes a view instead of writing memory: the
// rules of HOSTIR.md that the interpreter (verify, sim) and the evaluator (exec) must share.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/host_ir.h"

namespace braid::sem {

// The domain a tensor's buffer is laid out in (reductions included): the allocation domain when
// one is set; else the loop domain when it is made of untransformed axes (always so for parsed
// programs, where the printed domain is the loop domain); else the logical domain.
const std::vector<IterDomain*>& bufferDomain(const TensorView& tv);

struct ShapeMode {
  bool streamChunk = false;  // Stream axes have size 1: allocated inside the loop over that axis
  bool fullDevice = false;   // device-parallel axes at full extent (the unsharded reference)
  bool logical = false;      // lay out the logical domain (the unlowered fusion's tensors)
};

// The shape of the buffer a tensor names: its non-reduction axes in order; device-parallel and
// broadcast axes have size 1 (unless `fullDevice`). Throws Error naming the tensor, the axis and
// the unbound symbols, or a negative extent.
std::vector<int64_t> bufferShape(const TensorView& tv, const Bindings& b, ShapeMode mode = {});

// " (i0 = -5, StreamIdx = 2)": the values `env` gives the free symbols of `s`, for messages that
// name the binding behind a bad size ("" when none is bound).
std::string boundValues(const Scalar& s, const Bindings& env);

// Whether `loop` runs over `axis` (a Stream axis): its IterDomain is that axis, or it counts from 0
// to the axis's extent (the same expression). Only an allocation inside such a loop is one chunk
// of the Stream axis (HOSTIR.md); inside any other loop it keeps the whole axis.
bool loopRunsOverAxis(const ForLoop& loop, const IterDomain& axis);

// Whether `tv` allocated inside `enclosing` (outermost first) holds one chunk of its Stream axes.
bool allocatedPerStreamChunk(const TensorView& tv, const std::vector<const ForLoop*>& enclosing);

// Whether an op whose output is not bound yet binds its output to a view of its first input
// instead of writing a new buffer (nvFuser's host evaluator: Set and Set.Permute view their input,
// broadcast / squeeze insert or drop size-1 axes, a reshape of a contiguous input reinterprets it).
// When the output is already bound (allocated or aliased), every op writes into it.
bool makesView(const Expr& op);

}  // namespace braid::sem
