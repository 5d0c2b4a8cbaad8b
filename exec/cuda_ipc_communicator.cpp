// The copy-engine backend of Communicator (`backend=CUDA`; docs/EXEC.md, "Copy engines"): every
// transfer is a cudaMemcpyAsync that *pulls* a peer's buffer, mapped into this process with CUDA
// IPC, on the communicator's own stream, so copy engines move the data and no SM is used (except
// by the local reduction of reduce-scatter, allreduce and reduce: one elementwise kernel over the
// own row and the pulled ones; an allreduce is a reduce-scatter of its members' parts in place and
// an allgather of the reduced parts, copy_engine_plan.h). The plain-C++ parts are tested
// on CPU: the plan of copies (copy_engine_plan.h), the device-side signal protocol
// (signal_protocol.h) and the IPC bookkeeping (ipc_handles.h). This file only runs them:
// - one "team" per distinct team, as the NCCL backend: a stream, a post event, a signal pad
//   (cudaMalloc'd flags, exported once over IPC; every member maps the others' pads);
// - posting an operation: the team's stream waits for the posting stream (event); a rank whose
//   buffer peers read publishes (IPC handle of its allocation, offset, size) under a key of the
//   operation in the rendezvous store; a rank that pulls reads its producers' keys (a host
//   rendezvous: it blocks until they posted the same operation) and maps each handle once;
// - the signal steps then run on the team's stream with cuStreamWriteValue32 (remote writes into
//   peers' pads) and cuStreamWaitValue32 (waits on the own pad), around the copies;
// - Work::wait makes the current stream wait for the completion event; drain() polls the events
//   with the timeout and names the statement of the oldest incomplete operation.
// Driver entry points come through cudaGetDriverEntryPointByVersion (no libcuda link).
#if defined(BRAID_WITH_TORCH) && defined(BRAID_WITH_CUDA)

#include <algorithm>
#include <chrono>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <thread>

#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include "exec/communicator.h"
#include "exec/copy_engine_plan.h"
#include "exec/cuda_check.h"
#include "exec/cuda_events.h"
#include "exec/ipc_handles.h"
#include "exec/signal_protocol.h"
#include "exec/store.h"
#include "ir/error.h"

namespace braid::exec {

namespace {

using ce::Collective;
using ce::Copy;
using ce::Plan;

// The driver calls this backend needs, looked up once.
struct Driver {
  PFN_cuStreamWriteValue32_v11070 writeValue = nullptr;
  PFN_cuStreamWaitValue32_v11070 waitValue = nullptr;
  PFN_cuMemGetAddressRange_v3020 addressRange = nullptr;
  PFN_cuGetErrorString_v6000 errorString = nullptr;

  Driver() {
    load("cuStreamWriteValue32", reinterpret_cast<void**>(&writeValue));
    load("cuStreamWaitValue32", reinterpret_cast<void**>(&waitValue));
    load("cuMemGetAddressRange", reinterpret_cast<void**>(&addressRange));
    load("cuGetErrorString", reinterpret_cast<void**>(&errorString));
  }
  static void load(const char* name, void** fn) {
    cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    checkCuda(cudaGetDriverEntryPointByVersion(name, fn, 12000, cudaEnableDefault, &q), name);
    if (q != cudaDriverEntryPointSuccess || !*fn)
      throw Error(std::string("the CUDA driver has no ") + name + ": the copy-engine backend needs it");
  }
  void check(CUresult r, const char* what) const {
    if (r == CUDA_SUCCESS) return;
    const char* s = nullptr;
    if (errorString) errorString(r, &s);
    throw Error(std::string(what) + " failed: " + (s ? s : "error " + std::to_string(static_cast<int>(r))));
  }
};

// Host-side calls that CUDA refuses while a graph is captured in global mode (IPC export and
// import, address queries) are made in relaxed mode: they enqueue nothing.
class RelaxedCapture {
 public:
  RelaxedCapture() { cudaThreadExchangeStreamCaptureMode(&mode_); }
  ~RelaxedCapture() { cudaThreadExchangeStreamCaptureMode(&mode_); }

