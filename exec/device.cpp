// The CPU device, and the CUDA entry points of a build without CUDA (see device.h).
#ifdef BRAID_WITH_TORCH

#include "exec/device.h"

#include "exec/communicator.h"

#include "ir/error.h"

namespace braid::exec {

namespace {

class CpuDevice : public Device {
 public:
  at::Device device() const override { return at::Device(at::kCPU); }
  std::string description() const override { return "cpu"; }
  bool hostOrdered() const override { return true; }
  void beginRun() override { current_ = 0; }
  void setCurrentStream(int32_t slot) override { current_ = slot; }
  int32_t currentStream() const override { return current_; }
  void synchronize(int32_t) override {}
  void recordUse(const at::Tensor&) override {}
  void finishRun() override { current_ = 0; }

 private:
  int32_t current_ = 0;  // kept only so the evaluator can restore it; it changes nothing on CPU
};

}  // namespace

std::unique_ptr<Device::Captured> Device::capture(const std::function<void()>&) {
  throw Error("--graph needs --backend cuda: a CUDA graph captures stream work, and the CPU backend has none");
}

std::unique_ptr<Device> makeCpuDevice() { return std::make_unique<CpuDevice>(); }

#ifndef BRAID_WITH_CUDA
bool haveCuda() { return false; }
int64_t cudaDeviceCount() { return 0; }
std::unique_ptr<Device> makeCudaDevice(int64_t) {
  throw Error("braid was built without CUDA (its libtorch has no CUDA, or nvcc / NCCL were not found): "
              "only --backend cpu runs");
}
bool haveNccl() { return false; }
std::unique_ptr<Communicator> makeNcclCommunicator(const Rendezvous&, int64_t) {
  throw Error("braid was built without NCCL (no CUDA libtorch, or nccl.h not found)");
}
std::unique_ptr<Communicator> makeCudaIpcCommunicator(const Rendezvous&, int64_t) {
  throw Error("braid was built without CUDA: the copy-engine backend (backend=CUDA) needs --backend cuda");
}
#endif

}  // namespace braid::exec

#endif  // BRAID_WITH_TORCH
