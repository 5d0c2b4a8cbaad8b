#include "sim/machine.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "ir/error.h"
#include "ir/host_ir.h"
#include "ir/input_file.h"
#include "sim/json_object.h"
#include "sim/machine_presets.h"

namespace braid::sim {

namespace {

using json = nlohmann::ordered_json;
constexpr const char* kSchema = "braid-machine/1";

using Obj = StrictJsonObject;

template <typename E, size_t N>
E enumOf(const std::string& name, const E (&all)[N], const char* (*nameOf)(E), const Obj& o, const std::string& field,
         const char* what) {
  for (E e : all)
    if (name == nameOf(e)) return e;
  std::string known;
  for (E e : all) known += (known.empty() ? "" : ", ") + std::string(nameOf(e));
  o.fail(field, std::string("unknown ") + what + " \"" + name + "\" (expected one of " + known + ")");
}

constexpr Precision kPrecisions[] = {Precision::kBf16, Precision::kFp16, Precision::kFp32, Precision::kFp64};
constexpr NcclAlgorithm kAlgorithms[] = {NcclAlgorithm::kRing, NcclAlgorithm::kTree};
constexpr NcclProtocol kProtocols[] = {NcclProtocol::kLL, NcclProtocol::kLL128, NcclProtocol::kSimple};
constexpr GemmWaves kGemmWaves[] = {GemmWaves::kWhole, GemmWaves::kFractional};
constexpr InputValues kInputValues[] = {InputValues::kIntegers, InputValues::kNormal};

PerPrecision readPerPrecision(Obj o) {
  PerPrecision p{};
  for (Precision x : kPrecisions) p[static_cast<size_t>(x)] = o.positive(precisionName(x));
  o.done();
  return p;
}

PerProtocol readPerProtocol(Obj o, bool fractions) {
  PerProtocol p{};
  for (NcclProtocol x : kProtocols)
    p[static_cast<size_t>(x)] = fractions ? o.fraction(ncclProtocolName(x)) : o.nonNegative(ncclProtocolName(x));
  o.done();
  return p;
}

std::array<PerProtocol, kNumNcclAlgorithms> readPerAlgorithm(Obj o) {
  std::array<PerProtocol, kNumNcclAlgorithms> a{};
  for (NcclAlgorithm x : kAlgorithms)
    a[static_cast<size_t>(x)] = readPerProtocol(o.child(ncclAlgorithmName(x)), false);
  o.done();
  return a;
}

EfficiencyCurve readCurve(Obj& parent, const std::string& key) {
  const json& a = parent.array(key);
  EfficiencyCurve c;
  std::string field = parent.at(key);
  if (a.empty()) parent.fail(field, "expected at least one [size, efficiency] point");
  for (size_t i = 0; i < a.size(); ++i) {
    std::string f = field + "[" + std::to_string(i) + "]";
    const json& p = a[i];
    if (!p.is_array() || p.size() != 2 || !p[0].is_number() || !p[1].is_number())
      parent.fail(f, "expected [size, efficiency]");
    double size = p[0].get<double>();
    double eff = p[1].get<double>();
    if (!(size > 0) || !std::isfinite(size)) parent.fail(f, "the size must be positive");
    if (!(eff > 0 && eff <= 1)) parent.fail(f, "the efficiency must be in (0, 1]");
    if (!c.points.empty() && size <= c.points.back().first)
      parent.fail(f, "sizes must increase from one point to the next");
    c.points.emplace_back(size, eff);
  }
  return c;
}

// [[idle ms, delay us], ...] into idle microseconds.
AfterIdle readAfterIdle(Obj& parent, const std::string& key) {
  const json& a = parent.array(key);
  const std::string field = parent.at(key);
  if (a.empty()) parent.fail(field, "expected at least one [idle ms, delay us] point (or leave after_idle out)");
  AfterIdle c;
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string f = field + "[" + std::to_string(i) + "]";
    const json& p = a[i];
    if (!p.is_array() || p.size() != 2 || !p[0].is_number() || !p[1].is_number()) parent.fail(f, "expected [idle ms, delay us]");
    const double idle = p[0].get<double>(), delay = p[1].get<double>();
    if (!(idle > 0) || !(idle <= 1e9)) parent.fail(f, "the idle time must be positive milliseconds, at most 1e9");
    if (!(delay >= 0) || !(delay <= 1e9)) parent.fail(f, "the delay must be a number of microseconds in [0, 1e9]");
    if (!c.points.empty() && idle * 1e3 <= c.points.back().first) parent.fail(f, "idle times must increase from one point to the next");
    c.points.emplace_back(idle * 1e3, delay);
  }
  return c;
}

json curveJson(const EfficiencyCurve& c) {
  json a = json::array();
  for (const auto& [s, e] : c.points) a.push_back({s, e});
  return a;
}

json perPrecisionJson(const PerPrecision& p) {
  json o = json::object();
  for (Precision x : kPrecisions) o[precisionName(x)] = p[static_cast<size_t>(x)];
  return o;
}

json perProtocolJson(const PerProtocol& p) {
  json o = json::object();
  for (NcclProtocol x : kProtocols) o[ncclProtocolName(x)] = p[static_cast<size_t>(x)];
  return o;
}

json perAlgorithmJson(const std::array<PerProtocol, kNumNcclAlgorithms>& a) {
  json o = json::object();
  for (NcclAlgorithm x : kAlgorithms) o[ncclAlgorithmName(x)] = perProtocolJson(a[static_cast<size_t>(x)]);
  return o;
}

LinkModel readLink(Obj o) {
  LinkModel l;
  l.bandwidthGBps = o.positive("bandwidth_gbps");
  l.latencyUs = o.nonNegative("latency_us");
  o.done();
  return l;
}

}  // namespace

