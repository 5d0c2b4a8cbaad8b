#include "sim/engine.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <queue>

#include "ir/error.h"
#include "sim/power_state.h"

namespace braid::sim {

namespace {

constexpr int kMaxShare = 8;  // link sharing is tracked up to this many concurrent communications

// A running piece of work: a kernel (one GPU) or a rendezvous (its members' GPUs).
struct Job {
  double remaining = 1;  // fraction of the work left
  double rate = 0;       // fraction per microsecond
  double last = 0;       // when `remaining` was last brought up to date
  int32_t version = 0;   // invalidates finish times pushed before the last rate change
  bool running = false;
  double sms = 0;        // kernels: SMs it gets now
  int32_t event = -1;    // kernels: its event
  double startedAt = 0;  // kernels and rendezvous: when it started
  bool lastWave = false; // kernels: its last wave of CTAs has been dispatched (or it has no waves)
  // Kernels: queued behind another kernel's CTAs on its GPU (contention.kernels_wait_for_dispatch).
  bool queued = false;
  // Rendezvous: member GPUs on which it has no SMs yet, because a kernel that was dispatching
  // its CTAs there when it started has not reached its last wave (contention.comm_waits_for_dispatch).
  std::vector<int32_t> blockedOn;
  // Rendezvous on the copy engines with a local sum (Rendezvous::cost.kernelUs > 0): the pulls
  // are done and the sum's kernel runs (since kernelStartedAt).
  bool kernelPhase = false;
  double kernelStartedAt = 0;
  // Rendezvous: how many member GPUs run a kernel beside it, and how many of its member GPUs
  // have k communications running (k = 1 .. kMaxShare).
  int32_t membersWithCompute = 0;
  std::array<int32_t, kMaxShare + 1> share{};
};

struct Gpu {
  std::vector<int32_t> kernels;  // running kernel jobs
  std::vector<int32_t> comms;    // running rendezvous
  double last = 0;
  double busySms = 0;
  bool computeActive = false;
  PowerState power;          // its power level and load (Machine::gpu.power)
  int32_t powerVersion = 0;  // invalidates a kPowerCap event pushed before the load last changed
};

enum : uint8_t { kReady, kKernelDone, kCommDone, kLastWave, kCommKernelPhase, kPowerCap };

struct Pending {
  double t;
  uint64_t seq;
  int32_t id;
  int32_t version;
  uint8_t type;
};
struct Later {
  bool operator()(const Pending& a, const Pending& b) const { return a.t != b.t ? a.t > b.t : a.seq > b.seq; }
};

class Engine {
 public:
  Engine(const SimGraph& g, const Machine& mc, const EngineOptions& o)
      : g_(g), mc_(mc), o_(o), gpus_(static_cast<size_t>(g.numGpus)) {
    size_t n = g.numEvents();
    r_.start.assign(n, -1);
    r_.end.assign(n, -1);
    r_.binding.assign(n, -1);
    r_.bindingKind.assign(n, DepKind::kStream);
    r_.lastArrival.assign(g.rendezvousSets.size(), -1);
    r_.smBusyUs.assign(static_cast<size_t>(g.numGpus), 0);
    if (o.recordSmCounters) r_.busySms.assign(static_cast<size_t>(g.numGpus), {{0, 0}});
    pending_.resize(n);
    for (size_t e = 0; e < n; ++e) pending_[e] = static_cast<int32_t>(g.predBegin[e + 1] - g.predBegin[e]);
    kernelJobs_.resize(g.kernels.size());
    commJobs_.resize(g.rendezvousSets.size());
    arrived_.assign(g.rendezvousSets.size(), 0);
    r_.finalPowerLevel.assign(static_cast<size_t>(g.numGpus), 0);
    r_.cappedUs.assign(static_cast<size_t>(g.numGpus), 0);
    for (size_t gi = 0; gi < gpus_.size(); ++gi)
      gpus_[gi].power = PowerState(mc.gpu.power, gi < o.initialPowerLevel.size() ? o.initialPowerLevel[gi] : 0);
    allSms_ = static_cast<double>(mc.gpu.sms);
    hbmCapacity_ = mc.gpu.hbmGBps * 1e3 * mc.gpu.memoryEfficiency.points.back().second;
  }