 private:
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
};

struct Team {
  std::vector<int64_t> members;
  int64_t index = 0;  // this rank's position
  std::string name;
  cudaStream_t raw = nullptr;
  std::optional<c10::cuda::CUDAStream> stream;
  cudaEvent_t post = nullptr;
  // Copies out of this rank's own buffers run on a side stream beside the pulls (another copy
  // engine): forked from the team's stream when an operation starts, joined before it completes.
  cudaStream_t side = nullptr;
  cudaEvent_t fork = nullptr, join = nullptr;
  uint32_t* pad = nullptr;               // this rank's flags (signal_protocol.h)
  std::vector<CUdeviceptr> pads;         // every member's pad, mapped here (own: pad)
  uint64_t ops = 0;                      // collectives posted on the team (store keys)
  int64_t indexOf(int64_t r) const {
    return std::find(members.begin(), members.end(), r) - members.begin();
  }
};

class CudaIpcCommunicator : public Communicator {
 public:
  CudaIpcCommunicator(const Rendezvous& rv, int64_t device)
      : rv_(rv), device_(static_cast<c10::DeviceIndex>(device)), pool_(std::make_shared<EventPool>()) {
    c10::cuda::CUDAGuard guard(device_);
    if (rv.worldSize > 1) {
#ifdef BRAID_WITH_C10D_STORE
      store_ = connectStoreOrExplain(rv);
      char bus[32] = {0};
      checkCuda(cudaDeviceGetPCIBusId(bus, sizeof bus, device_), "cudaDeviceGetPCIBusId");
      std::string b = bus;
      store_->set("ce/gpu/" + std::to_string(rv.rank), std::vector<uint8_t>(b.begin(), b.end()));
#else
      throw Error("this build has no c10d store: the copy-engine backend runs on one rank only");
#endif
    }
    std::vector<int64_t> world(static_cast<size_t>(rv.worldSize));
    for (int64_t r = 0; r < rv.worldSize; ++r) world[static_cast<size_t>(r)] = r;
    world_ = &team(world);
  }

  ~CudaIpcCommunicator() override {
    if (aborted_) return;  // a peer may be gone or a stream stuck: leave everything to process exit
    for (auto& [k, t] : teams_) cudaStreamSynchronize(t->raw);
    for (void* p : opened_.mapped()) cudaIpcCloseMemHandle(p);
    for (auto& [k, t] : teams_) {
      cudaFree(t->pad);
      cudaEventDestroy(t->post);
      cudaEventDestroy(t->fork);
      cudaEventDestroy(t->join);
      cudaStreamDestroy(t->side);
      cudaStreamDestroy(t->raw);
    }
  }

  int64_t rank() const override { return rv_.rank; }
  int64_t size() const override { return rv_.worldSize; }
  std::string backendName() const override { return "cuda-ipc"; }
  void setContext(const std::string& s) override { context_ = s; }
  void setTiming(bool on) override { timing_ = on; }
  void setHighPriorityStreams(bool on) override { highPriority_ = on; }

  WorkPtr allgather(const std::vector<int64_t>& tm, const at::Tensor& in, const at::Tensor& out) override {
    return collective(Collective::kAllgather, tm, in, out, -1, ReduceOp::kSum);
  }
  WorkPtr allreduce(const std::vector<int64_t>& tm, const at::Tensor& buf, ReduceOp r) override {
    return collective(Collective::kAllreduce, tm, buf, buf, -1, r);
  }
  WorkPtr reduceScatter(const std::vector<int64_t>& tm, const at::Tensor& in, const at::Tensor& out,
                        ReduceOp r) override {
    return collective(Collective::kReduceScatter, tm, in, out, -1, r);
  }
  WorkPtr broadcast(const std::vector<int64_t>& tm, const at::Tensor& buf, int64_t root) override {
    return collective(Collective::kBroadcast, tm, buf, buf, root, ReduceOp::kSum);
  }
  WorkPtr reduce(const std::vector<int64_t>& tm, const at::Tensor& in, const at::Tensor& out, int64_t root,
                 ReduceOp r) override {
    return collective(Collective::kReduce, tm, in, rv_.rank == root ? out : at::Tensor(), root, r);
  }
  WorkPtr scatter(const std::vector<int64_t>& tm, const at::Tensor& in, const at::Tensor& out, int64_t root) override {
    return collective(Collective::kScatter, tm, rv_.rank == root ? in : at::Tensor(), out, root, ReduceOp::kSum);
  }
  WorkPtr gather(const std::vector<int64_t>& tm, const at::Tensor& in, const at::Tensor& out, int64_t root) override {
    return collective(Collective::kGather, tm, in, rv_.rank == root ? out : at::Tensor(), root, ReduceOp::kSum);
  }
  WorkPtr allToAll(const std::vector<int64_t>& tm, const at::Tensor& in, const at::Tensor& out) override {
    return collective(Collective::kAllToAll, tm, in, out, -1, ReduceOp::kSum);
  }

