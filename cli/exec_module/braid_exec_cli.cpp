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

namespace {

// Runs one entry point's work: checks that `braid` and the module are one build (the config's
// size and the version), and reports exceptions, which do not cross the C boundary, as
// cli/main.cpp reports them ("braid run: ...", exit 2 for bad input, 3 for an internal error).
template <class Config, class Body>
int guarded(const char* command, std::size_t config_size, const char* version, Body body) {
  try {
    if (config_size != sizeof(Config) || std::strcmp(version, BRAID_VERSION) != 0)
      throw braid::Error(std::string("the run module (braid_exec_cli, braid ") + BRAID_VERSION +
                         ") is from another build than this braid (" + version +
                         "); rebuild or reinstall braid, or point BRAID_EXEC_MODULE at the matching module");
    return body();
  } catch (const braid::Error& e) {
    std::cerr << "braid " << command << ": " << braid::formatDiagnostic(e) << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "braid " << command << ": internal error: " << e.what() << "\n";
    return 3;
  } catch (...) {
    std::cerr << "braid " << command << ": internal error: unknown exception\n";
    return 3;
  }
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int braid_exec_run(const braid::cli::RunConfig* config,
                                                                      std::size_t config_size, const char* version) {
  return guarded<braid::cli::RunConfig>("run", config_size, version, [config] {
    // The module has its own copy of braid's libraries: the budget crosses in the config.
    braid::sem::setWorkBudget({config->maxEvents, config->maxMemoryBytes});
    return braid::cli::runCommand(*config);
  });
}

// `braid calibrate --measure`.
extern "C" __attribute__((visibility("default"))) int braid_exec_measure(const braid::cli::MeasureConfig* config,
                                                                          std::size_t config_size,
                                                                          const char* version) {
  return guarded<braid::cli::MeasureConfig>("calibrate", config_size, version,
                                            [config] { return braid::cli::measureCommand(*config); });
}

// Checked at compile time: the entry matches the type `braid` calls it through.
static_assert(std::is_same_v<decltype(&braid_exec_run), braid::cli::ExecModuleEntry>);
static_assert(std::is_same_v<decltype(&braid_exec_measure), braid::cli::MeasureModuleEntry>);
