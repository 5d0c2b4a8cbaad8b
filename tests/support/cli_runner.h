// Runs the built `braid` command for end-to-end tests, capturing stdout and stderr separately.
// BRAID_CLI_PATH is a compile definition of every test binary (tests/CMakeLists.txt).
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace braid::testing {

struct CliResult {
  int rc = -1;  // exit code; -1 when killed by a signal
  std::string out;
  std::string err;
};

inline std::string slurpFile(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// `braid <args>`; `args` is passed through the shell, so quote paths with spaces.
inline CliResult runBraid(const std::string& args) {
  namespace fs = std::filesystem;
  static int counter = 0;
  fs::path dir = fs::temp_directory_path() / ("braid_cli_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::path out = dir / ("out" + std::to_string(counter));
  fs::path err = dir / ("err" + std::to_string(counter++));
  std::string cmd =
      std::string("'") + BRAID_CLI_PATH + "' " + args + " >'" + out.string() + "' 2>'" + err.string() + "'";
  int status = std::system(cmd.c_str());
  CliResult r;
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurpFile(out);
  r.err = slurpFile(err);
  fs::remove(out);
  fs::remove(err);
  return r;
}

}  // namespace braid::testing
