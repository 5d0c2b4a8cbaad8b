// Fusion ops on ATen tensors: the host-evaluated ops of a host program, the ops of a HostUnit's
// kernel, and the unlowered reference (the same code in float64 on full tensors).
//
// Shapes follow docs/HOSTIR.md: a tensor's buffer holds its non-reduction axes in order; on a
// rank a device-parallel axis has size 1 and a broadcast axis size 1. In `full` mode (the
// reference) device-parallel axes keep their extent. Where an op and a printed domain disagree,
// the op decides.
#pragma once

#include <optional>
#include <vector>

#include <ATen/ATen.h>

#include "ir/fusion.h"
#include "ir/semantics/view_rules.h"
#include "ir/scalar.h"

namespace braid::exec {

at::ScalarType toScalarType(DataType t);

// Buffer domains and shapes are the semantics' (ir/semantics/buffer_rules.h: sem::bufferDomain,
// sem::bufferShape); views too (ir/semantics/view_rules.h), applied to tensors here.

// The tensor a view names: `steps` applied to its base (select, narrow, permute, unsqueeze, and a
// reshape of a contiguous base), always a view of the base's storage.
at::Tensor applyView(at::Tensor base, const std::vector<sem::ViewStep>& steps);

// Binds the free symbols that tv's extents name (`i0`, `ceilDiv(i0, c)`, `i0 / c`) from a
// shape of its buffer axes (`full`: device-parallel axes at full extent; otherwise they are
// skipped). Symbols already bound are kept.
void inferSymbols(const TensorView& tv, at::IntArrayRef shape, bool full, Bindings& b);

struct OpContext {
  const Bindings* bindings = nullptr;
  bool full = false;  // reference mode: full tensors
  // Computes and stores everything in this type (the reference: kDouble); otherwise each op
  // computes in float32 for 16-bit floats and in the output's type else.
  std::optional<at::ScalarType> forceType;
  // 16-bit floats compute in their own type (GPUs: cuBLAS accumulates in float32 and the tensor
  // cores run at full rate; upcasting would run a bf16 GEMM on the float32 path, 15x slower).
  bool native16 = false;
};

// out = a @ b for a 2-D b, computed by one GEMM straight into `out` when out (contiguous, of a's
// type) holds exactly a's rows' results in row-major order: its shape may differ from matmul's
// by unit axes, as a row- or column-sharded program's buffers do ([m, 1, k/D] @ [k/D, n] into
// [m, n, 1]; the same bytes a copy of matmul's result into out would write). False, with nothing
// done, otherwise. Before it such a GEMM wrote a temporary that was then copied into out: on an
// H200 that took 4-21% on top of the GEMM (docs/EXEC.md, "GEMMs into their buffers").
bool mmIntoRows(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b);

// Evaluates `op` on `inputs` (in op->inputs() order). When `out` is defined the result is
// written into it (`*_out` where the shapes agree, a copy otherwise) and `out` is returned;
// otherwise the result is a new tensor, or for Set / Set.Permute a view of the input.
at::Tensor evalOp(const Expr& op, const std::vector<at::Tensor>& inputs, const at::Tensor& out,
                  const OpContext& ctx);

// Copies `value` into `out`: same shape, or same element count (row-major), or broadcastable.
// Throws Error naming `what` otherwise.
void writeInto(const at::Tensor& out, const at::Tensor& value, const std::string& what);

// Runs a whole fusion op by op. `inputs` follow fusion.inputs(); returns fusion.outputs().
std::vector<at::Tensor> evalFusion(const Fusion& fusion, const std::vector<at::Tensor>& inputs,
                                   const OpContext& ctx);

// "[2, 3, 4]".
std::string shapeStr(at::IntArrayRef sizes);

}  // namespace braid::exec
