// Calibration (calibrate.h): which constants the measurements determine, the least-squares fit
// of them, and the report of every measurement's error before and after.
#include "sim/calibrate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "sim/after_idle_fit.h"
#include "sim/cost_model.h"
#include "sim/fit.h"
#include "sim/median.h"
#include "sim/overlap_model.h"
#include "sim/power_fit.h"

namespace braid::sim {

//===----------------------------------------------------------------------===//
// The model's predictions
//===----------------------------------------------------------------------===//

double predictGemmUs(const Machine& mc, const GemmShape& g) {
  return gemmCost(mc, g.flops(), g.bytes(), g.dtype, g.batch, g.m, g.n).totalUs();
}

double predictCopyUs(const Machine& mc, double bytes) { return copyCost(mc, bytes).totalUs(); }

double predictCollectiveUs(const Machine& mc, const CollectiveMeasurement& c) {
  return collectiveCost(mc, c.kind, c.team, c.nodes, c.bytes).us;
}

double predictP2PUs(const Machine& mc, const P2PMeasurement& p) { return p2pCost(mc, p.bytes, p.interNode).us; }

double predictCopyEngineUs(const Machine& mc, const CopyEngineMeasurement& c) {
  return copyEngineCollectiveCost(mc, c.kind, c.team, c.bytes).us;
}

static double& hostCostRef(Machine& mc, HostCall c) {
  switch (c) {
    case HostCall::kAtenOp:
      return mc.host.atenOpUs;
    case HostCall::kKernelLaunch:
      return mc.host.kernelLaunchUs;
    case HostCall::kCommunicationCall:
      return mc.host.communicationCallUs;
    case HostCall::kStreamCall:
      return mc.host.streamCallUs;
    case HostCall::kAllocation:
      return mc.host.allocationUs;
    case HostCall::kView:
      return mc.host.viewUs;
    case HostCall::kControl:
      return mc.host.controlUs;
    case HostCall::kLaunchLatency:
      return mc.gpu.launchLatencyUs;
    case HostCall::kKernelMin:
      return mc.gpu.kernelMinUs;
  }
  return mc.host.atenOpUs;
}

static const char* hostCostField(HostCall c) {
  switch (c) {
    case HostCall::kLaunchLatency:
      return "gpu.launch_latency_us";
    case HostCall::kKernelMin:
      return "gpu.kernel_min_us";
    default:
      return nullptr;  // host.<call>_us
  }
}

// hostCostRef only picks the field; reading through it leaves the machine as it was.
double hostCostUs(const Machine& mc, HostCall c) { return hostCostRef(const_cast<Machine&>(mc), c); }

std::pair<double, double> overlapFactors(const Machine& mc, const OverlapMeasurement& v) {
  // The model has no stream-priority term: on two H200s the overlaps measured the same at both
  // priorities (CALIBRATION.md), so commHighPriority is recorded, not simulated.
  OverlapPrediction p = simulateOverlap(mc, v.gemm, v.collective, v.copyEngines);
  return {p.gemmBesideUs / std::max(p.gemmAloneUs, 1e-9), p.commBesideUs / std::max(p.commAloneUs, 1e-9)};
}

Measurements predictMeasurements(const Machine& mc, const Measurements& shapes) {
  Measurements m = shapes;
  for (auto& g : m.gemms) g.us = predictGemmUs(mc, g.shape);
  for (auto& c : m.copies) c.us = predictCopyUs(mc, c.bytes);
  for (auto& c : m.collectives) c.us = predictCollectiveUs(mc, c);
  for (auto& p : m.p2p) p.us = predictP2PUs(mc, p);
  for (auto& h : m.host) h.us = hostCostUs(mc, h.call);
  // Launched: the four operations' host costs in turn; a replay call is one launch's (the model
  // charges a replay no host time; only differences from back to back enter the fit).
  for (auto& w : m.afterIdle)
    w.us = {(w.graph ? mc.host.kernelLaunchUs
                     : static_cast<double>(w.ops) / 4 *
                           (mc.host.atenOpUs + mc.host.kernelLaunchUs + mc.host.allocationUs + mc.host.viewUs)) +
            (w.graph ? mc.host.afterIdleGraph : mc.host.afterIdle).delayUs(w.idleMs * 1e3)};
  for (auto& v : m.overlaps) {
    v.gemmAloneUs = predictGemmUs(mc, v.gemm);
    v.commAloneUs = v.copyEngines ? copyEngineCollectiveCost(mc, v.collective.kind, v.collective.team, v.collective.bytes).us
                                  : predictCollectiveUs(mc, v.collective);
    auto [gf, cf] = overlapFactors(mc, v);
    v.gemmBesideUs = v.gemmAloneUs * gf;
    v.commBesideUs = v.commAloneUs * cf;
  }
  for (auto& c : m.copyEngine) c.us = predictCopyEngineUs(mc, c);
  return m;
}

//===----------------------------------------------------------------------===//
// Measurements as one vector: labels, measured times, predictions
//===----------------------------------------------------------------------===//

static std::string collectiveStr(const CollectiveMeasurement& c) {
  std::ostringstream os;
  os << communicationTypeName(c.kind) << " team " << c.team << ", " << c.nodes << " node(s), "
     << static_cast<int64_t>(c.bytes) << " B";
  return os.str();
}

static std::vector<std::string> labels(const Measurements& m) {
  std::vector<std::string> out;
  for (const auto& g : m.gemms) out.push_back(g.shape.name());
  for (const auto& c : m.copies) out.push_back("copy " + std::to_string(static_cast<int64_t>(c.bytes)) + " B");
  for (const auto& c : m.collectives) out.push_back(collectiveStr(c));
  for (const auto& p : m.p2p)
    out.push_back("p2p " + std::to_string(static_cast<int64_t>(p.bytes)) + " B" + (p.interNode ? " across nodes" : ""));
  for (const auto& h : m.host) out.push_back(std::string("host ") + hostCallName(h.call));
  for (const auto& v : m.overlaps) {
    std::string coll = collectiveStr(v.collective) + (v.copyEngines ? " on the copy engines" : "");
    out.push_back(v.gemm.name() + " beside " + coll);
    out.push_back(coll + " beside " + v.gemm.name());
  }
  for (const auto& c : m.copyEngine)
    out.push_back(std::string(communicationTypeName(c.kind)) + " team " + std::to_string(c.team) + ", " +
                  std::to_string(static_cast<int64_t>(c.bytes)) + " B on the copy engines");
  return out;
}

static std::vector<double> measured(const Measurements& m) {
  std::vector<double> out;
  for (const auto& g : m.gemms) out.push_back(g.us);
  for (const auto& c : m.copies) out.push_back(c.us);
  for (const auto& c : m.collectives) out.push_back(c.us);
  for (const auto& p : m.p2p) out.push_back(p.us);
  for (const auto& h : m.host) out.push_back(h.us);
  for (const auto& v : m.overlaps) {
    out.push_back(v.gemmBesideUs);
    out.push_back(v.commBesideUs);
  }
  for (const auto& c : m.copyEngine) out.push_back(c.us);
  return out;
}

// The model's value of every measured time, in the order of measured(); an overlap's slowed
// time is its measured time alone times the model's factor, so it tests the contention model
// only, not the cost models again.
static std::vector<double> predicted(const Machine& mc, const Measurements& m) {
  std::vector<double> out;
  out.reserve(m.size() + m.overlaps.size());
  for (const auto& g : m.gemms) out.push_back(predictGemmUs(mc, g.shape));
  for (const auto& c : m.copies) out.push_back(predictCopyUs(mc, c.bytes));
  for (const auto& c : m.collectives) out.push_back(predictCollectiveUs(mc, c));
  for (const auto& p : m.p2p) out.push_back(predictP2PUs(mc, p));
  for (const auto& h : m.host) out.push_back(hostCostUs(mc, h.call));
  for (const auto& v : m.overlaps) {
    auto [gf, cf] = overlapFactors(mc, v);
    out.push_back(v.gemmAloneUs * gf);
    out.push_back(v.commAloneUs * cf);
  }
  for (const auto& c : m.copyEngine) out.push_back(predictCopyEngineUs(mc, c));
  return out;
}

//===----------------------------------------------------------------------===//
// The constants to fit
//===----------------------------------------------------------------------===//

namespace {

// One fitted constant: how to read and write it on a machine, and its range. The fit works on
// its logarithm, which keeps it positive and makes steps relative.
struct Knob {
  std::string name;
  std::function<double(const Machine&)> get;
  std::function<void(Machine&, double)> set;
  double lo = 1e-6, hi = 1e9;
};

}  // namespace

template <typename Ref>
static Knob refKnob(std::string name, Ref ref, double lo, double hi) {
  return Knob{std::move(name), [ref](const Machine& m) { return ref(const_cast<Machine&>(m)); },
              [ref](Machine& m, double v) { ref(m) = v; }, lo, hi};
}

// An efficiency curve's knots, fitted as a non-decreasing curve capped at 1 (bigger GEMMs,
// copies and messages run at least as efficiently as smaller ones): the first knot's value, then
// each knot's ratio to the one before (>= 1). Fitted knot by knot, a curve bent to single
// measurements went down and up again (0.084 at one knot of the first H100 fit).
static void curveKnobs(std::vector<Knob>& out, const std::string& name, EfficiencyCurve GpuModel::*gpuCurve,
                       EfficiencyCurve NcclModel::*ncclCurve, size_t points) {
  auto curve = [=](Machine& m) -> EfficiencyCurve& { return gpuCurve ? m.gpu.*gpuCurve : m.nccl.*ncclCurve; };
  for (size_t i = 0; i < points; ++i) {
    if (i == 0) {
      out.push_back(refKnob(name + "[0]", [=](Machine& m) -> double& { return curve(m).points[0].second; }, 1e-3, 1.0));
      continue;
    }
    // Knobs are set in order, so knot i - 1 already has its new value when knot i is set.
    out.push_back(Knob{name + "[" + std::to_string(i) + "] / [" + std::to_string(i - 1) + "]",
                       [=](const Machine& m) {
                         const auto& pts = curve(const_cast<Machine&>(m)).points;
                         return std::max(1.0, pts[i].second / pts[i - 1].second);
                       },
                       [=](Machine& m, double v) {
                         auto& pts = curve(m).points;
                         pts[i].second = std::min(1.0, pts[i - 1].second * v);
                       },
                       1.0, 1e3});
  }
}

// Multiplies a group of NCCL latencies (every algorithm and protocol) by one factor: the
// measurements rarely tell NCCL's 18 latency constants apart, but their common scale they do.
static Knob latencyScaleKnob(const std::string& name, const Machine& base, bool inter) {
  return Knob{name, [](const Machine&) { return 1.0; },
              [base, inter](Machine& m, double v) {
                for (size_t a = 0; a < kNumNcclAlgorithms; ++a)
                  for (size_t p = 0; p < kNumNcclProtocols; ++p) {
                    if (inter) {
                      m.nccl.interStepLatencyUs[a][p] = base.nccl.interStepLatencyUs[a][p] * v;
                    } else {
                      m.nccl.baseLatencyUs[a][p] = base.nccl.baseLatencyUs[a][p] * v;
                      m.nccl.intraStepLatencyUs[a][p] = base.nccl.intraStepLatencyUs[a][p] * v;
                    }
                  }
              },
              0.02, 50.0};
}

static std::vector<Knob> knobsFor(const Machine& base, const Measurements& m, std::vector<std::string>& notes) {
  std::vector<Knob> k;
  if (!m.gemms.empty()) {
    curveKnobs(k, "gpu.matmul_efficiency", &GpuModel::matmulEfficiency, nullptr,
               base.gpu.matmulEfficiency.points.size());
    k.push_back(refKnob("gpu.gemm_latency_us", [](Machine& mc) -> double& { return mc.gpu.gemmLatencyUs; }, 1e-3, 1e3));
    // The efficiency curve is shared by every dtype; the peak of the first measured dtype
    // (bf16 when measured) anchors it and the others' peaks are fitted.
    std::set<Precision> seen;
    for (const auto& g : m.gemms) seen.insert(precisionOf(g.shape.dtype));
    Precision anchor = seen.count(Precision::kBf16) ? Precision::kBf16 : *seen.begin();
    for (Precision p : seen) {
      if (p == anchor) continue;
      double peak = base.gpu.matmulTflops[static_cast<size_t>(p)];
      k.push_back(refKnob(std::string("gpu.matmul_tflops.") + precisionName(p),
                          [p](Machine& mc) -> double& { return mc.gpu.matmulTflops[static_cast<size_t>(p)]; },
                          peak / 20, peak * 20));
    }
  } else {
    notes.push_back("no gemm measurements: gpu.matmul_efficiency kept");
  }
  if (!m.copies.empty())
    curveKnobs(k, "gpu.memory_efficiency", &GpuModel::memoryEfficiency, nullptr,
               base.gpu.memoryEfficiency.points.size());
  else
    notes.push_back("no copy measurements: gpu.memory_efficiency kept");
  bool intraColl = false, interColl = false, intraP2P = false, interP2P = false;
  for (const auto& c : m.collectives) (c.nodes > 1 ? interColl : intraColl) = true;
  for (const auto& v : m.overlaps) (v.collective.nodes > 1 ? interColl : intraColl) = true;
  for (const auto& p : m.p2p) (p.interNode ? interP2P : intraP2P) = true;
  if (intraColl || interColl || intraP2P || interP2P) {
    curveKnobs(k, "nccl.bandwidth_efficiency", nullptr, &NcclModel::bandwidthEfficiency,
               base.nccl.bandwidthEfficiency.points.size());
    k.push_back(refKnob("nccl.call_overhead_us", [](Machine& mc) -> double& { return mc.nccl.callOverheadUs; }, 1e-3,
                        1e4));
  } else {
    notes.push_back("no collective or p2p measurements: nccl kept");
  }
  // One bandwidth factor per measured collective kind (NCCL's kernels differ by kind). The shared
  // efficiency curve sets the level, so one kind keeps factor 1 and anchors it: Allreduce when
  // measured, else the first measured kind. (P2P transfers cannot anchor it: nvlink.bandwidth_gbps
  // scales them as well.)
  {
    std::set<CommunicationType> kinds;
    for (const auto& c : m.collectives) kinds.insert(c.kind);
    for (const auto& v : m.overlaps) kinds.insert(v.collective.kind);
    if (!kinds.empty()) {
      CommunicationType anchor = kinds.count(CommunicationType::kAllreduce) ? CommunicationType::kAllreduce : *kinds.begin();
      notes.push_back(std::string("nccl.kind_bandwidth_factor.") + communicationTypeName(anchor) +
                      " kept: it anchors nccl.bandwidth_efficiency");
      for (CommunicationType t : kinds) {
        if (t == anchor) continue;
        k.push_back(refKnob(std::string("nccl.kind_bandwidth_factor.") + communicationTypeName(t),
                            [t](Machine& mc) -> double& { return mc.nccl.kindBandwidthFactor[static_cast<size_t>(t)]; },
                            0.1, 10.0));
      }
    }
  }
  if (intraColl) k.push_back(latencyScaleKnob("nccl.latency_scale (base and intra-node step latencies x)", base, false));
  if (interColl)
    k.push_back(latencyScaleKnob("nccl.inter_step_latency_scale (inter-node step latencies x)", base, true));
  if (intraP2P) {
    k.push_back(refKnob("nvlink.bandwidth_gbps", [](Machine& mc) -> double& { return mc.nvlink.bandwidthGBps; }, 1,
                        1e5));
    k.push_back(refKnob("nvlink.latency_us", [](Machine& mc) -> double& { return mc.nvlink.latencyUs; }, 1e-3, 1e4));
  }
  if (interColl || interP2P)
    k.push_back(refKnob("nic.bandwidth_gbps", [](Machine& mc) -> double& { return mc.nic.bandwidthGBps; }, 0.1, 1e5));
  if (interP2P)
    k.push_back(refKnob("nic.latency_us", [](Machine& mc) -> double& { return mc.nic.latencyUs; }, 1e-3, 1e4));
  std::set<HostCall> calls;
  for (const auto& h : m.host) calls.insert(h.call);
  for (HostCall c : calls) {
    const char* field = hostCostField(c);
    k.push_back(refKnob(field ? field : "host." + std::string(hostCallName(c)) + "_us",
                        [c](Machine& mc) -> double& { return hostCostRef(mc, c); }, 1e-4, 1e5));
  }
  if (!m.copyEngine.empty()) {
    k.push_back(refKnob("copy_engines.bandwidth_gbps", [](Machine& mc) -> double& { return mc.copyEngines.bandwidthGBps; },
                        1, 1e5));
    k.push_back(refKnob("copy_engines.latency_us", [](Machine& mc) -> double& { return mc.copyEngines.latencyUs; }, 1e-3,
                        1e4));
    bool reduces = false;
    for (const auto& c : m.copyEngine) reduces = reduces || isReducing(c.kind);
    if (reduces)
      k.push_back(refKnob("copy_engines.reduce_gbps", [](Machine& mc) -> double& { return mc.copyEngines.reduceGBps; },
                          1, 1e6));
    else
      notes.push_back("no copy-engine reductions measured: copy_engines.reduce_gbps kept");
  } else {
    notes.push_back("no copy-engine measurements: copy_engines kept");
  }
  if (!m.overlaps.empty())
    k.push_back(refKnob("contention.comm_rate_under_compute",
                        [](Machine& mc) -> double& { return mc.contention.commRateUnderCompute; }, 0.01, 1.0));
  if (std::any_of(m.overlaps.begin(), m.overlaps.end(), [](const OverlapMeasurement& v) { return v.copyEngines; })) {
    // Fitted as the factor 1 + slowdown (>= 1), which has a logarithm where the slowdown is 0.
    k.push_back(Knob{"contention.copy_engine_compute_slowdown (as 1 + it)",
                     [](const Machine& mc) { return 1 + mc.contention.copyEngineComputeSlowdown; },
                     [](Machine& mc, double v) { mc.contention.copyEngineComputeSlowdown = v - 1; }, 1.0, 4.0});
    k.push_back(refKnob("contention.copy_engine_rate_under_compute",
                        [](Machine& mc) -> double& { return mc.contention.copyEngineRateUnderCompute; }, 0.05, 1.0));
  } else if (!m.overlaps.empty()) {
    notes.push_back("no overlap measured on the copy engines: contention.copy_engine_* kept");
  }
  return k;
}

//===----------------------------------------------------------------------===//
// The fit
//===----------------------------------------------------------------------===//

// Weight of the pull of each constant towards its base value (on its logarithm), against
// relative errors of the measurements: a measurement off by 1% outweighs a constant moved 10x.
static constexpr double kPriorWeight = 1e-3;

// The NCCL channel count and the SM-sharing rule that best explain how much GEMMs slow down
// beside collectives (they decide how many SMs a GEMM keeps); the base's when nothing is better.
static void chooseSmSharing(Machine& mc, const Measurements& m, std::vector<std::string>& notes) {
  std::vector<OverlapMeasurement> nccl;  // a collective on the copy engines holds no SMs
  for (const auto& v : m.overlaps)
    if (!v.copyEngines) nccl.push_back(v);
  if (nccl.empty()) return;
  auto cost = [&](const Machine& c) {
    double s = 0;
    for (const auto& v : nccl) {
      auto [gf, cf] = overlapFactors(c, v);
      double e = (v.gemmAloneUs * gf - v.gemmBesideUs) / v.gemmBesideUs;
      double f = (v.commAloneUs * cf - v.commBesideUs) / v.commBesideUs;
      s += e * e + f * f;
    }
    return s;
  };
  Machine best = mc;
  double bestCost = cost(mc);
  Machine off = mc;
  off.contention.smSharing = false;
  if (cost(off) < bestCost - 1e-15) best = off, bestCost = cost(off);
  for (bool dispatch : {false, true})
    for (bool waves : {false, true})
      for (int64_t ch = 1; ch * std::max<int64_t>(mc.nccl.smsPerChannel, 1) < mc.gpu.sms && ch <= 64; ++ch) {
        Machine c = mc;
        c.contention.smSharing = true;
        c.contention.smSharingWaves = waves;
        c.contention.commWaitsForDispatch = dispatch;
        c.nccl.channels = ch;
        // The communication's own slowdown beside compute is fitted later; a coarse grid here
        // keeps it from deciding the discrete choice.
        for (int step = 4; step <= 20; ++step) {
          c.contention.commRateUnderCompute = 0.05 * step;
          double e = cost(c);
          if (e < bestCost - 1e-15) best = c, bestCost = e;
        }
      }
  std::ostringstream os;
  os << "SM sharing from " << nccl.size() << " overlap measurement(s) on NCCL: ";
  if (!best.contention.smSharing)
    os << "off (GEMMs do not slow down beside collectives)";
  else
    os << "nccl.channels " << mc.nccl.channels << " -> " << best.nccl.channels << ", sm_sharing_waves "
       << (best.contention.smSharingWaves ? "true" : "false") << ", comm_waits_for_dispatch "
       << (best.contention.commWaitsForDispatch ? "true" : "false");
  notes.push_back(os.str());
  mc = best;
}

// The calibrated machine keeps every measured GEMM shape with its time (gpu.measured_gemms, the
// base's entries first, a shape measured again replacing its old time): a GEMM of such a shape
// then takes its measured time, not the curve's. The residuals reported are the curve's.
static void attachMeasuredGemms(CalibrationResult& out, const Machine& base, const Measurements& m) {
  std::vector<MeasuredGemm>& table = out.machine.gpu.measuredGemms;
  table = base.gpu.measuredGemms;
  // Times on other operand values are not this machine's (ir/input_values.h): a GEMM's time
  // depends on them by 4-14% on an H200. A base that does not record its values keeps its table.
  const auto& was = base.gpu.gemmOperands;
  const auto& now = out.machine.gpu.gemmOperands;
  if (!m.gemms.empty() && !table.empty() && was && now && *was != *now) {
    out.notes.push_back("gpu.measured_gemms: the base's " + std::to_string(table.size()) + " GEMM shapes were timed on " +
                        inputValuesName(*was) + " operands, these measurements on " + inputValuesName(*now) +
                        ": the base's are dropped");
    table.clear();
  }
  for (const GemmMeasurement& g : m.gemms) {
    auto same = std::find_if(table.begin(), table.end(), [&](const MeasuredGemm& t) { return t.shape == g.shape; });
    if (same != table.end()) same->us = g.us;
    else table.push_back({g.shape, g.us});
  }
  if (!m.gemms.empty())
    out.notes.push_back("gpu.measured_gemms: the " + std::to_string(table.size()) +
                        " GEMM shapes measured take their measured times (the residuals above are the curve's, "
                        "which other shapes use)");
}

// The knobs' least-squares fit to the measurements, from `start`: the fitted machine and how the
// fit went.
struct KnobFit {
  Machine machine;
  FitResult fit;
};

static KnobFit fitKnobs(const Machine& start, const Measurements& m, const std::vector<Knob>& knobs) {
  const std::vector<double> meas = measured(m);
  const size_t n = knobs.size(), nm = meas.size();
  std::vector<double> x0(n), lo(n), hi(n);
  for (size_t i = 0; i < n; ++i) {
    lo[i] = std::log(knobs[i].lo);
    hi[i] = std::log(knobs[i].hi);
    x0[i] = std::log(std::clamp(knobs[i].get(start), knobs[i].lo, knobs[i].hi));
  }
  auto machineAt = [&](const std::vector<double>& x) {
    Machine mc = start;
    for (size_t i = 0; i < n; ++i) knobs[i].set(mc, std::exp(x[i]));
    // The bounds keep efficiencies in (0, 1]; a curve's sizes are not fitted, so it stays valid.
    return mc;
  };
  FitProblem p;
  p.numResiduals = nm + n;
  p.lower = lo;
  p.upper = hi;
  p.residuals = [&](const std::vector<double>& x, std::vector<double>& r) {
    std::vector<double> pred = predicted(machineAt(x), m);
    for (size_t i = 0; i < nm; ++i) r[i] = (pred[i] - meas[i]) / meas[i];
    for (size_t i = 0; i < n; ++i) r[nm + i] = kPriorWeight * (x[i] - x0[i]);
  };
  // Converged when an accepted step lowers the cost by less than 1e-7 of it: the cost is only
  // piecewise smooth (tile choices, rooflines), and LM's default 1e-12 would creep for hundreds of
  // iterations on steps that change no prediction by a visible amount.
  FitOptions fo;
  fo.maxIterations = 300;
  fo.relativeTolerance = 1e-7;
  KnobFit out;
  out.fit = levenbergMarquardt(p, x0, fo);
  out.machine = machineAt(out.fit.x);
  return out;
}

// Whole or fractional waves (gpu.gemm_waves), whichever explains the GEMMs measured better once
// each has its curve and latency fitted; the base's when no GEMM was measured. The winner's GEMM
// constants are the whole fit's starting point: from the base's, the joint fit (contention's
// piecewise terms among them) stalled far from the GEMMs' own optimum on two H200s' measurements.
static void chooseGemmWaves(Machine& mc, const Measurements& m, std::vector<std::string>& notes) {
  if (m.gemms.empty()) return;
  Measurements gemms;
  gemms.gemms = m.gemms;
  const std::vector<double> meas = measured(gemms);
  double bestCost = std::numeric_limits<double>::infinity();
  GpuModel best = mc.gpu;
  std::ostringstream os;
  os << "gpu.gemm_waves from the " << m.gemms.size() << " GEMMs measured (median |error| with its curve fitted):";
  for (GemmWaves w : {GemmWaves::kWhole, GemmWaves::kFractional}) {
    Machine c = mc;
    c.gpu.gemmWaves = w;
    std::vector<std::string> ignored;
    KnobFit f = fitKnobs(c, gemms, knobsFor(c, gemms, ignored));
    std::vector<double> pred = predicted(f.machine, gemms), err;
    double cost = 0;
    for (size_t i = 0; i < meas.size(); ++i) {
      double e = (pred[i] - meas[i]) / meas[i];
      cost += e * e;
      err.push_back(std::abs(e));
    }
    char buf[64];
    std::snprintf(buf, sizeof buf, " %s %.2f%%", gemmWavesName(w), 100 * median(err));
    os << buf;
    if (cost < bestCost) bestCost = cost, best = f.machine.gpu;
  }
  os << "; " << gemmWavesName(best.gemmWaves);
  notes.push_back(os.str());
  mc.gpu.gemmWaves = best.gemmWaves;
  mc.gpu.gemmLatencyUs = best.gemmLatencyUs;
  mc.gpu.matmulEfficiency = best.matmulEfficiency;
  mc.gpu.matmulTflops = best.matmulTflops;
}

// The operand values the GEMMs were measured on (meta.gemm_operands): every measurement file
// written before braid recorded them drew normal values. The base's when no GEMM was measured.
static std::optional<InputValues> gemmOperandsOf(const Machine& base, const Measurements& m) {
  if (m.gemms.empty()) return base.gpu.gemmOperands;
  auto it = m.meta.find("gemm_operands");
  if (it == m.meta.end()) return InputValues::kNormal;
  return parseInputValues(it->second);  // checked when the file was read
}

// The power cap, from the power benchmark (sim/power_fit.h); without one the base's stays.
static void fitPower(CalibrationResult& out, const Machine& base, const Measurements& m) {
  if (m.power.empty()) return;
  PowerFit f = fitPowerCap(m.power);
  out.machine.gpu.power = f.model;
  out.notes.push_back(f.summary);
  if (!f.model.enabled()) return;
  out.constants.push_back({"gpu.power_cap.cap_load", base.gpu.power.capLoad, f.model.capLoad});
  out.constants.push_back(
      {"gpu.power_cap.time_constant_ms", base.gpu.power.timeConstantUs / 1e3, f.model.timeConstantUs / 1e3});
  out.constants.push_back({"gpu.power_cap.capped_slowdown", base.gpu.power.cappedSlowdown, f.model.cappedSlowdown});
}

// The host's late start after idle, from the after-idle benchmark (sim/after_idle_fit.h); a way
// of issuing not measured keeps the base's curve.
static void fitAfterIdle(CalibrationResult& out, const Machine& base, const Measurements& m) {
  if (m.afterIdle.empty()) return;
  AfterIdleFit f = fitAfterIdle(m.afterIdle);
  out.notes.insert(out.notes.end(), f.notes.begin(), f.notes.end());
  // Each way of issuing that was measured replaces the base's curve; the constant shown is the
  // delay after the longest idle (the notes list every point).
  for (bool graph : {false, true}) {
    if (!(graph ? f.graphMeasured : f.launchedMeasured)) continue;
    const AfterIdle& c = graph ? f.graph : f.launched;
    (graph ? out.machine.host.afterIdleGraph : out.machine.host.afterIdle) = c;
    if (c.empty()) continue;
    const auto& [idle, delay] = c.points.back();
    const AfterIdle& was = graph ? base.host.afterIdleGraph : base.host.afterIdle;
    out.constants.push_back({std::string(graph ? "host.after_idle_graph[" : "host.after_idle[") +
                                 std::to_string(c.points.size() - 1) + "]",
                             was.delayUs(idle), delay});
  }
}

CalibrationResult calibrate(const Machine& base, const Measurements& m) {
  CalibrationResult out;
  const std::optional<InputValues> operands = gemmOperandsOf(base, m);
  Machine start = base;
  start.gpu.measuredGemms.clear();  // the curve is fitted to every GEMM measured, table or not
  chooseGemmWaves(start, m, out.notes);
  chooseSmSharing(start, m, out.notes);
  std::vector<Knob> knobs = knobsFor(start, m, out.notes);
  const std::vector<double> meas = measured(m);
  const size_t n = knobs.size(), nm = meas.size();
  if (nm == 0) {  // only the power or after-idle benchmarks (fitted below): no cost model's constant to fit
    out.machine = start;
    out.converged = true;
  } else {
    KnobFit kf = fitKnobs(start, m, knobs);
    const FitResult& f = kf.fit;
    out.machine = kf.machine;
    out.iterations = f.iterations;
    out.converged = f.converged;
    out.initialCost = f.initialCost;
    out.finalCost = f.cost;
    for (size_t i = 0; i < n; ++i) out.constants.push_back({knobs[i].name, knobs[i].get(start), std::exp(f.x[i])});
    std::vector<std::string> names = labels(m);
    std::vector<double> before = predicted(base, m), after = predicted(out.machine, m);
    for (size_t i = 0; i < nm; ++i) out.errors.push_back({names[i], meas[i], before[i], after[i]});
    if (!f.converged) out.notes.push_back("the fit stopped at its iteration limit before converging");
  }
  out.machine.gpu.gemmOperands = operands;
  attachMeasuredGemms(out, base, m);
  fitPower(out, base, m);
  fitAfterIdle(out, base, m);
  return out;
}

//===----------------------------------------------------------------------===//
// Reports
//===----------------------------------------------------------------------===//

double CalibrationResult::medianBaseError() const {
  std::vector<double> v;
  for (const auto& e : errors) v.push_back(std::abs(e.baseError()));
  return median(v);
}

double CalibrationResult::medianFittedError() const {
  std::vector<double> v;
  for (const auto& e : errors) v.push_back(std::abs(e.fittedError()));
  return median(v);
}

double CalibrationResult::maxFittedError() const {
  double x = 0;
  for (const auto& e : errors) x = std::max(x, std::abs(e.fittedError()));
  return x;
}

std::string calibrationReport(const CalibrationResult& r) {
  std::ostringstream os;
  char line[512];
  char head[160];
  std::snprintf(head, sizeof head, "; %d iterations%s, cost %.4g -> %.4g", r.iterations,
                r.converged ? ", converged" : ", not converged", r.initialCost, r.finalCost);
  os << "fitted constants (" << r.constants.size() << head << "):\n";
  size_t w = 8;
  for (const auto& c : r.constants) w = std::max(w, c.name.size());
  for (const auto& c : r.constants) {
    std::snprintf(line, sizeof line, "  %-*s %12.4g -> %12.4g\n", static_cast<int>(w), c.name.c_str(), c.base,
                  c.fitted);
    os << line;
  }
  for (const auto& n : r.notes) os << "note: " << n << "\n";
  w = 11;
  for (const auto& e : r.errors) w = std::max(w, e.what.size());
  std::snprintf(line, sizeof line, "\n  %-*s %12s %12s %9s %12s %9s\n", static_cast<int>(w), "measurement",
                "measured_us", "base_us", "base_err", "fitted_us", "residual");
  os << line;
  for (const auto& e : r.errors) {
    std::snprintf(line, sizeof line, "  %-*s %12.3f %12.3f %+8.1f%% %12.3f %+8.2f%%\n", static_cast<int>(w),
                  e.what.c_str(), e.measuredUs, e.baseUs, 100 * e.baseError(), e.fittedUs, 100 * e.fittedError());
    os << line;
  }
  std::snprintf(line, sizeof line,
                "\n%zu measurements: median |error| %.2f%% with the base machine, %.2f%% calibrated (max %.2f%%)\n",
                r.errors.size(), 100 * r.medianBaseError(), 100 * r.medianFittedError(), 100 * r.maxFittedError());
  os << line;
  return os.str();
}

std::string calibrationJson(const CalibrationResult& r) {
  using json = nlohmann::ordered_json;
  json j;
  j["machine"] = r.machine.name;
  j["iterations"] = r.iterations;
  j["converged"] = r.converged;
  j["initial_cost"] = r.initialCost;
  j["final_cost"] = r.finalCost;
  j["constants"] = json::array();
  for (const auto& c : r.constants) j["constants"].push_back({{"name", c.name}, {"base", c.base}, {"fitted", c.fitted}});
  j["measurements"] = json::array();
  for (const auto& e : r.errors)
    j["measurements"].push_back({{"what", e.what},
                                 {"measured_us", e.measuredUs},
                                 {"base_us", e.baseUs},
                                 {"fitted_us", e.fittedUs},
                                 {"base_error", e.baseError()},
                                 {"residual", e.fittedError()}});
  j["median_abs_base_error"] = r.medianBaseError();
  j["median_abs_residual"] = r.medianFittedError();
  j["max_abs_residual"] = r.maxFittedError();
  j["notes"] = r.notes;
  return j.dump(1);
}

}  // namespace braid::sim