  EngineResult run() {
    size_t n = g_.numEvents();
    for (size_t e = 0; e < n; ++e)
      if (pending_[e] == 0) release(static_cast<int32_t>(e), -1, DepKind::kStream);
    while (true) {
      if (!now_queue_.empty()) {
        int32_t e = now_queue_.back();
        now_queue_.pop_back();
        onReady(e);
        continue;
      }
      if (heap_.empty()) break;
      Pending p = heap_.top();
      heap_.pop();
      if (stale(p)) continue;  // superseded: time does not move for it (the power level decays with time)
      now_ = p.t;
      switch (p.type) {
        case kReady:
          onReady(p.id);
          break;
        case kKernelDone:
          finishKernel(p.id);
          break;
        case kCommDone:
          finishComm(p.id);
          break;
        case kLastWave:
          onLastWave(p.id);
          break;
        case kCommKernelPhase:
          startCommKernel(p.id);
          break;
        case kPowerCap:  // the GPU's power reached the cap: its compute slows from now
          reflow(p.id);
          break;
      }
    }
    // Stale events never move the clock (stale()), so it stops at the last operation's end, where
    // the power level is read.
    for (size_t gi = 0; gi < gpus_.size(); ++gi) {
      integrate(static_cast<int32_t>(gi));
      r_.finalPowerLevel[gi] = gpus_[gi].power.level();
    }
    for (size_t e = 0; e < n; ++e) r_.unfinished += r_.end[e] < 0 ? 1 : 0;
    if (r_.unfinished > 0) explainDeadlock();
    return std::move(r_);
  }

 private:
  void push(double t, uint8_t type, int32_t id, int32_t version) { heap_.push({t, seq_++, id, version, type}); }

  // An event pushed before its job's rate or its GPU's load changed again.
  bool stale(const Pending& p) const {
    switch (p.type) {
      case kKernelDone:
      case kLastWave:  // a rate change since pushed a new one (reflow -> scheduleLastWave)
        return kernelJobs_[static_cast<size_t>(p.id)].version != p.version;
      case kCommDone:
      case kCommKernelPhase:
        return commJobs_[static_cast<size_t>(p.id)].version != p.version;
      case kPowerCap:
        return gpus_[static_cast<size_t>(p.id)].powerVersion != p.version;
      default:
        return false;
    }
  }

  // All predecessors of e completed; `by` completed last (-1: none).
  void release(int32_t e, int32_t by, DepKind kind) {
    double host = g_.hostReady[static_cast<size_t>(e)];
    if (by >= 0 && host <= now_) {
      r_.binding[static_cast<size_t>(e)] = by;
      r_.bindingKind[static_cast<size_t>(e)] = kind;
    }
    if (host <= now_) {
      now_queue_.push_back(e);
    } else {
      push(host, kReady, e, 0);
    }
  }

  void complete(int32_t e) {
    r_.end[static_cast<size_t>(e)] = now_;
    for (uint32_t k = g_.succBegin[static_cast<size_t>(e)]; k < g_.succBegin[static_cast<size_t>(e) + 1]; ++k) {
      int32_t s = g_.succs[k];
      if (--pending_[static_cast<size_t>(s)] == 0) release(s, e, kindOf(e, s));
    }
  }

  DepKind kindOf(int32_t from, int32_t to) const {
    for (uint32_t k = g_.predBegin[static_cast<size_t>(to)]; k < g_.predBegin[static_cast<size_t>(to) + 1]; ++k)
      if (g_.preds[k] == from) return g_.predKind[k];
    return DepKind::kStream;
  }

