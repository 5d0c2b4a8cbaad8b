// The measurement plan of `braid calibrate --measure` (see measure_plan.h).
#include "sim/measure_plan.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>
#include <tuple>

#include "ir/error.h"

namespace braid::sim {
namespace {

bool has(const MeasurePlanOptions& o, const char* part) {
  return std::find(o.parts.begin(), o.parts.end(), part) != o.parts.end();
}

// The knots of a curve, and unless quick the geometric midpoints between neighbours.
std::vector<double> targets(const EfficiencyCurve& c, bool quick) {
  std::vector<double> out;
  for (size_t i = 0; i < c.points.size(); ++i) {
    if (i > 0 && !quick) out.push_back(std::sqrt(c.points[i - 1].first * c.points[i].first));
    out.push_back(c.points[i].first);
  }
  return out;
}

int64_t roundTo(double x, int64_t step) {
  return std::max<int64_t>(step, static_cast<int64_t>(std::llround(x / static_cast<double>(step))) * step);
}

// Message sizes from lo to hi (bytes), powers of two stepping x2 (quick x4), each a multiple of
// 4 bytes per member of a team of `team`.
std::vector<double> messageSizes(double lo, double hi, int64_t team, bool quick) {
  std::vector<double> out;
  const double unit = 4.0 * static_cast<double>(team);
  for (double b = std::exp2(std::ceil(std::log2(lo))); b <= hi; b *= quick ? 4 : 2) {
    double s = std::floor(b / unit) * unit;
    if (s >= unit && (out.empty() || out.back() != s)) out.push_back(s);
  }
  return out;
}

}  // namespace

std::vector<std::string> parseMeasureParts(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream ss(list);
  for (std::string v; std::getline(ss, v, ',');) {
    if (std::find(std::begin(kMeasureParts), std::end(kMeasureParts), v) == std::end(kMeasureParts)) {
      std::string known;
      for (const char* p : kMeasureParts) known += (known.empty() ? "" : ", ") + std::string(p);
      throw Error("--only: unknown part '" + v + "' (expected " + known + ")");
    }
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  }
  if (out.empty()) throw Error("--only: no parts in '" + list + "'");
  return out;
}

std::vector<std::array<int64_t, 3>> parseGemmShapes(const std::string& list) {
  std::vector<std::array<int64_t, 3>> out;
  std::stringstream ss(list);
  for (std::string v; std::getline(ss, v, ',');) {
    std::array<int64_t, 3> s{};
    std::stringstream dims(v);
    std::string d;
    int i = 0;
    bool ok = true;
    for (; std::getline(dims, d, 'x'); ++i) {
      if (i >= 3 || d.empty() || d.find_first_not_of("0123456789") != std::string::npos || d.size() > 9) {
        ok = false;
        break;
      }
      s[static_cast<size_t>(i)] = std::stoll(d);
      if (s[static_cast<size_t>(i)] <= 0) ok = false;
    }
    if (!ok || i != 3)
      throw Error("--gemm-shapes: '" + v + "' is not MxNxK (three positive sizes below 10^9, such as 16384x4096x4096)");
    if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
  }
  if (out.empty()) throw Error("--gemm-shapes: no shapes in '" + list + "'");
  return out;
}

std::vector<DataType> parseMeasureDtypes(const std::string& list) {
  static const std::pair<const char*, DataType> kNames[] = {{"bf16", DataType::kBFloat16},
                                                           {"fp16", DataType::kHalf},
                                                           {"fp32", DataType::kFloat},
                                                           {"fp64", DataType::kDouble}};
  std::vector<DataType> out;
  std::stringstream ss(list);
  for (std::string v; std::getline(ss, v, ',');) {
    auto it = std::find_if(std::begin(kNames), std::end(kNames), [&](const auto& n) { return v == n.first; });
    if (it == std::end(kNames)) throw Error("--dtypes: unknown dtype '" + v + "' (expected bf16, fp16, fp32 or fp64)");
    if (std::find(out.begin(), out.end(), it->second) == out.end()) out.push_back(it->second);
  }
  if (out.empty()) throw Error("--dtypes: no dtypes in '" + list + "'");
  return out;
}

void checkMeasurePlanOptions(const MeasurePlanOptions& o) {
  if (!(o.minBytes >= 4)) throw Error("--min-bytes must be at least 4");
  if (!(o.maxBytes >= o.minBytes))
    throw Error("--max-bytes (" + std::to_string(static_cast<int64_t>(o.maxBytes)) + ") is below --min-bytes (" +
                std::to_string(static_cast<int64_t>(o.minBytes)) + ")");
  if (!(o.maxBytes <= 64.0 * 1024 * 1024 * 1024)) throw Error("--max-bytes must be at most 64 GiB");
  if (!(o.maxGemmFlops > 0 && o.maxGemmFlops < 1e18)) throw Error("--max-gemm-flops must be positive (and below 1e18)");
  if (o.dtypes.empty()) throw Error("--dtypes: no dtypes");
  if (o.parts.empty()) throw Error("--only: no parts");
  if (o.world < 1 || o.ranksPerNode < 1) throw Error("internal: a world needs ranks");
  for (const auto& p : o.parts)
    if (std::find_if(std::begin(kMeasureParts), std::end(kMeasureParts), [&](const char* k) { return p == k; }) ==
        std::end(kMeasureParts))
      throw Error("--only: unknown part '" + p + "'");
  if (!o.extraGemms.empty() && !has(o, "gemm") && !has(o, "overlap"))
    throw Error("--gemm-shapes needs the gemm or overlap part (--only leaves both out)");
  // A workload's GEMM is measured whatever its flops, but its operands must fit one device: at
  // most 2^34 elements each (a 32 GiB bf16 operand; three of them fill an H200's 141 GB).
  for (const auto& [m, n, k] : o.extraGemms)
    if (std::max({static_cast<double>(m) * k, static_cast<double>(k) * n, static_cast<double>(m) * n}) > 0x1p34)
      throw Error("--gemm-shapes: " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
                  " has an operand of more than 2^34 elements: it does not fit a GPU");
}

Measurements planMeasurements(const Machine& base, const MeasurePlanOptions& o) {
  checkMeasurePlanOptions(o);
  Measurements m;
  m.gpu = base.gpu.model;
  if (has(o, "gemm")) {
    // Square GEMMs, and (not quick) each long side in turn, 4:1:1 (tall m, as a sharded activation
    // times a weight; wide n; deep k), of 2 m n k ~ each target. Sizes from 1024 up are multiples
    // of 256, as workloads' are: on an H200 GEMMs of sizes off that grid (3712^3, 2496^3) ran 5-14%
    // below aligned ones of the same flops, and a curve fitted to them over-predicted aligned
    // shapes it had not measured by 8% median, where one fitted to 26 aligned shapes of many
    // aspects missed them by 4% (ACCURACY.md, tenth session). Below 1024, multiples of 64 (else
    // the smallest knots could not be hit).
    auto side = [](double x) { return x >= 1024 ? roundTo(x, 256) : roundTo(x, 64); };
    std::set<std::tuple<int64_t, int64_t, int64_t>> shapes;
    for (double f : targets(base.gpu.matmulEfficiency, o.quick)) {
      if (f > o.maxGemmFlops) continue;
      int64_t s = side(std::cbrt(f / 2));
      shapes.insert({s, s, s});
      if (!o.quick) {
        int64_t t = side(std::cbrt(f / 8));
        shapes.insert({4 * t, t, t});
        shapes.insert({t, 4 * t, t});
        shapes.insert({t, t, 4 * t});
      }
    }
    for (DataType d : o.dtypes)
      for (const auto& [mm, nn, kk] : shapes) {
        GemmMeasurement g;
        g.shape = {mm, nn, kk, 1, d};
        if (g.shape.flops() <= o.maxGemmFlops * 1.5) m.gemms.push_back(g);
      }
    for (DataType d : o.dtypes)  // asked for by name: measured whatever their size
      for (const auto& [mm, nn, kk] : o.extraGemms)
        if (!shapes.count({mm, nn, kk})) m.gemms.push_back({{mm, nn, kk, 1, d}, 0});
  }
  if (has(o, "copy"))
    for (double b : targets(base.gpu.memoryEfficiency, o.quick))
      if (b <= o.maxBytes) m.copies.push_back({static_cast<double>(roundTo(b, 1024)), 0});
  std::vector<int64_t> teams;
  for (int64_t t = 2; t <= o.world; t *= 2) teams.push_back(t);
  if (o.world >= 2 && (teams.empty() || teams.back() != o.world)) teams.push_back(o.world);
  if (has(o, "collective"))
    for (int64_t t : teams)
      for (CommunicationType k : {CommunicationType::kAllgather, CommunicationType::kAllreduce,
                                  CommunicationType::kReduceScatter, CommunicationType::kBroadcast,
                                  CommunicationType::kReduce, CommunicationType::kScatter, CommunicationType::kGather,
                                  CommunicationType::kAllToAll})
        for (double b : messageSizes(o.minBytes, o.maxBytes, t, o.quick)) {
          CollectiveMeasurement c;
          c.kind = k;
          c.team = t;
          c.nodes = (t + o.ranksPerNode - 1) / o.ranksPerNode;
          c.bytes = b;
          m.collectives.push_back(c);
        }
  if (has(o, "p2p") && o.world >= 2) {
    std::vector<bool> where;
    if (o.ranksPerNode >= 2) where.push_back(false);
    if (o.world > o.ranksPerNode) where.push_back(true);
    for (bool inter : where)
      for (double b : messageSizes(o.minBytes, o.maxBytes, 1, o.quick)) m.p2p.push_back({b, inter, 0});
  }
  if (has(o, "host"))
    for (HostCall c : kHostCalls) m.host.push_back({c, 0});
  if (has(o, "overlap") && o.world >= 2 && o.streams) {
    // GEMMs long enough to cover the collective beside the collectives tensor parallelism posts,
    // on NCCL and (when the ranks can) on the copy engines; and the GEMMs asked for by shape
    // (--gemm-shapes: a workload's own) beside the same collectives, since how much a GEMM slows
    // depends on its shape. The message is 64 MiB on NCCL; 256 MiB on the copy engines, whose
    // posts each spend ~200 us of host time in the store (a large transfer keeps the engines busy
    // longer than that, so the collectives still run back to back); or the largest allowed.
    auto messageBytes = [&](double want) {
      double per = 4.0 * static_cast<double>(o.world);
      return std::floor(std::min(want, o.maxBytes) / per) * per;
    };
    std::vector<GemmShape> gemms = {{8192, 8192, 4096, 1, DataType::kBFloat16}};
    if (!o.quick) gemms.push_back({4096, 4096, 4096, 1, DataType::kBFloat16});
    for (const auto& [mm, nn, kk] : o.extraGemms) {
      GemmShape g{mm, nn, kk, 1, o.dtypes.front()};
      if (std::find(gemms.begin(), gemms.end(), g) == gemms.end()) gemms.push_back(g);
    }
    std::vector<CommunicationType> kinds = {CommunicationType::kAllreduce};
    if (!o.quick) kinds.insert(kinds.end(), {CommunicationType::kAllgather, CommunicationType::kReduceScatter});
    std::vector<bool> transports = {false};
    if (o.copyEngines) transports.push_back(true);
    for (bool engines : transports) {
      double bytes = messageBytes((engines ? 256.0 : 64.0) * 1024 * 1024);
      if (bytes < 4.0 * static_cast<double>(o.world)) continue;
      for (const auto& g : gemms)
        for (CommunicationType k : kinds) {
          OverlapMeasurement ov;
          ov.gemm = g;
          ov.copyEngines = engines;
          ov.commHighPriority = o.commHighPriority;
          ov.collective.kind = k;
          ov.collective.team = o.world;
          ov.collective.nodes = (o.world + o.ranksPerNode - 1) / o.ranksPerNode;
          ov.collective.bytes = bytes;
          m.overlaps.push_back(ov);
        }
    }
  }
  if (has(o, "copy_engine") && o.copyEngines && o.world >= 2)
    for (CommunicationType k : {CommunicationType::kAllgather, CommunicationType::kReduceScatter,
                                CommunicationType::kAllreduce})
      for (double b : messageSizes(std::max(o.minBytes, 1024.0 * 1024), o.maxBytes, o.world, o.quick))
        m.copyEngine.push_back({k, o.world, b, 0});
  if (has(o, "power") && o.streams) {
    // A GEMM that fills every SM for over a millisecond: the load the cap is defined against.
    const GemmShape g{8192, 8192, 8192, 1, o.dtypes.front()};
    m.power.push_back({g, 400, 0, 1, 1, {}});
    std::vector<double> gaps = o.quick ? std::vector<double>{5, 20} : std::vector<double>{2, 5, 10, 20, 50};
    for (double gap : gaps) m.power.push_back({g, 20, gap, 10, 1, {}});
    // Sub-millisecond idle after every GEMM: where a program's mix of GEMMs and lighter work
    // starts to reach the cap.
    std::vector<double> duties = o.quick ? std::vector<double>{0.9, 0.8} : std::vector<double>{0.95, 0.9, 0.85, 0.8, 0.7};
    for (double duty : duties) m.power.push_back({g, 300, 0, 1, duty, {}});
    // Smaller GEMMs draw less power per SM (gpu.power_cap.gemm_power): each sustained once.
    std::vector<int64_t> sizes = o.quick ? std::vector<int64_t>{4096} : std::vector<int64_t>{3072, 4096, 6144};
    for (int64_t n : sizes) m.power.push_back({GemmShape{n, n, n, 1, o.dtypes.front()}, 300, 0, 1, 1, {}});
  }
  if (has(o, "after_idle") && o.streams) {
    // The host after idle (host.after_idle): 100 host operations (about 0.5 ms of host work, longer
    // than the slow start lasts, so all the time it loses is in the total) after each idle time,
    // and right after back-to-back work for the reference; launched, then captured once and
    // replayed as a CUDA graph.
    std::vector<double> idles = o.quick ? std::vector<double>{0, 2, 20, 100}
                                        : std::vector<double>{0, 0.5, 1, 2, 5, 10, 20, 50, 100};
    for (bool graph : {false, true})
      for (double idle : idles) m.afterIdle.push_back({idle, 100, graph, {}});
  }
  return m;
}

}  // namespace braid::sim
