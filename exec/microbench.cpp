// The microbenchmark runner (see microbench.h).
#ifdef BRAID_WITH_TORCH

#include "exec/microbench.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <sstream>
#include <thread>

#include "exec/cuda_info.h"
#include "exec/evaluator.h"
#include "exec/tensor_ops.h"
#include "ir/comm_backend.h"
#include "ir/error.h"
#include "ir/host_ir_text.h"

#if __has_include(<torch/version.h>)
#include <torch/version.h>
#endif

namespace braid::exec {
namespace {

using HostClock = std::chrono::steady_clock;

// A generous bound on the host time of one copy-engine post (its store rendezvous; about 200 us
// measured on an H200 host): the overlap measurement posts enough GEMMs to outlast that many.
constexpr double kCopyEnginePostUs = 400;

double usSince(HostClock::time_point t0) {
  return std::chrono::duration<double, std::micro>(HostClock::now() - t0).count();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
}

std::vector<int64_t> firstRanks(int64_t n) {
  std::vector<int64_t> team(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) team[static_cast<size_t>(i)] = i;
  return team;
}

std::string mib(int64_t bytes) {
  std::ostringstream os;
  if (bytes >= (int64_t{1} << 20))
    os << static_cast<double>(bytes) / (1 << 20) << " MiB";
  else
    os << static_cast<double>(bytes) / 1024 << " KiB";
  return os.str();
}

const char* dtypeKey(DataType t) {
  switch (t) {
    case DataType::kBFloat16: return "bf16";
    case DataType::kHalf: return "fp16";
    case DataType::kDouble: return "fp64";
    default: return "fp32";
  }
}

std::string gemmName(const BenchGemm& g) {
  std::ostringstream os;
  os << "gemm " << (g.batch > 1 ? std::to_string(g.batch) + "x" : "") << g.m << "x" << g.n << "x" << g.k << " "
     << dtypeKey(g.dtype);
  return os.str();
}

std::string collectiveName(const BenchCollective& c) {
  return std::string(communicationTypeName(c.kind)) + " team " + std::to_string(c.team) + " " + mib(c.bytes);
}

// The runner's state: the device, the communicator and the plan's repetitions.
class Bench {
 public:
  Bench(const MicrobenchPlan& plan, Device& dev, Communicator& comm) : plan_(plan), dev_(dev), comm_(comm) {}

  bool deviceClock() const { return !dev_.hostOrdered(); }
  at::TensorOptions opts(at::ScalarType t = at::kFloat) const { return at::TensorOptions().dtype(t).device(dev_.device()); }

  // The median time of `op` on the current stream, after the warm-up runs.
  double time(const std::function<void()>& op) {
    coolDown();
    for (int64_t i = 0; i < plan_.warmup; ++i) op();
    dev_.hostSynchronize();
    std::vector<double> us;
    if (deviceClock()) {
      dev_.setTiming(true);
      dev_.beginRun();
      dev_.holdCurrentStream(holdUs());
      std::vector<int32_t> tokens;
      for (int64_t i = 0; i < plan_.reps; ++i) {
        int32_t t = dev_.beginOp();
        op();
        dev_.endOp(t);
        tokens.push_back(t);
      }
      dev_.finishRun();
      us = durations(tokens);
      dev_.setTiming(false);
    } else {
      for (int64_t i = 0; i < plan_.reps; ++i) {
        auto t0 = HostClock::now();
        op();
        us.push_back(usSince(t0));
      }
    }
    return median(us);
  }

  // The median time of a communication `post` returns the Work of (device: its own events on the
  // communicator's stream; host clock: posting and waiting). Every rank calls it; ranks that take
  // no part pass a null `post` and get 0.
  double timeComm(const std::function<WorkPtr()>& post) {
    coolDown();
    comm_.barrier();
    if (!post) {
      comm_.barrier();
      return 0;
    }
    for (int64_t i = 0; i < plan_.warmup; ++i) post()->wait();
    dev_.hostSynchronize();
    std::vector<double> us;
    if (deviceClock()) {
      comm_.setTiming(true);
      dev_.setTiming(true);
      dev_.beginRun();
      dev_.holdCurrentStream(holdUs());  // the communicator's stream waits for the posting one
      std::vector<WorkPtr> works;  // alive until the spans are read: they own the events
      std::vector<int32_t> tokens;
      for (int64_t i = 0; i < plan_.reps; ++i) {
        WorkPtr w = post();
        auto [start, end] = w->deviceEvents();
        tokens.push_back(dev_.addSpan(start, end));
        works.push_back(w);
      }
      for (auto& w : works) w->wait();
      dev_.finishRun();
      comm_.drain();
      us = durations(tokens);
      dev_.setTiming(false);
      comm_.setTiming(false);
    } else {
      for (int64_t i = 0; i < plan_.reps; ++i) {
        auto t0 = HostClock::now();
        post()->wait();
        us.push_back(usSince(t0));
      }
    }
    comm_.barrier();
    return median(us);
  }