  void onReady(int32_t e) {
    size_t i = static_cast<size_t>(e);
    switch (g_.kind[i]) {
      case NodeKind::kMarker:
        r_.start[i] = now_;
        complete(e);
        break;
      case NodeKind::kKernel: {
        r_.start[i] = now_;
        int32_t k = g_.kernel[i];
        Job& j = kernelJobs_[static_cast<size_t>(k)];
        j.remaining = 1;
        j.last = now_;
        j.rate = 0;
        j.running = true;
        j.event = e;
        j.startedAt = now_;
        j.lastWave = g_.kernels[static_cast<size_t>(k)].tiles <= 0;  // many small CTAs: never holds the queue
        int32_t gpu = g_.gpu[i];
        if (mc_.contention.kernelsWaitForDispatch) queueInLaunchOrder(gpu, e);
        gpus_[static_cast<size_t>(gpu)].kernels.push_back(e);
        reflow(gpu);
        break;
      }
      case NodeKind::kComm: {
        int32_t r = g_.rendezvous[i];
        if (r < 0) break;  // no partner will ever arrive: reported as a deadlock
        r_.lastArrival[static_cast<size_t>(r)] = e;
        if (++arrived_[static_cast<size_t>(r)] == static_cast<int32_t>(g_.rendezvousSets[static_cast<size_t>(r)].members.size()))
          startComm(r);
        break;
      }
    }
  }

  // ---- kernels ----

  void finishKernel(int32_t k) {
    Job& j = kernelJobs_[static_cast<size_t>(k)];
    j.running = false;
    ++j.version;
    int32_t e = j.event;
    int32_t gpu = g_.gpu[static_cast<size_t>(e)];
    auto& ks = gpus_[static_cast<size_t>(gpu)].kernels;
    ks.erase(std::find(ks.begin(), ks.end(), e));
    reflow(gpu);
    unqueueKernels(gpu);
    unblockComms(gpu);
    complete(e);
  }

  // The event `type` fires when the job's remaining work is down to `until` (0: it is done).
  void setRate(Job& j, double rate, uint8_t type, int32_t id, double until = 0) {
    if (j.rate == rate) return;
    j.remaining = std::max(0.0, j.remaining - j.rate * (now_ - j.last));
    j.last = now_;
    j.rate = rate;
    ++j.version;
    if (rate > 0) push(now_ + std::max(0.0, j.remaining - until) / rate, type, id, j.version);  // rate 0: waits for SMs
  }

  // CTA dispatch (contention.comm_waits_for_dispatch): a GEMM with `tiles` CTAs on `sms` SMs
  // dispatches them in ceil(tiles / sms) waves; once the last wave is out, SMs free up as its
  // CTAs finish, and a communication kernel queued behind it gets them. When it reaches that
  // point at its current rate, the kLastWave event says so.
  void scheduleLastWave(int32_t k, Job& j, int64_t tiles) {
    if (j.lastWave || !(mc_.contention.commWaitsForDispatch || mc_.contention.kernelsWaitForDispatch)) return;
    double sms = std::max(1.0, std::floor(j.sms + 1e-9));
    double waves = std::ceil(static_cast<double>(tiles) / sms);
    double left = std::max(0.0, j.remaining - j.rate * (now_ - j.last));
    double until = left - 1.0 / std::max(waves, 1.0);
    if (until <= 1e-12) {
      push(now_, kLastWave, k, j.version);
    } else if (j.rate > 0) {
      push(now_ + until / j.rate, kLastWave, k, j.version);
    }
  }

  void onLastWave(int32_t k) {
    Job& j = kernelJobs_[static_cast<size_t>(k)];
    if (!j.running || j.lastWave) return;
    double sms = std::max(1.0, std::floor(j.sms + 1e-9));
    double waves = std::ceil(static_cast<double>(g_.kernels[static_cast<size_t>(k)].tiles) / sms);
    double left = std::max(0.0, j.remaining - j.rate * (now_ - j.last));
    if (left > 1.0 / std::max(waves, 1.0) + 1e-9) {  // its rate or SMs changed since: not yet
      scheduleLastWave(k, j, g_.kernels[static_cast<size_t>(k)].tiles);
      return;
    }
    j.lastWave = true;
    int32_t gpu = g_.gpu[static_cast<size_t>(j.event)];
    unqueueKernels(gpu);
    unblockComms(gpu);
  }

