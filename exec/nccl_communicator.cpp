// The NCCL backend of Communicator (see communicator.h and docs/EXEC.md, "NCCL"), calling nccl.h
// directly rather than through c10d's ProcessGroupNCCL, so that the stream rules are exactly
// DESIGN.md's:
// - one NCCL communicator per distinct team, created when its members first use it, from a
//   unique id the team's first member puts in the rendezvous store;
// - each communicator runs on a stream of its own; posting records an event on the caller's
//   current stream and makes the communicator's stream wait for it (the communication is ordered
//   after the work enqueued before the post), and the Work's wait() makes the caller's current
//   stream wait for the completion event (the host never blocks);
// - point-to-point transfers use the world communicator; StartCoalescing/EndCoalescing map to
//   ncclGroupStart/ncclGroupEnd;
// - drain() polls the completion events and ncclCommGetAsyncError; an error, or no progress
//   within the timeout, aborts every communicator and throws an error naming the rank and the
//   statement of the oldest incomplete operation.
// Buffers that are not contiguous are staged through contiguous temporaries on the
// communicator's stream (allocated there, so the caching allocator orders their reuse).
#if defined(BRAID_WITH_TORCH) && defined(BRAID_WITH_CUDA)

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <thread>

#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#include <nccl.h>

#include "exec/communicator.h"
#include "exec/cuda_check.h"
#include "exec/cuda_events.h"
#include "exec/store.h"
#include "ir/error.h"

namespace braid::exec {

namespace {

ncclDataType_t ncclType(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return ncclFloat32;
    case at::kDouble: return ncclFloat64;
    case at::kHalf: return ncclFloat16;
    case at::kBFloat16: return ncclBfloat16;
    case at::kInt: return ncclInt32;
    case at::kLong: return ncclInt64;
    case at::kChar: return ncclInt8;
    case at::kByte:
    case at::kBool: return ncclUint8;
    default: throw Error(std::string("NCCL has no type for ") + c10::toString(t));
  }
}

ncclRedOp_t ncclOp(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return ncclSum;
    case ReduceOp::kMax: return ncclMax;
    case ReduceOp::kMin: return ncclMin;
  }
  return ncclSum;
}

struct Team {
  std::vector<int64_t> members;
  int index = 0;  // this rank's position in members
  ncclComm_t comm = nullptr;
  cudaStream_t raw = nullptr;
  std::optional<c10::cuda::CUDAStream> stream;
  cudaEvent_t post = nullptr;  // reused: recorded on the posting stream at every post
  std::string name;
};

class NcclCommunicator : public Communicator {
 public:
  NcclCommunicator(const Rendezvous& rv, int64_t device)
      : rv_(rv), device_(static_cast<c10::DeviceIndex>(device)), pool_(std::make_shared<EventPool>()) {
    c10::cuda::CUDAGuard guard(device_);
    if (rv.worldSize > 1) {
#ifdef BRAID_WITH_C10D_STORE
      store_ = connectStoreOrExplain(rv);
#else
      throw Error("this build has no c10d store: NCCL runs on one rank only");
#endif
    }
    std::vector<int64_t> world(static_cast<size_t>(rv.worldSize));
    for (int64_t r = 0; r < rv.worldSize; ++r) world[static_cast<size_t>(r)] = r;
    world_ = &team(world, "the world communicator");
  }

  ~NcclCommunicator() override {
    for (auto& [k, t] : teams_) {
      if (aborted_) continue;
      if (t->stream) cudaStreamSynchronize(t->raw);
      ncclCommDestroy(t->comm);
      cudaEventDestroy(t->post);
      cudaStreamDestroy(t->raw);
    }
  }

  int64_t rank() const override { return rv_.rank; }
  int64_t size() const override { return rv_.worldSize; }
  std::string backendName() const override { return "nccl"; }
  void setContext(const std::string& s) override { context_ = s; }
  void setTiming(bool on) override { timing_ = on; }
  void setHighPriorityStreams(bool on) override { highPriority_ = on; }

  WorkPtr allgather(const std::vector<int64_t>& tm, const at::Tensor& in, const at::Tensor& out) override {
    Team& t = team(tm, "allgather");
    Op op = begin(t, "Allgather");
    at::Tensor i = op.stageIn(in), o = op.stageOut(out);
    nccl(ncclAllGather(i.data_ptr(), o.data_ptr(), static_cast<size_t>(i.numel()), ncclType(i.scalar_type()), t.comm,
                       t.raw),
         "ncclAllGather");
    return finish(op);
  }

