// The run module, libbraid_exec_cli.so: the only part of the `braid` command that links libtorch
// (see cli/exec_module.h). `braid run` loads it and calls braid_exec_run with the parsed flags.
#include <cstddef>
#include <cstring>
#include <exception>
#include <iostream>
#include <string>
#include <type_traits>

#include "cli/exec_module.h"
#include "cli/exec_module/measure_driver.h"
#include "cli/exec_module/run_driver.h"
#include "ir/diagnostic.h"
#include "ir/error.h"
#include "ir/semantics/budget.h"

#ifndef BRAID_VERSION
#define BRAID_VERSION "0.0.0"
#endif

extern "C" __attribute__((visibility("default"))) int braid_exec_run(const braid::cli::RunConfig* config,
                                                                      std::size_t config_size, const char* version) {
  // Exceptions do not cross the C boundary: they are reported here as cli/main.cpp reports them.
  try {
    if (config_size != sizeof(braid::cli::RunConfig) || std::strcmp(version, BRAID_VERSION) != 0)
      throw braid::Error(std::string("the run module (braid_exec_cli, braid ") + BRAID_VERSION +
                         ") is from another build than this braid (" + version +
                         "); rebuild or reinstall braid, or point BRAID_EXEC_MODULE at the matching module");
    // The module has its own copy of braid's libraries: the budget crosses in the config.
    braid::sem::setWorkBudget({config->maxEvents, config->maxMemoryBytes});
    return braid::cli::runCommand(*config);
  } catch (const braid::Error& e) {
    std::cerr << "braid run: " << braid::formatDiagnostic(e) << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "braid run: internal error: " << e.what() << "\n";
    return 3;
  } catch (...) {
    std::cerr << "braid run: internal error: unknown exception\n";
    return 3;
  }
}

// `braid calibrate --measure`: the same checks and error reporting, for the measure driver.
extern "C" __attribute__((visibility("default"))) int braid_exec_measure(const braid::cli::MeasureConfig* config,
                                                                          std::size_t config_size,
                                                                          const char* version) {
  try {
    if (config_size != sizeof(braid::cli::MeasureConfig) || std::strcmp(version, BRAID_VERSION) != 0)
      throw braid::Error(std::string("the run module (braid_exec_cli, braid ") + BRAID_VERSION +
                         ") is from another build than this braid (" + version +
                         "); rebuild or reinstall braid, or point BRAID_EXEC_MODULE at the matching module");
    return braid::cli::measureCommand(*config);
  } catch (const braid::Error& e) {
    std::cerr << "braid calibrate: " << braid::formatDiagnostic(e) << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "braid calibrate: internal error: " << e.what() << "\n";
    return 3;
  } catch (...) {
    std::cerr << "braid calibrate: internal error: unknown exception\n";
    return 3;
  }
}

// Checked at compile time: the entry matches the type `braid` calls it through.
static_assert(std::is_same_v<decltype(&braid_exec_run), braid::cli::ExecModuleEntry>);
static_assert(std::is_same_v<decltype(&braid_exec_measure), braid::cli::MeasureModuleEntry>);
