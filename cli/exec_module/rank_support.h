// What `braid run` and `braid calibrate --measure` do alike as one rank of a launched job: connect
// the rank to the others, and run its work reporting errors as a rank (then leave at once).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "ir/comm_backend.h"
#include "exec/communicator.h"
#include "exec/launcher.h"

namespace braid::cli {

// Checks --backend (cpu or cuda, and cuda only in a CUDA build); returns whether it is cuda.
// `cpuAlternative` says what --backend cpu does instead ("runs on CPU").
bool checkBackend(const std::string& backend, const std::string& cpuAlternative);

// Where the rank meets the others: the launcher's store, keys under `prefix` + the run id, the
// run's timeout.
exec::Rendezvous rendezvousOf(const exec::RankEnv& env, double timeoutSec, const std::string& prefix);

// The rank's communicator: the self communicator for a lone CPU rank, else Gloo (CPU) or NCCL
// (cuda, on GPU env.localRank), meeting at the launcher's store under `prefix` + the run id.
std::unique_ptr<exec::Communicator> connectRank(const exec::RankEnv& env, bool cuda, double timeoutSec,
                                                const std::string& prefix);

// The CUDA backend's communicator for the transports in `used` (NCCL and / or the copy
// engines; none: NCCL), behind one router (`force`: every operation on that one, as
// --backend-override). Both share the rendezvous store: the copy engines' communicator joins the
// one NCCL's serves. On GPU env.localRank.
std::unique_ptr<exec::Communicator> connectCudaTransports(const exec::RankEnv& env, std::set<CommBackend> used,
                                                          std::optional<CommBackend> force, double timeoutSec,
                                                          const std::string& prefix);

// Runs `body` as rank env.rank and exits the process with its code: exec::PortTaken under braid's
// own launcher is exec::kPortTakenExitCode (it starts the ranks again); a braid::Error is reported
// as "rank R: ..." (code 2), anything else as an internal error (code 3). Leaving at once matters:
// a Gloo process group whose peer is gone could block in its destructor.
[[noreturn]] void runRankAndExit(const exec::RankEnv& env, const std::function<int()>& body);

}  // namespace braid::cli