  WorkPtr allreduce(const std::vector<int64_t>& tm, const at::Tensor& buf, ReduceOp r) override {
    Team& t = team(tm, "allreduce");
    Op op = begin(t, "Allreduce");
    at::Tensor b = op.stageInOut(buf);
    nccl(ncclAllReduce(b.data_ptr(), b.data_ptr(), static_cast<size_t>(b.numel()), ncclType(b.scalar_type()), ncclOp(r),
                       t.comm, t.raw),
         "ncclAllReduce");
    return finish(op);
  }

  WorkPtr allreduceInto(const std::vector<int64_t>& tm, const at::Tensor& in, const at::Tensor& out,
                        ReduceOp r) override {
    Team& t = team(tm, "allreduce");
    Op op = begin(t, "Allreduce");
    at::Tensor i = op.stageIn(in), o = op.stageOut(out);
    nccl(ncclAllReduce(i.data_ptr(), o.data_ptr(), static_cast<size_t>(i.numel()), ncclType(i.scalar_type()), ncclOp(r),
                       t.comm, t.raw),
         "ncclAllReduce");
    return finish(op);
  }

  WorkPtr reduceScatter(const std::vector<int64_t>& tm, const at::Tensor& in, const at::Tensor& out,
                        ReduceOp r) override {
    Team& t = team(tm, "reduce-scatter");
    Op op = begin(t, "ReduceScatter");
    at::Tensor i = op.stageIn(in), o = op.stageOut(out);
    nccl(ncclReduceScatter(i.data_ptr(), o.data_ptr(), static_cast<size_t>(o.numel()), ncclType(o.scalar_type()),
                           ncclOp(r), t.comm, t.raw),
         "ncclReduceScatter");
    return finish(op);
  }

  WorkPtr broadcast(const std::vector<int64_t>& tm, const at::Tensor& buf, int64_t root) override {
    Team& t = team(tm, "broadcast");
    int r = memberIndex(t, root, "broadcast root");
    Op op = begin(t, "Broadcast");
    at::Tensor b = op.stageInOut(buf);
    nccl(ncclBroadcast(b.data_ptr(), b.data_ptr(), static_cast<size_t>(b.numel()), ncclType(b.scalar_type()), r, t.comm,
                       t.raw),
         "ncclBroadcast");
    return finish(op);
  }

  WorkPtr reduce(const std::vector<int64_t>& tm, const at::Tensor& in, const at::Tensor& out, int64_t root,
                 ReduceOp r) override {
    Team& t = team(tm, "reduce");
    int ri = memberIndex(t, root, "reduce root");
    Op op = begin(t, "Reduce");
    at::Tensor i = op.stageIn(in);
    at::Tensor o = rv_.rank == root ? op.stageOut(out) : i;  // NCCL ignores recvbuff off the root
    nccl(ncclReduce(i.data_ptr(), o.data_ptr(), static_cast<size_t>(i.numel()), ncclType(i.scalar_type()), ncclOp(r), ri,
                    t.comm, t.raw),
         "ncclReduce");
    return finish(op);
  }

  WorkPtr scatter(const std::vector<int64_t>& tm, const at::Tensor& in, const at::Tensor& out, int64_t root) override {
    Team& t = team(tm, "scatter");
    int ri = memberIndex(t, root, "scatter root");
    Op op = begin(t, "Scatter");
    at::Tensor o = op.stageOut(out);
    at::Tensor i = rv_.rank == root ? op.stageIn(in) : at::Tensor();
    auto bytes = static_cast<size_t>(o.numel() * o.element_size());
    group([&] {
      if (i.defined())
        for (size_t j = 0; j < tm.size(); ++j)
          nccl(ncclSend(static_cast<char*>(i.data_ptr()) + j * bytes, bytes, ncclUint8, static_cast<int>(j), t.comm, t.raw),
               "ncclSend (scatter)");
      nccl(ncclRecv(o.data_ptr(), bytes, ncclUint8, ri, t.comm, t.raw), "ncclRecv (scatter)");
    });
    return finish(op);
  }

