// The power state of one GPU under its power cap (Machine::gpu.power; docs/SIM.md, "Power state"):
// the one definition of how load turns into clocks, used by the engine while it schedules a program
// and by `braid calibrate` when it fits the cap to a GEMM's slow-down under sustained load.
//
// `level` is the power the controller sees, averaged over the time constant, in units of a full
// GEMM load at full clocks. The load is what runs now, in the same units (Engine: the SMs busy on
// compute, weighted by how compute-bound their kernels are). Under the cap the level relaxes toward
// the load: level' = (load - level) / tau. When the level reaches the cap while the load is above
// it, the clocks drop until the power is the cap: the level stays there and compute runs slower,
// by cappedSlowdown at a full load and less at a smaller one (computeFactor). Once the load falls
// to the cap or below, the clocks come back and the level relaxes again.
#pragma once

#include "sim/machine.h"

namespace braid::sim {

class PowerState {
 public:
  PowerState() = default;
  PowerState(const PowerModel& m, double level) : m_(m), level_(m.enabled() ? level : 0) {}

  // Let `us` microseconds pass at the current load.
  void advance(double us);
  // The load from now on (after advance() has brought the state to now).
  void setLoad(double load);

  double level() const { return level_; }
  double load() const { return load_; }
  bool capped() const;
  // What a kernel's compute time is multiplied by now (1 below the cap).
  double computeFactor() const;
  // Microseconds until the cap is reached at the current load (infinity if it never is, 0 if
  // capped already).
  double usUntilCap() const;

 private:
  PowerModel m_;
  double level_ = 0;
  double load_ = 0;
};

// The level after `us` microseconds idle, from `level`.
double idleLevel(const PowerModel& m, double level, double us);

// How long a GEMM that takes `baseUs` at full clocks takes from power state `s`, drawing `load`
// (1: a full load) on every SM; it leaves `s` as it ends (the calibration's model of its power
// benchmark).
double runFullLoad(PowerState& s, double baseUs, double load = 1);

}  // namespace braid::sim
