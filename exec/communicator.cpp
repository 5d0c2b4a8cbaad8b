// The CPU communicators: "self" (one rank) and Gloo through c10d::ProcessGroupGloo.
//
// Gloo lacks reduce-scatter (and, in libtorch 1.13, _allgather_base): reduce-scatter is an
// all-to-all of the flat [team, chunk] rows followed by a local reduction of the received rows,
// which moves the same bytes as a ring reduce-scatter; allgather uses the list form. Buffers that
// are not contiguous, or of a type Gloo lacks (bfloat16, bool), are staged through contiguous
// temporaries (float32 / uint8) and copied back when the Work is waited on.
#ifdef BRAID_WITH_TORCH

#include "exec/communicator.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <sstream>

#include "exec/store.h"
#include "ir/error.h"

#ifdef BRAID_WITH_GLOO
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#endif

namespace braid::exec {

namespace {

class FunctionWork : public Work {
 public:
  explicit FunctionWork(std::function<void()> finish) : finish_(std::move(finish)) {}
  void wait() override {
    if (done_) return;
    done_ = true;
    if (finish_) finish_();
  }

 private:
  std::function<void()> finish_;
  bool done_ = false;
};

// dst (any layout) = src's elements in row-major order.
void copyFlat(const at::Tensor& dst, const at::Tensor& src) {
  if (dst.numel() != src.numel())
    throw Error("communication buffers disagree: " + std::to_string(src.numel()) + " elements sent, " +
                std::to_string(dst.numel()) + " expected");
  dst.copy_(src.reshape(dst.sizes()));
}

std::string teamStr(const std::vector<int64_t>& team) {
  std::string s = "(";
  for (size_t i = 0; i < team.size(); ++i) s += (i ? " " : "") + std::to_string(team[i]);
  return s + ")";
}

int64_t teamIndex(const std::vector<int64_t>& team, int64_t rank, const char* what) {
  auto it = std::find(team.begin(), team.end(), rank);
  if (it == team.end())
    throw Error(std::string(what) + ": rank " + std::to_string(rank) + " is not in team " + teamStr(team));
  return it - team.begin();
}

// The row size of a [team, row] buffer (the evaluator checked the sizes: communicator.h).
int64_t chunkOf(const at::Tensor& big, size_t team) { return big.numel() / static_cast<int64_t>(team); }

at::Tensor reduceRows(const at::Tensor& rows, ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return rows.sum(0);
    case ReduceOp::kMax: return std::get<0>(rows.max(0));
    case ReduceOp::kMin: return std::get<0>(rows.min(0));
  }
  return rows.sum(0);
}

// ---------------------------------------------------------------------------------------------
// One rank.
class SelfCommunicator : public Communicator {
 public:
  int64_t rank() const override { return 0; }
  int64_t size() const override { return 1; }
  std::string backendName() const override { return "self"; }

  WorkPtr allgather(const std::vector<int64_t>& team, const at::Tensor& in, const at::Tensor& out) override {
    check(team, "allgather");
    copyFlat(out, in);
    return completedWork();
  }
  WorkPtr allreduce(const std::vector<int64_t>& team, const at::Tensor&, ReduceOp) override {
    check(team, "allreduce");
    return completedWork();
  }
  WorkPtr reduceScatter(const std::vector<int64_t>& team, const at::Tensor& in, const at::Tensor& out,
                        ReduceOp) override {
    check(team, "reduce-scatter");
    copyFlat(out, in);
    return completedWork();
  }
  WorkPtr broadcast(const std::vector<int64_t>& team, const at::Tensor&, int64_t) override {
    check(team, "broadcast");
    return completedWork();
  }
  WorkPtr reduce(const std::vector<int64_t>& team, const at::Tensor& in, const at::Tensor& out, int64_t,
                 ReduceOp) override {
    check(team, "reduce");
    if (out.defined() && !out.is_same(in)) copyFlat(out, in);
    return completedWork();
  }
  WorkPtr scatter(const std::vector<int64_t>& team, const at::Tensor& in, const at::Tensor& out, int64_t) override {
    check(team, "scatter");
    if (!out.is_same(in)) copyFlat(out, in);
    return completedWork();
  }
  WorkPtr gather(const std::vector<int64_t>& team, const at::Tensor& in, const at::Tensor& out, int64_t) override {
    check(team, "gather");
    if (!out.is_same(in)) copyFlat(out, in);
    return completedWork();
  }
  WorkPtr allToAll(const std::vector<int64_t>& team, const at::Tensor& in, const at::Tensor& out) override {
    check(team, "all-to-all");
    if (!out.is_same(in)) copyFlat(out, in);
    return completedWork();
  }
  WorkPtr send(const at::Tensor& buf, int64_t peer) override {
    checkPeer(peer);
    sends_.push_back(buf.clone());
    return match();
  }
  WorkPtr recv(const at::Tensor& buf, int64_t peer) override {
    checkPeer(peer);
    recvs_.push_back(buf);
    return match();
  }
  void startCoalescing() override { coalescing_ = true; }
  WorkPtr endCoalescing() override {
    coalescing_ = false;
    match();
    if (!recvs_.empty())
      throw Error("a receive from rank 0 has no matching send in its coalesced group (world of one rank)");
    return completedWork();
  }
  void barrier() override {}

