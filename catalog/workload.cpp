// The workload catalog (docs/WORKLOADS.md): named fusions with their shardings and stream
// schedules. Each builder validates its sizes, then builds the fusion with ir/ops.h:
// every tensor gets the mesh {0 .. D-1}, inputs carry their DIDx axes, and the tensors the table
// names carry the Stream (and DIDx) parallelization; lowering propagates the rest.
#include "catalog/workload.h"

#include <algorithm>

#include "ir/error.h"
#include "ir/ops.h"

namespace braid {

namespace {

constexpr int64_t kMaxDevices = 8192;
constexpr int64_t kMaxStreams = 8192;
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
  for (auto [what, v] : {std::pair<const char*, int64_t>{"m", p.m}, {"k", p.k}, {"n", p.n}}) {
    if (v <= 0 || v > kMaxSize)
      throw Error(name + " needs 1 <= " + what + " <= " + std::to_string(kMaxSize) + ", got " + what + "=" +
                  std::to_string(v));
  }
}

// "matmul_rs needs m divisible by streams*devices (m=1000, S=4, D=8)".
void needDivisible(const std::string& name, const char* what, int64_t value, const char* by, int64_t divisor,
                   const WorkloadParams& p) {
  if (value % divisor != 0)
    throw Error(name + " needs " + what + " divisible by " + by + " (" + what + "=" + std::to_string(value) + ", " +
                paramsStr(p) + ")");
}

// Shared plumbing of the builders: the fusion, the mesh and the parameters.
class Builder {
 public:
  Builder(std::string name, const WorkloadParams& p)
      : name_(std::move(name)), p_(p), fusion_(std::make_unique<Fusion>()), mesh_(DeviceMesh::range(p.devices)) {
    p_.lowering.streams = p.streams;  // S is also numberOfStreams (docs/WORKLOADS.md)
  }

  const WorkloadParams& params() const { return p_; }
  int64_t D() const { return p_.devices; }
  int64_t S() const { return p_.streams; }

  // A fusion input of the given shape, sharded on `did_axis` (-1: replicated).
  TensorView* input(const std::vector<int64_t>& shape, int did_axis = -1) {
    std::vector<Scalar> extents(shape.begin(), shape.end());
    TensorView* tv = fusion_->makeTensor(extents, p_.dtype);
    tv->setDeviceMesh(mesh_);
    if (did_axis >= 0) tv->parallelize(did_axis, ParallelType::kDIDx);
    fusion_->addInput(tv);
    return tv;
  }
  // Gives an op's result the mesh (ops copy it from their first input; this makes it explicit).
  TensorView* mesh(TensorView* tv) {
    tv->setDeviceMesh(mesh_);
    return tv;
  }
  TensorView* output(TensorView* tv) {
    mesh(tv);
    fusion_->addOutput(tv);
    return tv;
  }

  Workload finish() {
    Workload w;
    w.name = name_;
    w.params = p_;
    w.fusion = std::move(fusion_);
    return w;
  }

