// Communication overlapped with matmuls, from nvFuser's multidevice overlap tests
// (tests/cpp/test_multidevice_stream_parallel_type.cpp, tests/python/multidevice/test_overlap.py),
// written with splits.
#include "catalog/builder.h"

namespace braid::catalog {
namespace {

// C = matmul(A, B) with A's rows sharded. Pipeline collective (S chunks): A's rows split
// [S, DIDx(D), m/(S*D)], C's rows in S Stream chunks: per chunk an Allgather of the chunk's rows,
// then its matmul (nvFuser's AG_matmul, stream outermost). Pipeline p2p (D chunks): A's rows
// split [DIDx(D), m/D] and C's [Stream(D), m/D]: the device axis becomes the Stream axis, a
// DID -> Stream pipeline (a Broadcast from each shard's owner, or the P2P ring).
Workload buildAgMatmul(const WorkloadParams& p) {
  const std::string name = "ag_matmul";
  Builder b(name, p);
  const bool p2p = p.lowering.pipeline == PipelineKind::kP2P;
  if (p2p) needDivisible(name, "m", p.m, "devices", p.devices, p);
  else needDivisible(name, "m", p.m, "streams*devices", p.streams * p.devices, p);
  TensorView* a = b.input({p.m, p.k});
  TensorView* w = b.input({p.k, p.n});
  if (p2p) a->outerSplit(0, b.D())->parallelize(0, ParallelType::kDIDx);
  else a->outerSplit(0, b.S())->outerSplit(1, b.D())->parallelize(1, ParallelType::kDIDx);
  TensorView* c = b.output(matmul(a, w), true);
  c->outerSplit(0, p2p ? b.D() : b.S())->parallelize(0, ParallelType::kStream);
  return b.finish();
}

// Y = linear(X, W, bias) with X's rows split [S, DIDx(D), m/(S*D)] and Y Stream-chunked: per
// chunk an Allgather, then the chunk's linear with bias (nvFuser's
// test_overlap_allgather_matmul_stream_outermost).
Workload buildAgLinearBias(const WorkloadParams& p) {
  const std::string name = "ag_linear_bias";
  needDivisible(name, "m", p.m, "streams*devices", p.streams * p.devices, p);
  Builder b(name, p);
  TensorView* x = b.input({p.m, p.k});
  TensorView* w = b.input({p.n, p.k});
  TensorView* bias = b.input({p.n});
  x->outerSplit(0, b.S())->outerSplit(1, b.D())->parallelize(1, ParallelType::kDIDx);
  TensorView* y = b.output(linear(x, w, bias), true);
  y->outerSplit(0, b.S())->parallelize(0, ParallelType::kStream);
  return b.finish();
}

// C = matmul(A, B) with k sharded on both and A's rows in S Stream chunks ("s*": the input is
// chunked, not sharded); C is left to propagation: its k reduction is device-parallel, so each
// chunk is a local matmul into partial sums and an Allreduce (the rfactor nvFuser's
// DecomposeReshardings does).
Workload buildMatmulAr(const WorkloadParams& p) {
  const std::string name = "matmul_ar";
  needDivisible(name, "k", p.k, "devices", p.devices, p);
  needChunks(name, "m", p.m, p.streams, p);
  Builder b(name, p);
  TensorView* a = b.input({p.m, p.k});
  TensorView* w = b.input({p.k, p.n});
  a->outerSplit(0, b.S())->parallelize(0, ParallelType::kStream);
  a->outerSplit(2, b.D())->parallelize(2, ParallelType::kDIDx);
  w->outerSplit(0, b.D())->parallelize(0, ParallelType::kDIDx);
  b.output(matmul(a, w), false);
  return b.finish();
}

// C = matmul(A, B) with k sharded; C's rows split [S, DIDx(D), m/(S*D)] and its k reduction
// device-parallel: per chunk a local matmul into partial sums and a ReduceScatter of the chunk's
// rows.
Workload buildMatmulRs(const WorkloadParams& p) {
  const std::string name = "matmul_rs";
  needDivisible(name, "m", p.m, "streams*devices", p.streams * p.devices, p);
  needDivisible(name, "k", p.k, "devices", p.devices, p);
  Builder b(name, p);
  TensorView* a = b.input({p.m, p.k});
  TensorView* w = b.input({p.k, p.n});
  a->outerSplit(1, b.D())->parallelize(1, ParallelType::kDIDx);
  w->outerSplit(0, b.D())->parallelize(0, ParallelType::kDIDx);
  TensorView* c = b.output(matmul(a, w), true);  // [m, n, r{k}]
  c->outerSplit(0, b.S())->parallelize(0, ParallelType::kStream);
  c->outerSplit(1, b.D())->parallelize(1, ParallelType::kDIDx);
  c->outerSplit(4, b.D())->parallelize(4, ParallelType::kDIDx);  // [S, D, m/(S*D), n, rD, r{k/D}]
  return b.finish();
}

// The reduce-based MM + RS of nvFuser's RSMatmulTest.ReduceScatterReduceBased: A's rows in D
// Stream chunks, C's rows sharded on the same split ([DIDx(D), m/D]) and its k reduction
// device-parallel. Iteration i computes every rank's partial sums of chunk i and reduces them
// onto rank i, which owns those rows: a Reduce rooted at i (Stream -> DID).
Workload buildMatmulRsReduce(const WorkloadParams& p) {
  const std::string name = "matmul_rs_reduce";
  needDivisible(name, "m", p.m, "devices", p.devices, p);
  needDivisible(name, "k", p.k, "devices", p.devices, p);
  Builder b(name, p);
  TensorView* a = b.input({p.m, p.k});
  TensorView* w = b.input({p.k, p.n});
  a->outerSplit(0, b.D())->parallelize(0, ParallelType::kStream);
  a->outerSplit(2, b.D())->parallelize(2, ParallelType::kDIDx);
  w->outerSplit(0, b.D())->parallelize(0, ParallelType::kDIDx);
  TensorView* c = b.output(matmul(a, w), true);  // [m, n, r{k}]
  c->outerSplit(0, b.D())->parallelize(0, ParallelType::kDIDx);
  c->outerSplit(3, b.D())->parallelize(3, ParallelType::kDIDx);  // [DIDx(D), m/D, n, rD, r{k/D}]
  return b.finish();
}

}  // namespace

std::vector<WorkloadInfo> overlapWorkloads() {
  return {
      {"ag_matmul",
       "C = matmul(allgather(A), B): A's rows sharded; per chunk an Allgather (pipeline collective, S chunks) or a "
       "DID -> Stream pipeline (pipeline p2p, D chunks), then the chunk's matmul",
       buildAgMatmul},
      {"ag_linear_bias", "Y = linear(allgather(X), W, bias): per chunk an Allgather, then the chunk's linear with bias",
       buildAgLinearBias},
      {"matmul_ar", "C = matmul(A, B), k sharded, A's rows in S chunks: per chunk a local matmul, then an Allreduce",
       buildMatmulAr},
      {"matmul_rs",
       "C = matmul(A, B), k sharded, C's rows sharded within each of S chunks: per chunk a local matmul, then a "
       "ReduceScatter",
       buildMatmulRs},
      {"matmul_rs_reduce",
       "C = matmul(A, B), k sharded, C's rows sharded in D blocks: iteration i computes block i's partial sums and "
       "reduces them onto rank i (a Reduce rooted at i)",
       buildMatmulRsReduce},
  };
}

}  // namespace braid::catalog