 private:
  void check(const std::vector<int64_t>& team, const char* what) {
    if (team.size() != 1 || team[0] != 0)
      throw Error(std::string(what) + " over team " + teamStr(team) + " needs more than one rank; run with --ranks " +
                  std::to_string(team.empty() ? 1 : *std::max_element(team.begin(), team.end()) + 1));
  }
  void checkPeer(int64_t peer) {
    if (peer != 0)
      throw Error("send/recv with rank " + std::to_string(peer) + " in a world of one rank; run with more ranks");
  }
  WorkPtr match() {
    while (!sends_.empty() && !recvs_.empty()) {
      copyFlat(recvs_.front(), sends_.front());
      sends_.pop_front();
      recvs_.pop_front();
    }
    if (!coalescing_ && !recvs_.empty())
      throw Error("a receive from rank 0 was posted before its send outside a coalesced group: it would deadlock");
    return completedWork();
  }
  std::deque<at::Tensor> sends_;
  std::deque<at::Tensor> recvs_;
  bool coalescing_ = false;
};

}  // namespace

WorkPtr completedWork() { return std::make_shared<FunctionWork>(nullptr); }

std::unique_ptr<Communicator> makeSelfCommunicator() { return std::make_unique<SelfCommunicator>(); }

#ifdef BRAID_WITH_GLOO

namespace {

c10d::ReduceOp toC10d(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return c10d::ReduceOp::SUM;
    case ReduceOp::kMax: return c10d::ReduceOp::MAX;
    case ReduceOp::kMin: return c10d::ReduceOp::MIN;
  }
  return c10d::ReduceOp::SUM;
}

// The type a buffer travels as over Gloo.
at::ScalarType wireType(at::ScalarType t) {
  switch (t) {
    case at::kFloat:
    case at::kDouble:
    case at::kInt:
    case at::kLong:
    case at::kByte:
    case at::kChar:
      return t;
    case at::kBool:
      return at::kByte;
    default:
      return at::kFloat;  // bfloat16, half (Gloo's half reductions are slow and inexact)
  }
}

// A contiguous, Gloo-typed stand-in for a user buffer.
struct Staged {
  at::Tensor user;
  at::Tensor wire;
  bool copied = false;
};

Staged stage(const at::Tensor& t, bool copy_in) {
  Staged s;
  s.user = t;
  if (t.is_contiguous() && wireType(t.scalar_type()) == t.scalar_type()) {
    s.wire = t;
    return s;
  }
  s.copied = true;
  at::ScalarType wt = wireType(t.scalar_type());
  s.wire = copy_in ? t.to(wt).contiguous().clone() : at::empty(t.sizes(), t.options().dtype(wt));
  return s;
}

void unstage(const Staged& s) {
  if (s.copied) s.user.copy_(s.wire.view(s.user.sizes()));
}

class GlooWork : public Work {
 public:
  GlooWork(std::string what, std::vector<c10::intrusive_ptr<c10d::Work>> works, std::function<void()> finish,
           std::chrono::milliseconds timeout)
      : what_(std::move(what)), works_(std::move(works)), finish_(std::move(finish)), timeout_(timeout) {}
  void wait() override {
    if (done_) return;
    done_ = true;
    for (auto& w : works_) {
      bool ok = false;
      try {
        ok = w->wait(timeout_);
      } catch (const std::exception& e) {
        throw Error(what_ + " failed: " + firstLine(e.what()) +
                    " (a peer rank probably exited or failed; see its message)");
      }
      if (!ok)
        throw Error(what_ + " did not complete within " + std::to_string(timeout_.count() / 1000) + " s");
    }
    works_.clear();
    if (finish_) finish_();
  }

