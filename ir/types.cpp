#include "ir/types.h"

namespace braid {

std::string_view dataTypeName(DataType t) {
  switch (t) {
    case DataType::kFloat: return "float";
    case DataType::kDouble: return "double";
    case DataType::kHalf: return "__half";
    case DataType::kBFloat16: return "__bfloat";
    case DataType::kInt32: return "int";
    case DataType::kInt64: return "int64_t";
    case DataType::kBool: return "bool";
  }
  return "?";
}

std::optional<DataType> parseDataType(std::string_view s) {
  for (DataType t : {DataType::kFloat, DataType::kDouble, DataType::kHalf, DataType::kBFloat16,
                     DataType::kInt32, DataType::kInt64, DataType::kBool}) {
    if (dataTypeName(t) == s) return t;
  }
  if (s == "bfloat16" || s == "bf16") return DataType::kBFloat16;
  if (s == "half" || s == "fp16") return DataType::kHalf;
  if (s == "int32") return DataType::kInt32;
  if (s == "int64") return DataType::kInt64;
  return std::nullopt;
}

int64_t dataTypeSize(DataType t) {
  switch (t) {
    case DataType::kFloat: return 4;
    case DataType::kDouble: return 8;
    case DataType::kHalf: return 2;
    case DataType::kBFloat16: return 2;
    case DataType::kInt32: return 4;
    case DataType::kInt64: return 8;
    case DataType::kBool: return 1;
  }
  return 0;
}

std::string_view memoryTypeLetter(MemoryType t) {
  switch (t) {
    case MemoryType::kGlobal: return "g";
    case MemoryType::kLocal: return "l";
    case MemoryType::kShared: return "s";
    case MemoryType::kSymmetric: return "sym";
  }
  return "?";
}

std::string_view memoryTypeName(MemoryType t) {
  switch (t) {
    case MemoryType::kGlobal: return "global";
    case MemoryType::kLocal: return "local";
    case MemoryType::kShared: return "shared";
    case MemoryType::kSymmetric: return "symmetric";
  }
  return "?";
}

std::optional<MemoryType> parseMemoryTypeLetter(std::string_view s) {
  if (s == "g") return MemoryType::kGlobal;
  if (s == "l") return MemoryType::kLocal;
  if (s == "s") return MemoryType::kShared;
  if (s == "sym") return MemoryType::kSymmetric;
  return std::nullopt;
}

std::optional<MemoryType> parseMemoryTypeName(std::string_view s) {
  if (s == "global") return MemoryType::kGlobal;
  if (s == "local" || s == "register") return MemoryType::kLocal;
  if (s == "shared") return MemoryType::kShared;
  if (s == "symmetric") return MemoryType::kSymmetric;
  return std::nullopt;
}

std::string_view iterTypeLetter(IterType t) {
  switch (t) {
    case IterType::kIteration: return "i";
    case IterType::kReduction: return "r";
    case IterType::kBroadcast: return "b";
    case IterType::kSymbolic: return "?";
  }
  return "?";
}

std::string_view parallelTypeName(ParallelType t) {
  switch (t) {
    case ParallelType::kSerial: return "S";
    case ParallelType::kStream: return "StreamIdx";
    case ParallelType::kDIDx: return "deviceIdx.x";
    case ParallelType::kDIDy: return "deviceIdx.y";
  }
  return "?";
}

bool isDeviceParallel(ParallelType t) { return t == ParallelType::kDIDx || t == ParallelType::kDIDy; }

}  // namespace braid
