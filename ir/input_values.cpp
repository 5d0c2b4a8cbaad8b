#include "ir/input_values.h"

namespace braid {

const char* inputValuesName(InputValues v) { return v == InputValues::kIntegers ? "integers" : "normal"; }

std::optional<InputValues> parseInputValues(const std::string& s) {
  if (s == "integers") return InputValues::kIntegers;
  if (s == "normal") return InputValues::kNormal;
  return std::nullopt;
}

}  // namespace braid