  // Does a kernel that started before rendezvous `r` still dispatch CTAs on `gpu`?
  bool dispatchBlocks(int32_t gpu, double since) const {
    for (int32_t e : gpus_[static_cast<size_t>(gpu)].kernels) {
      const Job& kj = kernelJobs_[static_cast<size_t>(g_.kernel[static_cast<size_t>(e)])];
      if (!kj.lastWave && kj.startedAt <= since) return true;
    }
    return false;
  }

  // contention.kernels_wait_for_dispatch for kernel event e starting now: it waits behind a kernel
  // still dispatching that started before it, or at this instant but was issued before it; and
  // kernels that started at this instant but were issued after it now wait behind it. Several
  // kernels start at one instant when nothing holds them back (a graph replay's chunks, each on its
  // stream): the GPU takes them in the order the program launched them, not in the order the
  // simulation happens to reach them (on one H200 two chunks of a GEMM-then-collective program ran
  // faster than one, which only that order gives; ACCURACY.md, tenth session).
  void queueInLaunchOrder(int32_t gpu, int32_t e) {
    Job& j = kernelJobs_[static_cast<size_t>(g_.kernel[static_cast<size_t>(e)])];
    j.queued = false;
    for (int32_t o : gpus_[static_cast<size_t>(gpu)].kernels) {
      Job& oj = kernelJobs_[static_cast<size_t>(g_.kernel[static_cast<size_t>(o)])];
      if (oj.lastWave) continue;
      if (oj.startedAt < now_ || o < e) j.queued = true;
      else if (!oj.queued) oj.queued = true;  // same instant, issued after e
    }
  }

  // Kernels queued on `gpu` whose predecessors in launch order have all dispatched their last
  // wave (or ended) get their SMs.
  void unqueueKernels(int32_t gpu) {
    bool changed = false;
    for (int32_t e : gpus_[static_cast<size_t>(gpu)].kernels) {
      Job& kj = kernelJobs_[static_cast<size_t>(g_.kernel[static_cast<size_t>(e)])];
      if (!kj.queued) continue;
      bool before = false;
      for (int32_t o : gpus_[static_cast<size_t>(gpu)].kernels) {
        const Job& oj = kernelJobs_[static_cast<size_t>(g_.kernel[static_cast<size_t>(o)])];
        if (o != e && !oj.lastWave && (oj.startedAt < kj.startedAt || (oj.startedAt == kj.startedAt && o < e)))
          before = true;  // launched before it and still dispatching (or itself queued): first in line
      }
      if (!before) kj.queued = false, changed = true;
    }
    if (changed) reflow(gpu);
  }

  void unblockComms(int32_t gpu) {
    bool changed = false;
    for (int32_t r : gpus_[static_cast<size_t>(gpu)].comms) {
      Job& cj = commJobs_[static_cast<size_t>(r)];
      auto it = std::find(cj.blockedOn.begin(), cj.blockedOn.end(), gpu);
      if (it == cj.blockedOn.end() || dispatchBlocks(gpu, cj.kernelPhase ? cj.kernelStartedAt : cj.startedAt)) continue;
      cj.blockedOn.erase(it);
      updateCommRate(r);
      changed = true;
    }
    if (changed) reflow(gpu);
  }

  void integrate(int32_t gpu) {
    Gpu& G = gpus_[static_cast<size_t>(gpu)];
    r_.smBusyUs[static_cast<size_t>(gpu)] += G.busySms * (now_ - G.last);
    if (G.power.capped()) r_.cappedUs[static_cast<size_t>(gpu)] += now_ - G.last;
    G.power.advance(now_ - G.last);
    G.last = now_;
  }

