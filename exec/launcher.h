// Launching ranks: `braid run --ranks N` re-executes its own binary N times as rank processes
// (env BRAID_RUN_CHILD=1 plus RANK / WORLD_SIZE / LOCAL_RANK / MASTER_ADDR / MASTER_PORT, a
// free port on 127.0.0.1), forwards their output with a "[rank r]" prefix, and stops the others
// when one fails or the time runs out. A port that was free when picked can be taken before rank
// 0 listens on it (launches back to back, other programs): rank 0 then exits with
// kPortTakenExitCode and the launcher starts every rank again on another port. The same binary also runs as one rank under torchrun
// (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT; the agent serves the TCPStore),
// OpenMPI (OMPI_COMM_WORLD_RANK / _SIZE / _LOCAL_RANK), MPICH/PMI (PMI_RANK / PMI_SIZE) and
// Slurm's srun (SLURM_PROCID / SLURM_NTASKS). No libtorch here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/error.h"

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

// Rank 0 could not serve the rendezvous store: something else listens on its port.
class PortTaken : public Error {
 public:
  using Error::Error;
};

// The exit code of a rank that spawnRanks started and that met PortTaken: not a failure of the
// program, a reason to start the ranks again on another port.
inline constexpr int kPortTakenExitCode = 75;

// True when the error text of a failed listen (c10d's, whose wording varies between versions)
// or a probe of `port` on this host says the port is in use.
bool portInUse(int port, const std::string& errorText);

struct SpawnOptions {
  int64_t ranks = 2;
  double timeoutSec = 60;       // wall time for the whole run; then every rank is killed
  std::vector<std::string> argv;  // the command line to re-execute (argv[0] is replaced)
  bool quiet = false;           // don't forward the ranks' stdout (stderr always is)
  // The first port to try (0: one the OS finds free; else, e.g. BRAID_RUN_PORT, this one), and
  // how many launches on fresh ports follow when rank 0 finds its port taken.
  int firstPort = 0;
  int portAttempts = 8;
};

// Starts the ranks, waits for them, returns the exit code to use: 0 when all succeeded; the first
// failing rank's code (its message named on stderr) otherwise; 1 on a timeout (a hang is a bug in
// the program run, or a rank stuck in a collective whose peer is gone). When rank 0 exits with
// kPortTakenExitCode, the others are stopped and all start again on a fresh port (a note on
// stderr says so), at most options.portAttempts times.
int spawnRanks(const SpawnOptions& options);

// The command line this process was started with (from /proc/self/cmdline).
std::vector<std::string> selfCommandLine();

}  // namespace braid::exec
