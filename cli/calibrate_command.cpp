// `braid calibrate --from MEASUREMENTS.json --machine BASE -o OUT.json [--name NAME] [--json]`:
// fit the machine model's constants to measurements of a real machine and write a machine file
// that `braid sim --machine OUT.json` reads (docs/CALIBRATION.md). Exit 0 when the file was
// written, 2 on bad input.
#include <fstream>
#include <iostream>

#include "cli/command.h"
#include "cli/sim_target.h"
#include "ir/error.h"
#include "sim/calibrate.h"

namespace braid::cli {
namespace {

struct CalibrateArgs {
  std::string from;
  std::string machine;
  std::string out;
  std::string name;
  bool json = false;
};

int runCalibrate(const CalibrateArgs& a) {
  if (a.from.empty()) throw Error("--from MEASUREMENTS.json is required (schema in docs/CALIBRATION.md)");
  if (a.out.empty()) throw Error("-o OUT.json is required: where to write the calibrated machine file");
  sim::Machine base = loadMachineFor(a.machine, 0, 0);
  sim::Measurements m = sim::readMeasurementsFile(a.from);
  sim::CalibrationResult r = sim::calibrate(base, m);
  r.machine.name = a.name.empty() ? base.name + "-calibrated" : a.name;
  std::string facts;
  for (const auto& [k, v] : m.meta) facts += (facts.empty() ? "" : ", ") + k + " " + v;
  r.machine.description = "Calibrated by braid calibrate from " + std::to_string(r.errors.size()) +
                          " measurements of " + m.gpu + (facts.empty() ? "" : " (" + facts + ")") + ", starting from " +
                          base.name + ". " + base.description;
  std::ofstream out(a.out);
  if (!out) throw Error(a.out + ": cannot write the machine file");
  out << sim::machineToJson(r.machine) << "\n";
  out.close();
  if (!out) throw Error(a.out + ": cannot write the machine file");
  if (a.json) {
    std::cout << sim::calibrationJson(r) << "\n";
  } else {
    std::cout << "braid calibrate: " << m.size() << " measurement entries of " << m.gpu << ", base machine "
              << base.name << "\n"
              << sim::calibrationReport(r) << "wrote " << a.out << " (use it as --machine " << a.out << ")\n";
  }
  return 0;
}

BRAID_REGISTER_COMMAND(Command{
    "calibrate",
    [](CLI::App& sub) -> std::function<int()> {
      auto a = std::make_shared<CalibrateArgs>();
      sub.add_option("--from", a->from, "measurements of the machine (JSON, docs/CALIBRATION.md)");
      sub.add_option("--machine", a->machine,
                     "base machine whose constants are fitted: a preset (" + presetList() + ") or a machine file");
      sub.add_option("-o,--output", a->out, "where to write the calibrated machine file");
      sub.add_option("--name", a->name, "the calibrated machine's name (default: BASE-calibrated)");
      sub.add_flag("--json", a->json, "print the fitted constants and residuals as one JSON object");
      return [a] { return runCalibrate(*a); };
    },
    "fit the machine model's constants to measurements of a real machine; write a machine file"});

}  // namespace
}  // namespace braid::cli
