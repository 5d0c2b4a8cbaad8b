// Options of the lowering pipeline (Fusion -> host program) that a user or a workload chooses.
// They are plain data: they live in ir/ so that the workload catalog (catalog/, which depends on
// ir only) can carry the options a workload is meant for; passes/ implements them.
#pragma once

#include <cstdint>
#include <string>

#include "ir/comm_backend.h"

namespace braid {

// How stream-parallel loops are forked from and joined to the caller's stream
// (see ../shared/reference/nvfuser_hostir.md section 3).
enum class StreamProtocol {
  // (A) A separate loop makes every worker wait on the main stream; the work loop then joins each
  // worker back per iteration (nvFuser's MultiDeviceExecutor pipeline).
  kSeparateSyncLoop,
  // (B) In-loop `SetCurrentStream(Stream i); Synchronize(main)`, then `SetCurrentStream(main)` and
  // a trailing join loop (nvFuser's AssignStreams pass).
  kInLoopSync,
  // (C) nvFuser's first stream lowering (PR #4147, with the fork of PR #3913): inside the loop,
  // `SetCurrentStream(worker); Synchronize(main); <body>; SetCurrentStream(main);
  // Synchronize(worker)`. The per-iteration join makes iteration i+1's fork wait for iteration i:
  // correct, but the iterations never overlap.
  kPerIterationJoin,
};

// Protocols A and C are nvFuser's MultiDeviceExecutor pipeline: loops over the Stream IterDomain
// (`FOR StreamIdx in iStreamIdx{S}:`) and `ALLOCATE(buffer=...)` at the top level.
inline bool usesPipelineALoops(StreamProtocol p) { return p != StreamProtocol::kInLoopSync; }

// How worker streams are keyed.
enum class StreamIndexing {
  kModulo,  // Stream ( i % numberOfStreams ): a fixed pool of numberOfStreams streams
  kRaw,     // Stream i: one stream per iteration index
};

// How a DID -> Stream resharding (allgather feeding a stream-parallel consumer) is lowered.
enum class PipelineKind {
  kCollective,  // one collective per iteration (Allgather / Broadcast with root = i)
  kP2P,         // shard (i + rank) % D: our own copied (or read in place), the others by coalesced recv/send
};

struct LoweringOptions {
  StreamProtocol protocol = StreamProtocol::kSeparateSyncLoop;
  StreamIndexing indexing = StreamIndexing::kModulo;
  PipelineKind pipeline = PipelineKind::kCollective;
  // Intermediates of a stream loop allocated as a ring of numberOfStreams slices instead of the
  // full extent (the verifier must prove the reuse safe).
  bool ringBuffers = false;
  // Insert Deallocate after the last use of each intermediate.
  bool deallocate = true;
  // Number of worker streams the program is meant for (binds numberOfStreams; ring size). The
  // catalog sets it to the chunk count unless a pool is given (WorkloadParams::pool).
  int64_t streams = 4;
  // Schedules (docs/LOWERING.md, "Schedules").
  // Protocols A and C: the Wait of a stream loop's communication whose output no later statement
  // of the loop reads goes to the iteration's join on the main stream, so the worker goes on to
  // the next chunk's compute while the communication runs. Its input is then allocated in full.
  bool deferWaits = false;
  // A stream loop's communications whose inputs the loop does not compute (the allgathers of
  // AG + GEMM, a DID -> Stream pipeline) move to a loop of their own before the compute loop;
  // iteration i posts from its own stream, which the compute loop's iteration i waits on.
  bool prefetch = false;
  // The P2P pipeline reads this rank's own shard in place instead of copying it into its chunk
  // (pass forward-own-shard). Off by default: on two H200s it made the pipeline slower unless its
  // communications are prefetched (docs/LOWERING.md, "the own shard").
  bool ownShardInPlace = false;
  // The transport of every communication the lowering creates (pass select-comm-backend):
  // NCCL, or CUDA (the copy engines: transfers that take no SMs; docs/EXEC.md, "Copy engines").
  CommBackend commBackend = CommBackend::kNccl;
};

const char* streamProtocolName(StreamProtocol p);  // "A" / "B" / "C"
const char* pipelineKindName(PipelineKind p);      // "collective" / "p2p"
// The schedules `o` turns on and its transport when not NCCL, as the labels of braid run and braid
// sim name them: ", deferred waits", ", prefetch", ", own shard in place", ", copy engines" (or
// ", UCC") in that order ("" for none).
std::string scheduleLabel(const LoweringOptions& o);

}  // namespace braid