  // Lets the GPU idle for plan.coolDownMs (after the work posted so far).
  void coolDown() {
    if (plan_.coolDownMs <= 0) return;
    dev_.hostSynchronize();
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(plan_.coolDownMs));
  }

  // How long the stream is held before the timed repetitions are issued: longer than the host
  // takes to issue them all (tens of microseconds each: an event pair and a kernel launch or a
  // collective's post), so none of them waits for the host.
  double holdUs() const { return 200.0 + 100.0 * static_cast<double>(plan_.reps); }

  std::vector<double> durations(const std::vector<int32_t>& tokens) {
    std::vector<DeviceSpan> spans = dev_.spans();
    std::vector<double> us;
    for (int32_t t : tokens) {
      if (t < 0 || static_cast<size_t>(t) >= spans.size())
        throw Error("internal: the device returned no timing for a measured operation");
      us.push_back(spans[static_cast<size_t>(t)].endUs - spans[static_cast<size_t>(t)].startUs);
    }
    return us;
  }

  // Operands of a GEMM (kept for the whole measurement, so no allocation is timed).
  struct GemmOperands {
    at::Tensor a, b, c;
    void run() { at::matmul_out(c, a, b); }
  };
  GemmOperands gemmOperands(const BenchGemm& g) {
    at::ScalarType t = toScalarType(g.dtype);
    GemmOperands o;
    std::vector<int64_t> as = {g.m, g.k}, cs = {g.m, g.n};
    if (g.batch > 1) {
      as.insert(as.begin(), g.batch);
      cs.insert(cs.begin(), g.batch);
    }
    o.a = drawValues(as, plan_.gemmOperands, opts(t));
    o.b = drawValues({g.k, g.n}, plan_.gemmOperands, opts(t));
    o.c = at::empty(cs, opts(t));
    return o;
  }