double EfficiencyCurve::at(double size) const {
  if (points.empty()) return 1.0;
  if (size <= points.front().first) return points.front().second;
  if (size >= points.back().first) return points.back().second;
  auto hi = std::lower_bound(points.begin(), points.end(), size,
                             [](const std::pair<double, double>& p, double s) { return p.first < s; });
  auto lo = hi - 1;
  double t = (std::log10(size) - std::log10(lo->first)) / (std::log10(hi->first) - std::log10(lo->first));
  return lo->second + t * (hi->second - lo->second);
}

double AfterIdle::delayUs(double idleUs) const {
  if (points.empty() || !(idleUs > 0)) return 0;
  double x0 = 0, y0 = 0;
  for (const auto& [x, y] : points) {
    if (idleUs <= x) return y0 + (idleUs - x0) / (x - x0) * (y - y0);
    x0 = x, y0 = y;
  }
  return y0;
}

const char* precisionName(Precision p) {
  switch (p) {
    case Precision::kBf16:
      return "bf16";
    case Precision::kFp16:
      return "fp16";
    case Precision::kFp32:
      return "fp32";
    case Precision::kFp64:
      return "fp64";
  }
  return "?";
}

Precision precisionOf(DataType t) {
  switch (t) {
    case DataType::kBFloat16:
      return Precision::kBf16;
    case DataType::kHalf:
      return Precision::kFp16;
    case DataType::kDouble:
    case DataType::kInt64:
      return Precision::kFp64;
    case DataType::kFloat:
    case DataType::kInt32:
    case DataType::kBool:
      return Precision::kFp32;
  }
  return Precision::kFp32;
}

const char* gemmWavesName(GemmWaves w) { return w == GemmWaves::kWhole ? "whole" : "fractional"; }

const char* ncclAlgorithmName(NcclAlgorithm a) { return a == NcclAlgorithm::kRing ? "ring" : "tree"; }

const char* ncclProtocolName(NcclProtocol p) {
  switch (p) {
    case NcclProtocol::kLL:
      return "LL";
    case NcclProtocol::kLL128:
      return "LL128";
    case NcclProtocol::kSimple:
      return "Simple";
  }
  return "?";
}

double Machine::interNodeGBpsPerGpu() const {
  return nic.bandwidthGBps * static_cast<double>(topology.nicsPerNode) / static_cast<double>(topology.gpusPerNode);
}

CopyEngineModel defaultCopyEngines(const Machine& m) {
  // As fitted on two H200s to braid calibrate's copy-engine collectives (docs/MACHINES.md, the
  // h200 preset's copy_engines): pulls at 0.82 of NVLink's one-direction bandwidth, 28 us per
  // round of handshakes, the local reduction's traffic at 0.75 of the HBM peak.
  CopyEngineModel c;
  c.bandwidthGBps = 0.82 * m.nvlink.bandwidthGBps;
  c.latencyUs = 28;
  c.reduceGBps = 0.75 * m.gpu.hbmGBps;
  c.hostCallUs = 180;  // braid run --host-profile on two H200s: 207 us per post against NCCL's 25
  return c;
}