  WorkPtr gather(const std::vector<int64_t>& tm, const at::Tensor& in, const at::Tensor& out, int64_t root) override {
    Team& t = team(tm, "gather");
    int ri = memberIndex(t, root, "gather root");
    Op op = begin(t, "Gather");
    at::Tensor i = op.stageIn(in);
    at::Tensor o = rv_.rank == root ? op.stageOut(out) : at::Tensor();
    auto bytes = static_cast<size_t>(i.numel() * i.element_size());
    group([&] {
      nccl(ncclSend(i.data_ptr(), bytes, ncclUint8, ri, t.comm, t.raw), "ncclSend (gather)");
      if (o.defined())
        for (size_t j = 0; j < tm.size(); ++j)
          nccl(ncclRecv(static_cast<char*>(o.data_ptr()) + j * bytes, bytes, ncclUint8, static_cast<int>(j), t.comm, t.raw),
               "ncclRecv (gather)");
    });
    return finish(op);
  }

  WorkPtr allToAll(const std::vector<int64_t>& tm, const at::Tensor& in, const at::Tensor& out) override {
    Team& t = team(tm, "all-to-all");
    Op op = begin(t, "AllToAll");
    at::Tensor i = op.stageIn(in), o = op.stageOut(out);
    auto bytes = static_cast<size_t>(i.numel() / static_cast<int64_t>(tm.size()) * i.element_size());
    group([&] {
      for (size_t j = 0; j < tm.size(); ++j) {
        nccl(ncclSend(static_cast<char*>(i.data_ptr()) + j * bytes, bytes, ncclUint8, static_cast<int>(j), t.comm, t.raw),
             "ncclSend (all-to-all)");
        nccl(ncclRecv(static_cast<char*>(o.data_ptr()) + j * bytes, bytes, ncclUint8, static_cast<int>(j), t.comm, t.raw),
             "ncclRecv (all-to-all)");
      }
    });
    return finish(op);
  }

  WorkPtr send(const at::Tensor& buf, int64_t peer) override { return p2p(buf, peer, true); }
  WorkPtr recv(const at::Tensor& buf, int64_t peer) override { return p2p(buf, peer, false); }

  void startCoalescing() override {
    if (group_) throw Error("StartCoalescing inside a coalescing group");
    group_.emplace(begin(*world_, "coalesced group"));
    nccl(ncclGroupStart(), "ncclGroupStart");
  }

  WorkPtr endCoalescing() override {
    if (!group_) throw Error("EndCoalescing without StartCoalescing");
    Op op = std::move(*group_);
    group_.reset();
    nccl(ncclGroupEnd(), "ncclGroupEnd");
    return finish(op);
  }

  void barrier() override {
    at::Tensor one = at::ones({1}, at::TensorOptions().dtype(at::kFloat).device(at::kCUDA, device_));
    allreduce(world_->members, one, ReduceOp::kSum)->wait();
    drain();
  }

  void drain() override {
    drainEvents(
        outstanding_, rv_.timeout,
        [&] {
          for (auto& [k, t] : teams_) {
            ncclResult_t async = ncclSuccess;
            ncclCommGetAsyncError(t->comm, &async);
            if (async != ncclSuccess && async != ncclInProgress)
              fail(std::string("NCCL error on team ") + t->name + ": " + ncclGetErrorString(async) + " (" +
                   ncclGetLastError(t->comm) + ")");
          }
        },
        [&](const std::string& why) { fail(why); });
  }

 private:
  // One posted operation: its team, staged buffers to copy back, its events.
  struct Op {
    Team* team = nullptr;
    std::string what;
    std::shared_ptr<Events> ev;
    std::vector<std::pair<at::Tensor, at::Tensor>> copyBack;  // (user buffer, staged)
    c10::DeviceIndex device = 0;

    at::Tensor staged(const at::Tensor& t) { return contiguousOn(*team->stream, t, device, what); }
    at::Tensor stageIn(const at::Tensor& t) { return stagedInputOn(*team->stream, t, device, what); }
    at::Tensor stageOut(const at::Tensor& t) {
      at::Tensor s = staged(t);
      if (!s.is_same(t)) copyBack.emplace_back(t, s);
      return s;
    }
    at::Tensor stageInOut(const at::Tensor& t) {
      at::Tensor s = stageIn(t);
      if (!s.is_same(t)) copyBack.emplace_back(t, s);
      return s;
    }
  };

  Op begin(Team& t, const std::string& what) {
    if (group_ && &t != group_->team)
      throw Error(what + " inside a coalescing group: only send/recv may be coalesced");
    Op op;
    op.team = &t;
    op.what = what;
    op.device = device_;
    if (group_) {
      op.ev = group_->ev;  // one Work for the group; copy-backs are collected on the group
    } else {
      op.ev = std::make_shared<Events>(pool_, timing_);
    }
    // Ordered after the work enqueued on the posting stream so far.
    cudaStream_t posting = c10::cuda::getCurrentCUDAStream(device_).stream();
    checkCuda(cudaEventRecord(t.post, posting), "cudaEventRecord (post)");
    checkCuda(cudaStreamWaitEvent(t.raw, t.post, 0), "cudaStreamWaitEvent (post)");
    if (!group_ && op.ev->start) checkCuda(cudaEventRecord(op.ev->start, t.raw), "cudaEventRecord");
    return op;
  }