  // What runs on `gpu` changed: recompute the rates of its kernels, and tell its communications
  // whether a kernel runs beside them.
  void reflow(int32_t gpu) {
    integrate(gpu);
    Gpu& G = gpus_[static_cast<size_t>(gpu)];
    const ContentionModel& c = mc_.contention;
    double comm_sms = 0;
    for (int32_t r : G.comms) {
      const auto& b = commJobs_[static_cast<size_t>(r)].blockedOn;
      if (std::find(b.begin(), b.end(), gpu) == b.end())
        comm_sms += static_cast<double>(g_.rendezvousSets[static_cast<size_t>(r)].smsHeld);
    }
    double free_sms = std::max(1.0, allSms_ - comm_sms);
    // A copy-engine transfer moving data on this GPU slows its kernels' compute
    // (contention.copy_engine_compute_slowdown); two transfers share the engines' bandwidth, so
    // their load is the same as one's.
    double engines = 1;
    if (c.copyEngineComputeSlowdown > 0)
      for (int32_t r : G.comms) {
        const Job& cj = commJobs_[static_cast<size_t>(r)];
        if (g_.rendezvousSets[static_cast<size_t>(r)].copyEngines && !cj.kernelPhase && cj.blockedOn.empty()) {
          engines = 1 + c.copyEngineComputeSlowdown;
          break;
        }
      }

    // SMs: water-filling of the free SMs by demand (a GEMM cannot use more SMs than tiles).
    size_t nk = G.kernels.size();
    demand_.resize(nk);
    for (size_t i = 0; i < nk; ++i) {
      const KernelCost& kc = g_.kernels[static_cast<size_t>(g_.kernel[static_cast<size_t>(G.kernels[i])])];
      demand_[i] = kc.tiles > 0 ? std::min(allSms_, static_cast<double>(kc.tiles)) : allSms_;
      if (kernelJobs_[static_cast<size_t>(g_.kernel[static_cast<size_t>(G.kernels[i])])].queued) demand_[i] = 0;
    }
    share_.assign(nk, 0);
    if (!c.smSharing) {
      share_ = demand_;
    } else if (nk == 1) {
      share_[0] = std::min(demand_[0], free_sms);
    } else if (nk > 1) {
      double left = free_sms;
      order_.resize(nk);
      for (size_t i = 0; i < nk; ++i) order_[i] = i;
      std::sort(order_.begin(), order_.end(), [&](size_t a, size_t b) { return demand_[a] < demand_[b]; });
      for (size_t k = 0; k < nk; ++k) {
        size_t i = order_[k];
        double fair = left / static_cast<double>(nk - k);
        share_[i] = std::min(demand_[i], fair);
        left -= share_[i];
      }
    }
    // Time of each kernel at its SM share, then HBM sharing of the memory-bound part. The power
    // cap's clocks stretch the compute part; the load they answer is the one at full clocks.
    const double clocks = updatePower(gpu, nk);
    double hbm_demand = 0;
    times_.resize(nk);
    for (size_t i = 0; i < nk; ++i) {
      const KernelCost& kc = g_.kernels[static_cast<size_t>(g_.kernel[static_cast<size_t>(G.kernels[i])])];
      double tc = clocks * engines * kc.computeUs *
                  (c.smSharing ? smSlowdown(mc_, kc.tiles, share_[i], c.smSharingWaves) : 1.0);
      times_[i] = std::max({tc, kc.memoryUs, kc.minUs});
      hbm_demand += kc.bytes / times_[i];
    }
    double hbm_factor = c.hbmSharing && hbm_demand > hbmCapacity_ ? hbm_demand / hbmCapacity_ : 1.0;
    double busy = comm_sms;
    for (size_t i = 0; i < nk; ++i) {
      int32_t e = G.kernels[i];
      int32_t k = g_.kernel[static_cast<size_t>(e)];
      const KernelCost& kc = g_.kernels[static_cast<size_t>(k)];
      double t = times_[i];
      if (hbm_factor > 1) {
        double tc = clocks * engines * kc.computeUs *
                  (c.smSharing ? smSlowdown(mc_, kc.tiles, share_[i], c.smSharingWaves) : 1.0);
        t = std::max({tc, kc.memoryUs * hbm_factor, kc.minUs});
      }
      Job& j = kernelJobs_[static_cast<size_t>(k)];
      j.sms = share_[i];
      busy += share_[i];
      if (j.queued) {  // behind another kernel's CTAs: no progress yet
        setRate(j, 0, kKernelDone, k);
        continue;
      }
      setRate(j, 1.0 / std::max(t, 1e-9), kKernelDone, k);
      scheduleLastWave(k, j, kc.tiles);
    }
    G.busySms = std::min(busy, allSms_);
    if (o_.recordSmCounters) {
      auto& series = r_.busySms[static_cast<size_t>(gpu)];
      if (!series.empty() && series.back().us == now_) {
        series.back().value = G.busySms;
      } else {
        series.push_back({now_, G.busySms});
      }
    }
    bool active = nk > 0;
    if (active != G.computeActive) {
      G.computeActive = active;
      for (int32_t r : G.comms) {
        commJobs_[static_cast<size_t>(r)].membersWithCompute += active ? 1 : -1;
        updateCommRate(r);
      }
    }
  }