 private:
  static std::string firstLine(const std::string& s) {
    auto nl = s.find('\n');
    return nl == std::string::npos ? s : s.substr(0, nl);
  }
  std::string what_;
  std::vector<c10::intrusive_ptr<c10d::Work>> works_;
  std::function<void()> finish_;
  std::chrono::milliseconds timeout_;
  bool done_ = false;
};

class GroupWork : public Work {
 public:
  explicit GroupWork(std::vector<WorkPtr> works) : works_(std::move(works)) {}
  void wait() override {
    for (auto& w : works_) w->wait();
    works_.clear();
  }

 private:
  std::vector<WorkPtr> works_;
};

bool isLoopback(const std::string& addr) {
  return addr == "localhost" || addr.rfind("127.", 0) == 0 || addr == "::1";
}

class GlooCommunicator : public Communicator {
 public:
  explicit GlooCommunicator(const Rendezvous& rv) : rv_(rv) {
    try {
      store_ = connectStore(rv);
      world_ = makeGroup("world", static_cast<int>(rv.rank), static_cast<int>(rv.worldSize));
    } catch (const Error&) {
      throw;
    } catch (const std::exception& e) {
      std::string msg = e.what();
      auto nl = msg.find('\n');
      if (nl != std::string::npos) msg = msg.substr(0, nl);
      throw Error("rank " + std::to_string(rv.rank) + " could not join the Gloo rendezvous at " +
                  (rv.storeFile.empty() ? rv.masterAddr + ":" + std::to_string(rv.port) : rv.storeFile) + " (" +
                  std::to_string(rv.worldSize) + " ranks): " + msg);
    }
  }

  int64_t rank() const override { return rv_.rank; }
  int64_t size() const override { return rv_.worldSize; }
  std::string backendName() const override { return "gloo"; }

  WorkPtr allgather(const std::vector<int64_t>& team, const at::Tensor& in, const at::Tensor& out) override {
    auto [pg, me] = group(team, "allgather");
    (void)me;
    int64_t chunk = chunkOf(out, team.size());
    Staged si = stage(in, true);
    Staged so = stage(out, false);
    at::Tensor rows = so.wire.view({static_cast<int64_t>(team.size()), chunk});
    std::vector<std::vector<at::Tensor>> outputs(1);
    for (int64_t j = 0; j < rows.size(0); ++j) outputs[0].push_back(rows[j]);
    std::vector<at::Tensor> inputs{si.wire.view({chunk})};
    auto w = pg->allgather(outputs, inputs);
    return wrap("allgather over " + teamStr(team), {w}, [so] { unstage(so); });
  }

  WorkPtr allreduce(const std::vector<int64_t>& team, const at::Tensor& buf, ReduceOp op) override {
    auto [pg, me] = group(team, "allreduce");
    (void)me;
    Staged s = stage(buf, true);
    std::vector<at::Tensor> t{s.wire};
    c10d::AllreduceOptions o;
    o.reduceOp = toC10d(op);
    auto w = pg->allreduce(t, o);
    return wrap("allreduce over " + teamStr(team), {w}, [s] { unstage(s); });
  }

  WorkPtr reduceScatter(const std::vector<int64_t>& team, const at::Tensor& in, const at::Tensor& out,
                        ReduceOp op) override {
    auto [pg, me] = group(team, "reduce-scatter");
    (void)me;
    int64_t n = static_cast<int64_t>(team.size());
    int64_t chunk = chunkOf(in, team.size());
    Staged si = stage(in, true);
    at::Tensor send_rows = si.wire.view({n, chunk});
    at::Tensor recv_rows = at::empty({n, chunk}, send_rows.options());
    std::vector<int64_t> counts;  // empty: equal splits
    std::vector<int64_t> counts2;
    auto w = pg->alltoall_base(recv_rows, send_rows, counts, counts2);
    at::Tensor user_out = out;
    return wrap("reduce-scatter over " + teamStr(team), {w}, [recv_rows, user_out, op, si] {
      (void)si;  // keeps the staged input alive until the transfer completed
      copyFlat(user_out, reduceRows(recv_rows, op).to(user_out.scalar_type()));
    });
  }

  WorkPtr broadcast(const std::vector<int64_t>& team, const at::Tensor& buf, int64_t root) override {
    auto [pg, me] = group(team, "broadcast");
    (void)me;
    Staged s = stage(buf, true);
    std::vector<at::Tensor> t{s.wire};
    c10d::BroadcastOptions o;
    o.rootRank = teamIndex(team, root, "broadcast root");
    o.rootTensor = 0;
    auto w = pg->broadcast(t, o);
    return wrap("broadcast over " + teamStr(team) + " from " + std::to_string(root), {w}, [s] { unstage(s); });
  }