  WorkPtr send(const at::Tensor& buf, int64_t peer) override { return p2p(buf, peer, true); }
  WorkPtr recv(const at::Tensor& buf, int64_t peer) override { return p2p(buf, peer, false); }

  void startCoalescing() override {
    if (group_) throw Error("StartCoalescing inside a coalescing group");
    group_.emplace();
    group_->ev = std::make_shared<Events>(pool_, timing_);
  }

  WorkPtr endCoalescing() override {
    if (!group_) throw Error("EndCoalescing without StartCoalescing");
    Group g = std::move(*group_);
    group_.reset();
    return runGroup(g);
  }

  void barrier() override {
    at::Tensor one = at::ones({1}, at::TensorOptions().dtype(at::kFloat).device(at::kCUDA, device_));
    allreduce(world_->members, one, ReduceOp::kSum)->wait();
    drain();
  }

  void drain() override {
    drainEvents(outstanding_, rv_.timeout, [] {}, [&](const std::string& why) { fail(why); });
  }

 private:
  // A buffer as the transfers see it: contiguous (else a staged copy, written back at the end).
  struct Op {
    Team* team = nullptr;
    std::shared_ptr<Events> ev;
    std::vector<std::pair<at::Tensor, at::Tensor>> copyBack;  // (user buffer, staged)
  };

  // One coalesced group: its sends and receives in posting order (already staged).
  struct Group {
    std::shared_ptr<Events> ev;
    std::vector<std::pair<int64_t, at::Tensor>> sends, recvs;
    std::vector<std::pair<at::Tensor, at::Tensor>> copyBack;
  };

  std::string seconds() const {
    return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(rv_.timeout).count());
  }
  std::string where() const { return context_.empty() ? std::string("a communication") : context_; }

  // The team's stream waits for the work enqueued so far on the posting stream.
  void orderAfterPost(Team& t) {
    cudaStream_t posting = c10::cuda::getCurrentCUDAStream(device_).stream();
    checkCuda(cudaEventRecord(t.post, posting), "cudaEventRecord (post)");
    checkCuda(cudaStreamWaitEvent(t.raw, t.post, 0), "cudaStreamWaitEvent (post)");
  }

  at::Tensor staged(Team& t, const at::Tensor& x) { return contiguousOn(*t.stream, x, device_, where()); }
  at::Tensor stageIn(Team& t, const at::Tensor& x) { return stagedInputOn(*t.stream, x, device_, where()); }
  at::Tensor stageOut(Team& t, const at::Tensor& x, std::vector<std::pair<at::Tensor, at::Tensor>>& copyBack) {
    at::Tensor s = staged(t, x);
    if (!s.is_same(x)) copyBack.emplace_back(x, s);
    return s;
  }

