// Communicator: the collectives and point-to-point transfers a host program's Communication,
// P2PCommunication and StartCoalescing/EndCoalescing statements need, over at::Tensor buffers.
// Backends: Gloo over c10d (CPU, any number of processes), "self" (one rank, no transport); the
// CUDA build's NCCL and copy-engine (CUDA IPC) backends implement the same interface.
//
// Conventions every backend follows (they are the evaluator's contract, see docs/EXEC.md):
// - Ranks are world ranks (= the device ids of braid's meshes). A `team` lists world ranks in
//   team order; the caller must be a member. Every member issues the same operations on the same
//   team in the same order.
// - Buffers may be any strided tensors (slices, views). "Flat" layouts are row-major memory
//   order: for allgather, out viewed as [team.size(), in.numel()] gets member j's `in` in row j;
//   reduce-scatter, scatter and all-to-all split their (big) buffer the same way.
// - Every operation is posted asynchronously and returns a Work; the result is in place once
//   Work::wait() returned. Until then the caller must not touch the buffers. The CPU backends
//   may complete an operation before returning.
// - StartCoalescing / EndCoalescing bracket a group of send/recv (ncclGroupStart/End): posting
//   inside a group does not block on the peer; EndCoalescing returns one Work for the group.
// - Reductions: sum, max, min. Types the transport lacks (bfloat16 on Gloo) go through float32.
// - Sizes follow sem::communicationSizeProblem (ir/semantics/communication_rules.h); the caller
//   (the evaluator) checks that one rule before posting, so backends check only what is theirs
//   (a buffer on the wrong device, a type the transport lacks, a peer it cannot reach).
//
// Streams: the NCCL and copy-engine backends enqueues on the caller's current CUDA stream and its Work::wait makes
// the current stream wait; the CPU backends have no streams (waits block the host thread).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <ATen/ATen.h>

namespace braid {
enum class CommBackend;  // ir/host_ir.h: the `backend=` of a communication statement
}

namespace braid::exec {

enum class ReduceOp { kSum, kMax, kMin };

// A handle on one posted operation (or one coalesced group).
class Work {
 public:
  virtual ~Work() = default;
  // Blocks (CPU) / orders the current stream (GPU) until the operation completed. Throws
  // braid::Error when the operation failed or did not complete within the communicator's timeout.
  virtual void wait() = 0;
  // Device timing (CUDA backends with timing on): the cudaEvent_t pair recorded around the
  // operation on the communicator's stream, as void* so this header needs no CUDA; else nulls.
  virtual std::pair<void*, void*> deviceEvents() const { return {nullptr, nullptr}; }
};
using WorkPtr = std::shared_ptr<Work>;

// A Work that is already complete (or that runs `finish` once, at its first wait()).
WorkPtr completedWork();

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int64_t rank() const = 0;
  virtual int64_t size() const = 0;
  virtual std::string backendName() const = 0;

