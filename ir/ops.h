// The builder API for fusions, in nvFuser's style:
//
//   Fusion f;
//   TensorView* x = f.makeTensor({Scalar::symbol("i0"), 1024});
//   f.addInput(x);
//   TensorView* y = gelu(linear(x, w));
//   f.addOutput(y);
//   y->split(0, 4, /*inner_split=*/false)->parallelize(0, ParallelType::kStream);
//
// Every op makes a fresh output in the inputs' fusion with a fresh logical domain (serial axes);
// the output takes the device mesh of its first input. Shape errors throw Error.
#pragma once

#include <vector>

#include "ir/fusion.h"

namespace braid {

TensorView* set(TensorView* in);
TensorView* permute(TensorView* in, const std::vector<int64_t>& permutation);
TensorView* unaryOp(UnaryOpType op, TensorView* in);
TensorView* neg(TensorView* in);
TensorView* exp(TensorView* in);
TensorView* relu(TensorView* in);
TensorView* gelu(TensorView* in);
TensorView* tanh(TensorView* in);
TensorView* castOp(DataType dtype, TensorView* in);
TensorView* binaryOp(BinaryOpType op, TensorView* a, TensorView* b);  // same logical shape
TensorView* add(TensorView* a, TensorView* b);
TensorView* sub(TensorView* a, TensorView* b);
TensorView* mul(TensorView* a, TensorView* b);
TensorView* div(TensorView* a, TensorView* b);
// Reduction over `axes` (logical positions of `in`; negative counts from the end). The output
// keeps the reduced axes as reduction IterDomains, as nvFuser does.
TensorView* reductionOp(ReductionOpType op, TensorView* in, const std::vector<int>& axes);
TensorView* sum(TensorView* in, const std::vector<int>& axes);
TensorView* max(TensorView* in, const std::vector<int>& axes);
TensorView* min(TensorView* in, const std::vector<int>& axes);
// Inserts size-1 broadcast axes where `flags` is true (flags has the output's rank).
TensorView* broadcast(TensorView* in, const std::vector<bool>& flags);
TensorView* squeeze(TensorView* in, const std::vector<bool>& flags);
TensorView* reshape(TensorView* in, const std::vector<Scalar>& new_shape);
// [..., m, k] @ [k, n] -> [..., m, n, r(k)] (batch dims broadcast as in torch.matmul).
TensorView* matmul(TensorView* a, TensorView* b);
// [..., k] x [n, k]^T (+ bias[n]) -> [..., n, r(k)].
TensorView* linear(TensorView* in, TensorView* weight, TensorView* bias = nullptr);

}  // namespace braid
