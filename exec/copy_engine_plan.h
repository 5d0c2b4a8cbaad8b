// The plan of copies of the copy-engine (CUDA IPC) backend: for one collective or one coalesced
// group of send/recv, which peer's published buffer region goes to which local region, which peers
// this rank must tell "ready" (the ones that pull from it) and which it waits for (the ones it pulls
// from). Plain C++ (no CUDA): exec/cuda_ipc_communicator.cpp runs these plans, and
// tests/exec/copy_engine_plan_test.cpp checks them against the definitions in communicator.h.
//
// Every transfer is a *pull*: a rank only ever writes its own memory, so a peer's output is never
// written behind its back; a rank's published buffer is read by its consumers between its "ready"
// and their "consumed" signals (exec/signal_protocol.h).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace braid::exec::ce {

enum class Collective { kAllgather, kAllreduce, kReduceScatter, kBroadcast, kReduce, kScatter, kGather, kAllToAll };
const char* collectiveName(Collective c);

// Local destinations of a collective's copies.
inline constexpr int32_t kOut = 0;      // the output buffer (Allreduce, Broadcast: the buffer)
inline constexpr int32_t kStaging = 1;  // [peer rows, rowBytes] staging, reduced into the output afterwards

struct Copy {
  int64_t src = 0;        // world rank whose published buffer is read (this rank: a local copy)
  int32_t srcSlot = 0;    // which of src's published buffers (collectives: 0; a group: the k-th send to us)
  int64_t srcOffset = 0;  // bytes
  int32_t dst = kOut;     // local destination (a group: the index of the receive)
  int64_t dstOffset = 0;  // bytes
  int64_t bytes = 0;
};

// A reduction's local step, after the copies: output[outOffset, +rowBytes) = this rank's own
// input[ownOffset, +rowBytes) combined with the `peerRows` staging rows. The own row is read where
// it is (never copied into the staging): with one peer the step is one elementwise kernel reading
// two rows and writing one.
struct Reduction {
  int64_t peerRows = 0;  // > 0: there is a reduction
  int64_t ownOffset = 0;
  int64_t outOffset = 0;
  int64_t rowBytes = 0;
};

struct Plan {
  bool publishes = false;          // peers read this rank's input (its address goes to the store)
  std::vector<int64_t> consumers;  // peers that pull from this rank, in team order
  std::vector<int64_t> producers;  // peers this rank pulls from, in team order
  std::vector<Copy> copies;
  Reduction reduction;
  int64_t stagingBytes = 0;
  // Allreduce's second phase (a reduce-scatter, then an allgather of the reduced parts): once every
  // member has reduced its own part in place, these copies pull the others' reduced parts (source
  // and destination: the buffer). Empty for every other collective.
  std::vector<Copy> gathers;
};

// One rank's plan of a collective over `team` (world ranks in team order; `me` a member). `root`
// (a world rank) for Broadcast, Reduce, Scatter, Gather. Sizes in bytes, of this rank's input and
// output as the evaluator passes them (sizes already follow sem::communicationSizeProblem); for
// Allreduce and Broadcast `inBytes` is the buffer's. `elementBytes` splits an Allreduce's buffer
// into its members' parts at element boundaries (as evenly as the elements allow; the first parts
// take one element more). Throws braid::Error for a rank or root outside the team.
Plan planCollective(Collective c, const std::vector<int64_t>& team, int64_t me, int64_t root, int64_t inBytes,
                    int64_t outBytes, int64_t elementBytes = 1);

// Member j's part of an Allreduce buffer of `bytes` over `n` members: {offset, bytes}.
std::pair<int64_t, int64_t> allreducePart(int64_t bytes, int64_t n, int64_t j, int64_t elementBytes);

// One send or receive of a coalesced group (a lone send/recv is a group of one).
struct Transfer {
  int64_t peer = 0;
  int64_t bytes = 0;
};

// One rank's plan of a group: receive k pulls the m-th send of its peer to this rank, where m
// counts the receives from that peer before k (transfers between a pair match in posting order).
// The copy's size is the receive's; the runner checks it against what the sender published
// (receiveSizeProblem). Sends to self are read by the receives from self of the same group.
Plan planGroup(int64_t me, const std::vector<Transfer>& sends, const std::vector<Transfer>& recvs);

// Checks a receive against what the sender published: "" or the mismatch, worded for the user.
std::string receiveSizeProblem(int64_t me, int64_t peer, int64_t want, int64_t sent);

}  // namespace braid::exec::ce
