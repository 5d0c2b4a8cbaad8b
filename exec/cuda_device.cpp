// The CUDA device (see device.h): one CUDA stream per stream slot of the program, made current
// through c10's stream guard, event-based Synchronize, caching-allocator stream recording,
// optional per-op event timing and CUDA-graph capture.
#if defined(BRAID_WITH_TORCH) && defined(BRAID_WITH_CUDA)

#include <optional>

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAGraph.h>
#include <ATen/cuda/Sleep.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include "exec/cuda_check.h"
#include "exec/device.h"
#include "ir/error.h"

namespace braid::exec {

namespace {

class CudaGraphRun : public Device::Captured {
 public:
  explicit CudaGraphRun(std::unique_ptr<at::cuda::CUDAGraph> g) : graph_(std::move(g)) {}
  void replay() override { graph_->replay(); }

 private:
  std::unique_ptr<at::cuda::CUDAGraph> graph_;
};

class CudaDevice : public Device {
 public:
  explicit CudaDevice(int64_t index) : index_(static_cast<c10::DeviceIndex>(index)) {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
      cudaGetLastError();
      throw Error("--backend cuda: no CUDA device is visible to this process");
    }
    if (index < 0 || index >= count)
      throw Error("--backend cuda: this rank needs GPU " + std::to_string(index) + " (its LOCAL_RANK) but only " +
                  std::to_string(count) + (count == 1 ? " GPU is" : " GPUs are") + " visible");
    c10::cuda::set_device(index_);
    cudaDeviceProp props{};
    checkCuda(cudaGetDeviceProperties(&props, index_), "cudaGetDeviceProperties");
    name_ = props.name;
    smCount_ = props.multiProcessorCount;
  }

  ~CudaDevice() override {
    cudaDeviceSynchronize();
    for (cudaEvent_t e : syncEvents_)
      if (e) cudaEventDestroy(e);
    for (auto& [a, b] : timed_) cudaEventDestroy(a), cudaEventDestroy(b);
    if (epoch_) cudaEventDestroy(epoch_);
    for (cudaStream_t s : owned_) cudaStreamDestroy(s);
  }

  at::Device device() const override { return at::Device(at::kCUDA, index_); }
  std::string description() const override { return "cuda:" + std::to_string(index_) + " (" + name_ + ")"; }
  bool hostOrdered() const override { return false; }
  bool capturing() const override { return capturing_; }

  void beginRun() override {
    c10::cuda::CUDAStream origin = c10::cuda::getCurrentCUDAStream(index_);
    streams_.assign(1, origin);
    streams_.resize(owned_.size() + 1, origin);
    for (size_t i = 0; i < owned_.size(); ++i)
      streams_[i + 1] = c10::cuda::getStreamFromExternal(owned_[i], index_);
    guard_.emplace(origin);
    current_ = 0;
    applyCarveout();
    spans_.clear();
    spanEvents_.clear();
    usedTimed_ = 0;
    if (timing_ && !capturing_) {
      if (!epoch_) checkCuda(cudaEventCreate(&epoch_), "cudaEventCreate");
      checkCuda(cudaEventRecord(epoch_, origin.stream()), "cudaEventRecord");
    }
  }

  void setCurrentStream(int32_t slot) override {
    guard_->reset_stream(streamOf(slot));
    current_ = slot;
    applyCarveout();
  }

  void setComputeSmCarveout(int32_t sms) override {
    if (sms < 0 || sms >= smCount_)
      throw Error("--sm-carveout " + std::to_string(sms) + ": " + name_ + " has " + std::to_string(smCount_) +
                  " SMs; leave between 0 and " + std::to_string(smCount_ - 1) + " of them to the communication");
    carveout_ = sms;  // applied at the next beginRun / setCurrentStream, once ATen's allocator is up
  }
  int32_t currentStream() const override { return current_; }

