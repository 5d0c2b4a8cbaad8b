// Cost models: how long one operation takes alone on an idle GPU of a Machine. The engine
// (engine.h) then slows operations that share a GPU (contention). Every constant comes from the
// machine file (machine.h, docs/MACHINES.md); docs/SIM.md gives the formulas.
#pragma once

#include <cstdint>
#include <string>

#include "ir/host_ir.h"
#include "sim/machine.h"

namespace braid::sim {

// A kernel alone on the GPU. Its time is max(computeUs, memoryUs, minUs): a roofline with
// size-dependent efficiency, and, for GEMMs, the wave quantization of its tiles over the SMs.
struct KernelCost {
  double computeUs = 0;  // flops-bound time with every SM
  double memoryUs = 0;   // bytes-bound time with the whole HBM bandwidth
  double minUs = 0;      // the shortest kernel
  double bytes = 0;      // HBM traffic (read + written)
  int64_t tiles = 0;     // CTAs of a GEMM (its waves over the SMs it gets); 0: many small CTAs
  int64_t tileM = 0, tileN = 0;
  double power = 1;      // its power per busy SM while compute-bound, over a full load's (gpu.power_cap)
  double totalUs() const;
};

// A matmul / linear producing `batch` x [m, n] from `flops` and `bytes` of operands and result: the
// machine's measured time when it lists this shape (gpu.measured_gemms), else gpu.gemm_latency_us
// plus the efficiency curve's time, with wave quantization over the tiles (gpu.gemm_waves).
KernelCost gemmCost(const Machine& mc, double flops, double bytes, DataType dtype, int64_t batch, int64_t m, int64_t n);
// An elementwise or reduction kernel.
KernelCost vectorCost(const Machine& mc, double flops, double bytes, DataType dtype);
// A copy or memset moving `bytes` (read + written).
KernelCost copyCost(const Machine& mc, double bytes);

// The time factor of a kernel with `tiles` CTAs (0: many small ones) that gets `sms` SMs
// instead of the min(tiles, SMs) it uses alone: in proportion to the SMs it lost, or with
// `waves`, ceil(tiles / sms) waves instead of ceil(tiles / SMs).
double smSlowdown(const Machine& mc, int64_t tiles, double sms, bool waves);

// A collective or P2P transfer alone (its members' links idle).
struct CommCost {
  double us = 0;           // latency + bytes / bandwidth + NCCL's call overhead
  double latencyUs = 0;    // the latency part (algorithm and protocol), without the call overhead
  double bandwidthGBps = 0;  // algorithm bandwidth used, after the size efficiency
  NcclAlgorithm algorithm = NcclAlgorithm::kRing;
  NcclProtocol protocol = NcclProtocol::kSimple;
  bool p2p = false;        // a point-to-point schedule (send/recv, all-to-all, scatter, gather)
  bool interNode = false;  // the team spans several nodes
  double linkBytes = 0;    // bytes each member sends over its links (utilization)
  double kernelUs = 0;     // copy engines: the part of `us` that runs as a kernel (a reduction's local sum)
  std::string describe() const;  // "ring/LL128, 12.3 us latency, 345 GB/s"
};

// `bytes` is the full buffer S as nccl-tests counts it: the gathered output of an Allgather, the
// input of a ReduceScatter, the vector of an Allreduce, the message of a Broadcast / Reduce /
// SendRecv, the whole scattered / gathered buffer of a Scatter / Gather / AllToAll.
CommCost collectiveCost(const Machine& mc, CommunicationType type, int64_t teamSize, int64_t nodesSpanned, double bytes);
// One point-to-point transfer of `bytes` between two GPUs.
CommCost p2pCost(const Machine& mc, double bytes, bool interNode);

// The same on the copy engines (backend=CUDA), as braid's executor runs them: each rank pulls
// its peers' parts one peer copy after another, and a reduction then combines its own row, read in
// place, with the pulled ones: one elementwise kernel with one peer (3 rows of traffic), the
// peers' sum and then that kernel with more (teamSize + 3 rows): `latency + pulled / bandwidth +
// traffic / reduce rate`. An Allreduce is a reduce-scatter of S / teamSize parts and an
// allgather of them (two rounds of pulls, two latencies); its pulls are modelled as one phase
// before the sum. `bytes` is the full buffer S, as for collectiveCost.
CommCost copyEngineCollectiveCost(const Machine& mc, CommunicationType type, int64_t teamSize, double bytes);
// A coalesced group's largest receive of `bytes` on the copy engines.
CommCost copyEngineP2PCost(const Machine& mc, double bytes);

}  // namespace braid::sim
