// Inputs, slicing, gathering and comparison for the numerical check (see reference.h).
#ifdef BRAID_WITH_TORCH

#include "exec/reference.h"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "exec/tensor_ops.h"
#include "ir/error.h"
#include "ir/semantics/buffer_rules.h"

namespace braid::exec {

InputValues inputValuesNamed(const std::string& name) {
  if (std::optional<InputValues> v = parseInputValues(name)) return *v;
  throw Error("unknown input values \"" + name + "\" (expected integers or normal)");
}

at::Tensor randomInput(const std::vector<int64_t>& shape, uint64_t seed, int64_t index, InputValues values) {
  uint64_t s = seed * 1000003ULL + static_cast<uint64_t>(index) * 7919ULL + 12345ULL;
  at::Generator gen = at::detail::createCPUGenerator(s);
  const auto f64 = at::TensorOptions().dtype(at::kDouble);
  return values == InputValues::kIntegers ? at::randint(-2, 3, shape, gen, f64) : at::randn(shape, gen, f64);
}

at::Tensor drawValues(at::IntArrayRef shape, InputValues values, const at::TensorOptions& options) {
  if (values == InputValues::kNormal) return at::randn(shape, options);
  return at::randint(-2, 3, shape, options);
}

std::vector<int64_t> fullShape(const TensorView& tv, const Bindings& b, bool logical) {
  sem::ShapeMode mode;
  mode.fullDevice = true;
  mode.logical = logical;
  return sem::bufferShape(tv, b, mode);
}

at::Tensor toBufferLayout(const at::Tensor& full, const TensorView& tv, const Bindings& b) {
  std::vector<int64_t> shape = fullShape(tv, b);
  if (full.sizes().vec() == shape) return full;
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  if (n != full.numel())
    throw Error(tv.nameStr() + "'s buffer has the full shape " + shapeStr(shape) + " but the reference's tensor has " +
                shapeStr(full.sizes()) + ": the program does not have the reference workload's layout");
  return full.reshape(shape);
}

ShardAxes shardAxesOf(const TensorView& tv, int64_t rank) {
  ShardAxes a;
  int64_t pos = 0;
  const auto& mesh = tv.deviceMesh();
  for (IterDomain* id : sem::bufferDomain(tv)) {
    if (id->isReduction()) continue;
    if (id->isDeviceParallel()) {
      int64_t coord = rank;
      if (mesh && !mesh->empty()) {
        int64_t idx = mesh->indexOf(rank).value_or(0);
        const auto& shape = mesh->shape();
        if (shape.size() >= 2) {
          int64_t cols = shape.back();
          coord = id->parallelType() == ParallelType::kDIDx ? idx % cols : (idx / cols) % shape[shape.size() - 2];
        } else {
          coord = idx;
        }
      }
      a.positions.push_back(pos);
      a.coords.push_back(coord);
    }
    ++pos;
  }
  return a;
}

at::Tensor sliceForRank(const at::Tensor& full, const TensorView& tv, int64_t rank, at::ScalarType type) {
  ShardAxes a = shardAxesOf(tv, rank);
  at::Tensor t = full;
  for (size_t i = 0; i < a.positions.size(); ++i) {
    int64_t p = a.positions[i];
    if (p >= t.dim() || a.coords[i] >= t.size(p))
      throw Error(tv.nameStr() + ": rank " + std::to_string(rank) + " has coordinate " + std::to_string(a.coords[i]) +
                  " on axis " + std::to_string(p) + " of a full tensor of shape " + shapeStr(full.sizes()));
    t = t.narrow(p, a.coords[i], 1);
  }
  return t.to(type).contiguous();
}

at::Tensor assembleFull(const std::vector<at::Tensor>& locals, const TensorView& tv,
                        const std::vector<int64_t>& full_shape, std::string* replicaMismatch) {
  ShardAxes a0 = shardAxesOf(tv, 0);
  if (a0.positions.empty()) {
    for (size_t r = 1; r < locals.size(); ++r) {
      if (!at::allclose(locals[r], locals[0], 0, 0, /*equal_nan=*/true)) {
        if (replicaMismatch) {
          double d = (locals[r] - locals[0]).abs().nan_to_num(INFINITY).max().item<double>();
          *replicaMismatch = "replicated output " + tv.nameStr() + " differs between rank 0 and rank " +
                             std::to_string(r) + " (max |difference| " + std::to_string(d) + ")";
        }
        break;
      }
    }
    return locals[0].reshape(full_shape);
  }
  at::Tensor full = at::full(full_shape, std::nan(""), at::TensorOptions().dtype(at::kDouble));
  const auto& mesh = tv.deviceMesh();
  for (size_t r = 0; r < locals.size(); ++r) {
    if (mesh && !mesh->empty() && !mesh->has(static_cast<int64_t>(r))) continue;
    ShardAxes a = shardAxesOf(tv, static_cast<int64_t>(r));
    at::Tensor region = full;
    for (size_t i = 0; i < a.positions.size(); ++i) region = region.narrow(a.positions[i], a.coords[i], 1);
    if (region.numel() != locals[r].numel())
      throw Error("rank " + std::to_string(r) + "'s " + tv.nameStr() + " has shape " + shapeStr(locals[r].sizes()) +
                  ", its shard of the full " + shapeStr(full_shape) + " has shape " + shapeStr(region.sizes()));
    region.copy_(locals[r].reshape(region.sizes()));
  }
  return full;
}

double defaultTolerance(at::ScalarType t) {
  switch (t) {
    case at::kDouble: return 1e-12;
    case at::kFloat: return 1e-5;
    case at::kHalf: return 1e-2;
    case at::kBFloat16: return 2e-2;
    default: return 0;
  }
}

Comparison compare(const at::Tensor& got_in, const at::Tensor& want_in, double tol) {
  Comparison c;
  c.tolerance = tol;
  at::Tensor got = got_in.to(at::kDouble);
  at::Tensor want = want_in.to(at::kDouble);
  c.total = want.numel();
  if (got.sizes() != want.sizes()) {
    c.ok = false;
    c.shapeError = "shape " + shapeStr(got.sizes()) + " differs from the reference's " + shapeStr(want.sizes());
    return c;
  }
  if (c.total == 0) return c;
  at::Tensor diff = (got - want).abs();
  double scale = want.abs().nan_to_num(0).max().item<double>();
  at::Tensor bound = want.abs() * tol + tol * scale + 1e-12;
  at::Tensor nan_mismatch = got.isnan().logical_xor(want.isnan());
  at::Tensor bad = diff.gt(bound).logical_or(nan_mismatch);
  c.bad = bad.sum().item<int64_t>();
  c.ok = c.bad == 0;
  at::Tensor finite = diff.nan_to_num(0, 0, 0);
  c.maxAbs = got.isnan().any().item<bool>() && !want.isnan().any().item<bool>() ? NAN : finite.max().item<double>();
  c.maxRel = (finite / (want.abs() + 1e-30)).nan_to_num(0, 0, 0).max().item<double>();
  at::Tensor score = (diff / bound).nan_to_num(INFINITY, INFINITY, 0);
  score = at::where(nan_mismatch, at::full_like(score, INFINITY), score);
  int64_t flat = score.reshape({-1}).argmax().item<int64_t>();
  c.worst.resize(static_cast<size_t>(want.dim()));
  for (int64_t d = want.dim() - 1; d >= 0; --d) {
    c.worst[static_cast<size_t>(d)] = flat % want.size(d);
    flat /= want.size(d);
  }
  at::Tensor g = got, w = want;
  for (int64_t i : c.worst) {
    g = g[i];
    w = w[i];
  }
  c.got = g.item<double>();
  c.want = w.item<double>();
  return c;
}

std::string describe(const Comparison& c) {
  std::ostringstream os;
  if (!c.shapeError.empty()) return "MISMATCH: " + c.shapeError;
  os << std::setprecision(6);
  os << "max abs err " << c.maxAbs << ", max rel err " << c.maxRel;
  std::string idx = "[";
  for (size_t i = 0; i < c.worst.size(); ++i) idx += (i ? ", " : "") + std::to_string(c.worst[i]);
  idx += "]";
  if (c.ok) {
    // The bound is tol * (|expected| + max |expected|): relative to the element and to the
    // tensor's scale, since float32 sums of mixed signs lose digits relative to their terms.
    os << " (within tol " << c.tolerance << " x (|expected| + max |expected|)): ok";
  } else {
    os << ": MISMATCH in " << c.bad << " of " << c.total << " elements; worst at " << idx << ": got " << c.got
       << ", expected " << c.want << " (tol " << c.tolerance << ")";
  }
  return os.str();
}

// ---- .npy ----

namespace {

struct NpyType {
  const char* descr;
  at::ScalarType type;
};
const NpyType kNpyTypes[] = {{"<f4", at::kFloat}, {"<f8", at::kDouble}, {"<i4", at::kInt},
                             {"<i8", at::kLong},  {"|b1", at::kBool},   {"<f2", at::kHalf}};

}  // namespace

at::Tensor loadNpy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw Error("cannot open input file " + path);
  char magic[6];
  f.read(magic, 6);
  if (!f || std::memcmp(magic, "\x93NUMPY", 6) != 0) throw Error(path + " is not a .npy file");
  unsigned char ver[2];
  f.read(reinterpret_cast<char*>(ver), 2);
  uint32_t hlen = 0;
  if (ver[0] == 1) {
    unsigned char l[2];
    f.read(reinterpret_cast<char*>(l), 2);
    hlen = l[0] | (l[1] << 8);
  } else {
    unsigned char l[4];
    f.read(reinterpret_cast<char*>(l), 4);
    hlen = l[0] | (l[1] << 8) | (l[2] << 16) | (static_cast<uint32_t>(l[3]) << 24);
  }
  std::string header(hlen, '\0');
  f.read(header.data(), hlen);
  if (!f) throw Error(path + ": truncated .npy header");
  if (header.find("'fortran_order': True") != std::string::npos) throw Error(path + ": Fortran-order arrays are not supported");
  std::optional<at::ScalarType> type;
  for (const auto& t : kNpyTypes)
    if (header.find(std::string("'") + t.descr + "'") != std::string::npos) type = t.type;
  if (!type) throw Error(path + ": unsupported dtype in header " + header);
  auto s = header.find("'shape': (");
  if (s == std::string::npos) throw Error(path + ": no shape in header");
  auto e = header.find(')', s);
  std::string dims = header.substr(s + 10, e - s - 10);
  std::vector<int64_t> shape;
  std::stringstream ss(dims);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.find_first_not_of(" ") == std::string::npos) continue;
    shape.push_back(std::stoll(item));
  }
  at::Tensor t = at::empty(shape, at::TensorOptions().dtype(*type));
  f.read(static_cast<char*>(t.data_ptr()), static_cast<std::streamsize>(t.numel() * t.element_size()));
  if (!f) throw Error(path + ": truncated data (expected " + std::to_string(t.numel()) + " elements)");
  return t;
}