  // The power benchmark (BenchPower): every run's (start, time) from the first run's start, on
  // this rank's device clock. Bursts are separated on the host (wait for the device, then sleep
  // the gap), inside one timed run so that every span shares one clock.
  std::vector<std::pair<double, double>> power(const BenchPower& p) {
    GemmOperands g = gemmOperands(p.gemm);
    for (int64_t i = 0; i < std::max<int64_t>(plan_.warmup, 1); ++i) g.run();
    dev_.hostSynchronize();
    constexpr int kProbe = 3;  // how long one run takes, to size the bursts
    auto t0 = HostClock::now();
    for (int i = 0; i < kProbe; ++i) g.run();
    dev_.hostSynchronize();
    const double perUs = std::max(1.0, usSince(t0) / kProbe);
    const double idleUs = p.duty < 1 ? perUs * (1 - p.duty) / p.duty : 0;  // after each run
    const int64_t runs = std::max<int64_t>(1, static_cast<int64_t>(std::llround(p.loadMs * 1e3 / (perUs + idleUs))));
    comm_.barrier();
    std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(p.idleMs));
    dev_.setTiming(true);
    dev_.beginRun();
    std::vector<int32_t> tokens;
    for (int64_t b = 0; b < p.bursts; ++b) {
      if (b > 0) {
        dev_.hostSynchronize();
        std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(p.gapMs));
      }
      dev_.holdCurrentStream(200);  // the burst's runs queue behind it and then run back to back
      for (int64_t i = 0; i < runs; ++i) {
        int32_t t = dev_.beginOp();
        g.run();
        dev_.endOp(t);
        tokens.push_back(t);
        if (idleUs > 0) dev_.holdCurrentStream(idleUs);  // one spinning thread: the SMs idle
      }
    }
    dev_.finishRun();
    std::vector<DeviceSpan> spans = dev_.spans();
    dev_.setTiming(false);
    comm_.barrier();
    std::vector<std::pair<double, double>> out;
    for (int32_t t : tokens) {
      const DeviceSpan& s = spans.at(static_cast<size_t>(t));
      const double first = spans.at(static_cast<size_t>(tokens.front())).startUs;
      out.emplace_back(s.startUs - first, s.endUs - s.startUs);
    }
    return out;
  }

  // The after-idle benchmark (BenchAfterIdle): every entry's reps, in turn. Each is preceded by
  // about 2 ms of the same work and waits, as back-to-back runs of a program precede the next (a
  // graph entry: its graph replayed and waited for, again and again), so every idle time starts
  // from the same state; then the issue is timed as `braid run` times a run's (exec/check.cpp):
  // idle, barrier, then the host's launches or the replay call.
  std::vector<std::vector<double>> afterIdle(const std::vector<BenchAfterIdle>& entries) {
    std::vector<std::vector<double>> out(entries.size());
    at::Tensor x = at::zeros({1}, opts());
    at::Tensor a = at::ones({64, 64}, opts()), v = at::zeros({1024}, opts());
    // A program's host work in small: ATen dispatch of a matmul, a launch, an allocation and a view,
    // in turn (a launch loop alone stays in the caches and wakes faster than a program's issue).
    auto op = [&](int64_t k) {
      switch (k % 4) {
        case 0: (void)at::matmul(a, a); break;
        case 1: x.add_(1); break;
        case 2: (void)at::empty({256 * 1024}, opts()); break;
        default: (void)v.narrow(0, k % 512, 512); break;
      }
    };
    // A replay right after the same graph's replay takes 3-13 us on an H200, one after other work
    // 25 (call EB): preceded by other operations, a graph entry's back-to-back reference was as
    // slow as after idle, and the fit found no delay where programs lose 15-30 us.
    auto busy = [&](Device::Captured* graph) {
      auto t0 = HostClock::now();
      if (graph) {
        while (usSince(t0) < 2000) {
          graph->replay();
          dev_.hostSynchronize();
        }
        return;
      }
      for (int64_t k = 0; usSince(t0) < 2000; ++k) {
        op(k);
        if (k % 40 == 39) dev_.hostSynchronize();
      }
      dev_.hostSynchronize();
    };
    busy(nullptr);  // cuBLAS's handle and the allocator's blocks exist before anything is captured
    std::vector<std::unique_ptr<Device::Captured>> graphs(entries.size());
    for (size_t i = 0; i < entries.size(); ++i)
      if (entries[i].graph) {
        const int64_t n = entries[i].ops;
        graphs[i] = dev_.capture([&] {
          for (int64_t k = 0; k < n; ++k) op(k);
        });
        graphs[i]->replay();  // the first replay uploads the graph
        dev_.hostSynchronize();
      }
    for (int64_t rep = 0; rep < plan_.reps; ++rep)
      for (size_t i = 0; i < entries.size(); ++i) {
        busy(graphs[i].get());
        if (entries[i].idleMs > 0)
          std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(entries[i].idleMs));
        comm_.barrier();
        // A graph entry times the replay call alone, as `braid run` times a replay's issue: what
        // the host loses after idle is in it, and a program's wall grows by as much (call EA).
        // Timed with the device work, a replay of these small operations hid it: the device, still
        // running the first nodes, was what the sync waited for.
        auto t0 = HostClock::now();
        if (graphs[i])
          graphs[i]->replay();
        else
          for (int64_t k = 0; k < entries[i].ops; ++k) op(k);
        out[i].push_back(usSince(t0));
        dev_.hostSynchronize();
      }
    comm_.barrier();
    return out;
  }

  // Buffers of a collective, sized as nccl-tests counts its bytes; post() issues it once.
  struct CollectiveBuffers {
    at::Tensor in, out;
    std::function<WorkPtr()> post;
  };
  CollectiveBuffers collectiveBuffers(const BenchCollective& c) {
    CollectiveBuffers b;
    const int64_t n = c.bytes / 4, t = c.team;
    if (comm_.rank() >= t) return b;
    std::vector<int64_t> team = firstRanks(t);
    auto big = [&] { return at::ones({n}, opts()); };
    auto part = [&] { return at::ones({n / t}, opts()); };
    Communicator* cm = &comm_;
    switch (c.kind) {
      case CommunicationType::kAllgather:
        b.in = part(), b.out = big();
        b.post = [cm, team, in = b.in, out = b.out] { return cm->allgather(team, in, out); };
        break;
      case CommunicationType::kAllreduce:
        b.in = big();
        b.post = [cm, team, in = b.in] { return cm->allreduce(team, in, ReduceOp::kSum); };
        break;
      case CommunicationType::kReduceScatter:
        b.in = big(), b.out = part();
        b.post = [cm, team, in = b.in, out = b.out] { return cm->reduceScatter(team, in, out, ReduceOp::kSum); };
        break;
      case CommunicationType::kBroadcast:
        b.in = big();
        b.post = [cm, team, in = b.in] { return cm->broadcast(team, in, 0); };
        break;
      case CommunicationType::kReduce:
        b.in = big(), b.out = big();
        b.post = [cm, team, in = b.in, out = b.out] { return cm->reduce(team, in, out, 0, ReduceOp::kSum); };
        break;
      case CommunicationType::kScatter:
        b.in = big(), b.out = part();
        b.post = [cm, team, in = b.in, out = b.out] { return cm->scatter(team, in, out, 0); };
        break;
      case CommunicationType::kGather:
        b.in = part(), b.out = big();
        b.post = [cm, team, in = b.in, out = b.out] { return cm->gather(team, in, out, 0); };
        break;
      case CommunicationType::kAllToAll:
        b.in = big(), b.out = big();
        b.post = [cm, team, in = b.in, out = b.out] { return cm->allToAll(team, in, out); };
        break;
      case CommunicationType::kSendRecv:
        throw Error("internal: SendRecv is measured as p2p");
    }
    return b;
  }

  // The largest value over the ranks of each of `v` (every rank calls it with as many values).
  std::vector<double> maxOverRanks(const std::vector<double>& v) {
    if (v.empty() || comm_.size() == 1) return v;
    at::Tensor t = at::tensor(v, at::TensorOptions().dtype(at::kDouble)).to(dev_.device());
    comm_.allreduce(firstRanks(comm_.size()), t, ReduceOp::kMax)->wait();
    dev_.hostSynchronize();
    at::Tensor h = t.cpu();
    return std::vector<double>(h.data_ptr<double>(), h.data_ptr<double>() + h.numel());
  }

  std::vector<std::pair<std::string, double>> hostCosts();
  double controlCost();
  OverlapTimes overlap(const BenchOverlap& o);

  const MicrobenchPlan& plan_;
  Device& dev_;
  Communicator& comm_;
};

