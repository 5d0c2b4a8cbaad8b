// Completion events and the Work that waits on one, shared by the CUDA backend's communicators
// (NCCL, copy engines): a posted operation records its completion event on the communicator's
// stream, and Work::wait() makes the caller's current stream wait for it (the host never blocks).
#pragma once

#if defined(BRAID_WITH_TORCH) && defined(BRAID_WITH_CUDA)

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>

#include "exec/communicator.h"
#include "exec/cuda_check.h"

namespace braid::exec {

inline std::string teamName(const std::vector<int64_t>& team) {
  std::string s = "(";
  for (size_t i = 0; i < team.size(); ++i) s += (i ? " " : "") + std::to_string(team[i]);
  return s + ")";
}

// Completion events are created once and reused: a Work returns its event when it is destroyed
// (a wait already enqueued keeps the state the event had when it was enqueued).
class EventPool {
 public:
  ~EventPool() {
    for (cudaEvent_t e : free_) cudaEventDestroy(e);
    for (cudaEvent_t e : freeTimed_) cudaEventDestroy(e);
  }
  cudaEvent_t take(bool timed) {
    auto& list = timed ? freeTimed_ : free_;
    if (!list.empty()) {
      cudaEvent_t e = list.back();
      list.pop_back();
      return e;
    }
    cudaEvent_t e = nullptr;
    checkCuda(cudaEventCreateWithFlags(&e, timed ? cudaEventDefault : cudaEventDisableTiming), "cudaEventCreate");
    return e;
  }
  void give(cudaEvent_t e, bool timed) { (timed ? freeTimed_ : free_).push_back(e); }

 private:
  std::vector<cudaEvent_t> free_, freeTimed_;
};

struct Events {
  std::shared_ptr<EventPool> pool;
  cudaEvent_t start = nullptr;  // timing only
  cudaEvent_t done = nullptr;
  bool timed = false;
  Events(std::shared_ptr<EventPool> p, bool t) : pool(std::move(p)), timed(t) {
    done = pool->take(timed);
    if (timed) start = pool->take(true);
  }
  ~Events() {
    pool->give(done, timed);
    if (start) pool->give(start, true);
  }
};

class EventWork : public Work {
 public:
  explicit EventWork(std::shared_ptr<Events> ev) : ev_(std::move(ev)) {}
  void wait() override {
    checkCuda(cudaStreamWaitEvent(c10::cuda::getCurrentCUDAStream().stream(), ev_->done, 0),
              "cudaStreamWaitEvent (Wait)");
  }
  std::pair<void*, void*> deviceEvents() const override {
    return ev_->timed ? std::pair<void*, void*>{ev_->start, ev_->done} : std::pair<void*, void*>{nullptr, nullptr};
  }

 private:
  std::shared_ptr<Events> ev_;
};

}  // namespace braid::exec

#endif  // BRAID_WITH_TORCH && BRAID_WITH_CUDA