  // The power state of `gpu` as its kernels change (shares_ set for them): its load is the share
  // of its SMs busy on compute, each kernel weighted by how much of its time is compute at full
  // clocks (a GEMM about 1, a copy about 0) and by its power per SM (KernelCost::power). Returns
  // the factor on compute times, and schedules the moment the cap is reached at this load.
  double updatePower(int32_t gpu, size_t nk) {
    Gpu& G = gpus_[static_cast<size_t>(gpu)];
    if (!mc_.gpu.power.enabled()) return 1;
    double load = 0;
    for (size_t i = 0; i < nk; ++i) {
      const KernelCost& kc = g_.kernels[static_cast<size_t>(g_.kernel[static_cast<size_t>(G.kernels[i])])];
      double t = std::max({kc.computeUs, kc.memoryUs, kc.minUs});
      if (t > 0) load += share_[i] / allSms_ * std::min(1.0, kc.computeUs / t) * kc.power;
    }
    G.power.setLoad(std::min(1.0, load));
    ++G.powerVersion;
    double until = G.power.usUntilCap();
    if (until > 0 && std::isfinite(until)) push(now_ + until, kPowerCap, gpu, G.powerVersion);
    return G.power.computeFactor();
  }

  // ---- communications ----

  double commRate(int32_t r) const {
    const Job& j = commJobs_[static_cast<size_t>(r)];
    const ContentionModel& c = mc_.contention;
    if (!j.blockedOn.empty()) return 0;  // queued behind a kernel's CTAs on some member GPU
    const Rendezvous& rv = g_.rendezvousSets[static_cast<size_t>(r)];
    double rate = 1.0 / std::max(rv.cost.us, 1e-9);
    // A kernel beside an NCCL kernel slows it; on the copy engines the local sum of a reduction
    // is a kernel (its last kernelUs) and slows the same way, the transfers by their own factor.
    if (j.membersWithCompute > 0)
      rate *= !rv.copyEngines || j.kernelPhase ? c.commRateUnderCompute : c.copyEngineRateUnderCompute;
    if (c.linkSharing) {
      int most = 1;
      for (int k = kMaxShare; k > 1; --k)
        if (j.share[static_cast<size_t>(k)] > 0) {
          most = k;
          break;
        }
      rate /= most;
    }
    return rate;
  }

  void updateCommRate(int32_t r) {
    Job& j = commJobs_[static_cast<size_t>(r)];
    if (!j.running) return;
    const CommCost& cost = g_.rendezvousSets[static_cast<size_t>(r)].cost;
    if (cost.kernelUs <= 0 || j.kernelPhase) setRate(j, commRate(r), kCommDone, r);
    else setRate(j, commRate(r), kCommKernelPhase, r, kernelShare(cost));  // the pulls end at the sum's share
  }

  // The share of a copy-engine reduction's work that is its local sum (a kernel).
  static double kernelShare(const CommCost& c) { return std::min(1.0, c.kernelUs / std::max(c.us, 1e-9)); }

