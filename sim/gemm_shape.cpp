// A GEMM's shape and its JSON form (see gemm_shape.h).
#include "sim/gemm_shape.h"

#include <string>
#include <tuple>
#include <utility>

#include "ir/checked_math.h"

namespace braid::sim {

namespace {
const std::pair<const char*, DataType> kDtypes[] = {
    {"bf16", DataType::kBFloat16}, {"fp16", DataType::kHalf}, {"fp32", DataType::kFloat}, {"fp64", DataType::kDouble}};
}  // namespace

double GemmShape::flops() const {
  return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k) * static_cast<double>(batch);
}

double GemmShape::bytes() const {
  double e = static_cast<double>(dataTypeSize(dtype));
  double mm = static_cast<double>(m), nn = static_cast<double>(n), kk = static_cast<double>(k);
  return (mm * kk + kk * nn + mm * nn) * e * static_cast<double>(batch);
}

std::string GemmShape::name() const {
  return "gemm " + (batch > 1 ? std::to_string(batch) + "x" : std::string()) + std::to_string(m) + "x" +
         std::to_string(n) + "x" + std::to_string(k) + " " + gemmDtypeKey(dtype);
}

const char* gemmDtypeKey(DataType t) {
  for (const auto& [name, d] : kDtypes)
    if (d == t) return name;
  return "fp32";
}

GemmShape readGemmShape(StrictJsonObject& o) {
  GemmShape g;
  g.m = o.count("m");
  g.n = o.count("n");
  g.k = o.count("k");
  if (o.has("batch")) g.batch = o.count("batch");
  std::string d = o.str("dtype");
  bool known = false;
  for (const auto& [name, t] : kDtypes)
    if (d == name) g.dtype = t, known = true;
  if (!known) o.fail(o.at("dtype"), "unknown dtype \"" + d + "\" (expected bf16, fp16, fp32 or fp64)");
  // Each operand and the result is one buffer: within braid's limit on one (kMaxElements).
  for (auto [rows, cols, what] : {std::tuple{g.m, g.k, "a GEMM's [m, k] operand"}, std::tuple{g.k, g.n, "a GEMM's [k, n] operand"},
                                  std::tuple{g.m, g.n, "a GEMM's [m, n] result"}}) {
    try {
      checkedElementCount({g.batch, rows, cols}, what);
    } catch (const Error& e) {
      o.fail(o.at("m"), e.what());
    }
  }
  return g;
}

nlohmann::ordered_json gemmShapeJson(const GemmShape& g) {
  return {{"m", g.m}, {"n", g.n}, {"k", g.k}, {"batch", g.batch}, {"dtype", gemmDtypeKey(g.dtype)}};
}

}  // namespace braid::sim
