// Fitting the power cap (Machine::gpu.power) to the power benchmark (PowerMeasurement: a GEMM
// back to back from an idle GPU, sustained and in bursts with idle gaps). The model is
// sim/power_state.h's, run over the measured sequence: each GEMM is a full load for its time at
// full clocks, the measured gaps between GEMMs are idle, and the predicted time of every GEMM is
// compared with the measured one.
#pragma once

#include <string>
#include <vector>

#include "sim/machine.h"
#include "sim/measurements.h"

namespace braid::sim {

struct PowerFit {
  PowerModel model;       // disabled when the measurements show no slowdown under load
  GemmShape reference;    // the GEMM the cap is fitted on (a full load): the one with the most series
  double baseUs = 0;      // the GEMM's time at full clocks
  double rmsError = 0;    // of the fitted model's relative per-run error
  double rmsWithout = 0;  // the same with no cap (every run at baseUs)
  size_t runs = 0;        // runs compared
  std::string summary;    // one line for the calibration report
};

// The cap is fitted on the reference GEMM's series (at least one of them sustained); every other
// GEMM with a sustained series gets its power relative to the reference (PowerModel::gemmPower,
// by flops), the share of a full load that makes the model's sustained slowdown its own. Throws
// Error when the reference has no sustained series; returns a disabled model when it shows no
// slowdown (the GPU never reached a cap).
PowerFit fitPowerCap(const std::vector<PowerMeasurement>& series);

// The model's time of every run of `series` (same order), from an idle GPU, the GEMM drawing
// `load` of a full load's power: the measured gaps between runs are idle time.
std::vector<double> predictPowerRuns(const PowerModel& m, double baseUs, const PowerMeasurement& series,
                                     double load = 1);

}  // namespace braid::sim
