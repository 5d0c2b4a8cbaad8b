// The `braid` command is one CLI11 app; each subcommand lives in its own file and registers
// itself here. A subcommand's run function returns the process exit code:
//   0 success, 1 a bug was found in the program under study (verify), 2 bad input.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace braid::cli {

struct Command {
  std::string name;
  // Adds the subcommand's options to `sub`; returns the function to run when it is chosen.
  std::function<std::function<int()>(CLI::App& sub)> setup;
  std::string help;
};

// Called from static initializers in each command's file (see BRAID_REGISTER_COMMAND).
bool registerCommand(Command c);
const std::vector<Command>& commands();

}  // namespace braid::cli

#define BRAID_CONCAT_INNER(a, b) a##b
#define BRAID_CONCAT(a, b) BRAID_CONCAT_INNER(a, b)
#define BRAID_REGISTER_COMMAND(...) \
  static const bool BRAID_CONCAT(braid_registered_, __LINE__) = ::braid::cli::registerCommand(__VA_ARGS__)
