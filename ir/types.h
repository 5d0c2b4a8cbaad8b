// The small enumerations of the IR, with their nvFuser spellings (parse and print both ways).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace braid {

enum class DataType { kFloat, kDouble, kHalf, kBFloat16, kInt32, kInt64, kBool };
// kSymmetric: nvFuser's symmetric memory (`_sym`), allocated at the same offset on every rank of
// a team, which SymmetricContiguousView turns into one view across ranks.
enum class MemoryType { kGlobal, kLocal, kShared, kSymmetric };
// kSymbolic: an axis whose kind nvFuser has not resolved yet (`?`), e.g. the output of a slice
// with symbolic bounds; braid treats it as an iteration axis.
enum class IterType { kIteration, kReduction, kBroadcast, kSymbolic };
enum class ParallelType { kSerial, kStream, kDIDx, kDIDy };
// The device-parallel types, in mesh-axis order.
inline constexpr ParallelType kDeviceParallelTypes[] = {ParallelType::kDIDx, ParallelType::kDIDy};

// "float", "double", "__half", "__bfloat", "int", "int64_t", "bool".
std::string_view dataTypeName(DataType t);
std::optional<DataType> parseDataType(std::string_view s);
int64_t dataTypeSize(DataType t);  // bytes per element

// Tensor-name letter ("g", "l", "s", "sym") and the long form in ALLOCATE ("global", "local",
// "shared", "symmetric"; nvFuser spells local memory "register", which is read as local).
std::string_view memoryTypeLetter(MemoryType t);
std::string_view memoryTypeName(MemoryType t);
std::optional<MemoryType> parseMemoryTypeLetter(std::string_view s);
std::optional<MemoryType> parseMemoryTypeName(std::string_view s);

// "i", "r", "b", "?".
std::string_view iterTypeLetter(IterType t);
// "S", "StreamIdx", "deviceIdx.x", "deviceIdx.y" (the printer's canonical spellings; the parser
// also accepts "streamIdx").
std::string_view parallelTypeName(ParallelType t);
bool isDeviceParallel(ParallelType t);

}  // namespace braid