  // contention.comm_waits_for_dispatch: the member GPUs on which a GEMM still dispatching its
  // CTAs keeps a communication kernel starting now from getting SMs.
  void blockBehindDispatch(Job& j, const Rendezvous& rv) {
    if (!mc_.contention.commWaitsForDispatch) return;
    for (int32_t m : rv.members) {
      int32_t gpu = g_.gpu[static_cast<size_t>(m)];
      if (dispatchBlocks(gpu, now_) && std::find(j.blockedOn.begin(), j.blockedOn.end(), gpu) == j.blockedOn.end())
        j.blockedOn.push_back(gpu);
    }
  }

  // A copy-engine reduction's pulls are done: its local sum is a kernel, which waits for the SMs
  // of a GEMM still dispatching its CTAs (contention.comm_waits_for_dispatch) and slows beside
  // compute like NCCL's kernels.
  void startCommKernel(int32_t r) {
    const Rendezvous& rv = g_.rendezvousSets[static_cast<size_t>(r)];
    Job& j = commJobs_[static_cast<size_t>(r)];
    j.remaining = kernelShare(rv.cost);
    j.last = now_;
    j.kernelPhase = true;
    j.kernelStartedAt = now_;
    blockBehindDispatch(j, rv);
    j.rate = -1;  // force the new rate (and its completion event)
    setRate(j, commRate(r), kCommDone, r);
    if (mc_.contention.copyEngineComputeSlowdown > 0)  // its transfers no longer load the members' GPUs
      for (int32_t gpu : memberGpus(rv)) reflow(gpu);
  }

  // The distinct GPUs of a rendezvous's members.
  std::vector<int32_t> memberGpus(const Rendezvous& rv) const {
    std::vector<int32_t> out;
    for (int32_t m : rv.members) out.push_back(g_.gpu[static_cast<size_t>(m)]);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }

  // The number of communications running on `gpu` goes from `from` to `to`: every one of them
  // moves between share buckets.
  void rebucket(int32_t gpu, int from, int to) {
    from = std::min(from, kMaxShare);
    to = std::min(to, kMaxShare);
    if (from == to) return;
    for (int32_t r : gpus_[static_cast<size_t>(gpu)].comms) {
      Job& j = commJobs_[static_cast<size_t>(r)];
      if (from > 0) --j.share[static_cast<size_t>(from)];
      if (to > 0) ++j.share[static_cast<size_t>(to)];
    }
  }

  void startComm(int32_t r) {
    const Rendezvous& rv = g_.rendezvousSets[static_cast<size_t>(r)];
    Job& j = commJobs_[static_cast<size_t>(r)];
    j.remaining = 1;
    j.last = now_;
    j.rate = 0;
    j.running = true;
    j.membersWithCompute = 0;
    j.share.fill(0);
    j.startedAt = now_;
    j.kernelPhase = false;
    j.blockedOn.clear();
    if (rv.smsHeld > 0) blockBehindDispatch(j, rv);  // a kernel that holds no SMs never queues
    for (int32_t m : rv.members) {
      r_.start[static_cast<size_t>(m)] = now_;
      int32_t gpu = g_.gpu[static_cast<size_t>(m)];
      Gpu& G = gpus_[static_cast<size_t>(gpu)];
      int before = static_cast<int>(G.comms.size());
      rebucket(gpu, before, before + 1);  // the others now share this GPU's links with one more
      G.comms.push_back(r);
      ++j.share[static_cast<size_t>(std::min(before + 1, kMaxShare))];
      if (G.computeActive) ++j.membersWithCompute;
    }
    // Others on the members' GPUs got slower (more sharing); kernels lost the SMs it holds.
    const std::vector<int32_t> touched = memberGpus(rv);
    for (int32_t gpu : touched)
      for (int32_t other : gpus_[static_cast<size_t>(gpu)].comms)
        if (other != r) updateCommRate(other);
    updateCommRate(r);
    for (int32_t gpu : touched) reflow(gpu);
  }

