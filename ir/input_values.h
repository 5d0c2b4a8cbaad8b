// The values a program's seeded inputs hold, and a calibration's GEMM operands. Its own header
// because both sides of a prediction name it: exec draws them (`braid run --inputs`, `braid
// calibrate --gemm-operands`), a machine file records what its GEMM constants were measured on
// (gpu.gemm_operands), and `braid validate` compares the two.
//
// A GEMM's time depends on its operands' values: on an H200 a bf16 GEMM on integers in [-2, 2]
// runs 4-10% faster than on normal values from an idle GPU and 9-14% faster under the power cap
// (fewer bits toggle, less power; docs/EXEC.md, "Input values").
//  - kIntegers: small integers in [-2, 2], exact in every dtype braid runs (float32 sums are exact
//    and only 16-bit types round): the default, so the numerical check is tight.
//  - kNormal: standard normal values, like trained weights and activations; checked within the
//    dtype's tolerance like any rounding.
#pragma once

#include <optional>
#include <string>

namespace braid {

enum class InputValues { kIntegers, kNormal };

const char* inputValuesName(InputValues v);  // "integers", "normal"
std::optional<InputValues> parseInputValues(const std::string& s);

}  // namespace braid
