#include "sim/cost_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "ir/checked_math.h"

namespace braid::sim {

namespace {

// GB/s -> bytes per microsecond.
constexpr double kBytesPerUsPerGBps = 1e3;
// TFLOP/s -> flops per microsecond.
constexpr double kFlopsPerUsPerTflops = 1e6;

double memoryUs(const Machine& mc, double bytes) {
  if (bytes <= 0) return 0;
  return bytes / (mc.gpu.hbmGBps * kBytesPerUsPerGBps * mc.gpu.memoryEfficiency.at(bytes));
}

int64_t ceilDiv(int64_t a, int64_t b) { return a / b + (a % b != 0); }  // a >= 0, b > 0; no a + b overflow

}  // namespace

double KernelCost::totalUs() const { return std::max({computeUs, memoryUs, minUs}); }

// The machine's measured GEMM of this batch, m, n and dtype with these flops (so this k), if any.
static const MeasuredGemm* measuredGemm(const Machine& mc, double flops, DataType dtype, int64_t batch, int64_t m, int64_t n) {
  for (const MeasuredGemm& g : mc.gpu.measuredGemms) {
    const GemmShape& s = g.shape;
    if (s.m == m && s.n == n && s.batch == batch && s.dtype == dtype && std::abs(s.flops() - flops) <= 1e-9 * flops)
      return &g;
  }
  return nullptr;
}

KernelCost gemmCost(const Machine& mc, double flops, double bytes, DataType dtype, int64_t batch, int64_t m, int64_t n) {
  KernelCost c;
  c.bytes = bytes;
  c.memoryUs = memoryUs(mc, bytes);
  c.minUs = mc.gpu.kernelMinUs;
  if (flops <= 0) return c;
  batch = std::max<int64_t>(batch, 1);
  m = std::max<int64_t>(m, 1);
  n = std::max<int64_t>(n, 1);
  double peak = mc.gpu.matmulTflops[static_cast<size_t>(precisionOf(dtype))] * kFlopsPerUsPerTflops;
  double ideal = flops / (peak * mc.gpu.matmulEfficiency.at(flops));
  // cuBLAS picks the tile that finishes first in whole waves: bigger tiles run more efficiently,
  // smaller ones fill the last wave better. Its count says how many SMs the GEMM holds beside
  // other kernels (the engine's SM sharing and dispatch). With fractional waves the chosen tile's
  // work is spread evenly over the SMs, so the time drops the quantization.
  double best = std::numeric_limits<double>::infinity(), efficiency = 1;
  for (const GemmTile& t : mc.gpu.gemmTiles) {
    // Checked: sizes up to 2^50 (the semantics' limit) multiply past int64 here.
    int64_t tiles = checkedMul(checkedMul(batch, ceilDiv(m, t.m), "GEMM tiles"), ceilDiv(n, t.n), "GEMM tiles");
    int64_t waves = ceilDiv(tiles, mc.gpu.sms);
    double quantization = static_cast<double>(waves * mc.gpu.sms) / static_cast<double>(tiles);
    double us = ideal / t.efficiency * quantization;
    if (us < best) {
      best = us;
      efficiency = t.efficiency;
      c.tiles = tiles;
      c.tileM = t.m;
      c.tileN = t.n;
    }
  }
  c.computeUs = mc.gpu.gemmLatencyUs + (mc.gpu.gemmWaves == GemmWaves::kWhole ? best : ideal / efficiency);
  // A shape timed on this machine takes its measured time (the tiles still say how it fills SMs).
  if (const MeasuredGemm* g = measuredGemm(mc, flops, dtype, batch, m, n)) c.computeUs = g->us;
  c.power = mc.gpu.power.gemmPowerAt(flops);
  return c;
}

KernelCost vectorCost(const Machine& mc, double flops, double bytes, DataType dtype) {
  KernelCost c;
  c.bytes = bytes;
  c.memoryUs = memoryUs(mc, bytes);
  c.minUs = mc.gpu.kernelMinUs;
  if (flops > 0) {
    double peak = mc.gpu.vectorTflops[static_cast<size_t>(precisionOf(dtype))] * kFlopsPerUsPerTflops;
    c.computeUs = flops / (peak * mc.gpu.vectorEfficiency.at(flops));
  }
  return c;
}

KernelCost copyCost(const Machine& mc, double bytes) { return vectorCost(mc, 0, bytes, DataType::kFloat); }

double smSlowdown(const Machine& mc, int64_t tiles, double sms, bool waves) {
  double all = static_cast<double>(mc.gpu.sms);
  double alone = tiles > 0 ? std::min(all, static_cast<double>(tiles)) : all;  // SMs it uses alone
  sms = std::clamp(sms, 1.0, all);
  if (sms >= alone) return 1.0;
  if (!waves || tiles <= 0) return alone / sms;
  int64_t got = std::max<int64_t>(1, static_cast<int64_t>(std::floor(sms + 1e-9)));
  return static_cast<double>(ceilDiv(tiles, got)) / static_cast<double>(ceilDiv(tiles, mc.gpu.sms));
}

std::string CommCost::describe() const {
  char buf[160];
  if (p2p) {
    std::snprintf(buf, sizeof buf, "p2p, %.1f us latency, %.0f GB/s%s", latencyUs, bandwidthGBps,
                  interNode ? ", across nodes" : "");
  } else {
    std::snprintf(buf, sizeof buf, "%s/%s, %.1f us latency, %.0f GB/s%s", ncclAlgorithmName(algorithm),
                  ncclProtocolName(protocol), latencyUs, bandwidthGBps, interNode ? ", across nodes" : "");
  }
  return buf;
}

CommCost p2pCost(const Machine& mc, double bytes, bool interNode) {
  CommCost c;
  c.p2p = true;
  c.interNode = interNode;
  const LinkModel& link = interNode ? mc.nic : mc.nvlink;
  double bw = interNode ? std::min(mc.interNodeGBpsPerGpu(), mc.nvlink.bandwidthGBps) : link.bandwidthGBps;
  c.latencyUs = link.latencyUs;
  c.bandwidthGBps = bw * mc.nccl.bandwidthEfficiency.at(std::max(bytes, 1.0));
  c.us = c.latencyUs + bytes / (c.bandwidthGBps * kBytesPerUsPerGBps) + mc.nccl.callOverheadUs;
  c.linkBytes = bytes;
  return c;
}

CommCost copyEngineCollectiveCost(const Machine& mc, CommunicationType type, int64_t teamSize, double bytes) {
  const CopyEngineModel& ce = mc.copyEngines;
  const double n = static_cast<double>(std::max<int64_t>(teamSize, 1));
  double pulled = 0, row = 0;  // bytes this rank pulls; a reduction's row
  double rounds = 1;           // rounds of handshakes and pulls
  switch (type) {
    case CommunicationType::kAllgather:
    case CommunicationType::kGather:
    case CommunicationType::kAllToAll: pulled = (n - 1) / n * bytes; break;
    case CommunicationType::kScatter: pulled = bytes / n; break;
    case CommunicationType::kBroadcast:
    case CommunicationType::kSendRecv: pulled = bytes; break;
    case CommunicationType::kReduceScatter:
      row = bytes / n;
      pulled = (n - 1) * row;
      break;
    case CommunicationType::kAllreduce:  // reduce-scatter of the parts, then allgather them
      row = bytes / n;
      pulled = 2 * (n - 1) * row;
      rounds = 2;
      break;
    case CommunicationType::kReduce:
      row = bytes;
      pulled = (n - 1) * row;
      break;
  }
  CommCost c;
  c.p2p = true;
  c.latencyUs = teamSize > 1 ? rounds * ce.latencyUs : 0;
  c.bandwidthGBps = ce.bandwidthGBps;
  c.linkBytes = pulled;
  c.us = c.latencyUs + pulled / (ce.bandwidthGBps * kBytesPerUsPerGBps);
  // The local combination: own row and one peer's read, the result written (3 rows); with more
  // peers their rows are summed first (n - 1 read, 1 written) and combined with the own row.
  if (row > 0 && teamSize > 1) {
    const double traffic = teamSize == 2 ? 3 : n + 3;
    c.kernelUs = traffic * row / (ce.reduceGBps * kBytesPerUsPerGBps);
    c.us += c.kernelUs;
  }
  return c;
}

CommCost copyEngineP2PCost(const Machine& mc, double bytes) {
  return copyEngineCollectiveCost(mc, CommunicationType::kSendRecv, 2, bytes);  // one pull of `bytes`
}

CommCost collectiveCost(const Machine& mc, CommunicationType type, int64_t n, int64_t nodes, double bytes) {
  n = std::max<int64_t>(n, 1);
  nodes = std::clamp<int64_t>(nodes, 1, n);
  bool inter = nodes > 1;
  double dn = static_cast<double>(n);
  if (n == 1) {  // only the call: the local copy, when out of place, is the caller's (sim_graph.cpp)
    CommCost c;
    c.us = mc.nccl.callOverheadUs;
    return c;
  }
  // Point-to-point schedules: the root (or every rank) exchanges with the n - 1 others.
  if (type == CommunicationType::kSendRecv) {
    CommCost c = p2pCost(mc, bytes, inter);
    double f = mc.nccl.kindBandwidthFactor[static_cast<size_t>(type)];
    c.us = c.latencyUs + bytes / (c.bandwidthGBps * f * kBytesPerUsPerGBps) + mc.nccl.callOverheadUs;
    c.bandwidthGBps *= f;
    return c;
  }
  if (type == CommunicationType::kAllToAll || type == CommunicationType::kScatter ||
      type == CommunicationType::kGather) {
    double share = bytes * (dn - 1) / dn;
    CommCost c = p2pCost(mc, share, inter);
    c.latencyUs *= dn - 1;
    c.bandwidthGBps *= mc.nccl.kindBandwidthFactor[static_cast<size_t>(type)];
    c.us = c.latencyUs + share / (c.bandwidthGBps * kBytesPerUsPerGBps) + mc.nccl.callOverheadUs;
    return c;
  }

  const NcclModel& m = mc.nccl;
  double bus = m.intraNodeBusGBps;
  if (inter) bus = std::min(bus, mc.interNodeGBpsPerGpu());
  double channels = static_cast<double>(m.channels);
  bool allreduce = type == CommunicationType::kAllreduce;
  double nsteps = allreduce ? 2 * (dn - 1)
                  : (type == CommunicationType::kAllgather || type == CommunicationType::kReduceScatter) ? dn - 1
                                                                                                          : dn;
  double inter_steps = !inter ? 0 : allreduce ? 2.0 * static_cast<double>(nodes - 1) : static_cast<double>(nodes - 1);
  double eff = m.bandwidthEfficiency.at(std::max(bytes, 1.0)) * m.kindBandwidthFactor[static_cast<size_t>(type)];

  CommCost best;
  best.us = std::numeric_limits<double>::infinity();
  for (NcclAlgorithm a : m.algorithms) {
    if (a == NcclAlgorithm::kTree && !allreduce) continue;  // NCCL's tree runs Allreduce only
    size_t ai = static_cast<size_t>(a);
    for (NcclProtocol p : m.protocols) {
      size_t pi = static_cast<size_t>(p);
      double lat = 0, algbw = 0;
      if (a == NcclAlgorithm::kRing) {
        lat = m.baseLatencyUs[ai][pi] + (nsteps - inter_steps) * m.intraStepLatencyUs[ai][pi] +
              inter_steps * m.interStepLatencyUs[ai][pi];
        double b = m.protocolBusFactor[pi] * bus;
        if (p == NcclProtocol::kLL) b = std::min(m.llMaxBusGBps, b);
        if (p == NcclProtocol::kLL128) b = std::min(b, channels * m.ll128MaxBusGBpsPerChannel);
        algbw = b * dn / nsteps;
      } else {
        double per_node = dn / static_cast<double>(nodes);
        lat = m.baseLatencyUs[ai][pi] + 2 * ((per_node - 1) * m.intraStepLatencyUs[ai][pi] +
                                             std::log2(static_cast<double>(nodes)) * m.interStepLatencyUs[ai][pi]);
        double b = std::min(bus, channels * m.treeMaxBusGBpsPerChannel) * m.treeProtocolFactor[pi];
        algbw = b * 0.5;
      }
      double bw = algbw * eff;
      double us = lat + bytes / (bw * kBytesPerUsPerGBps) + m.callOverheadUs;
      if (us < best.us) {
        best.us = us;
        best.latencyUs = lat;
        best.bandwidthGBps = bw;
        best.algorithm = a;
        best.protocol = p;
      }
    }
  }
  best.interNode = inter;
  double factor = allreduce ? 2 * (dn - 1) / dn
                  : (type == CommunicationType::kBroadcast || type == CommunicationType::kReduce) ? 1.0
                                                                                                   : (dn - 1) / dn;
  best.linkBytes = bytes * factor;
  return best;
}

}  // namespace braid::sim
