// The per-statement backend router (see backend_router.h).
#ifdef BRAID_WITH_TORCH

#include "exec/backend_router.h"

#include "ir/error.h"

namespace braid::exec {

namespace {

class BackendRouter : public Communicator {
 public:
  BackendRouter(std::map<CommBackend, std::unique_ptr<Communicator>> comms, std::optional<CommBackend> force)
      : comms_(std::move(comms)), force_(force) {
    if (comms_.empty()) throw Error("internal: a backend router without communicators");
    primary_ = comms_.begin()->second.get();
    current_ = primary_;
  }

  int64_t rank() const override { return primary_->rank(); }
  int64_t size() const override { return primary_->size(); }
  std::string backendName() const override {
    std::string s;
    for (const auto& [b, c] : comms_) s += (s.empty() ? "" : "+") + c->backendName();
    return s;
  }

  void useBackend(CommBackend b) override {
    if (force_) b = *force_;
    auto it = comms_.find(b);
    if (it == comms_.end())
      throw Error(std::string("backend=") + commBackendName(b) + " has no communicator in this run");
    current_ = it->second.get();
  }

  WorkPtr allgather(const std::vector<int64_t>& t, const at::Tensor& in, const at::Tensor& out) override {
    return current_->allgather(t, in, out);
  }
  WorkPtr allreduce(const std::vector<int64_t>& t, const at::Tensor& buf, ReduceOp op) override {
    return current_->allreduce(t, buf, op);
  }
  WorkPtr allreduceInto(const std::vector<int64_t>& t, const at::Tensor& in, const at::Tensor& out,
                        ReduceOp op) override {
    return current_->allreduceInto(t, in, out, op);
  }
  WorkPtr reduceScatter(const std::vector<int64_t>& t, const at::Tensor& in, const at::Tensor& out,
                        ReduceOp op) override {
    return current_->reduceScatter(t, in, out, op);
  }
  WorkPtr broadcast(const std::vector<int64_t>& t, const at::Tensor& buf, int64_t root) override {
    return current_->broadcast(t, buf, root);
  }
  WorkPtr reduce(const std::vector<int64_t>& t, const at::Tensor& in, const at::Tensor& out, int64_t root,
                 ReduceOp op) override {
    return current_->reduce(t, in, out, root, op);
  }
  WorkPtr scatter(const std::vector<int64_t>& t, const at::Tensor& in, const at::Tensor& out, int64_t root) override {
    return current_->scatter(t, in, out, root);
  }
  WorkPtr gather(const std::vector<int64_t>& t, const at::Tensor& in, const at::Tensor& out, int64_t root) override {
    return current_->gather(t, in, out, root);
  }
  WorkPtr allToAll(const std::vector<int64_t>& t, const at::Tensor& in, const at::Tensor& out) override {
    return current_->allToAll(t, in, out);
  }
  WorkPtr send(const at::Tensor& buf, int64_t peer) override { return grouped()->send(buf, peer); }
  WorkPtr recv(const at::Tensor& buf, int64_t peer) override { return grouped()->recv(buf, peer); }

  void startCoalescing() override {
    if (inGroup_) throw Error("StartCoalescing inside a coalescing group");
    inGroup_ = true;
    group_ = nullptr;
  }
  WorkPtr endCoalescing() override {
    if (!inGroup_) throw Error("EndCoalescing without StartCoalescing");
    inGroup_ = false;
    Communicator* g = group_;
    group_ = nullptr;
    return g ? g->endCoalescing() : completedWork();  // an empty group moves nothing
  }

  // One barrier is enough for every rank to arrive; every communicator is drained.
  void barrier() override {
    primary_->barrier();
    drain();
  }
  void setContext(const std::string& s) override {
    for (auto& [b, c] : comms_) c->setContext(s);
  }
  void drain() override {
    for (auto& [b, c] : comms_) c->drain();
  }
  void setTiming(bool on) override {
    for (auto& [b, c] : comms_) c->setTiming(on);
  }
  void setHighPriorityStreams(bool on) override {
    for (auto& [b, c] : comms_) c->setHighPriorityStreams(on);
  }

 private:
  // Inside a group: the group's communicator (opened by its first transfer).
  Communicator* grouped() {
    if (!inGroup_) return current_;
    if (!group_) {
      group_ = current_;
      group_->startCoalescing();
    } else if (group_ != current_) {
      throw Error("a coalescing group mixes backends (" + group_->backendName() + " and " + current_->backendName() +
                  "): every send/recv of a group must use the same backend");
    }
    return group_;
  }

  std::map<CommBackend, std::unique_ptr<Communicator>> comms_;
  std::optional<CommBackend> force_;
  Communicator* primary_ = nullptr;
  Communicator* current_ = nullptr;
  Communicator* group_ = nullptr;
  bool inGroup_ = false;
};

}  // namespace

std::unique_ptr<Communicator> makeBackendRouter(std::map<CommBackend, std::unique_ptr<Communicator>> comms,
                                                std::optional<CommBackend> force) {
  return std::make_unique<BackendRouter>(std::move(comms), force);
}

}  // namespace braid::exec

#endif  // BRAID_WITH_TORCH
