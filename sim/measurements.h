// Calibration measurements: what microbenchmarks on a GPU machine measured, in the terms of the
// machine model (docs/CALIBRATION.md gives the JSON schema, "braid-measurements/1"). Each entry
// is one timed operation alone on an idle machine (the median of its timed runs), except the
// overlap entries, which time a GEMM and a collective alone and side by side.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "ir/host_ir.h"
#include "ir/types.h"
#include "sim/gemm_shape.h"

namespace braid::sim {

struct GemmMeasurement {
  GemmShape shape;
  double us = 0;
};

// A device-to-device copy moving `bytes` (read + written, as the model counts a copy).
struct CopyMeasurement {
  double bytes = 0;
  double us = 0;
};

// A collective over `team` ranks on `nodes` nodes; `bytes` is the buffer as nccl-tests counts it
// (sim/cost_model.h).
struct CollectiveMeasurement {
  CommunicationType kind = CommunicationType::kAllreduce;
  int64_t team = 2;
  int64_t nodes = 1;
  double bytes = 0;
  double us = 0;
};

// One point-to-point send/recv of `bytes`.
struct P2PMeasurement {
  double bytes = 0;
  bool interNode = false;
  double us = 0;
};

// A collective on the copy engines (braid run's backend=CUDA) over `team` ranks of one host;
// `bytes` as for CollectiveMeasurement. It fits machine.h's copy_engines constants.
struct CopyEngineMeasurement {
  CommunicationType kind = CommunicationType::kAllgather;
  int64_t team = 2;
  double bytes = 0;
  double us = 0;
};

// The host and launch costs of machine.h, one key each.
enum class HostCall {
  kAtenOp,             // host.aten_op_us
  kKernelLaunch,       // host.kernel_launch_us
  kCommunicationCall,  // host.communication_call_us
  kStreamCall,         // host.stream_call_us
  kAllocation,         // host.allocation_us
  kView,               // host.view_us
  kControl,            // host.control_us
  kLaunchLatency,      // gpu.launch_latency_us
  kKernelMin,          // gpu.kernel_min_us
};
inline constexpr HostCall kHostCalls[] = {HostCall::kAtenOp,     HostCall::kKernelLaunch,  HostCall::kCommunicationCall,
                                          HostCall::kStreamCall, HostCall::kAllocation,    HostCall::kView,
                                          HostCall::kControl,    HostCall::kLaunchLatency, HostCall::kKernelMin};
const char* hostCallName(HostCall c);  // "aten_op", "kernel_launch", ..., "launch_latency", "kernel_min"

struct HostMeasurement {
  HostCall call = HostCall::kKernelLaunch;
  double us = 0;
};

// A GEMM and a collective timed alone and while both run on the same GPUs: how much each slows
// the other (the contention model), with the collective on NCCL or on the copy engines.
struct OverlapMeasurement {
  GemmShape gemm;
  CollectiveMeasurement collective;  // its `us` is unused
  bool copyEngines = false;          // the collective ran on the copy engines (transport "cuda"), else on NCCL
  bool commHighPriority = false;     // the communicator's streams at the greatest priority (--comm-priority high)
  double gemmAloneUs = 0, gemmBesideUs = 0;
  double commAloneUs = 0, commBesideUs = 0;
};

// The power benchmark (docs/CALIBRATION.md, "Power state"): one GEMM that fills every SM, run
// from an idle GPU, either for `loadMs` at once (gapMs 0, one burst) or in `bursts` bursts of
// `loadMs` with `gapMs` idle between them; back to back, or (duty < 1) each run followed by idle
// time so that the GEMM runs `duty` of the time, as a program's GEMMs alternate with other work.
// Every run is timed on the device's clock. It fits gpu.power_cap (sim/power_fit.h).
struct PowerMeasurement {
  GemmShape gemm;
  double loadMs = 0;
  double gapMs = 0;
  int64_t bursts = 1;
  double duty = 1;
  struct Run {
    double startUs = 0;  // from the first run's start
    double us = 0;
  };
  std::vector<Run> runs;
};

// The after-idle benchmark (docs/CALIBRATION.md, "After idle"): the host issuing `ops` operations
// (a 64x64 matmul, a one-element add, a 1 MiB allocation and a view, in turn: a program's host work
// in small) after `idleMs` of idle (0: right after about 2 ms of the same work), timed as `braid
// run` times a run's issue: on the host, from after the barrier every rank passes until the last
// returns. Its reps interleave with the other idle times'. It fits
// host.after_idle (sim/after_idle_fit.h).
struct AfterIdleMeasurement {
  double idleMs = 0;
  int64_t ops = 100;
  // The operations captured once as a CUDA graph and replayed after replays of the same graph,
  // the replay call timed (as `braid run --graph` times a replay's issue); the graph's own
  // reference and curve (host.after_idle_graph).
  bool graph = false;
  std::vector<double> us;
};

struct Measurements {
  std::string gpu;                          // what was measured ("NVIDIA H200")
  // date, driver, CUDA, NCCL and torch versions, gemm_operands (integers or normal), ...
  std::map<std::string, std::string> meta;
  std::vector<GemmMeasurement> gemms;
  std::vector<CopyMeasurement> copies;
  std::vector<CollectiveMeasurement> collectives;
  std::vector<P2PMeasurement> p2p;
  std::vector<HostMeasurement> host;
  std::vector<OverlapMeasurement> overlaps;
  std::vector<CopyEngineMeasurement> copyEngine;
  std::vector<PowerMeasurement> power;
  std::vector<AfterIdleMeasurement> afterIdle;
  size_t size() const;
};

// Strict reading as for machine files: missing, mistyped, out-of-range and unknown fields are
// errors naming the file and the field ("m.json: gemm[2].dtype: unknown dtype \"fp8\"").
Measurements measurementsFromJson(const std::string& text, const std::string& file);
Measurements readMeasurementsFile(const std::string& path);
std::string measurementsToJson(const Measurements& m);

}  // namespace braid::sim
