// Fuzz check: the calibration measurements loader (`braid calibrate --from FILE`). A malformed
// file must be an Error; one that loads must write back to JSON that loads to the same text, and
// the model must predict every entry of it (calibrate's residuals) without failing.
#include <cmath>
#include <string>

#include "fuzz/checks/checks.h"
#include "ir/error.h"
#include "sim/calibrate.h"
#include "sim/machine.h"
#include "sim/measurements.h"

namespace braid::fuzz {

void checkMeasurementsJson(std::string_view text) {
  sim::Measurements m;
  try {
    m = sim::measurementsFromJson(std::string(text), "fuzz.json");
  } catch (const Error&) {
    return;
  }
  const std::string written = sim::measurementsToJson(m);
  sim::Measurements again;
  try {
    again = sim::measurementsFromJson(written, "written.json");
  } catch (const Error& e) {
    throw CheckFailure(std::string("measurementsToJson(m) does not load: ") + e.what());
  }
  if (sim::measurementsToJson(again) != written) throw CheckFailure("measurementsFromJson(measurementsToJson(m)) != m");
  static const sim::Machine h200 = sim::loadMachine("h200");
  try {
    sim::Measurements p = sim::predictMeasurements(h200, m);
    for (const auto& c : p.copyEngine)
      if (!(c.us >= 0) || std::isnan(c.us)) throw CheckFailure("a copy-engine prediction is not a time");
  } catch (const Error&) {
    // A measurement the model cannot predict (an overlap it cannot simulate) is refused by name.
  }
}

}  // namespace braid::fuzz
