// Shared plumbing of the catalog's builders (internal to catalog/): size validation with messages
// that name the size and the schedule, and a Builder that holds the fusion and the mesh. Builders
// write fusions as nvFuser's users do: logical shapes, then `outerSplit` and `parallelize` on the
// tensors the user schedules (the inputs, and the outputs whose layout the user chooses); the
// lowering propagates the rest. Only inputs (and user-scheduled outputs) get the mesh with
// setDeviceMesh; other tensors take it over from their ops.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "catalog/workload.h"
#include "ir/ops.h"

namespace braid::catalog {

// "matmul_rs needs m divisible by streams*devices (m=1000, S=4, D=8)".
void needDivisible(const std::string& name, const char* what, int64_t value, const char* by, int64_t divisor,
                   const WorkloadParams& p);
// Cutting `value` into `chunks` chunks of ceilDiv(value, chunks) (ShardByStream's rule) must leave
// no chunk empty: "allreduce needs m=6 to give 4 non-empty chunks of ceilDiv(6, 4) = 2 (S=4, D=2)".
void needChunks(const std::string& name, const char* what, int64_t value, int64_t chunks, const WorkloadParams& p);

// The tensor-parallel width of a 2D mesh (WorkloadParams::tp; 0: 2 when D is even, else 1), and
// the mesh {0 .. D-1} shaped [dp, tp] (rows DIDy, columns DIDx).
int64_t meshColumns(const WorkloadParams& p);
DeviceMesh meshOf(int64_t devices, int64_t dp, int64_t tp);

class Builder {
 public:
  Builder(std::string name, const WorkloadParams& p);
  Builder(std::string name, const WorkloadParams& p, DeviceMesh mesh);

  const WorkloadParams& params() const { return p_; }
  int64_t D() const { return p_.devices; }
  int64_t S() const { return p_.streams; }
  const DeviceMesh& mesh() const { return mesh_; }

  // A fusion input of the given logical shape on the mesh (replicated until scheduled).
  TensorView* input(const std::vector<int64_t>& shape);
  // A fusion output. `user_mesh`: the user gives it the mesh, so its schedule is the user's
  // (replicated unless scheduled); otherwise the lowering propagates its schedule.
  TensorView* output(TensorView* tv, bool user_mesh);

  Workload finish();

 private:
  std::string name_;
  WorkloadParams p_;
  std::unique_ptr<Fusion> fusion_;
  DeviceMesh mesh_;
};

// The catalog's entries, by family, in a stable order.
std::vector<WorkloadInfo> collectiveWorkloads();  // single_set, allgather, allreduce, reduce_scatter, allgather_2d
std::vector<WorkloadInfo> streamWorkloads();      // matmul_n_chunks, two_matmuls_inlinable / _not_inlinable
std::vector<WorkloadInfo> overlapWorkloads();     // ag_matmul, ag_linear_bias, matmul_ar, matmul_rs, matmul_rs_reduce
std::vector<WorkloadInfo> tensorParallelWorkloads();  // row/column-parallel linear, mlp, tp_dp_mlp

}  // namespace braid::catalog