  WorkPtr collective(Collective c, const std::vector<int64_t>& tm, const at::Tensor& in, const at::Tensor& out,
                     int64_t root, ReduceOp r) {
    if (group_) throw Error(std::string(ce::collectiveName(c)) + " inside a coalescing group: only send/recv may be coalesced");
    Team& t = team(tm);
    Op op;
    op.team = &t;
    op.ev = std::make_shared<Events>(pool_, timing_);
    orderAfterPost(t);
    const bool inPlace = c == Collective::kAllreduce || c == Collective::kBroadcast;
    at::Tensor i, o;
    if (inPlace) {
      i = o = stageIn(t, in);
      if (!i.is_same(in)) op.copyBack.emplace_back(in, i);
    } else {
      if (in.defined()) i = stageIn(t, in);
      if (out.defined()) o = stageOut(t, out, op.copyBack);
    }
    const at::Tensor& typed = i.defined() ? i : o;
    const int64_t es = static_cast<int64_t>(typed.element_size());
    Plan plan = ce::planCollective(c, tm, rv_.rank, root, i.defined() ? i.numel() * es : 0,
                                   o.defined() ? o.numel() * es : 0, es);
    const uint64_t opIndex = t.ops++;
    auto opKey = [&](int64_t r) { return "ce/" + t.name + "/" + std::to_string(opIndex) + "/" + std::to_string(r); };
    if (plan.publishes) store_->set(opKey(rv_.rank), ce::encodePublished({exportBuffer(i)}));
    std::map<int64_t, char*> sources;
    if (i.defined()) sources[rv_.rank] = static_cast<char*>(i.data_ptr());
    for (int64_t p : plan.producers) {
      std::vector<ce::Published> recs = ce::decodePublished(storeGet(opKey(p), p), "rank " + std::to_string(p) + "'s buffer");
      if (recs.size() != 1) throw Error(where() + ": rank " + std::to_string(p) + " published " + std::to_string(recs.size()) + " buffers, expected 1");
      sources[p] = importBuffer(p, recs[0]);
      for (const std::vector<Copy>* list : {&plan.copies, &plan.gathers})
        for (const Copy& k : *list)
          if (k.src == p && k.srcOffset + k.bytes > recs[0].bytes)
            throw Error(where() + ": rank " + std::to_string(p) + "'s buffer has " + std::to_string(recs[0].bytes) +
                        " bytes, this rank reads up to byte " + std::to_string(k.srcOffset + k.bytes) +
                        " (the members disagree on the sizes)");
    }
    at::Tensor staging;
    if (plan.stagingBytes > 0) {
      c10::cuda::CUDAStreamGuard g(*t.stream);
      staging = at::empty({plan.stagingBytes / es}, typed.options().memory_format(at::MemoryFormat::Contiguous));
    }
    auto src = [&](const Copy& k) { return sources.at(k.src) + k.srcOffset; };
    auto dst = [&](const Copy& k) {
      char* base = static_cast<char*>(k.dst == ce::kOut ? o.data_ptr() : staging.data_ptr());
      return base + k.dstOffset;
    };
    markStart(t, *op.ev);
    runSteps(t, plan, src, dst, [&] {
      const ce::Reduction& rd = plan.reduction;
      if (rd.rowBytes == 0) return;
      c10::cuda::CUDAStreamGuard g(*t.stream);
      auto part = [&](const at::Tensor& x, int64_t offset) { return x.view({-1}).narrow(0, offset / es, rd.rowBytes / es); };
      reduceInto(part(o, rd.outOffset), part(i, rd.ownOffset), staging.view({rd.peerRows, -1}), r);
    });
    return finish(t, op.ev, op.copyBack, std::string(ce::collectiveName(c)));
  }

  // out = own (op) the staging rows, reading the own row where it is: with one peer one elementwise
  // kernel (two rows read, one written), else the rows' reduction and then that kernel. `out` may be
  // `own` itself (an Allreduce's part, in place).
  static void reduceInto(at::Tensor out, const at::Tensor& own, const at::Tensor& rows, ReduceOp r) {
    at::Tensor peers;
    switch (r) {
      case ReduceOp::kSum:
        peers = rows.size(0) == 1 ? rows[0] : rows.sum(0);
        at::add_out(out, own, peers);
        break;
      case ReduceOp::kMax:
        peers = rows.size(0) == 1 ? rows[0] : at::amax(rows, 0);
        at::maximum_out(out, own, peers);
        break;
      case ReduceOp::kMin:
        peers = rows.size(0) == 1 ? rows[0] : at::amin(rows, 0);
        at::minimum_out(out, own, peers);
        break;
    }
  }

  WorkPtr p2p(const at::Tensor& buf, int64_t peer, bool isSend) {
    const char* what = isSend ? "send" : "recv";
    if (peer < 0 || peer >= rv_.worldSize)
      throw Error(std::string(what) + " with rank " + std::to_string(peer) + ", outside the world of " +
                  std::to_string(rv_.worldSize) + " ranks");
    // Each transfer is ordered after the work enqueued before its own post (as NCCL's).
    if (!group_ && peer == rv_.rank) return selfTransfer(buf, isSend);
    bool own = !group_;
    if (own) startCoalescing();
    orderAfterPost(*world_);
    if (isSend) {
      group_->sends.emplace_back(peer, stageIn(*world_, buf));
    } else {
      group_->recvs.emplace_back(peer, stageOut(*world_, buf, group_->copyBack));
    }
    if (own) return endCoalescing();
    return std::make_shared<EventWork>(group_->ev);
  }

