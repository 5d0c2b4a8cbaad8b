// The CUDA backend's communicator for a whole program: each communication goes to the
// communicator of its statement's `backend=` (NCCL, or CUDA = the copy engines), or to the one
// `--backend-override` forces. The evaluator names the backend before every communication
// (Communicator::useBackend); operations outside statements (the check's gather, barriers) use the
// first communicator. A coalescing group belongs to the backend of its first send/recv; a group
// that mixes backends is an error.
#pragma once

#ifdef BRAID_WITH_TORCH

#include <map>
#include <memory>
#include <optional>

#include "exec/communicator.h"
#include "ir/host_ir.h"

namespace braid::exec {

// `comms`: one communicator per backend the program uses (at least one; the first in the map's
// order is the primary). `force`: --backend-override, applied to every statement.
std::unique_ptr<Communicator> makeBackendRouter(std::map<CommBackend, std::unique_ptr<Communicator>> comms,
                                                std::optional<CommBackend> force);

}  // namespace braid::exec

#endif  // BRAID_WITH_TORCH