// Host costs: the host time of each kind of call, per call, as the median over batches of calls
// (a batch amortizes the clock's own cost). On CUDA nothing here waits for the device, so these
// are issue costs, which is what the model's host.* constants are.
std::vector<std::pair<std::string, double>> Bench::hostCosts() {
  constexpr int kBatch = 50;
  auto perCall = [&](const std::function<void()>& op, int calls_per_op) {
    for (int i = 0; i < kBatch; ++i) op();
    dev_.hostSynchronize();
    std::vector<double> us;
    for (int64_t r = 0; r < plan_.reps; ++r) {
      auto t0 = HostClock::now();
      for (int i = 0; i < kBatch; ++i) op();
      us.push_back(usSince(t0) / (kBatch * calls_per_op));
      dev_.hostSynchronize();  // the device queue stays short, so issue never waits on it
    }
    return median(us);
  };
  std::vector<std::pair<std::string, double>> out;
  at::Tensor x = at::ones({64, 64}, opts()), y = at::ones({64, 64}, opts()), one = at::zeros({1}, opts());
  // An ATen op as the evaluator calls one: a small matmul that allocates its result.
  out.emplace_back("aten_op", perCall([&] { (void)at::matmul(x, y); }, 1));
  // The smallest kernel launch ATen does: an in-place update of one element.
  out.emplace_back("kernel_launch", perCall([&] { one.add_(1.0); }, 1));
  // Posting a collective (its completion is not waited for in the batch).
  std::vector<int64_t> world = firstRanks(comm_.size());
  at::Tensor word = at::zeros({1}, opts());
  std::vector<WorkPtr> posted;
  comm_.barrier();
  out.emplace_back("communication_call", perCall(
                                             [&] {
                                               posted.push_back(comm_.allreduce(world, word, ReduceOp::kSum));
                                               if (posted.size() >= kBatch) {
                                                 for (auto& w : posted) w->wait();
                                                 posted.clear();
                                               }
                                             },
                                             1));
  for (auto& w : posted) w->wait();
  comm_.drain();
  comm_.barrier();
  // Stream calls: make a pool stream current, order it after the default one, and back.
  dev_.beginRun();
  out.emplace_back("stream_call", perCall(
                                      [&] {
                                        dev_.setCurrentStream(1);
                                        dev_.synchronize(0);
                                        dev_.setCurrentStream(0);
                                      },
                                      3));
  dev_.finishRun();
  // Allocate and free a 1 MiB buffer (the caching allocator on CUDA): two calls.
  out.emplace_back("allocation", perCall([&] { (void)at::empty({1 << 18}, opts()); }, 2));
  out.emplace_back("view", perCall([&] { (void)x.narrow(0, 1, 8); }, 1));
  out.emplace_back("control", controlCost());
  if (deviceClock()) {
    // The smallest kernel's device time, back to back.
    double kernelMin = time([&] { one.add_(1.0); });
    // Host issue to completion seen by the host on an idle device, less the issue cost and the
    // kernel: the launch latency (with the host's wake-up from the synchronize, an upper bound).
    std::vector<double> us;
    for (int64_t r = 0; r < plan_.reps; ++r) {
      dev_.hostSynchronize();
      auto t0 = HostClock::now();
      one.add_(1.0);
      dev_.hostSynchronize();
      us.push_back(usSince(t0));
    }
    double issue = out[1].second;
    out.emplace_back("launch_latency", std::max(0.1, median(us) - issue - kernelMin));
    out.emplace_back("kernel_min", kernelMin);
  }
  return out;
}

