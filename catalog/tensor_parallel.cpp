// Tensor-parallel layers (nvFuser's test_overlap.py and test_matmul.py), and a tensor + data
// parallel MLP on a 2D mesh.
#include "catalog/builder.h"

namespace braid::catalog {
namespace {

// nvFuser's row_parallel_linear_forward: Y = linear(X, W) with X [m, k] in S row chunks and k
// sharded on X and W; Y is propagated: per chunk a local linear into partial sums, then an
// Allreduce.
Workload buildRowParallelLinear(const WorkloadParams& p) {
  const std::string name = "row_parallel_linear";
  needDivisible(name, "k", p.k, "devices", p.devices, p);
  needChunks(name, "m", p.m, p.streams, p);
  Builder b(name, p);
  TensorView* x = b.input({p.m, p.k});
  TensorView* w = b.input({p.n, p.k});
  x->outerSplit(0, b.S())->parallelize(0, ParallelType::kStream);
  x->outerSplit(2, b.D())->parallelize(2, ParallelType::kDIDx);
  w->outerSplit(1, b.D())->parallelize(1, ParallelType::kDIDx);
  b.output(linear(x, w), false);
  return b.finish();
}

// Y = linear(X, W) with X replicated in S row chunks and W's output features sharded: Y's
// columns are sharded, no communication.
Workload buildColumnParallelLinear(const WorkloadParams& p) {
  const std::string name = "column_parallel_linear";
  needDivisible(name, "n", p.n, "devices", p.devices, p);
  needChunks(name, "m", p.m, p.streams, p);
  Builder b(name, p);
  TensorView* x = b.input({p.m, p.k});
  TensorView* w = b.input({p.n, p.k});
  x->outerSplit(0, b.S())->parallelize(0, ParallelType::kStream);
  w->outerSplit(0, b.D())->parallelize(0, ParallelType::kDIDx);
  b.output(linear(x, w), false);
  return b.finish();
}

// A transformer MLP block: Y = linear(gelu(linear(X, W1)), W2), column- then row-parallel
// (W1's output features and W2's input features sharded), X in S row chunks: per chunk linear,
// gelu, a local linear into partial sums, an Allreduce.
Workload buildMlp(const WorkloadParams& p) {
  const std::string name = "mlp";
  needDivisible(name, "n", p.n, "devices", p.devices, p);
  needChunks(name, "m", p.m, p.streams, p);
  Builder b(name, p);
  TensorView* x = b.input({p.m, p.k});
  TensorView* w1 = b.input({p.n, p.k});
  TensorView* w2 = b.input({p.k, p.n});
  x->outerSplit(0, b.S())->parallelize(0, ParallelType::kStream);
  w1->outerSplit(0, b.D())->parallelize(0, ParallelType::kDIDx);
  w2->outerSplit(1, b.D())->parallelize(1, ParallelType::kDIDx);
  b.output(linear(gelu(linear(x, w1)), w2), false);
  return b.finish();
}

// The same MLP with data and tensor parallelism on a 2D mesh [dp, tp] (nvFuser's
// test_data_and_tensor_parallel_mlp): X's rows sharded over the mesh's rows (DIDy) and, within a
// rank's rows, in S Stream chunks; the weights sharded over its columns (DIDx). Per chunk the
// partial sums are Allreduced within each row of the mesh (a sub-team per row).
Workload buildTpDpMlp(const WorkloadParams& p) {
  const std::string name = "tp_dp_mlp";
  const int64_t tp = meshColumns(p);
  needDivisible(name, "devices", p.devices, "tp", tp, p);
  const int64_t dp = p.devices / tp;
  needDivisible(name, "m", p.m, "devices/tp", dp, p);
  needDivisible(name, "n", p.n, "tp", tp, p);
  needChunks(name, "m/dp", p.m / dp, p.streams, p);
  WorkloadParams q = p;
  q.tp = tp;
  Builder b(name, q, meshOf(p.devices, dp, tp));
  TensorView* x = b.input({p.m, p.k});
  TensorView* w1 = b.input({p.n, p.k});
  TensorView* w2 = b.input({p.k, p.n});
  x->outerSplit(0, dp)->parallelize(0, ParallelType::kDIDy);
  x->outerSplit(1, b.S())->parallelize(1, ParallelType::kStream);
  w1->outerSplit(0, tp)->parallelize(0, ParallelType::kDIDx);
  w2->outerSplit(1, tp)->parallelize(1, ParallelType::kDIDx);
  b.output(linear(gelu(linear(x, w1)), w2), false);
  return b.finish();
}

}  // namespace

std::vector<WorkloadInfo> tensorParallelWorkloads() {
  return {
      {"row_parallel_linear",
       "Y = linear(X, W), k sharded, X's rows in S chunks: per chunk a local linear, then an Allreduce (nvFuser's "
       "row_parallel_linear_forward)",
       buildRowParallelLinear},
      {"column_parallel_linear",
       "Y = linear(X, W), W's output features sharded, X's rows in S chunks: per chunk a linear, no communication",
       buildColumnParallelLinear},
      {"mlp",
       "Y = linear(gelu(linear(X, W1)), W2), column- then row-parallel: per chunk linear, gelu, a local linear, an "
       "Allreduce",
       buildMlp},
      {"tp_dp_mlp",
       "the MLP on a 2D mesh [D/tp, tp]: rows data-parallel (DIDy), weights tensor-parallel (DIDx); per chunk an "
       "Allreduce within each row of the mesh",
       buildTpDpMlp},
  };
}

}  // namespace braid::catalog