Machine machineFromJson(const std::string& text, const std::string& file) {
  json doc = parseJsonDocument(text, file);
  Obj root(doc, "", file);
  std::string schema = root.str("schema");
  if (schema != kSchema) root.fail("schema", "expected \"" + std::string(kSchema) + "\", got \"" + schema + "\"");
  Machine m;
  m.name = root.str("name");
  m.description = root.str("description");
  {
    Obj t = root.child("topology");
    m.topology.nodes = t.count("nodes");
    m.topology.gpusPerNode = t.count("gpus_per_node");
    m.topology.nicsPerNode = t.count("nics_per_node", 0);
    t.done();
  }
  {
    Obj g = root.child("gpu");
    m.gpu.model = g.str("model");
    m.gpu.sms = g.count("sms");
    m.gpu.memoryGB = g.positive("memory_gb");
    m.gpu.matmulTflops = readPerPrecision(g.child("matmul_tflops"));
    m.gpu.vectorTflops = readPerPrecision(g.child("vector_tflops"));
    m.gpu.hbmGBps = g.positive("hbm_gbps");
    m.gpu.matmulEfficiency = readCurve(g, "matmul_efficiency");
    m.gpu.vectorEfficiency = readCurve(g, "vector_efficiency");
    m.gpu.memoryEfficiency = readCurve(g, "memory_efficiency");
    const json& tiles = g.array("gemm_tiles");
    if (tiles.empty()) g.fail(g.at("gemm_tiles"), "expected at least one tile");
    for (size_t i = 0; i < tiles.size(); ++i) {
      Obj t(tiles[i], g.at("gemm_tiles") + "[" + std::to_string(i) + "]", file);
      GemmTile tile;
      tile.m = t.count("m");
      tile.n = t.count("n");
      tile.efficiency = t.fraction("efficiency");
      t.done();
      m.gpu.gemmTiles.push_back(tile);
    }
    if (g.has("gemm_waves"))  // optional: "whole" by default
      m.gpu.gemmWaves = enumOf(g.str("gemm_waves"), kGemmWaves, gemmWavesName, g, g.at("gemm_waves"), "wave model");
    if (g.has("gemm_latency_us")) m.gpu.gemmLatencyUs = g.nonNegative("gemm_latency_us");
    if (g.has("gemm_operands"))  // optional: what the GEMM constants were measured on
      m.gpu.gemmOperands = enumOf(g.str("gemm_operands"), kInputValues, inputValuesName, g, g.at("gemm_operands"),
                                  "kind of operand values");
    m.gpu.launchLatencyUs = g.nonNegative("launch_latency_us");
    m.gpu.kernelMinUs = g.nonNegative("kernel_min_us");
    if (g.has("power_cap")) {  // optional: without it the GPU stays at full clocks
      Obj p = g.child("power_cap");
      m.gpu.power.capLoad = p.fraction("cap_load");
      if (m.gpu.power.capLoad >= 1)
        p.fail(p.at("cap_load"), "expected a number under 1 (a cap a full load never reaches is no cap: leave power_cap out)");
      m.gpu.power.timeConstantUs = p.positive("time_constant_ms") * 1e3;
      m.gpu.power.cappedSlowdown = p.num("capped_slowdown", 1, 10);
      if (p.has("gemm_power")) m.gpu.power.gemmPower = readCurve(p, "gemm_power");
      p.done();
    }
    if (g.has("measured_gemms")) {  // optional: shapes timed by braid calibrate
      const json& list = g.array("measured_gemms");
      for (size_t i = 0; i < list.size(); ++i) {
        const std::string where = g.at("measured_gemms") + "[" + std::to_string(i) + "]";
        Obj e(list[i], where, file);
        MeasuredGemm mg;
        mg.shape = readGemmShape(e);
        mg.us = e.positive("us");
        e.done();
        for (const MeasuredGemm& seen : m.gpu.measuredGemms)
          if (seen.shape == mg.shape) e.fail(where, "this shape is listed twice");
        m.gpu.measuredGemms.push_back(mg);
      }
    }
    g.done();
  }
  {
    Obj h = root.child("host");
    m.host.atenOpUs = h.nonNegative("aten_op_us");
    m.host.kernelLaunchUs = h.nonNegative("kernel_launch_us");
    m.host.communicationCallUs = h.nonNegative("communication_call_us");
    m.host.streamCallUs = h.nonNegative("stream_call_us");
    m.host.allocationUs = h.nonNegative("allocation_us");
    m.host.viewUs = h.nonNegative("view_us");
    m.host.controlUs = h.nonNegative("control_us");
    if (h.has("after_idle")) m.host.afterIdle = readAfterIdle(h, "after_idle");  // optional
    if (h.has("after_idle_graph")) m.host.afterIdleGraph = readAfterIdle(h, "after_idle_graph");
    h.done();
  }
  m.nvlink = readLink(root.child("nvlink"));
  m.nic = readLink(root.child("nic"));
  {
    Obj n = root.child("nccl");
    const json& algos = n.array("algorithms");
    for (size_t i = 0; i < algos.size(); ++i) {
      std::string f = n.at("algorithms") + "[" + std::to_string(i) + "]";
      if (!algos[i].is_string()) n.fail(f, "expected a string");
      m.nccl.algorithms.push_back(enumOf(algos[i].get<std::string>(), kAlgorithms, ncclAlgorithmName, n, f, "algorithm"));
    }
    if (std::find(m.nccl.algorithms.begin(), m.nccl.algorithms.end(), NcclAlgorithm::kRing) == m.nccl.algorithms.end())
      n.fail(n.at("algorithms"), "must include \"ring\" (every collective can run as a ring)");
    const json& protos = n.array("protocols");
    for (size_t i = 0; i < protos.size(); ++i) {
      std::string f = n.at("protocols") + "[" + std::to_string(i) + "]";
      if (!protos[i].is_string()) n.fail(f, "expected a string");
      m.nccl.protocols.push_back(enumOf(protos[i].get<std::string>(), kProtocols, ncclProtocolName, n, f, "protocol"));
    }
    if (m.nccl.protocols.empty()) n.fail(n.at("protocols"), "expected at least one protocol");
    m.nccl.channels = n.count("channels");
    m.nccl.smsPerChannel = n.count("sms_per_channel", 0);
    m.nccl.intraNodeBusGBps = n.positive("intra_node_bus_gbps");
    m.nccl.baseLatencyUs = readPerAlgorithm(n.child("base_latency_us"));
    m.nccl.intraStepLatencyUs = readPerAlgorithm(n.child("intra_step_latency_us"));
    m.nccl.interStepLatencyUs = readPerAlgorithm(n.child("inter_step_latency_us"));
    m.nccl.llMaxBusGBps = n.positive("ll_max_bus_gbps");
    m.nccl.ll128MaxBusGBpsPerChannel = n.positive("ll128_max_bus_gbps_per_channel");
    m.nccl.protocolBusFactor = readPerProtocol(n.child("protocol_bus_factor"), true);
    m.nccl.treeMaxBusGBpsPerChannel = n.positive("tree_max_bus_gbps_per_channel");
    m.nccl.treeProtocolFactor = readPerProtocol(n.child("tree_protocol_factor"), true);
    m.nccl.bandwidthEfficiency = readCurve(n, "bandwidth_efficiency");
    m.nccl.callOverheadUs = n.nonNegative("call_overhead_us");
    if (n.has("kind_bandwidth_factor")) {  // optional: 1 for every kind not given
      Obj k = n.child("kind_bandwidth_factor");
      for (int t = 0; t < kNumCommunicationTypes; ++t) {
        const char* name = communicationTypeName(static_cast<CommunicationType>(t));
        if (k.has(name)) m.nccl.kindBandwidthFactor[static_cast<size_t>(t)] = k.num(name, 0, 10, true);
      }
      k.done();
    }
    n.done();
  }
  if (root.has("copy_engines")) {
    Obj c = root.child("copy_engines");
    m.copyEngines.bandwidthGBps = c.positive("bandwidth_gbps");
    m.copyEngines.latencyUs = c.nonNegative("latency_us");
    m.copyEngines.reduceGBps = c.positive("reduce_gbps");
    m.copyEngines.hostCallUs = c.has("host_call_us") ? c.nonNegative("host_call_us") : defaultCopyEngines(m).hostCallUs;
    c.done();
  } else {
    m.copyEngines = defaultCopyEngines(m);
  }
  {
    Obj c = root.child("contention");
    m.contention.smSharing = c.boolean("sm_sharing");
    m.contention.smSharingWaves = c.boolean("sm_sharing_waves");
    m.contention.hbmSharing = c.boolean("hbm_sharing");
    m.contention.linkSharing = c.boolean("link_sharing");
    m.contention.commRateUnderCompute = c.fraction("comm_rate_under_compute");
    if (c.has("comm_waits_for_dispatch")) m.contention.commWaitsForDispatch = c.boolean("comm_waits_for_dispatch");
    if (c.has("kernels_wait_for_dispatch"))
      m.contention.kernelsWaitForDispatch = c.boolean("kernels_wait_for_dispatch");
    if (c.has("copy_engine_compute_slowdown"))
      m.contention.copyEngineComputeSlowdown = c.nonNegative("copy_engine_compute_slowdown");
    if (c.has("copy_engine_rate_under_compute"))
      m.contention.copyEngineRateUnderCompute = c.fraction("copy_engine_rate_under_compute");
    c.done();
  }
  root.done();
  if (m.nccl.channels * m.nccl.smsPerChannel >= m.gpu.sms)
    throw Error(file + ": nccl.channels: " + std::to_string(m.nccl.channels) + " channels x " +
                std::to_string(m.nccl.smsPerChannel) + " SMs leave no SM of the " + std::to_string(m.gpu.sms) +
                " for computation");
  return m;
}

