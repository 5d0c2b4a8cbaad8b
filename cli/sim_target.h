// What `braid sim` simulates, shared with the commands built on it (tune, validate): the target
// (a host IR file or a catalog workload), its workload flags, bindings and machine, turned into a
// program and simulator options. A setting given as KEY=VALUE (a sweep axis, a tune candidate)
// goes through applySetting, so every command accepts the same keys with the same checks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/workload_flags.h"
#include "ir/host_ir.h"
#include "sim/machine.h"
#include "sim/simulate.h"

namespace braid::cli {

struct SimArgs {
  std::string target;
  std::vector<std::string> binds;
  int64_t ranks = 0;
  std::string machine;
  int64_t nodes = 0;
  int64_t gpusPerNode = 0;
  bool json = false;
  std::string timeline;
  std::string trace;
  std::string draw;  // a picture of the predicted timeline (sim --draw)
  std::vector<std::string> sweep;
  bool noFold = false;
  bool graph = false;  // predict a CUDA-graph replay (SimOptions::graphReplay)
  bool printMachine = false;
  std::string power = "idle";  // --power: idle, steady, or N (runs before it; SimOptions::power)
  double powerGapMs = 0;       // --power-gap: idle ms between those runs
  WorkloadFlags flags;
};

// The workload sizes `sim` and the commands built on it default to.
WorkloadParams simDefaults();

// "a100, b200, h100, h200, h200-datasheet".
std::string presetList();

// The machine of --machine with --nodes / --gpus-per-node applied; throws Error when it is
// missing or bad.
sim::Machine loadMachineFor(const std::string& name, int64_t nodes, int64_t gpus_per_node);

// Adds --machine, --nodes and --gpus-per-node, filling `a`.
void addMachineFlags(CLI::App& sub, SimArgs& a);

// Adds --power and --power-gap (the power state a run starts in), filling `a`; `measured`: the
// command compares with a measured run, whose place in its runs is the default (validate).
void addPowerFlags(CLI::App& sub, SimArgs& a, bool measured = false);

// --power VALUE and --power-gap MS as a PowerStart; throws Error naming the flag when bad.
sim::PowerStart parsePowerStart(const std::string& value, double gapMs);

// One configuration to simulate: the program (lowered, or the parsed file) and its options.
struct Prepared {
  HostProgram lowered;  // for workloads
  const HostProgram* program = nullptr;
  sim::SimOptions options;
  std::string name;
};

// Applies a KEY=VALUE setting to `a` (`workload`: the target is a catalog workload, so the keys
// are workload flags; otherwise an unknown key binds a symbolic extent of the file).
void applySetting(SimArgs& a, const std::string& key, const std::string& v, bool workload);

// Builds the program and options for `a`; `parsed` is the target file's program (nullptr for a
// workload, which is lowered here).
void prepare(const SimArgs& a, const HostProgram* parsed, Prepared& out);

// The parsed program when the target is a file, nullopt when it is a workload; throws Error when
// it is neither.
std::optional<HostProgram> parseTarget(const SimArgs& a);

// Draws "[####    ] 3/8 configurations" on stderr (for a terminal).
void drawProgress(size_t done, size_t total);

}  // namespace braid::cli
