// Long unrolling shows its progress on a terminal and nowhere else (docs/HARDENING.md,
// "Progress"). The terminal is a pseudo-terminal this test opens and hands to `braid verify` as
// its stderr; the same command with stderr in a pipe must print no progress.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/cli_runner.h"

namespace braid {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct TerminalRun {
  int rc = -1;
  std::string terminal;  // everything braid wrote to its stderr, the terminal
};

// Runs `braid args` with stderr on a fresh pseudo-terminal and stdout on /dev/null.
TerminalRun runOnTerminal(const std::vector<std::string>& args) {
  TerminalRun r;
  int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0) {
    ADD_FAILURE() << "cannot open a pseudo-terminal: errno " << errno;
    return r;
  }
  std::string slaveName = ::ptsname(master);
  pid_t pid = ::fork();
  if (pid == 0) {
    int slave = ::open(slaveName.c_str(), O_RDWR | O_NOCTTY);
    int null = ::open("/dev/null", O_WRONLY);
    if (slave < 0 || null < 0) ::_exit(126);
    ::dup2(slave, STDERR_FILENO);
    ::dup2(null, STDOUT_FILENO);
    ::close(master);
    std::vector<char*> argv{const_cast<char*>(BRAID_CLI_PATH)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(BRAID_CLI_PATH, argv.data());
    ::_exit(127);
  }
  // Read until the child's side closes (EIO on Linux once no process holds the terminal).
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(master, buf, sizeof buf);
    if (n > 0) {
      r.terminal.append(buf, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;
    }
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(master);
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::vector<std::string> verifyEightRanks() {
  return {"verify", std::string(BRAID_SOURCE_DIR) + "/examples/ag_matmul_8ranks.hir", "--bind", "i0=64",
          "--bind", "i2=16", "--bind", "i3=16"};
}

TEST(Progress, ShownOnATerminal) {
  TerminalRun r = runOnTerminal(verifyEightRanks());
  EXPECT_EQ(r.rc, 0) << r.terminal;
  EXPECT_THAT(r.terminal, HasSubstr("braid: unrolling rank 1 of 8"));
  EXPECT_THAT(r.terminal, HasSubstr("braid: unrolling rank 8 of 8"));
  EXPECT_THAT(r.terminal, HasSubstr("braid: unrolled 8 ranks into "));
}

TEST(Progress, NotWrittenIntoAPipe) {
  std::string cmd = "verify";
  for (size_t i = 1; i < verifyEightRanks().size(); ++i) cmd += " " + verifyEightRanks()[i];
  testing::CliResult r = testing::runBraid(cmd);
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.err, Not(HasSubstr("unroll")));
}

}  // namespace
}  // namespace braid
