// Device: where the evaluator's buffers live and how its streams behave (docs/EXEC.md, "Devices").
// The evaluator resolves the program's stream operands to *slots* exactly as the semantics does
// (slot 0: the default stream, the caller's current stream when the run began; a captured
// variable: the slot that was current; an uncaptured name or an index value: a pool stream of its
// own) and hands slots to the device:
// - CPU: there are no streams; every op runs on the host thread in program order, so the
//   evaluator must make the host wait for a pending transfer before an op touches its memory
//   (hostOrdered() is true).
// - CUDA (exec/cuda_device.h): one CUDA stream per slot, made current through c10's stream guard
//   so ATen kernels are enqueued on it; Synchronize is an event record on the waited stream plus
//   a stream wait on the current one (events created once per slot); buffers used on a stream
//   other than the one they were allocated on are recorded with the caching allocator, so a
//   Deallocate never hands memory to a later allocation while another stream still uses it.
//   Only the program's own synchronization orders work (hostOrdered() is false): a program that
//   misses one races, as it would under nvFuser.
#pragma once

#ifdef BRAID_WITH_TORCH

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <ATen/ATen.h>

namespace braid::exec {

// One timed operation, in microseconds since the run's start event (CUDA with timing on).
struct DeviceSpan {
  int32_t slot = 0;  // the stream slot it ran on (-1: a communicator's stream)
  double startUs = 0;
  double endUs = 0;
};

class Device {
 public:
  virtual ~Device() = default;
  virtual at::Device device() const = 0;
  // "cpu", "cuda:0 (NVIDIA H100 80GB HBM3)".
  virtual std::string description() const = 0;
  // True when every op runs on the host in program order (CPU): see the header comment.
  virtual bool hostOrdered() const = 0;

  // A run starts on the default stream (slot 0) = the stream current at this call.
  virtual void beginRun() = 0;
  virtual void setCurrentStream(int32_t slot) = 0;
  virtual int32_t currentStream() const = 0;
  // The current stream waits for everything enqueued on `slot` so far.
  virtual void synchronize(int32_t slot) = 0;
  // `t`'s memory is used by work enqueued on the current stream (CUDA: recordStream when that is
  // not the default stream; the default stream is where the evaluator allocates outside streams).
  virtual void recordUse(const at::Tensor& t) = 0;
  // Makes the original stream current again and blocks the host until the device is idle.
  virtual void finishRun() = 0;
  // True while a CUDA graph is being captured (nothing may query or wait on the host then).
  virtual bool capturing() const { return false; }

  // Per-op timing (CUDA only; off by default). beginOp/endOp bracket one statement's work on the
  // current stream and return/take a token; addSpan takes a pair of cudaEvent_t recorded by a
  // communicator on its own stream (as void*, so this header needs no CUDA). spans() is valid
  // after finishRun, indexed by token.
  virtual void setTiming(bool) {}
  virtual bool timing() const { return false; }
  virtual int32_t beginOp() { return -1; }
  virtual void endOp(int32_t) {}
  virtual int32_t addSpan(void* /*start*/, void* /*end*/) { return -1; }
  virtual std::vector<DeviceSpan> spans() { return {}; }

  // CUDA graphs (`braid run --graph`): captures everything `body` enqueues (on the stream current
  // at the call and every stream it forks from it) once; replay() enqueues it all again on the
  // stream current at the call and returns without waiting. CPU: throws braid::Error.
  class Captured {
   public:
    virtual ~Captured() = default;
    virtual void replay() = 0;
  };
  virtual std::unique_ptr<Captured> capture(const std::function<void()>& body);
  // Blocks the host until the device is idle (CPU: nothing to wait for).
  virtual void hostSynchronize() {}
  // Enqueues at least `us` microseconds of waiting on the current stream (CUDA: a one-thread spin
  // kernel), so that what the host issues next queues up behind it and runs back to back: the
  // device spans of short operations then measure the device, not the host's issue rate (on an
  // idle GPU a span's start event fires at once and the kernel arrives a launch later). Used by
  // the microbenchmarks (exec/microbench.cpp). CPU: nothing to hold.
  virtual void holdCurrentStream(double /*us*/) {}
  // Leave `sms` SMs of the GPU to other kernels (the communicators'): cuBLAS GEMMs are asked to
  // target the GPU's SM count minus `sms` (cublasSetSmCountTarget on the handle ATen uses), so an
  // NCCL kernel posted beside a GEMM finds SMs free instead of waiting for GEMM blocks to retire.
  // 0 (the default) leaves cuBLAS its own choice. CUDA devices only; throws Error when `sms` is
  // not below the GPU's SM count.
  virtual void setComputeSmCarveout(int32_t /*sms*/) {}
};

std::unique_ptr<Device> makeCpuDevice();

// True when this build has the CUDA backend (libtorch with CUDA + NCCL).
bool haveCuda();
// Number of visible CUDA devices (0 without CUDA or without a GPU).
int64_t cudaDeviceCount();
// The CUDA device `index` (the rank's LOCAL_RANK); throws braid::Error without CUDA or a GPU.
std::unique_ptr<Device> makeCudaDevice(int64_t index);

}  // namespace braid::exec

#endif  // BRAID_WITH_TORCH
