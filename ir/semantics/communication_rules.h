// What each communication type does on one rank: which buffers it reads and writes, and how their
// sizes must relate (NCCL's rules). The interpreter (verify, sim) and the evaluator (exec) share
// these.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/host_ir.h"

namespace braid::sem {

struct CommRoles {
  bool readsInput = false;
  bool writesOutput = false;
};

// On a member of the team; `isRoot` for rooted types (for SendRecv the root is the sender).
CommRoles commRoles(CommunicationType t, bool isRoot);

// Whether the type moves the same counts on every member (its matched members must agree on both).
bool isSymmetric(CommunicationType t);

// The size rule of a communication type on one member of a team of `teamSize`: "" when `inCount`
// (elements read, when the rank reads its input) and `outCount` (elements written) follow it,
// otherwise what is wrong ("a Scatter over 4 ranks needs a root input of 4 x 8 elements, got 8").
// Allgather: out = n x in. ReduceScatter: in = n x out. Allreduce, AllToAll: in = out (AllToAll:
// divisible by n). Scatter: the root's in = n x out. Gather: the root's out = n x in. Broadcast,
// Reduce: in = out where the rank has both.
std::string communicationSizeProblem(CommunicationType t, int64_t teamSize, bool isRoot, const CommRoles& roles,
                                     int64_t inCount, int64_t outCount);

// Whether `rank` posts `c` (a member of its team).
bool postsCommunication(const Communication& c, int64_t rank);

// The communicator a communication runs on: its backend and its team, sorted
// ("NCCL team (0 1 2 3)"). P2P operations run on the world communicator of their backend.
std::string communicatorName(CommBackend backend, std::vector<int64_t> team);

}  // namespace braid::sem
