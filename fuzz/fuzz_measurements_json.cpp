// libFuzzer entry point for checkMeasurementsJson (fuzz/checks/checks.h).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/checks/checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  braid::fuzz::checkMeasurementsJson(std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
