// What an operation produces: the shape of its result and the work it does (flops), from the
// shapes of its operands. Where the printed domain and the operation disagree, the operation
// decides (HOSTIR.md); the printed domain is the fallback when the operands do not determine it.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/fusion.h"
#include "ir/scalar.h"

namespace braid::sem {

// A matmul's or linear's GEMM as cuBLAS runs it: `batch` products of [m, k] x [k, n]. As
// torch.matmul does, the batch dimensions of A fold into its rows when B is a matrix.
struct GemmDims {
  int64_t batch = 0, m = 0, n = 0, k = 0;  // all 0: not a GEMM
  bool operator==(const GemmDims&) const = default;
};

struct OpResult {
  std::vector<int64_t> shape;
  double flops = 0;
  GemmDims gemm;  // matmul and linear
};

// `inShapes` follow op.inputs(); `outDomainShape` is the output's buffer shape as printed.
OpResult inferOpResult(const Expr& op, const std::vector<std::vector<int64_t>>& inShapes,
                       const std::vector<int64_t>& outDomainShape);

// Right-aligned broadcasting of shapes (torch's rules; size 1 stretches).
std::vector<int64_t> broadcastShapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b);

// Flops of a kernel that runs `f` (its ops' printed shapes under `env`); ops whose sizes do not
// evaluate contribute none.
double fusionFlops(const Fusion& f, const Bindings& env);

}  // namespace braid::sem
