// The workload catalog: named, parameterized fusions with their schedules (devices, streams,
// sizes, dtype) and the lowering options they are meant for, written as nvFuser's users write
// them: logical shapes, then splits and parallel types (docs/WORKLOADS.md). `braid lower
// WORKLOAD` builds one, lowers it and prints the host program; verify, run and demo accept
// workload names too.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ir/fusion.h"
#include "ir/lowering_options.h"

namespace braid {

struct WorkloadParams {
  int64_t devices = 2;   // D: ranks in the device mesh {0 .. D-1}
  int64_t streams = 4;   // S: stream-parallel chunks (the extent of the Stream axis)
  // P: the worker stream pool, numberOfStreams (iteration i runs on Stream ( i % P )). 0: one
  // stream per chunk, P = S, as nvFuser does.
  int64_t pool = 0;
  int64_t m = 1024;
  int64_t k = 1024;
  int64_t n = 1024;
  // 2D-mesh workloads: the tensor-parallel width (the mesh's columns, DIDx); the data-parallel
  // height is D / tp (its rows, DIDy). 0: 2 when D is even, else 1.
  int64_t tp = 0;
  DataType dtype = DataType::kFloat;
  LoweringOptions lowering;  // protocol, indexing, pipeline kind, ring buffers
};

struct Workload {
  std::string name;
  WorkloadParams params;
  std::unique_ptr<Fusion> fusion;  // scheduled as its user wrote it; lowering propagates the rest
};

struct WorkloadInfo {
  std::string name;
  std::string description;  // one line: what it computes and how it is sharded
  std::function<Workload(const WorkloadParams&)> build;
};

// numberOfStreams of `p`: its pool, or one stream per chunk when the pool is 0.
inline int64_t poolOf(const WorkloadParams& p) { return p.pool > 0 ? p.pool : p.streams; }

// Every catalog entry, in a stable order.
const std::vector<WorkloadInfo>& workloadCatalog();
// Builds `name` for `params`; throws Error naming the known workloads when `name` is unknown,
// and Error when the sizes do not divide as the schedule needs (say which and why).
Workload makeWorkload(const std::string& name, const WorkloadParams& params);

}  // namespace braid
