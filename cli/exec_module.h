// `braid run` is the only subcommand that needs libtorch, and loading libtorch costs every
// process about 0.6 s before main. So `braid` does not link it: the run entry point lives in a
// module, libbraid_exec_cli.so (cli/exec_module/braid_exec_cli.cpp, linked with braid::exec),
// that `braid run` dlopen()s after CLI11 has parsed its flags (cli/run_command.cpp). The rank
// processes the launcher starts re-execute `braid`, so they load the module the same way.
// This header is the whole interface between the two sides.
#pragma once

#include <cstddef>

#include "cli/measure_config.h"
#include "cli/run_config.h"

namespace braid::cli {

// The module's entry point: runs cli::runCommand(*config) and returns its exit code, printing
// errors as `braid` does ("braid run: ...", exit code 2 for bad input, 3 for an internal error).
// config_size and version guard against a module from another build of braid.
using ExecModuleEntry = int (*)(const RunConfig* config, std::size_t config_size, const char* version);
inline constexpr const char* kExecModuleEntry = "braid_exec_run";
// `braid calibrate --measure`'s entry point, alike: runs cli::measureCommand(*config).
using MeasureModuleEntry = int (*)(const MeasureConfig* config, std::size_t config_size, const char* version);
inline constexpr const char* kMeasureModuleEntry = "braid_exec_measure";
// Set to the module's path, it overrides where `braid run` looks for it.
inline constexpr const char* kExecModuleEnv = "BRAID_EXEC_MODULE";

// Loads the module and runs `braid run` in it. Throws braid::Error when the module cannot be
// found or loaded, or when braid was built without libtorch.
int runInExecModule(const RunConfig& config);
// Loads the module and runs `braid calibrate --measure` in it (errors as runInExecModule).
int measureInExecModule(const MeasureConfig& config);

}  // namespace braid::cli
