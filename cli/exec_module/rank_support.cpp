// Joining the ranks and reporting a rank's failure (see rank_support.h).
#include "cli/exec_module/rank_support.h"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>

#include <c10/util/Exception.h>

#include "exec/backend_router.h"
#include "exec/device.h"
#include "ir/error.h"

namespace braid::cli {

bool checkBackend(const std::string& backend, const std::string& cpuAlternative) {
  const bool cuda = backend == "cuda";
  if (backend != "cpu" && !cuda) throw Error("--backend " + backend + ": expected cpu or cuda");
  if (cuda && !exec::haveCuda())
    throw Error("--backend cuda is not available: braid was built without CUDA (its libtorch has no CUDA, or the "
                "CUDA toolkit / NCCL were not found); --backend cpu " + cpuAlternative);
  return cuda;
}

exec::Rendezvous rendezvousOf(const exec::RankEnv& env, double timeoutSec, const std::string& prefix) {
  exec::Rendezvous rv;
  rv.rank = env.rank;
  rv.worldSize = env.worldSize;
  rv.masterAddr = env.masterAddr;
  rv.port = env.port;
  rv.storeIsExternal = env.storeIsExternal;
  rv.prefix = prefix + env.runId;
  rv.timeout = std::chrono::milliseconds(static_cast<int64_t>(timeoutSec * 1000));
  if (const char* f = std::getenv("BRAID_STORE_FILE"); f && *f) rv.storeFile = f;
  return rv;
}

std::unique_ptr<exec::Communicator> connectRank(const exec::RankEnv& env, bool cuda, double timeoutSec,
                                                const std::string& prefix) {
  if (env.worldSize == 1 && !cuda) return exec::makeSelfCommunicator();
  exec::Rendezvous rv = rendezvousOf(env, timeoutSec, prefix);
  return cuda ? exec::makeNcclCommunicator(rv, env.localRank) : exec::makeGlooCommunicator(rv);
}

std::unique_ptr<exec::Communicator> connectCudaTransports(const exec::RankEnv& env, std::set<CommBackend> used,
                                                          std::optional<CommBackend> force, double timeoutSec,
                                                          const std::string& prefix) {
  exec::Rendezvous rv = rendezvousOf(env, timeoutSec, prefix);
  if (used.empty()) used.insert(force.value_or(CommBackend::kNccl));
  std::map<CommBackend, std::unique_ptr<exec::Communicator>> comms;
  if (used.count(CommBackend::kNccl)) comms[CommBackend::kNccl] = exec::makeNcclCommunicator(rv, env.localRank);
  if (used.count(CommBackend::kCuda)) {
    if (!comms.empty()) rv.storeIsExternal = true;
    comms[CommBackend::kCuda] = exec::makeCudaIpcCommunicator(rv, env.localRank);
  }
  return exec::makeBackendRouter(std::move(comms), force);
}

void runRankAndExit(const exec::RankEnv& env, const std::function<int()>& body) {
  // A peer that exits closes its sockets: Gloo's next write to it must fail with EPIPE (an error
  // naming the communication) instead of killing this rank with SIGPIPE and no message, which made
  // the launcher blame this rank for its peer's failure (seen under ASan, CliRun.FailingRankStopsEveryone).
  std::signal(SIGPIPE, SIG_IGN);
  int code = 3;
  try {
    code = body();
  } catch (const exec::PortTaken& e) {
    std::cerr << "rank " << env.rank << ": " << e.what() << "\n";
    // Under braid's own launcher, a reason to start again on another port (exec/launcher.h).
    code = env.launcher == "braid" ? exec::kPortTakenExitCode : 2;
  } catch (const Error& e) {
    std::cerr << "rank " << env.rank << ": " << e.what() << "\n";
    code = 2;
  } catch (const c10::Error& e) {
    // ATen's own message, without the C++ backtrace it carries.
    std::cerr << "rank " << env.rank << ": internal error: " << e.what_without_backtrace() << "\n";
    code = 3;
  } catch (const std::exception& e) {
    std::cerr << "rank " << env.rank << ": internal error: " << e.what() << "\n";
    code = 3;
  }
  std::cout.flush();
  std::cerr.flush();
  std::fflush(stdout);
  std::fflush(stderr);
  std::_Exit(code);
}

}  // namespace braid::cli