// A loop header of the host program, as the evaluator runs it: the issue time of a program whose
// loop runs a one-iteration inner loop around a GetCurrentStream, less that of the same loop
// around the GetCurrentStream alone, per iteration.
double Bench::controlCost() {
  constexpr int64_t kIterations = 2000;
  const std::string head = "%HostIrContainer { (T0_g_float[iS0{4}]) -> (T0_g_float[iS0{4}]) :\n  FOR i in iS1{" +
                           std::to_string(kIterations) + "}:\n";
  const std::string tail = "} // %HostIrContainer\n";
  HostProgram flat = parseHostProgram(head + "    GetCurrentStream into Stream 0\n" + tail, "<control>");
  HostProgram nested =
      parseHostProgram(head + "    FOR j in iS2{1}:\n      GetCurrentStream into Stream 0\n" + tail, "<control>");
  EvalOptions eo;
  eo.device = &dev_;
  Evaluator ef(flat, comm_, eo), en(nested, comm_, eo);
  std::vector<at::Tensor> in = {at::zeros({4}, opts())};
  auto issue = [&](Evaluator& e) {
    std::vector<double> us;
    for (int64_t r = 0; r < plan_.warmup + plan_.reps; ++r) {
      e.run(in);
      if (r >= plan_.warmup) us.push_back(e.lastIssueUs());
    }
    return median(us);
  };
  double f = issue(ef), n = issue(en);
  return std::max(1e-3, (n - f) / static_cast<double>(kIterations));
}