  WorkPtr finish(Op& op) {
    if (group_) {  // inside a group: the copy-backs run after ncclGroupEnd
      for (auto& c : op.copyBack) group_->copyBack.push_back(c);
      return std::make_shared<EventWork>(group_->ev);
    }
    {
      c10::cuda::CUDAStreamGuard g(*op.team->stream);
      for (auto& [user, staged] : op.copyBack) user.copy_(staged);
    }
    checkCuda(cudaEventRecord(op.ev->done, op.team->raw), "cudaEventRecord (done)");
    // An event recorded while a graph is captured cannot be queried; a replay is waited for by
    // the host as a whole.
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    checkCuda(cudaStreamIsCapturing(op.team->raw, &capture), "cudaStreamIsCapturing");
    if (capture == cudaStreamCaptureStatusNone) outstanding_.push_back({op.ev, (context_.empty() ? op.what : context_) + " on team " + op.team->name});
    return std::make_shared<EventWork>(op.ev);
  }

  WorkPtr p2p(const at::Tensor& buf, int64_t peer, bool isSend) {
    const char* what = isSend ? "send" : "recv";
    if (peer < 0 || peer >= rv_.worldSize)
      throw Error(std::string(what) + " with rank " + std::to_string(peer) + ", outside the world of " +
                  std::to_string(rv_.worldSize) + " ranks");
    if (peer == rv_.rank && !group_) return selfTransfer(buf, isSend);
    bool own = !group_;
    if (own) startCoalescing();
    Op op = begin(*world_, what);
    at::Tensor b = isSend ? op.stageIn(buf) : op.stageOut(buf);
    for (auto& c : op.copyBack) group_->copyBack.push_back(c);
    size_t bytes = static_cast<size_t>(b.numel() * b.element_size());
    if (isSend) {
      nccl(ncclSend(b.data_ptr(), bytes, ncclUint8, static_cast<int>(peer), world_->comm, world_->raw), "ncclSend");
    } else {
      nccl(ncclRecv(b.data_ptr(), bytes, ncclUint8, static_cast<int>(peer), world_->comm, world_->raw), "ncclRecv");
    }
    if (own) return endCoalescing();
    return std::make_shared<EventWork>(group_->ev);
  }

  // A send to self outside a group would block NCCL; it is a copy on the world stream instead,
  // matched in posting order with the next receive from self.
  WorkPtr selfTransfer(const at::Tensor& buf, bool isSend) {
    Op op = begin(*world_, isSend ? "send to self" : "recv from self");
    at::Tensor b = op.staged(buf);
    if (isSend) {
      selfSends_.push_back(buf);
    } else {
      if (selfSends_.empty()) throw Error("recv from self before the matching send from self");
      at::Tensor src = selfSends_.front();
      selfSends_.pop_front();
      if (src.numel() != buf.numel())
        throw Error("recv from self: " + std::to_string(buf.numel()) + " elements expected, " +
                    std::to_string(src.numel()) + " sent");
      c10::cuda::CUDAStreamGuard g(*world_->stream);
      buf.copy_(src.reshape(buf.sizes()));
    }
    return finish(op);
  }

  template <class F>
  void group(F&& body) {
    if (group_) {
      body();
      return;
    }
    nccl(ncclGroupStart(), "ncclGroupStart");
    try {
      body();
    } catch (...) {
      ncclGroupEnd();
      throw;
    }
    nccl(ncclGroupEnd(), "ncclGroupEnd");
  }

  int memberIndex(const Team& t, int64_t r, const char* what) {
    auto it = std::find(t.members.begin(), t.members.end(), r);
    if (it == t.members.end()) throw Error(std::string(what) + " " + std::to_string(r) + " is not in team " + t.name);
    return static_cast<int>(it - t.members.begin());
  }