  // Outside a group a send to self is matched with the next receive from self (a local copy), as
  // the NCCL backend does.
  WorkPtr selfTransfer(const at::Tensor& buf, bool isSend) {
    auto ev = std::make_shared<Events>(pool_, timing_);
    orderAfterPost(*world_);
    if (ev->start) checkCuda(cudaEventRecord(ev->start, world_->raw), "cudaEventRecord");
    if (isSend) {
      staged(*world_, buf);
      selfSends_.push_back(buf);
    } else {
      if (selfSends_.empty()) throw Error("recv from self before the matching send from self");
      at::Tensor s = selfSends_.front();
      selfSends_.pop_front();
      if (s.numel() != buf.numel())
        throw Error(ce::receiveSizeProblem(rv_.rank, rv_.rank, buf.numel() * buf.element_size(),
                                           s.numel() * s.element_size()));
      staged(*world_, buf);
      c10::cuda::CUDAStreamGuard g(*world_->stream);
      buf.copy_(s.reshape(buf.sizes()));
    }
    std::vector<std::pair<at::Tensor, at::Tensor>> none;
    return finish(*world_, ev, none, isSend ? "send to self" : "recv from self");
  }

  WorkPtr runGroup(Group& g) {
    Team& t = *world_;
    std::vector<ce::Transfer> sends, recvs;
    for (auto& [p, b] : g.sends) sends.push_back({p, b.numel() * static_cast<int64_t>(b.element_size())});
    for (auto& [p, b] : g.recvs) recvs.push_back({p, b.numel() * static_cast<int64_t>(b.element_size())});
    Plan plan = ce::planGroup(rv_.rank, sends, recvs);
    // Publish: per receiving peer, this group's sends to it, in posting order.
    std::map<int64_t, std::vector<ce::Published>> out;
    std::map<int64_t, std::vector<char*>> local;  // sends to self, by slot
    for (auto& [p, b] : g.sends) {
      if (p == rv_.rank) {
        local[p].push_back(static_cast<char*>(b.data_ptr()));
      } else {
        out[p].push_back(exportBuffer(b));
      }
    }
    for (auto& [p, recs] : out)
      store_->set(pairKey(rv_.rank, p, sentGroups_[p]++), ce::encodePublished(recs));
    std::map<int64_t, std::vector<char*>> remote;
    for (int64_t p : plan.producers) {
      std::string k = pairKey(p, rv_.rank, receivedGroups_[p]++);
      std::vector<ce::Published> recs = ce::decodePublished(storeGet(k, p), "rank " + std::to_string(p) + "'s sends");
      for (const ce::Published& rec : recs) remote[p].push_back(importBuffer(p, rec));
      for (const Copy& c : plan.copies) {
        if (c.src != p) continue;
        if (c.srcSlot >= static_cast<int32_t>(recs.size()))
          throw Error(where() + ": rank " + std::to_string(rv_.rank) + " receives more from rank " + std::to_string(p) +
                      " in this group than it sends (" + std::to_string(recs.size()) + ")");
        std::string problem = ce::receiveSizeProblem(rv_.rank, p, c.bytes, recs[static_cast<size_t>(c.srcSlot)].bytes);
        if (!problem.empty()) throw Error(where() + ": " + problem);
      }
    }
    for (const Copy& c : plan.copies)
      if (c.src == rv_.rank && c.srcSlot >= static_cast<int32_t>(local[c.src].size()))
        throw Error(where() + ": a receive from self has no matching send to self in its coalesced group");
    auto src = [&](const Copy& c) {
      return c.src == rv_.rank ? local.at(c.src)[static_cast<size_t>(c.srcSlot)]
                               : remote.at(c.src)[static_cast<size_t>(c.srcSlot)];
    };
    auto dst = [&](const Copy& c) { return static_cast<char*>(g.recvs[static_cast<size_t>(c.dst)].second.data_ptr()); };
    markStart(t, *g.ev);
    runSteps(t, plan, src, dst, [] {});
    return finish(t, g.ev, g.copyBack, "send/recv group");
  }

  // An operation's timed span starts once its host rendezvous is over, right before its signal
  // steps: a span then shows the device's work (and its waits for peers), not how long this host
  // took to find its peers' buffers in the store, which a CUDA-graph replay never does.
  // (Staging copies of non-contiguous buffers, enqueued before the rendezvous, fall outside it.)
  void markStart(Team& t, Events& ev) {
    if (ev.start) checkCuda(cudaEventRecord(ev.start, t.raw), "cudaEventRecord (start)");
  }

