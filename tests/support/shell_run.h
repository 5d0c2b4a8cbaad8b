// Runs a shell command (the built `braid` with an environment, usually) and collects its stdout
// and stderr together, its exit code and its duration; and picks a free loopback port for a
// rendezvous store. Written with popen and POSIX sockets rather than std::filesystem, for test
// binaries that link libtorch (see temp_dir.h).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <string>

namespace braid::testing {

struct ShellResult {
  int code = -1;     // exit code; 128 + signal when killed
  std::string out;   // stdout and stderr together
  double seconds = 0;
};

// A shell command line as is (fold stderr into stdout in it when wanted).
inline ShellResult runShell(const std::string& cmd) {
  auto start = std::chrono::steady_clock::now();
  ShellResult r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int status = ::pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

// `env braid args`, with stderr folded into stdout. BRAID_CLI_PATH is a compile definition of
// every test binary (tests/CMakeLists.txt).
inline ShellResult runBraidMerged(const std::string& args, const std::string& env = "") {
  return runShell(env + (env.empty() ? "" : " ") + BRAID_CLI_PATH + std::string(" ") + args + " 2>&1");
}

// A port the kernel considers free right now (as the braid launcher picks one).
inline int freeLoopbackPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

}  // namespace braid::testing
