// The CUDA backend's router (exec/backend_router.h) with recording communicators: every
// communication goes to the communicator of its statement's backend, --backend-override forces
// one, a coalescing group belongs to its first transfer's backend and may not mix, barriers and
// drains reach every communicator.
#ifdef BRAID_WITH_TORCH

#include <gtest/gtest.h>

#include "exec/backend_router.h"
#include "ir/error.h"

namespace braid::exec {
namespace {

struct Log {
  std::vector<std::string> calls;
};

class Recording : public Communicator {
 public:
  Recording(std::string name, Log* log) : name_(std::move(name)), log_(log) {}
  int64_t rank() const override { return 0; }
  int64_t size() const override { return 2; }
  std::string backendName() const override { return name_; }
  WorkPtr allgather(const std::vector<int64_t>&, const at::Tensor&, const at::Tensor&) override { return note("allgather"); }
  WorkPtr allreduce(const std::vector<int64_t>&, const at::Tensor&, ReduceOp) override { return note("allreduce"); }
  WorkPtr reduceScatter(const std::vector<int64_t>&, const at::Tensor&, const at::Tensor&, ReduceOp) override {
    return note("reduceScatter");
  }
  WorkPtr broadcast(const std::vector<int64_t>&, const at::Tensor&, int64_t) override { return note("broadcast"); }
  WorkPtr reduce(const std::vector<int64_t>&, const at::Tensor&, const at::Tensor&, int64_t, ReduceOp) override {
    return note("reduce");
  }
  WorkPtr scatter(const std::vector<int64_t>&, const at::Tensor&, const at::Tensor&, int64_t) override {
    return note("scatter");
  }
  WorkPtr gather(const std::vector<int64_t>&, const at::Tensor&, const at::Tensor&, int64_t) override {
    return note("gather");
  }
  WorkPtr allToAll(const std::vector<int64_t>&, const at::Tensor&, const at::Tensor&) override { return note("allToAll"); }
  WorkPtr send(const at::Tensor&, int64_t) override { return note("send"); }
  WorkPtr recv(const at::Tensor&, int64_t) override { return note("recv"); }
  void startCoalescing() override { note("start"); }
  WorkPtr endCoalescing() override { return note("end"); }
  void barrier() override { note("barrier"); }
  void drain() override { note("drain"); }
  void setContext(const std::string& s) override { note("context " + s); }
  void setHighPriorityStreams(bool on) override { note(on ? "high priority" : "normal priority"); }

 private:
  WorkPtr note(const std::string& what) {
    log_->calls.push_back(name_ + " " + what);
    return completedWork();
  }
  std::string name_;
  Log* log_;
};

std::unique_ptr<Communicator> router(Log& log, std::optional<CommBackend> force = std::nullopt) {
  std::map<CommBackend, std::unique_ptr<Communicator>> comms;
  comms[CommBackend::kNccl] = std::make_unique<Recording>("nccl", &log);
  comms[CommBackend::kCuda] = std::make_unique<Recording>("cuda-ipc", &log);
  return makeBackendRouter(std::move(comms), force);
}

TEST(BackendRouter, EachCommunicationGoesToItsStatementsBackend) {
  Log log;
  auto r = router(log);
  at::Tensor t = at::zeros({4});
  EXPECT_EQ(r->backendName(), "nccl+cuda-ipc");
  r->gather({0, 1}, t, t, 0);  // outside statements: the first communicator
  r->useBackend(CommBackend::kCuda);
  r->allgather({0, 1}, t, t);
  r->useBackend(CommBackend::kNccl);
  r->allToAll({0, 1}, t, t);
  r->useBackend(CommBackend::kCuda);
  r->send(t, 1);
  EXPECT_EQ(log.calls, (std::vector<std::string>{"nccl gather", "cuda-ipc allgather", "nccl allToAll", "cuda-ipc send"}));
  EXPECT_THROW(r->useBackend(CommBackend::kUcc), Error);
}

TEST(BackendRouter, TheOverrideForcesOneBackend) {
  Log log;
  auto r = router(log, CommBackend::kCuda);
  at::Tensor t = at::zeros({4});
  r->useBackend(CommBackend::kNccl);
  r->allreduce({0, 1}, t, ReduceOp::kSum);
  EXPECT_EQ(log.calls, (std::vector<std::string>{"cuda-ipc allreduce"}));
}

TEST(BackendRouter, AGroupBelongsToItsFirstTransfersBackendAndMayNotMix) {
  Log log;
  auto r = router(log);
  at::Tensor t = at::zeros({4});
  r->startCoalescing();
  r->useBackend(CommBackend::kCuda);
  r->send(t, 1);
  r->recv(t, 1);
  r->endCoalescing();
  EXPECT_EQ(log.calls, (std::vector<std::string>{"cuda-ipc start", "cuda-ipc send", "cuda-ipc recv", "cuda-ipc end"}));
  r->startCoalescing();
  EXPECT_NO_THROW(r->endCoalescing());  // an empty group moves nothing
  r->startCoalescing();
  r->useBackend(CommBackend::kNccl);
  r->send(t, 1);
  r->useBackend(CommBackend::kCuda);
  try {
    r->recv(t, 1);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("a coalescing group mixes backends (nccl and cuda-ipc)"), std::string::npos)
        << e.what();
  }
}

TEST(BackendRouter, BarrierContextAndDrainReachEveryCommunicator) {
  Log log;
  auto r = router(log);
  r->setContext("x.hir:3");
  r->barrier();
  EXPECT_EQ(log.calls, (std::vector<std::string>{"nccl context x.hir:3", "cuda-ipc context x.hir:3", "nccl barrier",
                                                 "nccl drain", "cuda-ipc drain"}));
}

TEST(BackendRouter, StreamPriorityReachesEveryCommunicator) {
  Log log;
  auto r = router(log);
  r->setHighPriorityStreams(true);
  r->setHighPriorityStreams(false);
  EXPECT_EQ(log.calls, (std::vector<std::string>{"nccl high priority", "cuda-ipc high priority", "nccl normal priority",
                                                 "cuda-ipc normal priority"}));
}

}  // namespace
}  // namespace braid::exec

#endif  // BRAID_WITH_TORCH