  void synchronize(int32_t slot) override {
    if (slot == current_) return;  // a stream is ordered after its own work
    c10::cuda::CUDAStream waited = streamOf(slot);
    if (syncEvents_.size() <= static_cast<size_t>(slot)) syncEvents_.resize(static_cast<size_t>(slot) + 1, nullptr);
    cudaEvent_t& e = syncEvents_[static_cast<size_t>(slot)];
    // One event per slot, created once: re-recording it later does not affect a wait already
    // enqueued (cudaStreamWaitEvent uses the event's state at the time of the call).
    if (!e) checkCuda(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    checkCuda(cudaEventRecord(e, waited.stream()), "cudaEventRecord (Synchronize)");
    checkCuda(cudaStreamWaitEvent(streamOf(current_).stream(), e, 0), "cudaStreamWaitEvent (Synchronize)");
  }

  void recordUse(const at::Tensor& t) override {
    // The allocator ignores a record on the block's own stream; memory captured into a graph's
    // private pool lives as long as the graph, so nothing is recorded while capturing.
    if (capturing_ || !t.defined() || !t.is_cuda() || !t.has_storage()) return;
    c10::cuda::CUDACachingAllocator::recordStream(t.storage().data_ptr(), streamOf(current_));
  }

  void finishRun() override {
    guard_.reset();  // the stream current before the run is current again
    current_ = 0;
    if (!capturing_) hostSynchronize();
  }

  void hostSynchronize() override { checkCuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }
  void holdCurrentStream(double us) override {
    // clock64 counts SM cycles; at the peak clock rate the spin lasts `us`, at any lower clock longer.
    int khz = 0;
    checkCuda(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, index_), "cudaDeviceGetAttribute (clock rate)");
    at::cuda::sleep(static_cast<int64_t>(us * static_cast<double>(khz) / 1000.0));
  }

  void setTiming(bool on) override { timing_ = on; }
  bool timing() const override { return timing_ && !capturing_; }

  int32_t beginOp() override {
    if (!timing()) return -1;
    if (usedTimed_ == timed_.size()) {
      cudaEvent_t a = nullptr, b = nullptr;
      checkCuda(cudaEventCreate(&a), "cudaEventCreate");
      checkCuda(cudaEventCreate(&b), "cudaEventCreate");
      timed_.emplace_back(a, b);
    }
    size_t i = usedTimed_++;
    checkCuda(cudaEventRecord(timed_[i].first, streamOf(current_).stream()), "cudaEventRecord");
    int32_t token = static_cast<int32_t>(spans_.size());
    spans_.push_back({current_, 0, 0});
    spanEvents_.emplace_back(timed_[i].first, timed_[i].second);
    return token;
  }

  void endOp(int32_t token) override {
    if (token < 0) return;
    checkCuda(cudaEventRecord(spanEvents_[static_cast<size_t>(token)].second, streamOf(current_).stream()),
              "cudaEventRecord");
  }

  int32_t addSpan(void* start, void* end) override {
    if (!timing() || !start || !end) return -1;
    int32_t token = static_cast<int32_t>(spans_.size());
    spans_.push_back({-1, 0, 0});
    spanEvents_.emplace_back(static_cast<cudaEvent_t>(start), static_cast<cudaEvent_t>(end));
    return token;
  }

  std::vector<DeviceSpan> spans() override {
    std::vector<DeviceSpan> out = spans_;
    for (size_t i = 0; i < out.size(); ++i) {
      float a = 0, b = 0;
      checkCuda(cudaEventElapsedTime(&a, epoch_, spanEvents_[i].first), "cudaEventElapsedTime");
      checkCuda(cudaEventElapsedTime(&b, epoch_, spanEvents_[i].second), "cudaEventElapsedTime");
      out[i].startUs = 1000.0 * a;
      out[i].endUs = 1000.0 * b;
    }
    return out;
  }