 private:
  std::string name_;
  WorkloadParams p_;
  std::unique_ptr<Fusion> fusion_;
  DeviceMesh mesh_;
};

// ---- collectives ----

Workload buildAllgather(const WorkloadParams& p) {
  const std::string name = "allgather";
  needDivisible(name, "m", p.m, "streams*devices", p.streams * p.devices, p);
  Builder b(name, p);
  TensorView* t0 = b.input({b.S(), b.D(), p.m / (b.S() * b.D()), p.n}, 1);
  TensorView* t1 = b.output(set(t0));
  t1->parallelize(0, ParallelType::kStream);
  return b.finish();
}

Workload buildAllreduce(const WorkloadParams& p) {
  const std::string name = "allreduce";
  needDivisible(name, "m", p.m, "streams", p.streams, p);
  Builder b(name, p);
  TensorView* t0 = b.input({b.S(), b.D(), p.m / b.S(), p.n}, 1);
  TensorView* t1 = b.output(sum(t0, {1}));
  t1->parallelize(0, ParallelType::kStream);
  return b.finish();
}

Workload buildReduceScatter(const WorkloadParams& p) {
  const std::string name = "reduce_scatter";
  needDivisible(name, "m", p.m, "streams*devices", p.streams * p.devices, p);
  Builder b(name, p);
  TensorView* t0 = b.input({b.S(), b.D(), b.D(), p.m / (b.S() * b.D()), p.n}, 1);
  TensorView* t1 = b.output(sum(t0, {1}));
  t1->parallelize(0, ParallelType::kStream);
  t1->parallelize(2, ParallelType::kDIDx);
  return b.finish();
}

// ---- allgather + matmul ----

Workload buildAgMatmul(const WorkloadParams& p) {
  const std::string name = "ag_matmul";
  Builder b(name, p);
  if (p.lowering.pipeline == PipelineKind::kP2P) {
    // DID -> Stream: the Stream axis of A2 is A's DIDx axis, so there are D chunks.
    needDivisible(name, "m", p.m, "devices", p.devices, p);
    TensorView* a = b.input({b.D(), p.m / b.D(), p.k}, 0);
    TensorView* w = b.input({p.k, p.n});
    TensorView* a2 = b.mesh(set(a));
    a2->parallelize(0, ParallelType::kStream);
    TensorView* c = b.output(matmul(a2, w));
    c->parallelize(0, ParallelType::kStream);
  } else {
    needDivisible(name, "m", p.m, "streams*devices", p.streams * p.devices, p);
    TensorView* a = b.input({b.S(), b.D(), p.m / (b.S() * b.D()), p.k}, 1);
    TensorView* w = b.input({p.k, p.n});
    TensorView* a2 = b.mesh(set(a));
    a2->parallelize(0, ParallelType::kStream);
    TensorView* c = b.output(matmul(a2, w));
    c->parallelize(0, ParallelType::kStream);
  }
  return b.finish();
}

// ---- matmul + reduction collectives ----

Workload buildMatmulAr(const WorkloadParams& p) {
  const std::string name = "matmul_ar";
  needDivisible(name, "m", p.m, "streams", p.streams, p);
  needDivisible(name, "k", p.k, "devices", p.devices, p);
  Builder b(name, p);
  TensorView* a = b.input({b.S(), b.D(), p.m / b.S(), p.k / b.D()}, 1);
  TensorView* w = b.input({b.D(), p.k / b.D(), p.n}, 0);
  TensorView* part = b.mesh(matmul(a, w));  // [S, D, m/S, n, r(k/D)]
  TensorView* c = b.output(sum(part, {1}));
  c->parallelize(0, ParallelType::kStream);
  return b.finish();
}

Workload buildMatmulRs(const WorkloadParams& p) {
  const std::string name = "matmul_rs";
  needDivisible(name, "m", p.m, "streams*devices", p.streams * p.devices, p);
  needDivisible(name, "k", p.k, "devices", p.devices, p);
  Builder b(name, p);
  TensorView* a = b.input({b.S(), b.D(), b.D(), p.m / (b.S() * b.D()), p.k / b.D()}, 1);
  TensorView* w = b.input({b.D(), p.k / b.D(), p.n}, 0);
  TensorView* wb = b.mesh(broadcast(w, {false, true, false, false}));  // [D, 1, k/D, n]
  TensorView* part = b.mesh(matmul(a, wb));  // [S, D, D, m/(S*D), n, r(k/D)]
  TensorView* c = b.output(sum(part, {1}));
  c->parallelize(0, ParallelType::kStream);
  c->parallelize(2, ParallelType::kDIDx);
  return b.finish();
}

// ---- tensor-parallel linear layers ----

Workload buildRowParallelLinear(const WorkloadParams& p) {
  const std::string name = "row_parallel_linear";
  needDivisible(name, "m", p.m, "streams", p.streams, p);
  needDivisible(name, "k", p.k, "devices", p.devices, p);
  Builder b(name, p);
  TensorView* x = b.input({b.S(), b.D(), p.m / b.S(), p.k / b.D()}, 1);
  TensorView* w = b.input({b.D(), p.n, p.k / b.D()}, 0);
  TensorView* part = b.mesh(linear(x, w));  // [S, D, m/S, n, r(k/D)]
  TensorView* y = b.output(sum(part, {1}));
  y->parallelize(0, ParallelType::kStream);
  return b.finish();
}

Workload buildColumnParallelLinear(const WorkloadParams& p) {
  const std::string name = "column_parallel_linear";
  needDivisible(name, "m", p.m, "streams", p.streams, p);
  needDivisible(name, "n", p.n, "devices", p.devices, p);
  Builder b(name, p);
  TensorView* x = b.input({b.S(), p.m / b.S(), p.k});
  TensorView* w = b.input({b.D(), p.n / b.D(), p.k}, 0);
  TensorView* xb = b.mesh(broadcast(x, {false, true, false, false}));  // [S, 1, m/S, k]
  TensorView* y = b.output(linear(xb, w));  // [S, D, m/S, n/D, r(k)]
  y->parallelize(0, ParallelType::kStream);
  y->parallelize(1, ParallelType::kDIDx);
  return b.finish();
}

Workload buildMlp(const WorkloadParams& p) {
  const std::string name = "mlp";
  needDivisible(name, "m", p.m, "streams", p.streams, p);
  needDivisible(name, "n", p.n, "devices", p.devices, p);
  Builder b(name, p);
  TensorView* x = b.input({b.S(), p.m / b.S(), p.k});
  TensorView* w1 = b.input({b.D(), p.n / b.D(), p.k}, 0);
  TensorView* w2 = b.input({b.D(), p.k, p.n / b.D()}, 0);
  TensorView* xb = b.mesh(broadcast(x, {false, true, false, false}));  // [S, 1, m/S, k]
  TensorView* h = b.mesh(linear(xb, w1));                              // [S, D, m/S, n/D, r(k)]
  TensorView* g = b.mesh(gelu(h));                                     // [S, D, m/S, n/D]
  TensorView* part = b.mesh(linear(g, w2));                            // [S, D, m/S, k, r(n/D)]
  TensorView* y = b.output(sum(part, {1}));
  y->parallelize(0, ParallelType::kStream);
  return b.finish();
}

// Validates what every workload needs, then builds.
std::function<Workload(const WorkloadParams&)> checked(std::string name, Workload (*build)(const WorkloadParams&)) {
  return [name = std::move(name), build](const WorkloadParams& p) {
    checkCommon(name, p);
    return build(p);
  };
}

}  // namespace

