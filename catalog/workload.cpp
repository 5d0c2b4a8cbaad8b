// The catalog's registry and the validation every workload shares (docs/WORKLOADS.md). The
// builders live in one file per family (collectives, stream, overlap, tensor_parallel).
#include "catalog/workload.h"

#include <algorithm>

#include "catalog/builder.h"
#include "ir/checked_math.h"
#include "ir/error.h"

namespace braid {

namespace catalog {
namespace {

constexpr int64_t kMaxDevices = 8192;
using braid::kMaxStreams;  // ir/checked_math.h: the one bound on streams per rank (4096)
// Keeps products of two sizes (element counts, byte counts) inside int64_t.
constexpr int64_t kMaxSize = int64_t{1} << 31;

std::string paramsStr(const WorkloadParams& p) {
  return "S=" + std::to_string(p.streams) + ", D=" + std::to_string(p.devices);
}

void checkCommon(const std::string& name, const WorkloadParams& p) {
  if (p.devices <= 0 || p.devices > kMaxDevices)
    throw Error(name + " needs 1 <= devices <= " + std::to_string(kMaxDevices) + ", got " + std::to_string(p.devices));
  if (p.streams <= 0 || p.streams > kMaxStreams)
    throw Error(name + " needs 1 <= streams <= " + std::to_string(kMaxStreams) + ", got " + std::to_string(p.streams));
  if (p.pool < 0 || p.pool > kMaxStreams)
    throw Error(name + " needs 0 <= pool <= " + std::to_string(kMaxStreams) + " (0: one stream per chunk), got " +
                std::to_string(p.pool));
  for (auto [what, v] : {std::pair<const char*, int64_t>{"m", p.m}, {"k", p.k}, {"n", p.n}}) {
    if (v <= 0 || v > kMaxSize)
      throw Error(name + " needs 1 <= " + what + " <= " + std::to_string(kMaxSize) + ", got " + what + "=" +
                  std::to_string(v));
  }
  if (p.tp < 0 || p.tp > p.devices)
    throw Error(name + " needs 0 <= tp <= devices, got tp=" + std::to_string(p.tp) + " (" + paramsStr(p) + ")");
}

}  // namespace

void needDivisible(const std::string& name, const char* what, int64_t value, const char* by, int64_t divisor,
                   const WorkloadParams& p) {
  if (value % divisor != 0)
    throw Error(name + " needs " + what + " divisible by " + by + " (" + what + "=" + std::to_string(value) + ", " +
                paramsStr(p) + ")");
}

void needChunks(const std::string& name, const char* what, int64_t value, int64_t chunks, const WorkloadParams& p) {
  const int64_t chunk = (value + chunks - 1) / chunks;
  if ((chunks - 1) * chunk >= value)
    throw Error(name + " needs " + what + "=" + std::to_string(value) + " to give " + std::to_string(chunks) +
                " non-empty chunks of ceilDiv(" + std::to_string(value) + ", " + std::to_string(chunks) + ") = " +
                std::to_string(chunk) + " (" + paramsStr(p) + ")");
}

int64_t meshColumns(const WorkloadParams& p) { return p.tp > 0 ? p.tp : (p.devices % 2 == 0 ? 2 : 1); }

DeviceMesh meshOf(int64_t devices, int64_t dp, int64_t tp) {
  std::vector<int64_t> ids(static_cast<size_t>(devices));
  for (int64_t i = 0; i < devices; ++i) ids[static_cast<size_t>(i)] = i;
  return DeviceMesh(std::move(ids), {dp, tp});
}

Builder::Builder(std::string name, const WorkloadParams& p) : Builder(std::move(name), p, DeviceMesh::range(p.devices)) {}

Builder::Builder(std::string name, const WorkloadParams& p, DeviceMesh mesh)
    : name_(std::move(name)), p_(p), fusion_(std::make_unique<Fusion>()), mesh_(std::move(mesh)) {
  p_.lowering.streams = poolOf(p);  // numberOfStreams: S unless --pool says otherwise (docs/WORKLOADS.md)
}

TensorView* Builder::input(const std::vector<int64_t>& shape) {
  std::vector<Scalar> extents(shape.begin(), shape.end());
  TensorView* tv = fusion_->makeTensor(extents, p_.dtype);
  tv->setDeviceMesh(mesh_);
  fusion_->addInput(tv);
  return tv;
}

TensorView* Builder::output(TensorView* tv, bool user_mesh) {
  if (user_mesh) tv->setDeviceMesh(mesh_);
  fusion_->addOutput(tv);
  return tv;
}

Workload Builder::finish() {
  Workload w;
  w.name = name_;
  w.params = p_;
  w.fusion = std::move(fusion_);
  return w;
}

}  // namespace catalog

const std::vector<WorkloadInfo>& workloadCatalog() {
  static const std::vector<WorkloadInfo> catalog = [] {
    std::vector<WorkloadInfo> c;
    for (auto family : {catalog::collectiveWorkloads, catalog::streamWorkloads, catalog::overlapWorkloads,
                        catalog::tensorParallelWorkloads})
      for (WorkloadInfo& w : family()) {
        // Validates what every workload needs, then builds.
        auto build = std::move(w.build);
        w.build = [name = w.name, build](const WorkloadParams& p) {
          catalog::checkCommon(name, p);
          return build(p);
        };
        c.push_back(std::move(w));
      }
    return c;
  }();
  return catalog;
}

Workload makeWorkload(const std::string& name, const WorkloadParams& params) {
  const auto& catalog = workloadCatalog();
  auto it = std::find_if(catalog.begin(), catalog.end(), [&](const WorkloadInfo& w) { return w.name == name; });
  if (it == catalog.end()) {
    std::string known;
    for (const auto& w : catalog) known += (known.empty() ? "" : ", ") + w.name;
    throw Error("unknown workload '" + name + "'; known workloads: " + known);
  }
  return it->build(params);
}

}  // namespace braid
