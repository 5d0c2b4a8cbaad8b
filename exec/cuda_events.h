// What the CUDA backend's communicators (NCCL, copy engines) share: completion events and the
// Work that waits on one (a posted operation records its completion event on the communicator's
// stream; Work::wait() makes the caller's current stream wait for it, the host never blocks), the
// host's polling of those events with a timeout (drain), and the staging of non-contiguous
// buffers on the communicator's stream.
#pragma once

#if defined(BRAID_WITH_TORCH) && defined(BRAID_WITH_CUDA)

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <ATen/ATen.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>

#include "exec/communicator.h"
#include "exec/cuda_check.h"
#include "exec/poll_backoff.h"
#include "ir/error.h"

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

// An operation not yet known to be complete, for drain().
struct Outstanding {
  std::shared_ptr<Events> ev;
  std::string what;  // "x.hir:3: Communication 5 (Allgather) on team (0 1)"
};

// Polls the completion events in posting order until all completed. `check` runs between polls
// (NCCL's asynchronous errors); `fail(why)` must throw: on a CUDA error, and after `timeout`.
inline void drainEvents(std::deque<Outstanding>& queue, std::chrono::milliseconds timeout,
                        const std::function<void()>& check, const std::function<void(const std::string&)>& fail) {
  using Clock = std::chrono::steady_clock;
  const auto begin = Clock::now();
  const auto deadline = begin + timeout;
  PollBackoff backoff;
  while (!queue.empty()) {
    cudaError_t q = cudaEventQuery(queue.front().ev->done);
    if (q == cudaSuccess) {
      queue.pop_front();
      continue;
    }
    if (q != cudaErrorNotReady) fail(std::string("CUDA error ") + cudaGetErrorString(q));
    check();
    if (Clock::now() > deadline)
      fail("did not complete within " + std::to_string(std::chrono::duration_cast<std::chrono::seconds>(timeout).count()) +
           " s (a peer that died or hangs, or ranks that disagree on the communications)");
    auto pause = backoff.next(std::chrono::duration_cast<PollBackoff::us>(Clock::now() - begin));
    if (pause.count() == 0) std::this_thread::yield();
    else std::this_thread::sleep_for(pause);
  }
}

// A buffer a transfer on `stream` can use as is: `t` when contiguous, else a fresh contiguous
// buffer allocated on `stream` (so the caching allocator orders its reuse after the transfer).
// `t` is recorded as used on `stream`. `what` names the operation in errors.
inline at::Tensor contiguousOn(const c10::cuda::CUDAStream& stream, const at::Tensor& t, c10::DeviceIndex device,
                               const std::string& what) {
  if (!t.defined()) throw Error(what + ": a buffer is missing");
  if (!t.is_cuda() || t.device().index() != device)
    throw Error(what + ": a buffer is not on this rank's GPU (cuda:" + std::to_string(device) + ")");
  c10::cuda::CUDACachingAllocator::recordStream(t.storage().data_ptr(), stream);
  if (t.is_contiguous()) return t;
  c10::cuda::CUDAStreamGuard g(stream);
  return at::empty(t.sizes(), t.options().memory_format(at::MemoryFormat::Contiguous));
}

// contiguousOn, holding `t`'s values (copied on `stream` when staged).
inline at::Tensor stagedInputOn(const c10::cuda::CUDAStream& stream, const at::Tensor& t, c10::DeviceIndex device,
                                const std::string& what) {
  at::Tensor s = contiguousOn(stream, t, device, what);
  if (!s.is_same(t)) {
    c10::cuda::CUDAStreamGuard g(stream);
    s.copy_(t);
  }
  return s;
}

}  // namespace braid::exec

#endif  // BRAID_WITH_TORCH && BRAID_WITH_CUDA