  Team& team(const std::vector<int64_t>& members, const char* what) {
    auto it = teams_.find(members);
    if (it != teams_.end()) return *it->second;
    auto me = std::find(members.begin(), members.end(), rv_.rank);
    if (me == members.end())
      throw Error(std::string(what) + ": rank " + std::to_string(rv_.rank) + " is not in team " + teamName(members));
    auto t = std::make_unique<Team>();
    t->members = members;
    t->index = static_cast<int>(me - members.begin());
    t->name = teamName(members);
    ncclUniqueId id;
    std::string key = "nccl" + t->name;
    if (members.size() == 1) {
      nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
    } else if (t->index == 0) {
      nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
      std::vector<uint8_t> bytes(sizeof(id));
      std::memcpy(bytes.data(), &id, sizeof(id));
      store_->set(key, bytes);
    } else {
      std::vector<uint8_t> bytes = store_->get(key);
      if (bytes.size() != sizeof(id)) throw Error("the NCCL id of team " + t->name + " in the store is malformed");
      std::memcpy(&id, bytes.data(), sizeof(id));
    }
    t->comm = initComm(id, static_cast<int>(members.size()), t->index, t->name);
    t->raw = createCommStream(highPriority_);
    t->stream = c10::cuda::getStreamFromExternal(t->raw, device_);
    checkCuda(cudaEventCreateWithFlags(&t->post, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    Team& ref = *t;
    teams_.emplace(members, std::move(t));
    return ref;
  }

  // ncclCommInitRank blocks until every member called it; it runs on a helper thread so that a
  // member that never comes (dead, or not started) ends in an error after the timeout instead of
  // a hang. (The helper stays blocked then; the rank reports the error and exits.)
  ncclComm_t initComm(ncclUniqueId id, int n, int index, const std::string& name) {
    struct Shared {
      std::mutex mu;
      std::condition_variable cv;
      bool done = false;
      ncclResult_t result = ncclSuccess;
      ncclComm_t comm = nullptr;
    };
    auto sh = std::make_shared<Shared>();
    c10::DeviceIndex dev = device_;
    std::thread([sh, id, n, index, dev] {
      cudaSetDevice(dev);
      ncclComm_t c = nullptr;
      ncclResult_t r = ncclCommInitRank(&c, n, id, index);
      std::lock_guard<std::mutex> lock(sh->mu);
      sh->result = r;
      sh->comm = c;
      sh->done = true;
      sh->cv.notify_all();
    }).detach();
    std::unique_lock<std::mutex> lock(sh->mu);
    if (!sh->cv.wait_for(lock, rv_.timeout, [&] { return sh->done; }))
      throw Error("rank " + std::to_string(rv_.rank) + ": NCCL: creating the communicator of team " + name +
                  (context_.empty() ? std::string() : " for " + context_) + " did not complete within " +
                  std::to_string(std::chrono::duration_cast<std::chrono::seconds>(rv_.timeout).count()) +
                  " s (a member that never joined: dead, hung or not started)");
    nccl(sh->result, "ncclCommInitRank");
    return sh->comm;
  }

  void nccl(ncclResult_t r, const char* what) {
    if (r == ncclSuccess || r == ncclInProgress) return;
    throw Error(std::string(what) + " failed: " + ncclGetErrorString(r) + (context_.empty() ? "" : " at " + context_));
  }

  [[noreturn]] void fail(const std::string& why) {
    std::string at = outstanding_.empty() ? std::string("a communication") : outstanding_.front().what;
    for (auto& [k, t] : teams_) ncclCommAbort(t->comm);
    aborted_ = true;
    throw Error("rank " + std::to_string(rv_.rank) + ": NCCL: " + at + " " + why + "; communicators aborted");
  }

  Rendezvous rv_;
  c10::DeviceIndex device_;
  std::shared_ptr<EventPool> pool_;
#ifdef BRAID_WITH_C10D_STORE
  c10::intrusive_ptr<c10d::Store> store_;
#endif
  std::map<std::vector<int64_t>, std::unique_ptr<Team>> teams_;
  Team* world_ = nullptr;
  std::optional<Op> group_;
  std::deque<at::Tensor> selfSends_;
  std::deque<Outstanding> outstanding_;
  std::string context_;
  bool timing_ = false;
  bool highPriority_ = false;  // setHighPriorityStreams
  bool aborted_ = false;
};

}  // namespace

bool haveNccl() { return true; }

std::unique_ptr<Communicator> makeNcclCommunicator(const Rendezvous& rv, int64_t deviceIndex) {
  return std::make_unique<NcclCommunicator>(rv, deviceIndex);
}

}  // namespace braid::exec

#endif  // BRAID_WITH_TORCH && BRAID_WITH_CUDA