  // The operation's signal steps and copies on the team's stream (signal_protocol.h).
  void runSteps(Team& t, const Plan& plan, const std::function<char*(const Copy&)>& src,
                const std::function<char*(const Copy&)>& dst, const std::function<void()>& reduce) {
    const int64_t n = static_cast<int64_t>(t.members.size());
    auto flag = [](CUdeviceptr pad, int64_t slot) { return pad + static_cast<CUdeviceptr>(slot * 4); };
    CUstream s = t.raw;  // cudaStream_t and CUstream are one type
    const CUdeviceptr mine = t.pads[static_cast<size_t>(t.index)];
    // A copy out of this rank's own buffer needs no handshake: it runs on the side stream from the
    // operation's start, beside the handshakes and pulls, and joins before the operation completes.
    auto local = [&](const Copy& c) { return c.src == rv_.rank && c.bytes > 0 && src(c) != dst(c); };
    const bool fork = std::any_of(plan.copies.begin(), plan.copies.end(), local);
    if (fork) {
      checkCuda(cudaEventRecord(t.fork, t.raw), "cudaEventRecord (fork)");
      checkCuda(cudaStreamWaitEvent(t.side, t.fork, 0), "cudaStreamWaitEvent (fork)");
    }
    for (const ce::Step& step : ce::signalSteps(plan)) {
      const int64_t j = step.peer >= 0 ? t.indexOf(step.peer) : -1;
      switch (step.kind) {
        case ce::StepKind::kSignalReady:
        case ce::StepKind::kSignalReduced:
        case ce::StepKind::kSignalConsumed:  // set my flag in the peer's pad
          drv().check(drv().writeValue(s, flag(t.pads[static_cast<size_t>(j)], ce::flagSlot(step.kind, n, t.index)), 1,
                                       CU_STREAM_WRITE_VALUE_DEFAULT),
                      "cuStreamWriteValue32 (signal)");
          break;
        case ce::StepKind::kWaitReady:
        case ce::StepKind::kWaitReduced:
        case ce::StepKind::kWaitConsumed:  // wait for the peer's flag in my pad, then clear it
          drv().check(drv().waitValue(s, flag(mine, ce::flagSlot(step.kind, n, j)), 1, CU_STREAM_WAIT_VALUE_EQ),
                      "cuStreamWaitValue32 (wait)");
          drv().check(drv().writeValue(s, flag(mine, ce::flagSlot(step.kind, n, j)), 0, CU_STREAM_WRITE_VALUE_DEFAULT),
                      "cuStreamWriteValue32 (clear)");
          break;
        case ce::StepKind::kCopy:
        case ce::StepKind::kGather: {
          const Copy& c = step.kind == ce::StepKind::kCopy ? plan.copies[step.copy] : plan.gathers[step.copy];
          if (c.bytes == 0) break;  // an empty part (an allreduce of fewer elements than members): no staging
          char* from = src(c);
          char* to = dst(c);
          if (from != to)
            checkCuda(cudaMemcpyAsync(to, from, static_cast<size_t>(c.bytes), cudaMemcpyDefault,
                                      step.kind == ce::StepKind::kCopy && local(c) ? t.side : t.raw),
                      "cudaMemcpyAsync (copy engine)");
          break;
        }
        case ce::StepKind::kReduce:
          reduce();
          break;
      }
    }
    if (fork) {
      checkCuda(cudaEventRecord(t.join, t.side), "cudaEventRecord (join)");
      checkCuda(cudaStreamWaitEvent(t.raw, t.join, 0), "cudaStreamWaitEvent (join)");
    }
  }

  WorkPtr finish(Team& t, const std::shared_ptr<Events>& ev, std::vector<std::pair<at::Tensor, at::Tensor>>& copyBack,
                 const std::string& what) {
    {
      c10::cuda::CUDAStreamGuard g(*t.stream);
      for (auto& [user, s] : copyBack) user.copy_(s);
    }
    checkCuda(cudaEventRecord(ev->done, t.raw), "cudaEventRecord (done)");
    // An event recorded while a graph is captured cannot be queried; a replay is waited for as a whole.
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    checkCuda(cudaStreamIsCapturing(t.raw, &capture), "cudaStreamIsCapturing");
    if (capture == cudaStreamCaptureStatusNone)
      outstanding_.push_back({ev, (context_.empty() ? what : context_) + " on team " + t.name});
    return std::make_shared<EventWork>(ev);
  }

  static std::string pairKey(int64_t from, int64_t to, uint64_t k) {
    return "ce/p2p/" + std::to_string(from) + "->" + std::to_string(to) + "/" + std::to_string(k);
  }

