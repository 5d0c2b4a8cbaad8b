// Microbenchmarks for calibrating the simulator's machine model (`braid calibrate --measure`,
// docs/CALIBRATION.md): GEMMs, device copies, collectives, point-to-point transfers, host costs and
// compute/communication overlap, each timed alone (overlap: also side by side) on a Device with a
// Communicator. Every rank of the communicator calls runMicrobench with the same plan; every time
// returned is the median of the timed runs on a rank, then the largest over the ranks.
//
// Clocks: on a device with streams (CUDA, hostOrdered() false) an operation is timed by the
// device itself (Device::beginOp/endOp around it on the current stream; a communicator's
// Work::deviceEvents for collectives), so back-to-back runs measure the kernels and not the host
// issuing them. On the CPU device there is no device clock: the host wall clock times each run
// (the operation completes before the call returns), and what needs streams (overlap, launch
// latency, the smallest kernel) is not measured. Host costs are always host-clock times.
//
// The plan (what to measure) is made elsewhere (sim/measure_plan.h builds it around a machine
// preset's efficiency curves); this file only runs it, so it needs no machine model.
#pragma once

#ifdef BRAID_WITH_TORCH

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "exec/communicator.h"
#include "exec/device.h"
#include "exec/reference.h"
#include "ir/host_ir.h"
#include "ir/types.h"

namespace braid::exec {

// [batch, m, k] @ [k, n] (batch 1: a plain [m, k] @ [k, n]).
struct BenchGemm {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  DataType dtype = DataType::kBFloat16;
};

// One collective over the world ranks 0 .. team-1; `bytes` is the buffer as nccl-tests counts it
// (the gathered output of an Allgather, the input of a ReduceScatter, the whole scattered or
// gathered buffer of a Scatter / Gather / AllToAll, else the message). Float32 elements.
struct BenchCollective {
  CommunicationType kind = CommunicationType::kAllreduce;
  int64_t team = 2;
  int64_t bytes = 0;
};

// Rank 0 sends `bytes` to world rank `peer`, which receives them.
struct BenchP2P {
  int64_t bytes = 0;
  int64_t peer = 1;
};

struct BenchOverlap {
  BenchGemm gemm;
  BenchCollective collective;
  bool copyEngines = false;  // the collective on the copy engines (the router's backend=CUDA), else NCCL
};

// The power benchmark (docs/CALIBRATION.md, "Power state"): after `idleMs` of idle, `gemm` back to
// back for `loadMs`, in `bursts` bursts with `gapMs` idle between them (1 burst: one stretch of
// sustained load). Every run is timed on the device's clock.
struct BenchPower {
  BenchGemm gemm;
  double loadMs = 400;
  double gapMs = 0;
  int64_t bursts = 1;
  double idleMs = 1000;
  double duty = 1;  // < 1: each run is followed by idle time, the GEMM running this share of the time
};

// The after-idle benchmark (docs/CALIBRATION.md, "After idle"): after about 2 ms of back-to-back
// work and `idleMs` of idle, the host issues `ops` operations (a 64x64 matmul, a one-element add,
// a 1 MiB allocation and a view, in turn), timed as `braid run` times a run's issue: on the host,
// from after every rank's barrier until the last returns. The plan's entries run their reps in
// turn (rep 1 of every entry, then rep 2, ...), so a drift spreads over all of them.
struct BenchAfterIdle {
  double idleMs = 0;
  int64_t ops = 100;
  // Capture the operations once as a CUDA graph and replay it, the replay call timed (its work is
  // waited for untimed; needs CUDA).
  bool graph = false;
};

struct MicrobenchPlan {
  std::vector<BenchGemm> gemms;
  std::vector<int64_t> copies;  // bytes moved (read + written: twice the tensor's size)
  std::vector<BenchCollective> collectives;
  std::vector<BenchP2P> p2p;
  bool host = true;  // measure the host costs (and, with a device clock, launch latency and kernel_min)
  std::vector<BenchOverlap> overlaps;
  // Collectives on the copy engines (backend=CUDA): the communicator must route them there (a
  // router with NCCL and the copy engines; exec/backend_router.h).
  std::vector<BenchCollective> copyEngine;
  std::vector<BenchPower> power;  // needs a device clock
  std::vector<BenchAfterIdle> afterIdle;
  int64_t warmup = 3;
  int64_t reps = 10;
  // Idle time before each measurement (its warm-up included), so every one starts at the
  // clocks of an idle GPU: on an H200 a GEMM slows by 15-17% after 40-100 ms of back-to-back
  // load (the power cap), and 50 ms idle restores it (docs/CALIBRATION.md, "Power state").
  double coolDownMs = 0;
  // The values of every GEMM's operands (overlaps' GEMMs too): a GEMM's time depends on them
  // (ir/input_values.h), so the default is what `braid run` seeds its inputs with.
  InputValues gemmOperands = InputValues::kIntegers;
};

struct OverlapTimes {
  double gemmAloneUs = 0, gemmBesideUs = 0;
  double commAloneUs = 0, commBesideUs = 0;
};

// Times in microseconds, index by index with the plan's lists.
struct MicrobenchTimes {
  bool deviceClock = false;  // device events (CUDA) rather than the host wall clock
  std::vector<double> gemmUs, copyUs, collectiveUs, p2pUs, copyEngineUs;
  // (call, us): the names of sim's HostCall ("aten_op", "kernel_launch", ..., "kernel_min").
  std::vector<std::pair<std::string, double>> hostUs;
  std::vector<OverlapTimes> overlaps;
  // Per power benchmark: every run's (start, time) in microseconds from the first run's start, on
  // rank 0's GPU (every rank runs the benchmark at once, as every GPU of a job draws power).
  std::vector<std::vector<std::pair<double, double>>> power;
  std::vector<std::vector<double>> afterIdleUs;  // per after-idle entry: every rep, this rank's
};

// Checks the plan against the world (teams and peers that exist, sizes that split evenly).
// Throws braid::Error naming the entry at fault.
void checkMicrobenchPlan(const MicrobenchPlan& plan, int64_t worldSize);

// Runs the plan on every rank (the same call everywhere). `progress` (may be null) gets one
// line per measurement with its time, on every rank; the caller prints rank 0's.
MicrobenchTimes runMicrobench(const MicrobenchPlan& plan, Device& device, Communicator& comm,
                              const std::function<void(const std::string&)>& progress);

// Facts about the software and the GPU for the measurement file's meta: "cuda", "cuda_driver",
// "nccl" (CUDA builds), "torch" where the headers say it, "gpus_visible".
std::vector<std::pair<std::string, std::string>> microbenchSoftware();

}  // namespace braid::exec

#endif  // BRAID_WITH_TORCH
