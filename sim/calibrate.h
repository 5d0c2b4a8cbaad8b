// Calibration: fit a machine model's constants to measurements of the real machine
// (measurements.h), starting from a base machine (a preset or file), so that `braid sim
// --machine OUT.json` predicts with them. docs/CALIBRATION.md lists what is fitted from what.
//
// The fit is nonlinear least squares (fit.h) on relative errors, (predicted - measured) /
// measured, so a 10 us and a 10 ms measurement weigh the same. Only constants some measurement
// depends on are fitted; each also gets a weak pull towards its base value, so one that the
// measurements cannot tell apart from another (a knot of an efficiency curve no measured size is
// near) stays where the base machine put it instead of drifting. Peak rates (TFLOP/s, HBM and bus
// bandwidth) are the datasheet's and stay: the efficiency curves carry what is achieved. The
// NCCL channel count and the SM-sharing rule (waves or proportional) are discrete: they are
// chosen by trying every value against the overlap measurements.
#pragma once

#include <string>
#include <vector>

#include "sim/machine.h"
#include "sim/measurements.h"

namespace braid::sim {

// The model's prediction for each kind of measurement (the same formulas the simulator uses:
// cost_model.h for one operation alone, the contention model for the overlap factors).
double predictGemmUs(const Machine& mc, const GemmShape& g);
double predictCopyUs(const Machine& mc, double bytes);
double predictCollectiveUs(const Machine& mc, const CollectiveMeasurement& c);
double predictP2PUs(const Machine& mc, const P2PMeasurement& p);
double predictCopyEngineUs(const Machine& mc, const CopyEngineMeasurement& c);
double hostCostUs(const Machine& mc, HostCall c);
// How much slower the GEMM runs beside the collective, and the collective beside the GEMM, in the
// overlap microbenchmark as the engine schedules it (overlap_model.h): beside / alone.
std::pair<double, double> overlapFactors(const Machine& mc, const OverlapMeasurement& v);

// `shapes` with every time replaced by the model's prediction on `mc`: synthetic measurements.
Measurements predictMeasurements(const Machine& mc, const Measurements& shapes);

struct FittedConstant {
  std::string name;  // machine-file path: "gpu.matmul_efficiency[2]", "nccl.call_overhead_us"
  double base = 0;
  double fitted = 0;
};

struct MeasurementError {
  std::string what;  // "gemm 8192x8192x3584 bf16", "Allgather team 2, 1 node(s), 134217728 B"
  double measuredUs = 0;
  double baseUs = 0;    // predicted by the base machine
  double fittedUs = 0;  // predicted by the calibrated machine
  double baseError() const { return (baseUs - measuredUs) / measuredUs; }
  double fittedError() const { return (fittedUs - measuredUs) / measuredUs; }
};

struct CalibrationResult {
  Machine machine;  // the calibrated machine
  std::vector<FittedConstant> constants;
  std::vector<MeasurementError> errors;  // one per measured time
  std::vector<std::string> notes;        // what was not fitted and why, the discrete choices
  int iterations = 0;
  bool converged = false;
  double initialCost = 0;  // half the sum of squared relative residuals before and after the fit
  double finalCost = 0;
  double medianBaseError() const;  // of |error|, over `errors`
  double medianFittedError() const;
  double maxFittedError() const;
};

// Throws Error when the measurements are impossible for the model (a collective whose team does
// not fit the base machine's topology, say).
CalibrationResult calibrate(const Machine& base, const Measurements& m);

// The constants (base -> fitted), every measurement's error before and after, and the summary.
std::string calibrationReport(const CalibrationResult& r);
std::string calibrationJson(const CalibrationResult& r);

}  // namespace braid::sim