// The GEMM and the collective alone, then the collectives posted back to back on the
// communicator's stream while GEMMs run back to back on the default stream. Beside-times count
// only the GEMMs that ran wholly within the collectives' span and the collectives that ran wholly
// within the GEMMs' span. Ranks outside the team run only the GEMMs.
// On the copy engines each post first meets its peers in the store (a host rendezvous of about
// 200 us on an H200 host, EXEC.md), so the GEMMs are posted first there: the device works through
// them while the host posts the collectives, which then still run back to back when each keeps
// the engines busier than its post keeps the host (calibrate plans large messages for that).
OverlapTimes Bench::overlap(const BenchOverlap& o) {
  OverlapTimes r;
  GemmOperands g = gemmOperands(o.gemm);
  CollectiveBuffers c = collectiveBuffers(o.collective);
  r.gemmAloneUs = time([&] { g.run(); });
  r.commAloneUs = timeComm(c.post);
  const bool member = static_cast<bool>(c.post);
  // Enough collectives to span `reps` GEMMs, and enough GEMMs to span every collective even
  // when each runs several times slower beside the other.
  std::vector<double> alone = maxOverRanks({r.gemmAloneUs, r.commAloneUs});
  double gemmUs = std::max(alone[0], 1.0), commUs = std::max(alone[1], 1.0);
  int64_t colls = std::clamp<int64_t>(static_cast<int64_t>(std::ceil(plan_.reps * gemmUs / commUs)) + 2, plan_.reps, 4096);
  const double postUs = o.copyEngines ? kCopyEnginePostUs : 0;  // host time per post, when it may exceed the device's
  int64_t gemms = std::clamp<int64_t>(
      static_cast<int64_t>(std::ceil(3.0 * colls * std::max(commUs, postUs) / gemmUs)) + 2, plan_.reps, 8192);
  coolDown();  // the pair starts at the clocks its parts were timed alone at
  comm_.barrier();
  comm_.setTiming(true);
  dev_.setTiming(true);
  dev_.beginRun();
  std::vector<WorkPtr> works;
  std::vector<int32_t> commTokens, gemmTokens;
  auto postGemms = [&] {
    for (int64_t i = 0; i < gemms; ++i) {
      int32_t t = dev_.beginOp();
      g.run();
      dev_.endOp(t);
      gemmTokens.push_back(t);
    }
  };
  if (o.copyEngines) postGemms();
  if (member) {
    dev_.setCurrentStream(1);  // the collectives wait only for this idle stream
    for (int64_t i = 0; i < colls; ++i) {
      WorkPtr w = c.post();
      auto [start, end] = w->deviceEvents();
      commTokens.push_back(dev_.addSpan(start, end));
      works.push_back(w);
    }
    dev_.setCurrentStream(0);
  }
  if (!o.copyEngines) postGemms();
  dev_.finishRun();
  comm_.drain();
  std::vector<DeviceSpan> spans = dev_.spans();
  dev_.setTiming(false);
  comm_.setTiming(false);
  auto window = [&](const std::vector<int32_t>& ts) {
    std::pair<double, double> w{1e300, -1e300};
    for (int32_t t : ts) {
      w.first = std::min(w.first, spans.at(static_cast<size_t>(t)).startUs);
      w.second = std::max(w.second, spans.at(static_cast<size_t>(t)).endUs);
    }
    return w;
  };
  auto inside = [&](const std::vector<int32_t>& ts, std::pair<double, double> w) {
    std::vector<double> us;
    for (int32_t t : ts) {
      const DeviceSpan& s = spans.at(static_cast<size_t>(t));
      if (s.startUs >= w.first && s.endUs <= w.second) us.push_back(s.endUs - s.startUs);
    }
    return us;
  };
  if (member) {
    std::vector<double> gb = inside(gemmTokens, window(commTokens));
    std::vector<double> cb = inside(commTokens, window(gemmTokens));
    if (gb.empty() || cb.empty())
      throw Error("overlap " + gemmName(o.gemm) + " beside " + collectiveName(o.collective) +
                  ": the GEMMs and the collectives did not run side by side (the device ran one stream at a time)");
    r.gemmBesideUs = median(gb);
    r.commBesideUs = median(cb);
  }
  comm_.barrier();
  return r;
}

}  // namespace

