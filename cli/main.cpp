// The `braid` command: parses arguments with CLI11 and dispatches to the registered subcommands.
// Errors from braid's libraries become a message on stderr and an exit code, never a crash.
#include <unistd.h>

#include <iostream>
#include <map>
#include <new>

#include "cli/command.h"
#include "ir/diagnostic.h"
#include "ir/error.h"
#include "ir/semantics/budget.h"

#ifndef BRAID_VERSION
#define BRAID_VERSION "0.0.0"
#endif

namespace braid::cli {

namespace {
std::vector<Command>& registry() {
  static std::vector<Command> r;
  return r;
}
}  // namespace

bool registerCommand(Command c) {
  registry().push_back(std::move(c));
  return true;
}

const std::vector<Command>& commands() { return registry(); }

}  // namespace braid::cli

int main(int argc, char** argv) {
  CLI::App app{"braid: lower, verify, simulate and run multi-GPU host programs"};
  app.set_version_flag("--version", std::string("braid ") + BRAID_VERSION);
  app.require_subcommand(1);
  std::map<CLI::App*, std::function<int()>> runners;
  auto cmds = braid::cli::commands();
  std::sort(cmds.begin(), cmds.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  for (const auto& c : cmds) {
    CLI::App* sub = app.add_subcommand(c.name, c.help);
    runners[sub] = c.setup(*sub);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  // Long unrolling shows its progress, on a terminal only (never in a pipe or a log).
  braid::sem::setShowProgress(::isatty(STDERR_FILENO) != 0);
  for (auto& [sub, run] : runners) {
    if (!sub->parsed()) continue;
    try {
      return run();
    } catch (const braid::Error& e) {
      std::cerr << "braid " << sub->get_name() << ": " << braid::formatDiagnostic(e) << "\n";
      return 2;
    } catch (const std::bad_alloc&) {
      // The budgets refuse what they can foresee; this is the net under them.
      std::cerr << "braid " << sub->get_name()
                << ": out of memory: the input is too large for this machine (lower --max-memory / --max-events "
                   "to be refused up front, or use smaller sizes)\n";
      return 2;
    } catch (const std::exception& e) {
      std::cerr << "braid " << sub->get_name() << ": internal error: " << e.what() << "\n";
      return 3;
    }
  }
  return 2;
}