  WorkPtr reduce(const std::vector<int64_t>& team, const at::Tensor& in, const at::Tensor& out, int64_t root,
                 ReduceOp op) override {
    auto [pg, me] = group(team, "reduce");
    (void)me;
    at::Tensor tmp = in.to(wireType(in.scalar_type())).contiguous().clone();
    std::vector<at::Tensor> t{tmp};
    c10d::ReduceOptions o;
    o.reduceOp = toC10d(op);
    o.rootRank = teamIndex(team, root, "reduce root");
    o.rootTensor = 0;
    auto w = pg->reduce(t, o);
    bool is_root = root == rv_.rank;
    at::Tensor user_out = out;
    return wrap("reduce over " + teamStr(team) + " to " + std::to_string(root), {w}, [tmp, user_out, is_root] {
      if (is_root && user_out.defined()) copyFlat(user_out, tmp.to(user_out.scalar_type()));
    });
  }

  WorkPtr scatter(const std::vector<int64_t>& team, const at::Tensor& in, const at::Tensor& out,
                  int64_t root) override {
    auto [pg, me] = group(team, "scatter");
    (void)me;
    int64_t n = static_cast<int64_t>(team.size());
    bool is_root = root == rv_.rank;
    Staged so = stage(out, false);
    std::vector<at::Tensor> outputs{so.wire.view({out.numel()})};
    std::vector<std::vector<at::Tensor>> inputs;
    Staged si;
    if (is_root) {
      si = stage(in, true);
      at::Tensor rows = si.wire.view({n, out.numel()});
      inputs.emplace_back();
      for (int64_t j = 0; j < n; ++j) inputs[0].push_back(rows[j]);
    }
    c10d::ScatterOptions o;
    o.rootRank = teamIndex(team, root, "scatter root");
    auto w = pg->scatter(outputs, inputs, o);
    return wrap("scatter over " + teamStr(team) + " from " + std::to_string(root), {w}, [so, si] {
      (void)si;
      unstage(so);
    });
  }

  WorkPtr gather(const std::vector<int64_t>& team, const at::Tensor& in, const at::Tensor& out,
                 int64_t root) override {
    auto [pg, me] = group(team, "gather");
    (void)me;
    int64_t n = static_cast<int64_t>(team.size());
    bool is_root = root == rv_.rank;
    Staged si = stage(in, true);
    std::vector<at::Tensor> inputs{si.wire.view({in.numel()})};
    std::vector<std::vector<at::Tensor>> outputs;
    Staged so;
    if (is_root) {
      so = stage(out, false);
      at::Tensor rows = so.wire.view({n, in.numel()});
      outputs.emplace_back();
      for (int64_t j = 0; j < n; ++j) outputs[0].push_back(rows[j]);
    }
    c10d::GatherOptions o;
    o.rootRank = teamIndex(team, root, "gather root");
    auto w = pg->gather(outputs, inputs, o);
    return wrap("gather over " + teamStr(team) + " to " + std::to_string(root), {w}, [so, si, is_root] {
      (void)si;
      if (is_root) unstage(so);
    });
  }

  WorkPtr allToAll(const std::vector<int64_t>& team, const at::Tensor& in, const at::Tensor& out) override {
    auto [pg, me] = group(team, "all-to-all");
    (void)me;
    int64_t n = static_cast<int64_t>(team.size());
    int64_t chunk = chunkOf(in, team.size());
    Staged si = stage(in, true);
    Staged so = stage(out, false);
    at::Tensor send_rows = si.wire.view({n, chunk});
    at::Tensor recv_rows = so.wire.view({n, chunk});
    std::vector<int64_t> c1, c2;
    auto w = pg->alltoall_base(recv_rows, send_rows, c1, c2);
    return wrap("all-to-all over " + teamStr(team), {w}, [so, si] {
      (void)si;
      unstage(so);
    });
  }

  WorkPtr send(const at::Tensor& buf, int64_t peer) override {
    checkPeer(peer, "send");
    Staged s = stage(buf, true);
    std::vector<at::Tensor> t{s.wire.view({buf.numel()})};
    auto w = world_->send(t, static_cast<int>(peer), /*tag=*/0);
    return p2p(wrap("send to rank " + std::to_string(peer), {w}, [s] { (void)s; }));
  }