  std::unique_ptr<Captured> capture(const std::function<void()>& body) override {
    auto graph = std::make_unique<at::cuda::CUDAGraph>();
    // Capture on a side stream that first waits for the caller's stream (graphs cannot capture
    // the legacy default stream); a replay later runs on whatever stream is current then.
    c10::cuda::CUDAStream caller = c10::cuda::getCurrentCUDAStream(index_);
    c10::cuda::CUDAStream side = c10::cuda::getStreamFromPool(false, index_);
    cudaEvent_t e = nullptr;
    checkCuda(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    checkCuda(cudaEventRecord(e, caller.stream()), "cudaEventRecord");
    checkCuda(cudaStreamWaitEvent(side.stream(), e, 0), "cudaStreamWaitEvent");
    cudaEventDestroy(e);
    {
      c10::cuda::CUDAStreamGuard guard(side);
      capturing_ = true;
      try {
        graph->capture_begin();
        body();
        graph->capture_end();
      } catch (...) {
        capturing_ = false;
        throw;
      }
      capturing_ = false;
    }
    checkCuda(cudaStreamSynchronize(side.stream()), "cudaStreamSynchronize");
    return std::make_unique<CudaGraphRun>(std::move(graph));
  }

 private:
  c10::cuda::CUDAStream streamOf(int32_t slot) {
    if (slot < 0) throw Error("internal: negative stream slot");
    while (streams_.size() <= static_cast<size_t>(slot)) {
      // A stream of the program's own (not c10's round-robin pool of 32, which would make two
      // of the program's streams one when it uses many): non-blocking, kept for later runs.
      cudaStream_t s = nullptr;
      checkCuda(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
      owned_.push_back(s);
      streams_.push_back(c10::cuda::getStreamFromExternal(s, index_));
    }
    return streams_[static_cast<size_t>(slot)];
  }

  c10::DeviceIndex index_;
  // The SM count target of ATen's cuBLAS handle for this thread and the current stream (ATen
  // hands out a handle per thread and device and sets its stream on every call): set again
  // whenever the current stream changes, cheap, and a no-op when no carve-out was asked.
  void applyCarveout() {
    if (carveout_ == 0 && !carveoutApplied_) return;
    // ATen's cuBLAS handle comes with a workspace from the caching allocator, which initializes
    // lazily on the first CUDA tensor: make sure there was one.
    if (!allocatorReady_) {
      (void)at::empty({1}, at::TensorOptions().dtype(at::kByte).device(at::kCUDA, index_));
      allocatorReady_ = true;
    }
    cublasStatus_t st = cublasSetSmCountTarget(at::cuda::getCurrentCUDABlasHandle(), carveout_ ? smCount_ - carveout_ : 0);
    if (st != CUBLAS_STATUS_SUCCESS) throw Error("cublasSetSmCountTarget failed (status " + std::to_string(static_cast<int>(st)) + ")");
    carveoutApplied_ = carveout_ != 0;
  }
  int smCount_ = 0;
  int32_t carveout_ = 0;
  bool carveoutApplied_ = false;
  bool allocatorReady_ = false;
  std::string name_;
  std::vector<cudaStream_t> owned_;               // slot i + 1's stream
  std::vector<c10::cuda::CUDAStream> streams_;    // by slot; [0] = the default stream of the run
  std::optional<c10::cuda::CUDAStreamGuard> guard_;
  std::vector<cudaEvent_t> syncEvents_;           // by slot
  int32_t current_ = 0;
  bool capturing_ = false;
  bool timing_ = false;
  cudaEvent_t epoch_ = nullptr;
  std::vector<std::pair<cudaEvent_t, cudaEvent_t>> timed_;  // pool of timing events, reused per run
  size_t usedTimed_ = 0;
  std::vector<DeviceSpan> spans_;
  std::vector<std::pair<cudaEvent_t, cudaEvent_t>> spanEvents_;
};

}  // namespace

bool haveCuda() { return true; }

int64_t cudaDeviceCount() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

std::unique_ptr<Device> makeCudaDevice(int64_t index) { return std::make_unique<CudaDevice>(index); }

}  // namespace braid::exec

#endif  // BRAID_WITH_TORCH && BRAID_WITH_CUDA
