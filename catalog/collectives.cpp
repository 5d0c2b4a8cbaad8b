// Collectives, one per stream chunk: the fusions of nvFuser's stream-parallel collective tests,
// written with splits.
#include "catalog/builder.h"

namespace braid::catalog {
namespace {

// nvFuser's SingleSetOp (tests/python/direct/test_stream.py style): out = set(in), the output's
// rows cut into S Stream chunks. Replicated on the mesh: no communication.
Workload buildSingleSet(const WorkloadParams& p) {
  const std::string name = "single_set";
  needChunks(name, "m", p.m, p.streams, p);
  Builder b(name, p);
  TensorView* in = b.input({p.m, p.n});
  TensorView* out = b.output(set(in), true);
  out->outerSplit(0, b.S())->parallelize(0, ParallelType::kStream);
  return b.finish();
}

// T1 = set(T0): T0's rows are cut into S chunks, each chunk's rows sharded over the D ranks
// ([S, DIDx(D), m/(S*D)] by two outer splits); T1 is replicated and Stream-chunked: one
// Allgather per chunk.
Workload buildAllgather(const WorkloadParams& p) {
  const std::string name = "allgather";
  needDivisible(name, "m", p.m, "streams*devices", p.streams * p.devices, p);
  Builder b(name, p);
  TensorView* t0 = b.input({p.m, p.n});
  t0->outerSplit(0, b.S())->outerSplit(1, b.D())->parallelize(1, ParallelType::kDIDx);
  TensorView* t1 = b.output(set(t0), true);
  t1->outerSplit(0, b.S())->parallelize(0, ParallelType::kStream);
  return b.finish();
}

// T1 = sum(T0, {0}) over T0's device axis (one [m, n] contribution per rank, as nvFuser's tests
// write an allreduce); T1's rows in S Stream chunks (the last one shorter when S does not divide
// m): one Allreduce per chunk.
Workload buildAllreduce(const WorkloadParams& p) {
  const std::string name = "allreduce";
  needChunks(name, "m", p.m, p.streams, p);
  Builder b(name, p);
  TensorView* t0 = b.input({p.devices, p.m, p.n});
  t0->parallelize(0, ParallelType::kDIDx);
  TensorView* t1 = b.output(sum(t0, {0}), true);
  t1->outerSplit(1, b.S())->parallelize(1, ParallelType::kStream);
  return b.finish();
}

// The same sum, with T1's chunk rows sharded over the ranks ([S, DIDx(D), m/(S*D)]): one
// ReduceScatter per chunk.
Workload buildReduceScatter(const WorkloadParams& p) {
  const std::string name = "reduce_scatter";
  needDivisible(name, "m", p.m, "streams*devices", p.streams * p.devices, p);
  Builder b(name, p);
  TensorView* t0 = b.input({p.devices, p.m, p.n});
  t0->parallelize(0, ParallelType::kDIDx);
  TensorView* t1 = b.output(sum(t0, {0}), true);
  t1->outerSplit(1, b.S())->parallelize(1, ParallelType::kStream);
  t1->outerSplit(2, b.D())->parallelize(2, ParallelType::kDIDx);
  return b.finish();
}

// The allgather on a 2D mesh [D/tp, tp]: T0's rows sharded over the mesh's rows (DIDy) within
// each of S chunks, its columns over the mesh's columns (DIDx); T1 keeps the column sharding and
// gathers the rows: per chunk an Allgather within each column of the mesh (a sub-team per column).
Workload buildAllgather2d(const WorkloadParams& p) {
  const std::string name = "allgather_2d";
  const int64_t tp = meshColumns(p);
  needDivisible(name, "devices", p.devices, "tp", tp, p);
  const int64_t dp = p.devices / tp;
  needDivisible(name, "m", p.m, "streams*devices/tp", p.streams * dp, p);
  needDivisible(name, "n", p.n, "tp", tp, p);
  WorkloadParams q = p;
  q.tp = tp;
  Builder b(name, q, meshOf(p.devices, dp, tp));
  TensorView* t0 = b.input({p.m, p.n});
  t0->outerSplit(0, b.S())->outerSplit(1, dp)->parallelize(1, ParallelType::kDIDy);  // [S, dp, m/(S*dp), n]
  t0->outerSplit(3, tp)->parallelize(3, ParallelType::kDIDx);                         // [.., tp, n/tp]
  TensorView* t1 = b.output(set(t0), true);
  t1->outerSplit(0, b.S())->parallelize(0, ParallelType::kStream);
  t1->outerSplit(2, tp)->parallelize(2, ParallelType::kDIDx);  // [S, m/S, tp, n/tp]
  return b.finish();
}

}  // namespace

std::vector<WorkloadInfo> collectiveWorkloads() {
  return {
      {"single_set", "out = set(in), out's rows in S Stream chunks (nvFuser's SingleSetOp); no communication",
       buildSingleSet},
      {"allgather", "T1 = set(T0): T0 [m, n] with rows split [S, DIDx(D), m/(S*D)], T1 Stream-chunked; an Allgather per chunk",
       buildAllgather},
      {"allreduce", "T1 = sum(T0, {0}) over T0 [DIDx(D), m, n], T1's rows in S Stream chunks; an Allreduce per chunk",
       buildAllreduce},
      {"reduce_scatter",
       "T1 = sum(T0, {0}) over T0 [DIDx(D), m, n], T1's rows split [S, DIDx(D), m/(S*D)]; a ReduceScatter per chunk",
       buildReduceScatter},
      {"allgather_2d",
       "T1 = set(T0) on a 2D mesh [D/tp, tp]: rows sharded over DIDy, columns over DIDx; per chunk an Allgather "
       "within each column of the mesh",
       buildAllgather2d},
  };
}

}  // namespace braid::catalog