  WorkPtr recv(const at::Tensor& buf, int64_t peer) override {
    checkPeer(peer, "recv");
    Staged s = stage(buf, false);
    std::vector<at::Tensor> t{s.wire.view({buf.numel()})};
    auto w = world_->recv(t, static_cast<int>(peer), /*tag=*/0);
    return p2p(wrap("receive from rank " + std::to_string(peer), {w}, [s] { unstage(s); }));
  }

  void startCoalescing() override {
    if (coalescing_) throw Error("StartCoalescing inside a coalesced group");
    coalescing_ = true;
    group_.clear();
  }

  WorkPtr endCoalescing() override {
    if (!coalescing_) throw Error("EndCoalescing without StartCoalescing");
    coalescing_ = false;
    auto w = std::make_shared<GroupWork>(std::move(group_));
    group_.clear();
    return w;
  }

  void barrier() override {
    auto w = world_->barrier();
    wrap("barrier", {w}, nullptr)->wait();
  }

 private:
  c10::intrusive_ptr<c10d::ProcessGroupGloo> makeGroup(const std::string& name, int rank, int size) {
    auto opts = c10d::ProcessGroupGloo::Options::create(rv_.timeout);
    const char* ifname = std::getenv("GLOO_SOCKET_IFNAME");
    if (ifname && *ifname) {
      opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
    } else if (isLoopback(rv_.masterAddr)) {
      opts->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
    } else {
      opts->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
    }
    // One worker thread: a communicator runs its collectives one at a time in issue order
    // (DESIGN.md), as NCCL does on one communicator.
    opts->threads = 1;
    auto store = c10::make_intrusive<c10d::PrefixStore>(name, store_);
    return c10::make_intrusive<c10d::ProcessGroupGloo>(store, rank, size, opts);
  }

  std::pair<c10d::ProcessGroupGloo*, int64_t> group(const std::vector<int64_t>& team, const char* what) {
    int64_t me = teamIndex(team, rv_.rank, what);
    bool is_world = static_cast<int64_t>(team.size()) == rv_.worldSize;
    for (size_t i = 0; is_world && i < team.size(); ++i) is_world = team[i] == static_cast<int64_t>(i);
    if (is_world) return {world_.get(), me};
    for (int64_t r : team)
      if (r < 0 || r >= rv_.worldSize)
        throw Error(std::string(what) + ": team " + teamStr(team) + " names rank " + std::to_string(r) +
                    " outside the world of " + std::to_string(rv_.worldSize) + " ranks");
    auto it = teams_.find(team);
    if (it == teams_.end()) {
      std::string name = "team";
      for (int64_t r : team) name += "_" + std::to_string(r);
      it = teams_.emplace(team, makeGroup(name, static_cast<int>(me), static_cast<int>(team.size()))).first;
    }
    return {it->second.get(), me};
  }

  void checkPeer(int64_t peer, const char* what) {
    if (peer < 0 || peer >= rv_.worldSize)
      throw Error(std::string(what) + ": peer rank " + std::to_string(peer) + " is outside the world of " +
                  std::to_string(rv_.worldSize) + " ranks");
    if (peer == rv_.rank)
      throw Error(std::string(what) + " to itself (rank " + std::to_string(peer) + "): a self send/recv is a local copy; "
                  "the program should not post it");
  }

  WorkPtr wrap(std::string what, std::vector<c10::intrusive_ptr<c10d::Work>> works, std::function<void()> finish) {
    return std::make_shared<GlooWork>("rank " + std::to_string(rv_.rank) + ": " + what, std::move(works),
                                      std::move(finish), rv_.timeout);
  }

  WorkPtr p2p(WorkPtr w) {
    if (coalescing_) group_.push_back(w);
    return w;
  }

  Rendezvous rv_;
  c10::intrusive_ptr<c10d::Store> store_;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> world_;
  std::map<std::vector<int64_t>, c10::intrusive_ptr<c10d::ProcessGroupGloo>> teams_;
  bool coalescing_ = false;
  std::vector<WorkPtr> group_;
};

}  // namespace

bool haveGloo() { return true; }

std::unique_ptr<Communicator> makeGlooCommunicator(const Rendezvous& rv) {
  return std::make_unique<GlooCommunicator>(rv);
}

#else  // !BRAID_WITH_GLOO

bool haveGloo() { return false; }

std::unique_ptr<Communicator> makeGlooCommunicator(const Rendezvous&) {
  throw Error("braid was built without Gloo (c10d's ProcessGroupGloo): runs on more than one CPU rank are not "
              "available; install libgloo-dev and reconfigure");
}

#endif  // BRAID_WITH_GLOO

}  // namespace braid::exec

#endif  // BRAID_WITH_TORCH