void checkMicrobenchPlan(const MicrobenchPlan& plan, int64_t worldSize) {
  if (plan.reps < 1) throw Error("microbenchmarks: reps must be at least 1");
  if (plan.warmup < 0) throw Error("microbenchmarks: warmup must be >= 0");
  for (const auto& g : plan.gemms)
    if (g.m < 1 || g.n < 1 || g.k < 1 || g.batch < 1) throw Error("microbenchmarks: " + gemmName(g) + ": sizes must be >= 1");
  for (int64_t b : plan.copies)
    if (b < 8 || b % 8) throw Error("microbenchmarks: copy of " + std::to_string(b) + " bytes: not a multiple of 8 >= 8");
  auto checkColl = [&](const BenchCollective& c) {
    if (c.kind == CommunicationType::kSendRecv) throw Error("microbenchmarks: SendRecv is measured as p2p");
    if (c.team < 2 || c.team > worldSize)
      throw Error("microbenchmarks: " + collectiveName(c) + ": the team must have 2 to " + std::to_string(worldSize) +
                  " ranks (the world)");
    if (c.bytes < 4 * c.team || c.bytes % (4 * c.team))
      throw Error("microbenchmarks: " + collectiveName(c) + ": " + std::to_string(c.bytes) +
                  " bytes do not split into float32 parts per member");
  };
  for (const auto& c : plan.collectives) checkColl(c);
  for (const auto& p : plan.p2p) {
    if (p.peer < 1 || p.peer >= worldSize)
      throw Error("microbenchmarks: p2p to rank " + std::to_string(p.peer) + ": no such peer in a world of " +
                  std::to_string(worldSize));
    if (p.bytes < 4 || p.bytes % 4) throw Error("microbenchmarks: p2p of " + std::to_string(p.bytes) + " bytes: not float32s");
  }
  for (const auto& o : plan.overlaps) checkColl(o.collective);
  for (const auto& c : plan.copyEngine) checkColl(c);
  for (const auto& p : plan.power)
    if (!(p.loadMs > 0) || !(p.gapMs >= 0) || p.bursts < 1 || !(p.idleMs >= 0) || p.loadMs * p.bursts > 60e3 ||
        !(p.duty > 0 && p.duty <= 1))
      throw Error("microbenchmarks: power benchmark of " + gemmName(p.gemm) +
                  ": expected a load of 0-60000 ms in all, >= 1 burst, gaps >= 0 and a duty in (0, 1]");
  for (const auto& w : plan.afterIdle)
    if (!(w.idleMs >= 0) || w.idleMs > 10e3 || w.ops < 1 || w.ops > 100000)
      throw Error("microbenchmarks: after-idle benchmark: expected an idle time of 0-10000 ms and 1-100000 operations");
}

