// A GEMM's shape as the machine model and the calibration measurements name it: m x n output, k
// reduced, a batch of them, one dtype; and its JSON form ({"m", "n", "k", "batch", "dtype"}),
// shared by measurement files and machine files (gpu.measured_gemms).
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "ir/types.h"
#include "sim/json_object.h"

namespace braid::sim {

struct GemmShape {
  int64_t m = 0, n = 0, k = 0;
  int64_t batch = 1;
  DataType dtype = DataType::kBFloat16;
  double flops() const;  // 2 m n k batch
  double bytes() const;  // operands read + result written
  std::string name() const;  // "gemm 8192x3584x8192 bf16" (m x n x k; "4x..." for a batch of 4)
  bool operator==(const GemmShape&) const = default;
};

// "bf16", "fp16", "fp32", "fp64" (the machine file's precision keys).
const char* gemmDtypeKey(DataType t);
// Reads m, n, k, batch (optional, 1) and dtype from `o`; the caller checks the remaining fields.
GemmShape readGemmShape(StrictJsonObject& o);
nlohmann::ordered_json gemmShapeJson(const GemmShape& g);

}  // namespace braid::sim
