// The numerical check: seeded inputs, the unlowered reference, per-rank slices and the gathered
// full outputs, and the comparison (docs/EXEC.md).
//
// Full tensors are the logical tensors: a device-parallel axis (extent D, DIDx) is an ordinary
// axis of extent D. Rank r's buffer is the slice at r's mesh coordinate along each such axis;
// gathering puts every rank's buffer back at its coordinate. A replicated output (no
// device-parallel axis) must be equal on every rank.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "ir/fusion.h"
#include "ir/input_values.h"
#include "ir/scalar.h"

namespace braid::exec {

// The values named by a flag (--inputs, --gemm-operands); throws braid::Error on another name.
InputValues inputValuesNamed(const std::string& name);

// A float64 tensor of `values` (ir/input_values.h), deterministic in (seed, index).
at::Tensor randomInput(const std::vector<int64_t>& shape, uint64_t seed, int64_t index,
                       InputValues values = InputValues::kIntegers);

// A tensor of `values` drawn where `options` say (a GPU: no host copy of a large operand), for
// microbenchmarks; not seeded.
at::Tensor drawValues(at::IntArrayRef shape, InputValues values, const at::TensorOptions& options);

// The full shape of tv: device-parallel axes at their extent. `logical`: from the logical domain
// (a tensor of the unlowered fusion); otherwise from the buffer domain (a program's tensor).
std::vector<int64_t> fullShape(const TensorView& tv, const Bindings& b, bool logical = false);

// Positions (among tv's buffer axes) of device-parallel axes, and rank's coordinate along each.
struct ShardAxes {
  std::vector<int64_t> positions;
  std::vector<int64_t> coords;
};
ShardAxes shardAxesOf(const TensorView& tv, int64_t rank);

// `full` (a logical tensor of the reference) as the full buffer of program tensor `tv`: braid's
// lowering keeps buffers in logical order, so a buffer whose axes split or merge logical ones
// (a device axis split off a logical axis) is the logical tensor reshaped. Throws Error when the
// element counts differ.
at::Tensor toBufferLayout(const at::Tensor& full, const TensorView& tv, const Bindings& b);

// Rank's slice of a full tensor (device-parallel axes narrowed to size 1), contiguous, in `type`.
at::Tensor sliceForRank(const at::Tensor& full, const TensorView& tv, int64_t rank, at::ScalarType type);

// Rebuilds the full tensor from every rank's buffer (`locals[r]` is rank r's). For a replicated
// tensor returns rank 0's and sets `replicaMismatch` to a message when another rank's differs.
at::Tensor assembleFull(const std::vector<at::Tensor>& locals, const TensorView& tv,
                        const std::vector<int64_t>& full_shape, std::string* replicaMismatch);

struct Comparison {
  bool ok = true;
  double maxAbs = 0;
  double maxRel = 0;
  int64_t bad = 0;      // elements outside tolerance (NaN included)
  int64_t total = 0;
  std::vector<int64_t> worst;  // index of the worst element
  double got = 0, want = 0;
  double tolerance = 0;
  std::string shapeError;  // set when the shapes differ
};

// Tolerance per dtype: |got - want| <= tol * (|want| + max|want|) elementwise.
double defaultTolerance(at::ScalarType t);
Comparison compare(const at::Tensor& got, const at::Tensor& want, double tol);
std::string describe(const Comparison& c);

// .npy files (little-endian float32/float64/int32/int64/bool, C order).
at::Tensor loadNpy(const std::string& path);
void saveNpy(const std::string& path, const at::Tensor& t);

}  // namespace braid::exec
