// `braid calibrate --from MEASUREMENTS.json --machine BASE -o OUT.json [--name NAME] [--json]`:
// fit the machine model's constants to measurements of a real machine and write a machine file
// that `braid sim --machine OUT.json` reads (docs/CALIBRATION.md). Exit 0 when the file was
// written, 2 on bad input.
// `braid calibrate --measure -o MEASUREMENTS.json [--ranks N] [--quick] ...`: measure them first,
// with the microbenchmarks of the run module (cli/exec_module/measure_driver.cpp); with
// `--fit --machine BASE -o OUT.json` measure and fit in one go.
#include <filesystem>
#include <fstream>
#include <iostream>

#include "cli/command.h"
#include "cli/exec_module.h"
#include "cli/measure_options.h"
#include "cli/output_path.h"
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
  bool measure = false;
  bool fit = false;
  std::string measurements;  // --fit: where the measurements go (default OUT's stem + .measurements.json)
  MeasureConfig mc;
  std::vector<CLI::Option*> measureOnly;  // flags that mean something only with --measure
};

int fitFile(const CalibrateArgs& a);

// --measure [--fit]: the module measures (launching the ranks); this process fits afterwards.
int measureAndFit(const CalibrateArgs& a) {
  if (!a.from.empty()) throw Error("--measure and --from contradict each other: --measure writes measurements, --from reads them");
  if (a.out.empty())
    throw Error(std::string("-o is required: where to write the ") + (a.fit ? "calibrated machine file" : "measurements"));
  if (a.fit && a.machine.empty()) throw Error("--fit needs --machine BASE: the machine whose constants are fitted");
  if (!a.fit && (!a.name.empty() || a.json))
    throw Error(std::string(a.json ? "--json" : "--name") + " needs --fit (or --from): --measure alone writes measurements");
  if (!a.fit && !a.measurements.empty()) throw Error("--measurements needs --fit (without it, -o is the measurement file)");
  checkOutputPath("-o", a.out);
  checkOutputPath("--measurements", a.measurements);
  MeasureConfig mc = a.mc;
  mc.machine = a.machine;
  // Bad flags and an unknown machine fail here, before libtorch is loaded (the module plans again
  // for the world it finds).
  sim::planMeasurements(loadMachineFor(a.machine.empty() ? "h200" : a.machine, 0, 0), measurePlanOptions(mc, 2, 2));
  std::string stem = a.out.size() > 5 && a.out.substr(a.out.size() - 5) == ".json" ? a.out.substr(0, a.out.size() - 5) : a.out;
  mc.out = !a.fit ? a.out : a.measurements.empty() ? stem + ".measurements.json" : a.measurements;
  int code = measureInExecModule(mc);
  if (code != 0 || !a.fit) return code;
  CalibrateArgs f = a;
  f.from = mc.out;
  return fitFile(f);
}

int runCalibrate(const CalibrateArgs& a) {
  if (a.measure) return measureAndFit(a);
  for (CLI::Option* o : a.measureOnly)
    if (o->count()) throw Error(o->get_name() + " needs --measure");
  return fitFile(a);
}