MicrobenchTimes runMicrobench(const MicrobenchPlan& plan, Device& device, Communicator& comm,
                              const std::function<void(const std::string&)>& progress) {
  checkMicrobenchPlan(plan, comm.size());
  Bench b(plan, device, comm);
  if (!plan.overlaps.empty() && !b.deviceClock())
    throw Error("microbenchmarks: overlap needs a device with streams and a device clock (CUDA)");
  if (!plan.power.empty() && !b.deviceClock())
    throw Error("microbenchmarks: the power benchmark needs a device clock (CUDA)");
  for (const auto& w : plan.afterIdle)
    if (w.graph && !b.deviceClock())
      throw Error("microbenchmarks: the after-idle benchmark's graph replays need CUDA (CUDA graphs)");
  MicrobenchTimes out;
  out.deviceClock = b.deviceClock();
  const size_t total = plan.gemms.size() + plan.copies.size() + plan.collectives.size() + plan.p2p.size() +
                       (plan.host ? 1 : 0) + plan.overlaps.size() + plan.copyEngine.size() + plan.power.size() +
                       plan.afterIdle.size();
  size_t done = 0;
  auto say = [&](const std::string& what, double us) {
    ++done;
    if (!progress) return;
    std::ostringstream os;
    os << "[" << done << "/" << total << "] " << what << ": " << us << " us";
    progress(os.str());
  };

  for (const auto& g : plan.gemms) {
    Bench::GemmOperands o = b.gemmOperands(g);
    out.gemmUs.push_back(b.time([&] { o.run(); }));
    say(gemmName(g), out.gemmUs.back());
  }
  for (int64_t bytes : plan.copies) {
    at::Tensor src = at::ones({bytes / 8}, b.opts()), dst = at::empty({bytes / 8}, b.opts());
    out.copyUs.push_back(b.time([&] { dst.copy_(src); }));
    say("copy " + mib(bytes), out.copyUs.back());
  }
  auto timeCollectives = [&](const std::vector<BenchCollective>& list, std::vector<double>& us, const std::string& where) {
    for (const auto& c : list) {
      Bench::CollectiveBuffers buf = b.collectiveBuffers(c);
      us.push_back(b.timeComm(buf.post));
      say(collectiveName(c) + where, us.back());
    }
  };
  timeCollectives(plan.collectives, out.collectiveUs, "");
  for (const auto& p : plan.p2p) {
    std::function<WorkPtr()> post;
    at::Tensor buf;
    if (comm.rank() == 0 || comm.rank() == p.peer) buf = at::ones({p.bytes / 4}, b.opts());
    if (comm.rank() == 0) post = [&] { return comm.send(buf, p.peer); };
    if (comm.rank() == p.peer) post = [&] { return comm.recv(buf, 0); };
    out.p2pUs.push_back(b.timeComm(post));
    say("p2p 0 -> " + std::to_string(p.peer) + " " + mib(p.bytes), out.p2pUs.back());
  }
  if (plan.host) {
    out.hostUs = b.hostCosts();
    std::string all;
    for (const auto& [k, v] : out.hostUs) all += (all.empty() ? "" : ", ") + k + " " + std::to_string(v);
    ++done;
    if (progress) progress("[" + std::to_string(done) + "/" + std::to_string(total) + "] host costs (us): " + all);
  }
  for (const auto& o : plan.overlaps) {
    if (o.copyEngines) comm.useBackend(CommBackend::kCuda);
    out.overlaps.push_back(b.overlap(o));
    if (o.copyEngines) comm.useBackend(CommBackend::kNccl);
    const OverlapTimes& t = out.overlaps.back();
    std::ostringstream os;
    os << "overlap " << gemmName(o.gemm) << " beside " << collectiveName(o.collective)
       << (o.copyEngines ? " on the copy engines" : "") << " (gemm " << t.gemmAloneUs
       << " -> " << t.gemmBesideUs << ", comm " << t.commAloneUs << " -> " << t.commBesideUs << ")";
    say(os.str(), t.gemmBesideUs);
  }

  if (!plan.copyEngine.empty()) {
    comm.useBackend(CommBackend::kCuda);
    timeCollectives(plan.copyEngine, out.copyEngineUs, " on the copy engines");
    comm.useBackend(CommBackend::kNccl);
  }

  if (!plan.afterIdle.empty()) {
    out.afterIdleUs = b.afterIdle(plan.afterIdle);
    for (size_t i = 0; i < plan.afterIdle.size(); ++i) {
      std::ostringstream os;
      os << "after idle: " << plan.afterIdle[i].ops << " host operations" << (plan.afterIdle[i].graph ? " (graph)" : "")
         << " after " << plan.afterIdle[i].idleMs << " ms idle";
      say(os.str(), median(out.afterIdleUs[i]));
    }
  }

  for (const auto& p : plan.power) {
    out.power.push_back(b.power(p));
    const auto& runs = out.power.back();
    std::ostringstream os;
    os << "power " << gemmName(p.gemm) << ", " << p.bursts << " x " << p.loadMs << " ms" << (p.bursts > 1 ? " " : "")
       << (p.bursts > 1 ? std::to_string(static_cast<int64_t>(p.gapMs)) + " ms apart" : std::string())
       << (p.duty < 1 ? ", duty " + std::to_string(p.duty).substr(0, 4) : std::string()) << ": "
       << runs.size() << " runs, first " << runs.front().second << " us, last";
    say(os.str(), runs.back().second);
  }

  // The largest time over the ranks, entry by entry (every rank has the same entries).
  std::vector<double> all;
  for (auto* v : {&out.gemmUs, &out.copyUs, &out.collectiveUs, &out.p2pUs, &out.copyEngineUs})
    all.insert(all.end(), v->begin(), v->end());
  for (const auto& [k, v] : out.hostUs) all.push_back(v);
  for (const auto& t : out.overlaps) all.insert(all.end(), {t.gemmAloneUs, t.gemmBesideUs, t.commAloneUs, t.commBesideUs});
  all = b.maxOverRanks(all);
  size_t i = 0;
  for (auto* v : {&out.gemmUs, &out.copyUs, &out.collectiveUs, &out.p2pUs, &out.copyEngineUs})
    for (double& x : *v) x = all[i++];
  for (auto& [k, v] : out.hostUs) v = all[i++];
  for (auto& t : out.overlaps)
    for (double* x : {&t.gemmAloneUs, &t.gemmBesideUs, &t.commAloneUs, &t.commBesideUs}) *x = all[i++];
  return out;
}

std::vector<std::pair<std::string, std::string>> microbenchSoftware() {
  std::vector<std::pair<std::string, std::string>> out = cudaSoftwareVersions();
#ifdef TORCH_VERSION
  out.emplace_back("torch", TORCH_VERSION);
#endif
  out.emplace_back("gpus_visible", std::to_string(cudaDeviceCount()));
  return out;
}

}  // namespace braid::exec

#endif  // BRAID_WITH_TORCH