  // A blocking read of a peer's part: a peer that never posts ends in an error naming both.
  std::vector<uint8_t> storeGet(const std::string& k, int64_t peer) {
    try {
      return store_->get(k);
    } catch (const std::exception& e) {
      aborted_ = true;
      std::string msg = e.what();
      throw Error("rank " + std::to_string(rv_.rank) + ": CUDA copy engine: " + where() + ": rank " +
                  std::to_string(peer) + " did not post its part within " + seconds() +
                  " s (a peer that died, hangs or runs other communications): " + msg.substr(0, msg.find('\n')));
    }
  }

  ce::Published exportBuffer(const at::Tensor& t) {
    return exportBuffer(t.data_ptr(), t.numel() * static_cast<int64_t>(t.element_size()));
  }
  // The IPC handle of the allocation holding [p, p + bytes) and p's offset in it.
  ce::Published exportBuffer(void* p, int64_t bytes) {
    RelaxedCapture relaxed;
    CUdeviceptr base = 0;
    size_t size = 0;
    auto ptr = reinterpret_cast<CUdeviceptr>(p);
    drv().check(drv().addressRange(&base, &size, ptr), "cuMemGetAddressRange");
    cudaIpcMemHandle_t h;
    cudaError_t e = cudaIpcGetMemHandle(&h, reinterpret_cast<void*>(base));
    if (e != cudaSuccess) {
      cudaGetLastError();
      throw Error(where() + ": cudaIpcGetMemHandle failed (" + cudaGetErrorString(e) +
                  "): the copy-engine backend shares cudaMalloc'd buffers (PYTORCH_CUDA_ALLOC_CONF="
                  "expandable_segments:True is not supported); --backend-override nccl runs it over NCCL");
    }
    return {std::string(h.reserved, sizeof h.reserved), static_cast<int64_t>(ptr - base), bytes};
  }

  char* importBuffer(int64_t peer, const ce::Published& rec) {
    void* base = opened_.find(peer, rec.handle);
    if (!base) {
      checkPeerAccess(peer);
      RelaxedCapture relaxed;
      cudaIpcMemHandle_t h;
      if (rec.handle.size() != sizeof h.reserved) throw Error(where() + ": rank " + std::to_string(peer) + " sent a malformed IPC handle");
      std::memcpy(h.reserved, rec.handle.data(), sizeof h.reserved);
      cudaError_t e = cudaIpcOpenMemHandle(&base, h, cudaIpcMemLazyEnablePeerAccess);
      if (e != cudaSuccess) {
        cudaGetLastError();
        throw Error(where() + ": rank " + std::to_string(rv_.rank) + " cannot map rank " + std::to_string(peer) +
                    "'s buffer (cudaIpcOpenMemHandle: " + cudaGetErrorString(e) +
                    "); --backend-override nccl runs it over NCCL");
      }
      opened_.insert(peer, rec.handle, base);
    }
    return static_cast<char*>(base) + rec.offset;
  }

  // Peers must be able to reach each other's memory (NVLink or PCIe P2P). A peer whose GPU this
  // process cannot see is left to cudaIpcOpenMemHandle's own report.
  void checkPeerAccess(int64_t peer) {
    if (checkedPeers_.count(peer)) return;
    std::vector<uint8_t> b = storeGet("ce/gpu/" + std::to_string(peer), peer);
    std::string bus(b.begin(), b.end());
    int dev = -1;
    if (cudaDeviceGetByPCIBusId(&dev, bus.c_str()) != cudaSuccess) {
      cudaGetLastError();
    } else if (dev != device_) {
      int ok = 0;
      checkCuda(cudaDeviceCanAccessPeer(&ok, device_, dev), "cudaDeviceCanAccessPeer");
      if (!ok)
        throw Error(where() + ": rank " + std::to_string(rv_.rank) + "'s GPU " + std::to_string(device_) +
                    " cannot access rank " + std::to_string(peer) + "'s GPU " + std::to_string(dev) +
                    " (cudaDeviceCanAccessPeer is false): the copy-engine backend needs peer access (NVLink or "
                    "PCIe P2P); --backend-override nccl runs it over NCCL");
    }
    checkedPeers_.insert({peer, true});
  }

