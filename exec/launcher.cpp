// Rank launching and supervision (see launcher.h). POSIX only; no libtorch.
#include "exec/launcher.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

#include "ir/error.h"

namespace braid::exec {

namespace {

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

int64_t envInt(const char* name, int64_t fallback) {
  auto v = env(name);
  if (!v) return fallback;
  try {
    size_t used = 0;
    int64_t x = std::stoll(*v, &used);
    if (used != v->size()) throw std::invalid_argument("trailing characters");
    return x;
  } catch (const std::exception&) {
    throw Error(std::string("environment variable ") + name + "=" + *v + " is not an integer");
  }
}

void validate(const RankEnv& e) {
  if (e.worldSize < 1 || e.rank < 0 || e.rank >= e.worldSize)
    throw Error("inconsistent " + e.launcher + " environment: rank " + std::to_string(e.rank) + " of world size " +
                std::to_string(e.worldSize));
  if (e.port <= 0 || e.port > 65535) throw Error("MASTER_PORT " + std::to_string(e.port) + " is not a TCP port");
}

}  // namespace

std::optional<RankEnv> detectRankEnv() {
  RankEnv e;
  e.masterAddr = env("MASTER_ADDR").value_or("127.0.0.1");
  if (env(kChildEnv) == std::optional<std::string>("1")) {
    e.launcher = "braid";
    e.rank = envInt("RANK", 0);
    e.worldSize = envInt("WORLD_SIZE", 1);
    e.localRank = envInt("LOCAL_RANK", e.rank);
    e.port = static_cast<int>(envInt("MASTER_PORT", 29500));
    e.runId = env("BRAID_RUN_ID").value_or("");
  } else if (env("RANK") && env("WORLD_SIZE")) {
    e.launcher = "torchrun";
    e.rank = envInt("RANK", 0);
    e.worldSize = envInt("WORLD_SIZE", 1);
    e.localRank = envInt("LOCAL_RANK", 0);
    e.port = static_cast<int>(envInt("MASTER_PORT", 29500));
    e.storeIsExternal = env("TORCHELASTIC_USE_AGENT_STORE") == std::optional<std::string>("True");
    e.runId = env("TORCHELASTIC_RUN_ID").value_or("") + "." + env("TORCHELASTIC_RESTART_COUNT").value_or("0");
  } else if (env("OMPI_COMM_WORLD_RANK") && env("OMPI_COMM_WORLD_SIZE")) {
    e.launcher = "mpirun";
    e.rank = envInt("OMPI_COMM_WORLD_RANK", 0);
    e.worldSize = envInt("OMPI_COMM_WORLD_SIZE", 1);
    e.localRank = envInt("OMPI_COMM_WORLD_LOCAL_RANK", 0);
    e.port = static_cast<int>(envInt("MASTER_PORT", 29500));
    e.runId = env("OMPI_MCA_ess_base_jobid").value_or("");
  } else if (env("PMI_RANK") && env("PMI_SIZE")) {
    e.launcher = "pmi";
    e.rank = envInt("PMI_RANK", 0);
    e.worldSize = envInt("PMI_SIZE", 1);
    e.localRank = envInt("MPI_LOCALRANKID", 0);
    e.port = static_cast<int>(envInt("MASTER_PORT", 29500));
  } else if (env("SLURM_PROCID") && envInt("SLURM_NTASKS", 1) > 1) {
    e.launcher = "srun";
    e.rank = envInt("SLURM_PROCID", 0);
    e.worldSize = envInt("SLURM_NTASKS", 1);
    e.localRank = envInt("SLURM_LOCALID", 0);
    e.port = static_cast<int>(envInt("MASTER_PORT", 29500));
    e.runId = env("SLURM_JOB_ID").value_or("") + "." + env("SLURM_STEP_ID").value_or("");
  } else {
    return std::nullopt;
  }
  validate(e);
  return e;
}

int findFreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw Error(std::string("cannot open a socket to find a free port: ") + std::strerror(errno));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    throw Error(std::string("cannot bind a socket on 127.0.0.1: ") + std::strerror(errno));
  }
  socklen_t len = sizeof addr;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  int port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}

bool portInUse(int port, const std::string& errorText) {
  for (const char* says : {"EADDRINUSE", "ddress already in use", "errno: 98"})
    if (errorText.find(says) != std::string::npos) return true;
  // The text may not say why: try to bind the port as the store would (every address).
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  bool taken = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 && errno == EADDRINUSE;
  ::close(fd);
  return taken;
}

