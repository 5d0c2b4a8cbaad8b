// Fuzz check: the machine-file loader (`braid sim --machine FILE`). A malformed file must be an Error;
// one that loads must write back to JSON that loads to an equal machine.
#include <cstdint>
#include <string>

#include "fuzz/checks/checks.h"
#include "ir/error.h"
#include "sim/machine.h"

namespace braid::fuzz {

void checkMachineJson(std::string_view text) {
  sim::Machine m;
  try {
    m = sim::machineFromJson(std::string(text), "fuzz.json");
  } catch (const Error&) {
    return;
  }
  (void)m.interNodeGBpsPerGpu();
  sim::Machine again;
  try {
    again = sim::machineFromJson(sim::machineToJson(m), "written.json");
  } catch (const Error& e) {
    throw CheckFailure(std::string("machineToJson(m) does not load: ") + e.what());
  }
  if (again != m) throw CheckFailure("machineFromJson(machineToJson(m)) != m");
}

}  // namespace braid::fuzz
