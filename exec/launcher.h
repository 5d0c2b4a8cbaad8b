// Launching ranks: `braid run --ranks N` re-executes its own binary N times as rank processes
// (env BRAID_RUN_CHILD=1 plus RANK / WORLD_SIZE / LOCAL_RANK / MASTER_ADDR / MASTER_PORT, a
// free port on 127.0.0.1), forwards their output with a "[rank r]" prefix, and stops the others
// when one fails or the time runs out. The same binary also runs as one rank under torchrun
// (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT; the agent serves the TCPStore),
// OpenMPI (OMPI_COMM_WORLD_RANK / _SIZE / _LOCAL_RANK), MPICH/PMI (PMI_RANK / PMI_SIZE) and
// Slurm's srun (SLURM_PROCID / SLURM_NTASKS). No libtorch here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace braid::exec {

// Marks a process started by spawnRanks (its value is "1").
inline constexpr const char* kChildEnv = "BRAID_RUN_CHILD";

struct RankEnv {
  std::string launcher;  // "braid", "torchrun", "mpirun", "pmi", "srun"
  int64_t rank = 0;
  int64_t worldSize = 1;
  int64_t localRank = 0;
  std::string masterAddr = "127.0.0.1";
  int port = 29500;
  bool storeIsExternal = false;  // torchrun's agent already serves the TCPStore on the port
  std::string runId;             // distinguishes runs that share a store
};

// This process's rank environment, or nullopt when it was started by hand (it then launches the
// ranks itself). Throws braid::Error on an inconsistent environment (e.g. RANK >= WORLD_SIZE).
std::optional<RankEnv> detectRankEnv();

// A TCP port on 127.0.0.1 that was free a moment ago.
int findFreePort();

struct SpawnOptions {
  int64_t ranks = 2;
  double timeoutSec = 60;       // wall time for the whole run; then every rank is killed
  std::vector<std::string> argv;  // the command line to re-execute (argv[0] is replaced)
  bool quiet = false;           // don't forward the ranks' stdout (stderr always is)
};

// Starts the ranks, waits for them, returns the exit code to use: 0 when all succeeded; the first
// failing rank's code (its message named on stderr) otherwise; 1 on a timeout (a hang is a bug in
// the program run, or a rank stuck in a collective whose peer is gone).
int spawnRanks(const SpawnOptions& options);

// The command line this process was started with (from /proc/self/cmdline).
std::vector<std::string> selfCommandLine();

}  // namespace braid::exec