std::vector<std::string> selfCommandLine() {
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  std::string cur;
  for (char c : all) {
    if (c == '\0') {
      args.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) args.push_back(cur);
  return args;
}

namespace {

struct Child {
  int64_t rank = 0;
  pid_t pid = -1;
  int out = -1;
  int err = -1;
  std::string out_buf, err_buf;
  std::deque<std::string> last_err;
  bool exited = false;
  bool killed = false;  // by us
  int status = 0;
  int64_t exit_order = -1;  // poll round in which its exit was seen
};

// A rank whose error says a peer went away is a victim, not the cause.
bool looksLikeVictim(const Child& c) {
  // Killed writing to a peer that is gone (ranks ignore SIGPIPE; a program that does not may not).
  if (WIFSIGNALED(c.status) && WTERMSIG(c.status) == SIGPIPE) return true;
  for (const auto& line : c.last_err)
    if (line.find("a peer rank probably exited") != std::string::npos || line.find("timed out after") != std::string::npos)
      return true;
  return false;
}

std::string describeStatus(int status) {
  if (WIFEXITED(status)) return "exit code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    const char* name = strsignal(sig);
    return "signal " + std::to_string(sig) + (name ? std::string(" (") + name + ")" : std::string());
  }
  return "status " + std::to_string(status);
}

void emitLines(Child& c, std::string& buf, bool is_err, bool quiet, bool flush_all) {
  size_t start = 0;
  for (;;) {
    size_t nl = buf.find('\n', start);
    if (nl == std::string::npos) break;
    std::string line = buf.substr(start, nl - start);
    start = nl + 1;
    if (is_err) {
      std::cerr << "[rank " << c.rank << "] " << line << "\n";
      c.last_err.push_back(line);
      if (c.last_err.size() > 8) c.last_err.pop_front();
    } else if (!quiet) {
      if (c.rank == 0) {
        std::cout << line << "\n";
      } else {
        std::cout << "[rank " << c.rank << "] " << line << "\n";
      }
    }
  }
  buf.erase(0, start);
  if (flush_all && !buf.empty()) {
    buf += "\n";
    emitLines(c, buf, is_err, quiet, false);
  }
  std::cout.flush();
  std::cerr.flush();
}

// Reads what is available on fd into buf; returns false at EOF or error.
bool drain(int fd, std::string& buf) {
  char tmp[4096];
  for (;;) {
    ssize_t n = ::read(fd, tmp, sizeof tmp);
    if (n > 0) {
      buf.append(tmp, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    if (n < 0 && errno == EINTR) continue;
    return false;
  }
}

// One launch of every rank on `port`; nullopt when rank 0 found the port taken (the others are
// stopped at once), else the exit code spawnRanks returns.
std::optional<int> launchOnce(const SpawnOptions& o, const std::vector<std::string>& args, int port) {
  std::string run_id = std::to_string(::getpid()) + "." +
                       std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
  std::vector<Child> children(static_cast<size_t>(o.ranks));
  std::cout.flush();
  std::cerr.flush();
  for (int64_t r = 0; r < o.ranks; ++r) {
    Child& c = children[static_cast<size_t>(r)];
    c.rank = r;
    int po[2], pe[2];
    if (::pipe(po) != 0 || ::pipe(pe) != 0) throw Error(std::string("pipe failed: ") + std::strerror(errno));
    pid_t pid = ::fork();
    if (pid < 0) throw Error(std::string("fork failed: ") + std::strerror(errno));
    if (pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the supervisor
      ::dup2(po[1], STDOUT_FILENO);
      ::dup2(pe[1], STDERR_FILENO);
      ::close(po[0]);
      ::close(pe[0]);
      ::close(po[1]);
      ::close(pe[1]);
      ::setenv(kChildEnv, "1", 1);
      ::setenv("RANK", std::to_string(r).c_str(), 1);
      ::setenv("LOCAL_RANK", std::to_string(r).c_str(), 1);
      ::setenv("WORLD_SIZE", std::to_string(o.ranks).c_str(), 1);
      ::setenv("LOCAL_WORLD_SIZE", std::to_string(o.ranks).c_str(), 1);
      ::setenv("MASTER_ADDR", "127.0.0.1", 1);
      ::setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
      ::setenv("BRAID_RUN_ID", run_id.c_str(), 1);
      std::vector<char*> cargs;
      for (auto& a : args) cargs.push_back(const_cast<char*>(a.c_str()));
      cargs.push_back(nullptr);
      ::execv("/proc/self/exe", cargs.data());
      std::fprintf(stderr, "cannot re-execute /proc/self/exe: %s\n", std::strerror(errno));
      ::_exit(127);
    }
    ::close(po[1]);
    ::close(pe[1]);
    c.pid = pid;
    c.out = po[0];
    c.err = pe[0];
    ::fcntl(c.out, F_SETFL, O_NONBLOCK);
    ::fcntl(c.err, F_SETFL, O_NONBLOCK);
  }

  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  // The ranks' own watchdogs fire at the timeout and name the statement they are stuck in; the
  // supervisor waits a little longer before it kills them.
  auto deadline = start + std::chrono::milliseconds(static_cast<int64_t>(o.timeoutSec * 1000) + 3000);
  std::optional<Clock::time_point> kill_at;
  int64_t first_failed = -1;
  bool timed_out = false;
  bool port_taken = false;
  size_t running = children.size();

  auto killAll = [&] {
    for (auto& c : children)
      if (!c.exited && !c.killed) {
        ::kill(c.pid, SIGKILL);
        c.killed = true;
      }
  };

  int64_t round = 0;
  while (running > 0) {
    ++round;
    std::vector<pollfd> fds;
    for (auto& c : children) {
      if (c.out >= 0) fds.push_back({c.out, POLLIN, 0});
      if (c.err >= 0) fds.push_back({c.err, POLLIN, 0});
    }
    if (!fds.empty()) ::poll(fds.data(), fds.size(), 50);
    else ::usleep(50 * 1000);
    for (auto& c : children) {
      if (c.out >= 0 && !drain(c.out, c.out_buf)) {
        ::close(c.out);
        c.out = -1;
      }
      if (c.err >= 0 && !drain(c.err, c.err_buf)) {
        ::close(c.err);
        c.err = -1;
      }
      emitLines(c, c.out_buf, false, o.quiet, c.out < 0);
      emitLines(c, c.err_buf, true, o.quiet, c.err < 0);
    }
    for (auto& c : children) {
      if (c.exited) continue;
      int status = 0;
      pid_t r = ::waitpid(c.pid, &status, WNOHANG);
      if (r == c.pid) {
        c.exited = true;
        c.status = status;
        c.exit_order = round;
        --running;
        bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
        if (c.rank == 0 && !c.killed && WIFEXITED(status) && WEXITSTATUS(status) == kPortTakenExitCode) {
          port_taken = true;  // the others wait for a store that will never be served: stop them now
          kill_at = Clock::now();
        } else if (!ok && first_failed < 0 && !c.killed) {
          first_failed = c.rank;
          // Give the others a moment to report their own view of the failure, then stop them.
          kill_at = Clock::now() + std::chrono::milliseconds(1500);
        }
      }
    }
    auto now = Clock::now();
    if (running > 0 && kill_at && now >= *kill_at) killAll();
    if (running > 0 && !timed_out && now >= deadline) {
      timed_out = true;
      killAll();
    }
  }
  // Whatever is left in the pipes.
  for (auto& c : children) {
    if (c.out >= 0) {
      drain(c.out, c.out_buf);
      ::close(c.out);
    }
    if (c.err >= 0) {
      drain(c.err, c.err_buf);
      ::close(c.err);
    }
    emitLines(c, c.out_buf, false, o.quiet, true);
    emitLines(c, c.err_buf, true, o.quiet, true);
  }

  if (port_taken) return std::nullopt;
  std::string killed;
  for (auto& c : children)
    if (c.killed) killed += (killed.empty() ? "" : " ") + std::to_string(c.rank);
  if (timed_out) {
    std::cerr << "braid run: timed out after " << o.timeoutSec << " s; ranks still running were killed: " << killed
              << " (a deadlock in the program, or a rank blocked on a peer that is gone; raise --timeout for long "
                 "runs)\n";
    return 1;
  }
  if (first_failed < 0) return 0;
  // The cause: the earliest failure, preferring a rank that did not merely lose a peer (ranks
  // that fail in the same poll round are seen in rank order, not in time order).
  auto failed = [](const Child& c) { return !c.killed && !(WIFEXITED(c.status) && WEXITSTATUS(c.status) == 0); };
  for (const auto& c : children) {
    const Child& cur = children[static_cast<size_t>(first_failed)];
    if (&c == &cur || !failed(c)) continue;
    bool better = looksLikeVictim(cur) && !looksLikeVictim(c);
    bool earlier = c.exit_order < cur.exit_order && looksLikeVictim(c) == looksLikeVictim(cur);
    if (better || earlier) first_failed = c.rank;
  }
  const Child& f = children[static_cast<size_t>(first_failed)];
  int code = WIFEXITED(f.status) ? WEXITSTATUS(f.status) : 3;
  bool quiet_mismatch = code == 1 && killed.empty() && f.last_err.empty();  // rank 0 printed the mismatch
  if (!quiet_mismatch) {
    std::string why = f.last_err.empty() ? std::string("(no message)") : f.last_err.back();
    std::cerr << "braid run: rank " << f.rank << " failed first (" << describeStatus(f.status) << "): " << why;
    if (!killed.empty()) std::cerr << "; stopped ranks " << killed;
    std::cerr << "\n";
  }
  return code == 0 ? 3 : code;
}

}  // namespace

int spawnRanks(const SpawnOptions& o) {
  if (o.ranks < 1) throw Error("--ranks must be at least 1");
  std::vector<std::string> args = o.argv;
  if (args.empty()) args = selfCommandLine();
  int port = o.firstPort;
  if (port == 0 && env("BRAID_RUN_PORT")) port = static_cast<int>(envInt("BRAID_RUN_PORT", 0));
  if (port < 0 || port > 65535) throw Error("BRAID_RUN_PORT " + std::to_string(port) + " is not a TCP port");
  for (int attempt = 1;; ++attempt) {
    if (port == 0) port = findFreePort();
    if (std::optional<int> code = launchOnce(o, args, port)) return *code;
    if (attempt >= o.portAttempts)
      throw Error("rank 0 found the rendezvous port taken on " + std::to_string(attempt) +
                  " launches in a row (ports are in short supply on this host?)");
    std::cerr << "braid run: port " << port << " on 127.0.0.1 was taken before rank 0 could serve the rendezvous "
              << "store there; starting the ranks again on another port\n";
    port = 0;
  }
}

}  // namespace braid::exec