  // out (flat [team, in.numel()]) = every member's `in`, in team order.
  virtual WorkPtr allgather(const std::vector<int64_t>& team, const at::Tensor& in, const at::Tensor& out) = 0;
  // buf = op over every member's buf (in place).
  virtual WorkPtr allreduce(const std::vector<int64_t>& team, const at::Tensor& buf, ReduceOp op) = 0;
  // out = op over every member's in, out of place (in and out: the same element count and type,
  // each read in its own row-major order), in one pass over the data; null when this backend has
  // no such operation: the caller then copies in into out and reduces out in place (a second pass
  // over the whole buffer on the GPU, 64 us for 128 MiB on an H200).
  virtual WorkPtr allreduceInto(const std::vector<int64_t>&, const at::Tensor&, const at::Tensor&, ReduceOp) {
    return nullptr;
  }
  // in viewed flat as [team, out.numel()]; member j gets op over every member's row j.
  virtual WorkPtr reduceScatter(const std::vector<int64_t>& team, const at::Tensor& in, const at::Tensor& out,
                                ReduceOp op) = 0;
  // Every member's buf = root's buf. `root` is a world rank in the team.
  virtual WorkPtr broadcast(const std::vector<int64_t>& team, const at::Tensor& buf, int64_t root) = 0;
  // root's out = op over every member's in (out is ignored elsewhere and may be undefined).
  virtual WorkPtr reduce(const std::vector<int64_t>& team, const at::Tensor& in, const at::Tensor& out, int64_t root,
                         ReduceOp op) = 0;
  // Member j's out = row j of root's in (flat [team, out.numel()]); in is ignored off the root.
  virtual WorkPtr scatter(const std::vector<int64_t>& team, const at::Tensor& in, const at::Tensor& out,
                          int64_t root) = 0;
  // root's out (flat [team, in.numel()]) row j = member j's in.
  virtual WorkPtr gather(const std::vector<int64_t>& team, const at::Tensor& in, const at::Tensor& out,
                         int64_t root) = 0;
  // in and out flat [team, chunk]: member j's out row i = member i's in row j.
  virtual WorkPtr allToAll(const std::vector<int64_t>& team, const at::Tensor& in, const at::Tensor& out) = 0;
  // Point to point with a world rank. Transfers between one pair match in posting order.
  virtual WorkPtr send(const at::Tensor& buf, int64_t peer) = 0;
  virtual WorkPtr recv(const at::Tensor& buf, int64_t peer) = 0;
  virtual void startCoalescing() = 0;
  virtual WorkPtr endCoalescing() = 0;
  // Blocks until every rank of the world reached the barrier.
  virtual void barrier() = 0;

  // The statement the next operations belong to ("ag.hir:12: Communication 41 (Allgather)"), for
  // error and timeout reports of operations that fail later, on the device.
  virtual void setContext(const std::string&) {}
  // The `backend=` of the statement the next operations belong to. A single-transport
  // communicator ignores it; the CUDA backend's router (makeBackendRouter) sends the operations
  // to the communicator of that backend.
  virtual void useBackend(CommBackend) {}
  // Blocks the host until every posted operation completed. The CUDA backends poll for errors
  // and give up after the timeout (aborting their communicators); the CPU ones have nothing left.
  virtual void drain() {}
  // Record device events around each operation (Work::deviceEvents); CUDA backends only.
  virtual void setTiming(bool) {}
  // Create the communicator's own streams at the device's highest priority, so that its kernels
  // (NCCL) or its copies are scheduled ahead of queued compute blocks; CUDA backends only, and it
  // takes effect for teams first used after the call (docs/EXEC.md, "Stream priority").
  virtual void setHighPriorityStreams(bool) {}
};

// One rank, no transport: every collective over the team {0} is a local copy.
std::unique_ptr<Communicator> makeSelfCommunicator();

// How ranks find each other: a TCPStore at addr:port (rank 0 serves it unless `storeIsExternal`,
// as under torchrun, whose agent serves it), or a FileStore at `storeFile` when that is set.
struct Rendezvous {
  int64_t rank = 0;
  int64_t worldSize = 1;
  std::string masterAddr = "127.0.0.1";
  int port = 29500;
  bool storeIsExternal = false;
  std::string storeFile;
  std::string prefix = "braid";  // key prefix, distinct per run when the store is shared
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};
};

// True when this build has the Gloo backend.
bool haveGloo();
// Connects every rank (blocks until all arrived or the timeout passed; throws braid::Error).
std::unique_ptr<Communicator> makeGlooCommunicator(const Rendezvous& rv);

// True when this build has the NCCL backend (exec/nccl_communicator.cpp).
bool haveNccl();
// NCCL on CUDA device `deviceIndex` (the current device of the rank's evaluator): one NCCL
// communicator per team, created when a member first uses it from a unique id shared through
// the rendezvous store; a world of one rank needs no store. Buffers must be on that device.
std::unique_ptr<Communicator> makeNcclCommunicator(const Rendezvous& rv, int64_t deviceIndex);

// The copy-engine backend (`backend=CUDA`, exec/cuda_ipc_communicator.cpp; in every build that has
// the NCCL one): transfers are copies that pull peers' buffers mapped through CUDA IPC, ordered
// on the device by signal pads and stream memory operations. Buffers must be on `deviceIndex`.
std::unique_ptr<Communicator> makeCudaIpcCommunicator(const Rendezvous& rv, int64_t deviceIndex);

}  // namespace braid::exec