std::string machineToJson(const Machine& m) {
  json j;
  j["schema"] = kSchema;
  j["name"] = m.name;
  j["description"] = m.description;
  j["topology"] = {{"nodes", m.topology.nodes},
                   {"gpus_per_node", m.topology.gpusPerNode},
                   {"nics_per_node", m.topology.nicsPerNode}};
  json tiles = json::array();
  for (const auto& t : m.gpu.gemmTiles) tiles.push_back({{"m", t.m}, {"n", t.n}, {"efficiency", t.efficiency}});
  j["gpu"] = {{"model", m.gpu.model},
              {"sms", m.gpu.sms},
              {"memory_gb", m.gpu.memoryGB},
              {"matmul_tflops", perPrecisionJson(m.gpu.matmulTflops)},
              {"vector_tflops", perPrecisionJson(m.gpu.vectorTflops)},
              {"hbm_gbps", m.gpu.hbmGBps},
              {"matmul_efficiency", curveJson(m.gpu.matmulEfficiency)},
              {"vector_efficiency", curveJson(m.gpu.vectorEfficiency)},
              {"memory_efficiency", curveJson(m.gpu.memoryEfficiency)},
              {"gemm_tiles", tiles},
              {"launch_latency_us", m.gpu.launchLatencyUs},
              {"kernel_min_us", m.gpu.kernelMinUs}};
  if (m.gpu.gemmWaves != GemmWaves::kWhole) j["gpu"]["gemm_waves"] = gemmWavesName(m.gpu.gemmWaves);
  if (m.gpu.gemmLatencyUs != 0) j["gpu"]["gemm_latency_us"] = m.gpu.gemmLatencyUs;
  if (m.gpu.gemmOperands) j["gpu"]["gemm_operands"] = inputValuesName(*m.gpu.gemmOperands);
  if (m.gpu.power.enabled()) {
    j["gpu"]["power_cap"] = {{"cap_load", m.gpu.power.capLoad},
                             {"time_constant_ms", m.gpu.power.timeConstantUs / 1e3},
                             {"capped_slowdown", m.gpu.power.cappedSlowdown}};
    if (!m.gpu.power.gemmPower.points.empty())
      j["gpu"]["power_cap"]["gemm_power"] = curveJson(m.gpu.power.gemmPower);
  }
  if (!m.gpu.measuredGemms.empty()) {
    json list = json::array();
    for (const MeasuredGemm& g : m.gpu.measuredGemms) {
      json e = gemmShapeJson(g.shape);
      e["us"] = g.us;
      list.push_back(e);
    }
    j["gpu"]["measured_gemms"] = list;
  }
  j["host"] = {{"aten_op_us", m.host.atenOpUs},
               {"kernel_launch_us", m.host.kernelLaunchUs},
               {"communication_call_us", m.host.communicationCallUs},
               {"stream_call_us", m.host.streamCallUs},
               {"allocation_us", m.host.allocationUs},
               {"view_us", m.host.viewUs},
               {"control_us", m.host.controlUs}};
  for (const auto& [key, curve] : {std::pair{"after_idle", &m.host.afterIdle}, std::pair{"after_idle_graph", &m.host.afterIdleGraph}}) {
    if (curve->empty()) continue;
    json a = json::array();
    for (const auto& [idle, delay] : curve->points) a.push_back({idle / 1e3, delay});
    j["host"][key] = a;
  }
  j["nvlink"] = {{"bandwidth_gbps", m.nvlink.bandwidthGBps}, {"latency_us", m.nvlink.latencyUs}};
  j["nic"] = {{"bandwidth_gbps", m.nic.bandwidthGBps}, {"latency_us", m.nic.latencyUs}};
  json algos = json::array();
  for (auto a : m.nccl.algorithms) algos.push_back(ncclAlgorithmName(a));
  json protos = json::array();
  for (auto p : m.nccl.protocols) protos.push_back(ncclProtocolName(p));
  j["nccl"] = {{"algorithms", algos},
               {"protocols", protos},
               {"channels", m.nccl.channels},
               {"sms_per_channel", m.nccl.smsPerChannel},
               {"intra_node_bus_gbps", m.nccl.intraNodeBusGBps},
               {"base_latency_us", perAlgorithmJson(m.nccl.baseLatencyUs)},
               {"intra_step_latency_us", perAlgorithmJson(m.nccl.intraStepLatencyUs)},
               {"inter_step_latency_us", perAlgorithmJson(m.nccl.interStepLatencyUs)},
               {"ll_max_bus_gbps", m.nccl.llMaxBusGBps},
               {"ll128_max_bus_gbps_per_channel", m.nccl.ll128MaxBusGBpsPerChannel},
               {"protocol_bus_factor", perProtocolJson(m.nccl.protocolBusFactor)},
               {"tree_max_bus_gbps_per_channel", m.nccl.treeMaxBusGBpsPerChannel},
               {"tree_protocol_factor", perProtocolJson(m.nccl.treeProtocolFactor)},
               {"bandwidth_efficiency", curveJson(m.nccl.bandwidthEfficiency)},
               {"call_overhead_us", m.nccl.callOverheadUs}};
  if (m.nccl.kindBandwidthFactor != uniformKindFactors()) {
    json k = json::object();
    for (int t = 0; t < kNumCommunicationTypes; ++t)
      k[communicationTypeName(static_cast<CommunicationType>(t))] = m.nccl.kindBandwidthFactor[static_cast<size_t>(t)];
    j["nccl"]["kind_bandwidth_factor"] = k;
  }
  j["copy_engines"] = {{"bandwidth_gbps", m.copyEngines.bandwidthGBps},
                       {"latency_us", m.copyEngines.latencyUs},
                       {"reduce_gbps", m.copyEngines.reduceGBps},
                       {"host_call_us", m.copyEngines.hostCallUs}};
  j["contention"] = {{"sm_sharing", m.contention.smSharing},
                     {"sm_sharing_waves", m.contention.smSharingWaves},
                     {"hbm_sharing", m.contention.hbmSharing},
                     {"link_sharing", m.contention.linkSharing},
                     {"comm_rate_under_compute", m.contention.commRateUnderCompute},
                     {"comm_waits_for_dispatch", m.contention.commWaitsForDispatch},
                     {"kernels_wait_for_dispatch", m.contention.kernelsWaitForDispatch},
                     {"copy_engine_compute_slowdown", m.contention.copyEngineComputeSlowdown},
                     {"copy_engine_rate_under_compute", m.contention.copyEngineRateUnderCompute}};
  return j.dump(1);
}

std::vector<std::string> machinePresetNames() {
  std::vector<std::string> names;
  for (const auto& p : detail::machinePresets()) names.push_back(p.name);
  std::sort(names.begin(), names.end());
  return names;
}

std::string machinePresetJson(const std::string& name) {
  for (const auto& p : detail::machinePresets())
    if (p.name == name) return p.json;
  return "";
}

Machine loadMachine(const std::string& nameOrPath) {
  std::string preset = machinePresetJson(nameOrPath);
  if (!preset.empty()) return machineFromJson(preset, "preset " + nameOrPath);
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_regular_file(nameOrPath, ec)) {
    std::string names;
    for (const auto& n : machinePresetNames()) names += (names.empty() ? "" : ", ") + n;
    throw Error("--machine '" + nameOrPath + "' is neither a preset (" + names + ") nor a machine file");
  }
  return machineFromJson(readInputFile(nameOrPath, "machine file"), nameOrPath);
}

}  // namespace braid::sim