  void finishComm(int32_t r) {
    const Rendezvous& rv = g_.rendezvousSets[static_cast<size_t>(r)];
    Job& j = commJobs_[static_cast<size_t>(r)];
    j.running = false;
    ++j.version;
    std::vector<int32_t> touched;
    for (int32_t m : rv.members) {
      int32_t gpu = g_.gpu[static_cast<size_t>(m)];
      Gpu& G = gpus_[static_cast<size_t>(gpu)];
      int before = static_cast<int>(G.comms.size());
      auto it = std::find(G.comms.begin(), G.comms.end(), r);
      if (it == G.comms.end()) continue;  // several members on one GPU: removed once per member
      G.comms.erase(it);
      rebucket(gpu, before, before - 1);
      touched.push_back(gpu);
    }
    std::sort(touched.begin(), touched.end());
    touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
    for (int32_t gpu : touched)
      for (int32_t other : gpus_[static_cast<size_t>(gpu)].comms) updateCommRate(other);
    for (int32_t gpu : touched) reflow(gpu);
    for (int32_t m : rv.members) complete(m);
  }

  // ---- deadlock ----

  // The node e waits for (-2: a communication partner that never posts).
  int32_t waitsFor(int32_t e) const {
    size_t i = static_cast<size_t>(e);
    for (uint32_t k = g_.predBegin[i]; k < g_.predBegin[i + 1]; ++k)
      if (r_.end[static_cast<size_t>(g_.preds[k])] < 0) return g_.preds[k];
    if (g_.kind[i] == NodeKind::kComm) {
      int32_t r = g_.rendezvous[i];
      if (r < 0) return -2;
      for (int32_t m : g_.rendezvousSets[static_cast<size_t>(r)].members)
        if (m != e && r_.start[static_cast<size_t>(m)] < 0) {
          // m has not arrived yet if something it depends on is unfinished.
          size_t mi = static_cast<size_t>(m);
          for (uint32_t k = g_.predBegin[mi]; k < g_.predBegin[mi + 1]; ++k)
            if (r_.end[static_cast<size_t>(g_.preds[k])] < 0) return m;
        }
      for (int32_t m : g_.rendezvousSets[static_cast<size_t>(r)].members)
        if (m != e && r_.start[static_cast<size_t>(m)] < 0) return m;
    }
    return -2;
  }

  void explainDeadlock() {
    r_.deadlocked = true;
    // Start from the first unfinished event whose predecessors all finished, or else any.
    int32_t from = -1;
    for (size_t e = 0; e < g_.numEvents() && from < 0; ++e)
      if (r_.end[e] < 0) from = static_cast<int32_t>(e);
    std::vector<int32_t> seen_at(g_.numEvents(), -1);
    std::vector<int32_t> chain;
    int32_t e = from;
    while (e >= 0 && seen_at[static_cast<size_t>(e)] < 0) {
      seen_at[static_cast<size_t>(e)] = static_cast<int32_t>(chain.size());
      chain.push_back(e);
      e = waitsFor(e);
    }
    if (e >= 0) {
      r_.cycle = true;
      chain.erase(chain.begin(), chain.begin() + seen_at[static_cast<size_t>(e)]);
    }
    r_.blocked = std::move(chain);
  }

  const SimGraph& g_;
  const Machine& mc_;
  const EngineOptions& o_;
  EngineResult r_;
  std::vector<Gpu> gpus_;
  std::vector<int32_t> pending_;
  std::vector<Job> kernelJobs_;
  std::vector<Job> commJobs_;
  std::vector<int32_t> arrived_;
  std::priority_queue<Pending, std::vector<Pending>, Later> heap_;
  std::vector<int32_t> now_queue_;
  uint64_t seq_ = 0;
  double now_ = 0;
  double allSms_ = 1;
  double hbmCapacity_ = 1;
  std::vector<double> demand_, share_, times_;
  std::vector<size_t> order_;
};

}  // namespace

EngineResult runEngine(const SimGraph& g, const Machine& mc, const EngineOptions& o) {
  return Engine(g, mc, o).run();
}

}  // namespace braid::sim