int fitFile(const CalibrateArgs& a) {
  if (a.from.empty()) throw Error("--from MEASUREMENTS.json is required (schema in docs/CALIBRATION.md)");
  if (a.out.empty()) throw Error("-o OUT.json is required: where to write the calibrated machine file");
  std::error_code ec;
  if (std::filesystem::equivalent(a.from, a.out, ec))
    throw Error("-o " + a.out + " is the --from file: writing the machine file there would replace the measurements");
  checkOutputPath("-o", a.out);
  sim::Machine base = loadMachineFor(a.machine, 0, 0);
  sim::Measurements m = sim::readMeasurementsFile(a.from);
  sim::CalibrationResult r = sim::calibrate(base, m);
  r.machine.name = a.name.empty() ? base.name + "-calibrated" : a.name;
  std::string facts;
  for (const auto& [k, v] : m.meta) facts += (facts.empty() ? "" : ", ") + k + " " + v;
  const std::string power = m.power.empty() ? "" : " and " + std::to_string(m.power.size()) + " power series";
  r.machine.description = "Calibrated by braid calibrate from " + std::to_string(r.errors.size()) +
                          " measurements" + power + " of " + m.gpu + (facts.empty() ? "" : " (" + facts + ")") +
                          ", starting from " + base.name + ". " + base.description;
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
      sub.add_option("-o,--output", a->out, "where to write the calibrated machine file (with --measure alone: the measurements)");
      sub.add_option("--name", a->name, "the calibrated machine's name (default: BASE-calibrated)");
      sub.add_flag("--json", a->json, "print the fitted constants and residuals as one JSON object");
      sub.add_flag("--measure", a->measure,
                   "measure this machine with braid's microbenchmarks (GEMMs, copies, collectives, p2p, host costs, "
                   "overlap) and write the measurements to -o (docs/CALIBRATION.md)");
      MeasureConfig& m = a->mc;
      auto& only = a->measureOnly;
      only.push_back(sub.add_flag("--fit", a->fit, "with --measure: then fit --machine to them and write the machine file to -o"));
      only.push_back(sub.add_option("--measurements", a->measurements,
                                    "with --measure --fit: where to write the measurements (default: OUT.measurements.json)"));
      only.push_back(sub.add_option("--backend", m.backend,
                                    "cuda (device events, NCCL; default) or cpu (host wall clock, Gloo; for testing)")
                         ->check(CLI::IsMember({"cpu", "cuda"})));
      only.push_back(sub.add_option("--ranks", m.ranks, "ranks to start (default: every visible GPU; cpu: 1); "
                                                         "ignored under torchrun / mpirun")
                         ->check(CLI::Range(int64_t{1}, int64_t{128})));
      only.push_back(sub.add_flag("--quick", m.quick, "fewer shapes and sizes: knots only, sizes in steps of x4 (about half the default's time)"));
      only.push_back(sub.add_option("--reps", m.reps, "timed runs per measurement, the median is kept (default 10)")
                         ->check(CLI::Range(int64_t{1}, int64_t{100000})));
      only.push_back(sub.add_option("--warmup", m.warmup, "untimed runs before them (default 3)")
                         ->check(CLI::Range(int64_t{0}, int64_t{100000})));
      only.push_back(sub.add_option("--cool-down", m.coolDownMs,
                                    "idle milliseconds before each measurement, so each starts at an idle GPU's clocks "
                                    "(a GEMM on an H200 slows by 15-17% after 40-100 ms of load; 50 ms idle restores it; "
                                    "default 0)")
                         ->check(finiteRange(0.0, 10000.0)));
      only.push_back(sub.add_option("--gemm-operands", m.gemmOperands,
                                    "the values GEMMs compute on: integers (in [-2, 2], what `braid run` seeds; default) "
                                    "or normal (like real data). On an H200 bf16 GEMMs take 4-14% longer on normal values: "
                                    "calibrate on the values the runs you predict compute on (docs/CALIBRATION.md)")
                         ->check(CLI::IsMember({"integers", "normal"})));
      only.push_back(sub.add_option("--dtypes", m.dtypes, "GEMM dtypes, comma-separated (default bf16,fp16,fp32; cpu: fp32)")
                         ->check(nonEmpty()));
      only.push_back(sub.add_option("--only", m.only,
                                    "measure only these parts: gemm, copy, collective, p2p, host, overlap, copy_engine, "
                                    "power (the GPU under sustained load and in bursts: gpu.power_cap), after_idle (host operations after idle gaps, launched and replayed as a graph: host.after_idle, host.after_idle_graph)")
                         ->check(nonEmpty()));
      only.push_back(sub.add_option("--min-bytes", m.minBytes, "smallest collective / p2p message (default 65536)")
                         ->check(finiteRange(4.0, 1e12)));
      only.push_back(sub.add_option("--max-bytes", m.maxBytes,
                                    "largest collective / p2p message and copy (default 1 GiB; cpu: 4 MiB)")
                         ->check(finiteRange(4.0, 1e12)));
      only.push_back(sub.add_option("--max-gemm-flops", m.maxGemmFlops, "leave out GEMMs above this (default 4e12; cpu: 1e9)")
                         ->check(finiteRange(1.0, 1e18)));
      only.push_back(sub.add_option("--gemm-shapes", m.gemmShapes,
                                    "GEMMs to measure besides the plan's, MxNxK comma-separated (a workload's per-rank "
                                    "GEMMs; the fitted machine times these shapes as measured)"));
      only.push_back(sub.add_option("--comm-priority", m.commPriority,
                                    "normal (default) or high: create the communicators' streams at the device's "
                                    "greatest priority, as `braid run --comm-priority high` does (the overlap "
                                    "measurements record it)")
                         ->check(CLI::IsMember({"normal", "high"})));
      only.push_back(sub.add_option("--timeout", m.timeoutSec, "seconds before the whole measurement is stopped (default 900)")
                         ->check(finiteRange(0.001, 1e6)));
      return [a] { return runCalibrate(*a); };
    },
    "fit the machine model's constants to measurements of a real machine (--from), or measure this machine "
    "(--measure); write a machine file or the measurements"});

}  // namespace
}  // namespace braid::cli