  // A team's stream, post event and signal pad; every member maps the others' pads (a host
  // rendezvous of the team's members, once).
  Team& team(const std::vector<int64_t>& members) {
    auto it = teams_.find(members);
    if (it != teams_.end()) return *it->second;
    auto me = std::find(members.begin(), members.end(), rv_.rank);
    if (me == members.end())
      throw Error(where() + ": rank " + std::to_string(rv_.rank) + " is not in team " + teamName(members));
    auto t = std::make_unique<Team>();
    t->members = members;
    t->index = me - members.begin();
    t->name = teamName(members);
    t->raw = createCommStream(highPriority_);
    t->side = createCommStream(highPriority_);
    checkCuda(cudaEventCreateWithFlags(&t->fork, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    checkCuda(cudaEventCreateWithFlags(&t->join, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    t->stream = c10::cuda::getStreamFromExternal(t->raw, device_);
    checkCuda(cudaEventCreateWithFlags(&t->post, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    const int64_t n = static_cast<int64_t>(members.size());
    {
      RelaxedCapture relaxed;
      checkCuda(cudaMalloc(reinterpret_cast<void**>(&t->pad), static_cast<size_t>(ce::padWords(n)) * 4), "cudaMalloc (signal pad)");
      checkCuda(cudaMemset(t->pad, 0, static_cast<size_t>(ce::padWords(n)) * 4), "cudaMemset (signal pad)");
    }
    // Stream memory operations must work here (they order the transfers on the device).
    CUresult probe = drv().writeValue(t->raw, reinterpret_cast<CUdeviceptr>(t->pad), 0,
                                      CU_STREAM_WRITE_VALUE_DEFAULT);
    if (probe == CUDA_ERROR_NOT_SUPPORTED)
      throw Error("rank " + std::to_string(rv_.rank) + ": this GPU or driver does not support stream memory "
                  "operations (cuStreamWriteValue32), which the copy-engine backend orders its transfers with; "
                  "--backend-override nccl runs the program over NCCL");
    drv().check(probe, "cuStreamWriteValue32 (signal pad)");
    t->pads.assign(static_cast<size_t>(n), 0);
    t->pads[static_cast<size_t>(t->index)] = reinterpret_cast<CUdeviceptr>(t->pad);
    if (n > 1) {
      ce::Published mine = exportBuffer(t->pad, ce::padWords(n) * 4);
      store_->set("ce/pad" + t->name + "/" + std::to_string(rv_.rank), ce::encodePublished({mine}));
      for (int64_t j = 0; j < n; ++j) {
        if (j == t->index) continue;
        int64_t p = members[static_cast<size_t>(j)];
        std::vector<ce::Published> recs =
            ce::decodePublished(storeGet("ce/pad" + t->name + "/" + std::to_string(p), p), "rank " + std::to_string(p) + "'s signal pad");
        if (recs.size() != 1) throw Error("rank " + std::to_string(p) + "'s signal pad record is malformed");
        t->pads[static_cast<size_t>(j)] = reinterpret_cast<CUdeviceptr>(importBuffer(p, recs[0]));
      }
    }
    Team& ref = *t;
    teams_.emplace(members, std::move(t));
    return ref;
  }

  [[noreturn]] void fail(const std::string& why) {
    std::string at = outstanding_.empty() ? std::string("a communication") : outstanding_.front().what;
    aborted_ = true;
    throw Error("rank " + std::to_string(rv_.rank) + ": CUDA copy engine: " + at + " " + why);
  }

  static const Driver& drv() {
    static const Driver d;
    return d;
  }

  Rendezvous rv_;
  c10::DeviceIndex device_;
  std::shared_ptr<EventPool> pool_;
#ifdef BRAID_WITH_C10D_STORE
  c10::intrusive_ptr<c10d::Store> store_;
#endif
  std::map<std::vector<int64_t>, std::unique_ptr<Team>> teams_;
  Team* world_ = nullptr;
  std::optional<Group> group_;
  std::deque<at::Tensor> selfSends_;
  std::deque<Outstanding> outstanding_;
  std::map<int64_t, uint64_t> sentGroups_, receivedGroups_;  // groups with transfers to / from each peer
  std::map<int64_t, bool> checkedPeers_;
  ce::HandleCache opened_;
  std::string context_;
  bool timing_ = false;
  bool highPriority_ = false;  // setHighPriorityStreams
  bool aborted_ = false;
};

}  // namespace

std::unique_ptr<Communicator> makeCudaIpcCommunicator(const Rendezvous& rv, int64_t deviceIndex) {
  return std::make_unique<CudaIpcCommunicator>(rv, deviceIndex);
}

}  // namespace braid::exec

#endif  // BRAID_WITH_TORCH && BRAID_WITH_CUDA