void saveNpy(const std::string& path, const at::Tensor& in) {
  at::Tensor t = in.contiguous();
  const char* descr = nullptr;
  for (const auto& k : kNpyTypes)
    if (k.type == t.scalar_type()) descr = k.descr;
  if (!descr) {
    t = t.to(at::kFloat);
    descr = "<f4";
  }
  std::string shape = "(";
  for (int64_t d = 0; d < t.dim(); ++d) shape += std::to_string(t.size(d)) + (t.dim() == 1 || d + 1 < t.dim() ? "," : "");
  shape += ")";
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  size_t total = 10 + header.size() + 1;
  header += std::string((64 - total % 64) % 64, ' ') + "\n";
  std::ofstream f(path, std::ios::binary);
  if (!f) throw Error("cannot write " + path);
  f.write("\x93NUMPY\x01\x00", 8);
  uint16_t hl = static_cast<uint16_t>(header.size());
  char l[2] = {static_cast<char>(hl & 0xff), static_cast<char>(hl >> 8)};
  f.write(l, 2);
  f.write(header.data(), static_cast<std::streamsize>(header.size()));
  f.write(static_cast<const char*>(t.data_ptr()), static_cast<std::streamsize>(t.numel() * t.element_size()));
}

}  // namespace braid::exec

#endif  // BRAID_WITH_TORCH
