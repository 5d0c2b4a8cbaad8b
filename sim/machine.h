// The model of a machine the simulator predicts for: the GPU (SMs, peak rates, HBM, efficiency
// curves, GEMM tiles, launch latency), the host thread's cost per host instruction, the links
// (NVLink, NICs), the topology (nodes x GPUs per node), NCCL's algorithm and protocol model, and
// how concurrent work contends. Every constant the cost models and the engine use lives here and
// comes from a machine file (docs/MACHINES.md), so calibration can replace any of them.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/input_values.h"
#include "ir/types.h"
#include "sim/gemm_shape.h"

namespace braid::sim {

// Efficiency as a function of size, linear in log10(size) between the points and constant
// beyond the first and last point.
struct EfficiencyCurve {
  std::vector<std::pair<double, double>> points;  // (size, efficiency in (0, 1]), sizes ascending
  double at(double size) const;
  bool operator==(const EfficiencyCurve&) const = default;
};

// Machine-file keys "bf16", "fp16", "fp32", "fp64".
enum class Precision { kBf16, kFp16, kFp32, kFp64 };
inline constexpr int kNumPrecisions = 4;
const char* precisionName(Precision p);
// The rate a tensor of `t` computes at: integers and bool count as fp32 (int64 as fp64).
Precision precisionOf(DataType t);

using PerPrecision = std::array<double, kNumPrecisions>;

// A CTA tile cuBLAS may pick for a GEMM; `efficiency` ranks smaller tiles below bigger ones.
struct GemmTile {
  int64_t m = 128;
  int64_t n = 128;
  double efficiency = 1.0;
  bool operator==(const GemmTile&) const = default;
};

// How a GEMM's tiles fill the SMs. kWhole: in waves of one tile per SM, a partly filled last
// wave costing a whole wave (the tile cuBLAS picks is the one that finishes first). kFractional:
// the kernel spreads the work over every SM (persistent kernels, stream-K), so the time follows the
// flops; on two H200s cuBLAS's bf16 GEMMs measured that way (8192x3584x8192, 6.8 waves of 128x256
// tiles, took 1.95x the time of 3.4 waves; ACCURACY.md, ninth session).
enum class GemmWaves { kWhole, kFractional };
const char* gemmWavesName(GemmWaves w);  // "whole", "fractional"

struct MeasuredGemm {
  GemmShape shape;
  double us = 0;
  bool operator==(const MeasuredGemm&) const = default;
};

// The board's power cap (docs/SIM.md, "Power state"). The GPU's power controller averages the
// power drawn over about `timeConstantUs`; while that average is under the cap, kernels run at
// full clocks, and once it reaches the cap the clocks drop so that the power stays there. Power is
// counted in units of a full GEMM load at full clocks (every SM busy on tensor cores): `capLoad`
// is the cap in those units, and `cappedSlowdown` how much longer such a load's compute takes at
// the cap. An H200 reaches its 700 W cap 20-40 ms into back-to-back GEMMs, and they then run
// 15-17% slower (docs/EXEC.md, Power state). Unset (capLoad 0): the model runs at full clocks.
// A GEMM's power per busy SM depends on its size (on an H200 a sustained 4096^3 slowed by 11% at
// the cap, 16384x4096x4096 by 18%): `gemmPower`, by a GEMM's flops, is its power over the
// calibration GEMM's (the full load); empty: every GEMM draws a full load's.
struct PowerModel {
  double capLoad = 0;          // in (0, 1): the cap over a full GEMM load's power
  double timeConstantUs = 0;   // the controller's averaging time
  double cappedSlowdown = 1;   // a full load's compute time at the cap over its time at full clocks
  EfficiencyCurve gemmPower;   // optional: a GEMM's power by its flops, in (0, 1]
  double gemmPowerAt(double flops) const { return gemmPower.points.empty() ? 1.0 : gemmPower.at(flops); }
  bool enabled() const { return capLoad > 0; }
  bool operator==(const PowerModel&) const = default;
};

struct GpuModel {
  std::string model;                  // "H200 SXM"
  int64_t sms = 132;                  // streaming multiprocessors
  double memoryGB = 80;               // HBM capacity, GB (reported, not simulated)
  PerPrecision matmulTflops{};        // dense peak of matmul/linear (tensor cores; fp32 without TF32)
  PerPrecision vectorTflops{};        // peak of elementwise and reduction kernels (CUDA cores)
  double hbmGBps = 0;                 // peak HBM bandwidth, GB/s (1e9 bytes)
  EfficiencyCurve matmulEfficiency;   // achieved / peak, by a GEMM's flops
  EfficiencyCurve vectorEfficiency;   // achieved / peak, by a kernel's flops
  EfficiencyCurve memoryEfficiency;   // achieved / peak HBM bandwidth, by bytes moved
  std::vector<GemmTile> gemmTiles;    // candidate tiles (wave quantization over SMs)
  GemmWaves gemmWaves = GemmWaves::kWhole;
  double gemmLatencyUs = 0;           // fixed time of every GEMM beyond its flops (prologue, epilogue, tail)
  // The operand values the GEMM constants were measured on (braid calibrate --gemm-operands);
  // unset for a datasheet. A GEMM's time depends on them (ir/input_values.h): the machine predicts
  // runs on these values, and `braid validate` notes a run on the other kind.
  std::optional<InputValues> gemmOperands;
  // GEMMs of exact shapes timed on this machine (braid calibrate): a GEMM of one of these shapes
  // takes its measured time instead of the efficiency curve's. GEMMs of equal flops can differ by
  // 15% with their shape (on two H200s, 16384x4096x4096 at 0.72 of the peak, 5376^3 at 0.80), which
  // a curve over flops cannot hold.
  std::vector<MeasuredGemm> measuredGemms;
  double launchLatencyUs = 0;         // host issue -> the kernel may start on an idle stream
  double kernelMinUs = 0;             // shortest kernel (launch + teardown on the GPU)
  PowerModel power;                   // the power cap; unset: always full clocks
  bool operator==(const GpuModel&) const = default;
};

// How much later the host issues a program that follows an idle gap (docs/SIM.md, "After idle"):
// while a run's process waits idle its CPU core sleeps, and the next run's host work is slow until
// the core is back up to speed (on one H200 host, statements ran 2-5 times as long after 20 ms
// idle). Modelled as a delay of the host's start by the issue time lost, measured on a program's
// kind of host work (ATen dispatch, launches, allocations, views): on the H200 hosts lent here
// +70 us after 2 ms idle, +240-340 us after 20-100 ms (ACCURACY.md, thirteenth session). `points`
// are (idle us, delay us), idle ascending; the delay is linear between them, from 0 at no idle,
// and constant beyond the last. Launched work and CUDA-graph replays have a curve each: a replay's
// one call loses less (+10-30 us measured on programs). Empty: no delay.
struct AfterIdle {
  std::vector<std::pair<double, double>> points;
  double delayUs(double idleUs) const;
  bool empty() const { return points.empty(); }
  bool operator==(const AfterIdle&) const = default;
};

// Host time per host instruction (the host thread runs one instruction after another).
struct HostCosts {
  double atenOpUs = 0;             // a host-evaluated op (matmul, add, Set, ...): ATen dispatch
  double kernelLaunchUs = 0;       // PostOnStream: launching a compiled kernel
  double communicationCallUs = 0;  // a Communication, a P2PCommunication, EndCoalescing
  double streamCallUs = 0;         // GetCurrentStream, SetCurrentStream, Synchronize, Wait, StartCoalescing
  double allocationUs = 0;         // Allocate, Deallocate (caching allocator)
  double viewUs = 0;               // HirAliasSelect, ShardByStream
  double controlUs = 0;            // a loop or branch header
  AfterIdle afterIdle;             // the host's late start after an idle gap, launched work
  AfterIdle afterIdleGraph;        // the same for a CUDA-graph replay
  bool operator==(const HostCosts&) const = default;
};

struct LinkModel {
  double bandwidthGBps = 0;  // one direction, per GPU (nvlink) or per NIC (nic)
  double latencyUs = 0;      // one transfer's start-up latency
  bool operator==(const LinkModel&) const = default;
};

struct Topology {
  int64_t nodes = 1;
  int64_t gpusPerNode = 8;
  int64_t nicsPerNode = 8;
  int64_t gpus() const { return nodes * gpusPerNode; }
  bool operator==(const Topology&) const = default;
};

enum class NcclAlgorithm { kRing, kTree };
enum class NcclProtocol { kLL, kLL128, kSimple };
inline constexpr int kNumNcclAlgorithms = 2;
inline constexpr int kNumNcclProtocols = 3;
const char* ncclAlgorithmName(NcclAlgorithm a);  // "ring", "tree"
const char* ncclProtocolName(NcclProtocol p);    // "LL", "LL128", "Simple"

using PerProtocol = std::array<double, kNumNcclProtocols>;

inline constexpr int kNumCommunicationTypes = 9;  // ir/host_ir.h's CommunicationType
constexpr std::array<double, kNumCommunicationTypes> uniformKindFactors() {
  std::array<double, kNumCommunicationTypes> a{};
  for (double& x : a) x = 1.0;
  return a;
}

// The copy-engine transport (braid run's backend=CUDA, exec/cuda_ipc_communicator.cpp): each rank
// pulls its peers' parts with peer copies over NVLink (no SMs), then, for a reduction, sums the
// pulled rows with ATen on the communicator's stream (a kernel: HBM traffic). Optional in a
// machine file; without it the defaults of docs/MACHINES.md are derived from the NVLink and HBM.
struct CopyEngineModel {
  double bandwidthGBps = 0;  // one peer copy's achieved rate over NVLink, GB/s
  double latencyUs = 0;      // the per-operation handshake: signal, wait, copy launch, consumed
  double reduceGBps = 0;     // the local reduction's achieved HBM rate (read + written), GB/s
  // Host time to post one operation beyond an NCCL post (host.communication_call_us): publishing
  // and looking up the members' buffers through the store. Interpreted runs only; a CUDA-graph
  // replay does not repeat it.
  double hostCallUs = 0;
  bool operator==(const CopyEngineModel&) const = default;
};

// NCCL's tuning model (src/graph/tuning.cc): time = latency + bytes / algorithm bandwidth, per
// algorithm and protocol; the simulator picks the fastest enabled pair, as NCCL does.
struct NcclModel {
  std::vector<NcclAlgorithm> algorithms;  // enabled; tree is used for Allreduce only
  std::vector<NcclProtocol> protocols;    // enabled
  int64_t channels = 16;                  // one CTA each: SMs a running NCCL kernel holds
  int64_t smsPerChannel = 1;
  double intraNodeBusGBps = 0;            // ring bus bandwidth inside a node (links x per-link rate)
  std::array<PerProtocol, kNumNcclAlgorithms> baseLatencyUs{};
  std::array<PerProtocol, kNumNcclAlgorithms> intraStepLatencyUs{};  // per step over NVLink
  std::array<PerProtocol, kNumNcclAlgorithms> interStepLatencyUs{};  // per step over the network
  double llMaxBusGBps = 0;                 // LL: min(this, protocolBusFactor[LL] x bus)
  double ll128MaxBusGBpsPerChannel = 0;    // LL128: min(channels x this, protocolBusFactor x bus)
  PerProtocol protocolBusFactor{};         // share of the bus bandwidth each protocol carries
  double treeMaxBusGBpsPerChannel = 0;     // tree: min(channels x this, bus)
  PerProtocol treeProtocolFactor{};        // tree's extra factor per protocol
  EfficiencyCurve bandwidthEfficiency;     // achieved / modelled bandwidth, by bytes
  double callOverheadUs = 0;               // GPU-side fixed cost of one collective or P2P group
  // Share of the modelled bandwidth each kind of collective reaches (CommunicationType order;
  // 1 where not given): NCCL's kernels differ by kind (two H100s: an Allgather moved 266 GB/s
  // per direction, an Allreduce 330, a Broadcast 371, at 1 GiB). Calibration fits one per
  // measured kind.
  std::array<double, kNumCommunicationTypes> kindBandwidthFactor = uniformKindFactors();
  bool operator==(const NcclModel&) const = default;
};

// How concurrent operations on one GPU slow each other (docs/SIM.md, "Contention").
struct ContentionModel {
  bool smSharing = true;    // kernels share SMs; a running NCCL kernel holds its channels' SMs
  // With SM sharing: a GEMM with fewer SMs runs ceil(tiles / SMs) waves (true), or slows in
  // proportion to the SMs it lost (false).
  bool smSharingWaves = false;
  bool hbmSharing = true;   // concurrent kernels share HBM bandwidth
  bool linkSharing = true;  // concurrent communications of a GPU share its links
  double commRateUnderCompute = 1.0;  // a communication's rate while a kernel runs beside it
  // CTAs are dispatched in launch order: a communication kernel that starts while a GEMM on one
  // of its GPUs still has more than its last wave of CTAs to dispatch gets no SMs there (and so
  // makes no progress) until that GEMM's last wave is out. Kernels beside kernels share SMs as
  // above (measured on two H100s: two GEMMs on two streams run side by side, an NCCL kernel
  // launched behind a multi-wave GEMM waits for it).
  bool commWaitsForDispatch = false;
  // The same for a kernel: one that starts while another kernel on its GPU still has more than its
  // last wave of CTAs to dispatch gets no SMs until that last wave is out (measured on an H200: a
  // small kernel, or a second GEMM, on another stream waits for a cuBLAS GEMM, which keeps its SMs
  // to the end). Off: kernels beside kernels share the SMs at once.
  bool kernelsWaitForDispatch = false;
  // The copy engines beside kernels: they hold no SMs, but their transfers load the HBM and L2
  // that both GPUs' kernels use. While a copy-engine transfer moves data on a GPU, a kernel's
  // compute there takes (1 + copyEngineComputeSlowdown) times as long; while a kernel runs beside
  // it, a transfer moves at copyEngineRateUnderCompute of its speed. (A copy-engine reduction's
  // local sum is a kernel, slowed as NCCL's are, by commRateUnderCompute.)
  double copyEngineComputeSlowdown = 0;
  double copyEngineRateUnderCompute = 1.0;
  bool operator==(const ContentionModel&) const = default;
};

struct Machine {
  std::string name;         // "h200", or the file's "name"
  std::string description;  // free text: sources, calibration date
  Topology topology;
  GpuModel gpu;
  HostCosts host;
  LinkModel nvlink;
  LinkModel nic;
  NcclModel nccl;
  CopyEngineModel copyEngines;
  ContentionModel contention;
  bool operator==(const Machine&) const = default;

  int64_t nodeOf(int64_t rank) const { return rank / topology.gpusPerNode; }
  // Bandwidth one GPU has to other nodes (its share of the node's NICs), GB/s.
  double interNodeGBpsPerGpu() const;
};

// Built-in presets: "a100", "b200", "h100", "h200", "h200-datasheet".
std::vector<std::string> machinePresetNames();
// The preset's machine-file text, or "" when there is none of that name.
std::string machinePresetJson(const std::string& name);
// A preset by name, or the machine file at `nameOrPath`; throws Error listing the presets when
// it is neither.
Machine loadMachine(const std::string& nameOrPath);

// Strict reading: every field must be present with the right type and range; an unknown field
// is an error too (it is usually a typo). Errors name the file and the field:
// "m.json: gpu.hbm_gbps: missing", "m.json: nccl.protocols[1]: unknown protocol \"LL64\"".
Machine machineFromJson(const std::string& text, const std::string& file);
std::string machineToJson(const Machine& m);
// The copy engines of a machine file without a `copy_engines` section, from its NVLink and HBM.
CopyEngineModel defaultCopyEngines(const Machine& m);

}  // namespace braid::sim