const std::vector<WorkloadInfo>& workloadCatalog() {
  static const std::vector<WorkloadInfo> catalog = [] {
    std::vector<WorkloadInfo> c;
    auto add = [&c](const char* name, const char* description, Workload (*build)(const WorkloadParams&)) {
      c.push_back(WorkloadInfo{name, description, checked(name, build)});
    };
    add("allgather", "T1 = set(T0): gathers the DIDx-sharded rows of T0[S, D, m/(S*D), n], one Allgather per stream chunk",
        buildAllgather);
    add("allreduce", "T1 = sum(T0, {1}) over the DIDx axis of T0[S, D, m/S, n], one Allreduce per stream chunk",
        buildAllreduce);
    add("reduce_scatter",
        "T1 = sum(T0, {1}) over the DIDx axis of T0[S, D, D, m/(S*D), n], output sharded on axis 2, one ReduceScatter per chunk",
        buildReduceScatter);
    add("ag_matmul",
        "C = matmul(allgather(A), B): A sharded on m; per chunk an Allgather (pipeline collective, S chunks) or a "
        "ring of P2P sends/receives (pipeline p2p, D chunks), then the chunk's matmul",
        buildAgMatmul);
    add("matmul_ar", "C = sum(matmul(A, B), {1}): A and B sharded on k; per chunk a matmul, then an Allreduce",
        buildMatmulAr);
    add("matmul_rs",
        "C = sum(matmul(A, broadcast(B)), {1}): A and B sharded on k, C sharded on m; per chunk a matmul, then a "
        "ReduceScatter",
        buildMatmulRs);
    add("row_parallel_linear",
        "Y = sum(linear(X, W), {1}): X and W sharded on k; per chunk a linear, then an Allreduce",
        buildRowParallelLinear);
    add("column_parallel_linear",
        "Y = linear(broadcast(X), W): X replicated, W and Y sharded on n; per chunk a linear, no communication",
        buildColumnParallelLinear);
    add("mlp",
        "Y = sum(linear(gelu(linear(X, W1)), W2), {1}): column- then row-parallel; per chunk linear, gelu, linear, "
        "Allreduce",
        buildMlp);
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
