// Single-device stream parallelism, from nvFuser's tests/python/direct/test_stream.py (replicated
// on the mesh: no communication).
#include "catalog/builder.h"

namespace braid::catalog {
namespace {

// test_matmul: out = matmul(in, w) with out's columns (N) in S Stream chunks; w is read chunk by
// chunk along N.
Workload buildMatmulNChunks(const WorkloadParams& p) {
  const std::string name = "matmul_n_chunks";
  needChunks(name, "n", p.n, p.streams, p);
  Builder b(name, p);
  TensorView* in = b.input({p.m, p.k});
  TensorView* w = b.input({p.k, p.n});
  TensorView* out = b.output(matmul(in, w), true);
  out->outerSplit(1, b.S())->parallelize(1, ParallelType::kStream);
  return b.finish();
}

// test_two_matmuls_inlinable: out = matmul(matmul(in, w1), w2) with in's rows in S Stream chunks;
// both matmuls share one loop and the intermediate exists one chunk at a time.
Workload buildTwoMatmulsInlinable(const WorkloadParams& p) {
  const std::string name = "two_matmuls_inlinable";
  needChunks(name, "m", p.m, p.streams, p);
  Builder b(name, p);
  TensorView* in = b.input({p.m, p.k});
  TensorView* w1 = b.input({p.k, p.n});
  TensorView* w2 = b.input({p.n, p.k});
  in->outerSplit(0, b.S())->parallelize(0, ParallelType::kStream);
  b.output(matmul(matmul(in, w1), w2), false);
  return b.finish();
}

// test_two_matmuls_not_inlinable: w1's columns in S chunks make the first matmul column-parallel
// (N), the output's rows make the second row-parallel (M): two loops, and the [m, n] intermediate
// is allocated in full between them.
Workload buildTwoMatmulsNotInlinable(const WorkloadParams& p) {
  const std::string name = "two_matmuls_not_inlinable";
  needChunks(name, "n", p.n, p.streams, p);
  needChunks(name, "m", p.m, p.streams, p);
  Builder b(name, p);
  TensorView* in = b.input({p.m, p.k});
  TensorView* w1 = b.input({p.k, p.n});
  TensorView* w2 = b.input({p.n, p.k});
  w1->outerSplit(1, b.S())->parallelize(1, ParallelType::kStream);
  TensorView* out = b.output(matmul(matmul(in, w1), w2), false);
  out->outerSplit(0, b.S())->parallelize(0, ParallelType::kStream);
  return b.finish();
}

}  // namespace

std::vector<WorkloadInfo> streamWorkloads() {
  return {
      {"matmul_n_chunks", "out = matmul(in, w), out's columns in S Stream chunks (nvFuser's test_matmul)",
       buildMatmulNChunks},
      {"two_matmuls_inlinable",
       "out = matmul(matmul(in, w1), w2), in's rows in S Stream chunks: one loop, the intermediate one chunk at a time",
       buildTwoMatmulsInlinable},
      {"two_matmuls_not_inlinable",
       "out = matmul(matmul(in, w1), w2), w1's columns and out's rows in S chunks: two loops, a full intermediate",
       buildTwoMatmulsNotInlinable},
  };
}

}  // namespace braid::catalog
