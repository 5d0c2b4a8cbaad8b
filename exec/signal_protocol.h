// The ordering protocol of the copy-engine backend, on the device: every rank has one *signal pad*
// per team (3 x team-size 32-bit flags in device memory, exported once over CUDA IPC). For one
// operation a rank's communicator stream runs, in this order:
//   1. kSignalReady(c)     for every consumer c: write 1 into c's pad, slot ready[me]
//                          (my input is complete: the stream already waited for the posting stream);
//   2. kWaitReady(p)       for every producer p: wait until my pad's ready[p] is 1, then reset it to 0;
//   3. kCopy(k)            the plan's copies (cudaMemcpyAsync: copy engines), pulling from producers;
//   An Allreduce (Plan::gathers) then runs its second phase:
//   3a. kReduce            the local reduction of my part, in place in my buffer;
//   3b. kSignalReduced(c)  for every consumer c: write 1 into c's pad, slot reduced[me] (my part is
//                          final, and my first-phase reads of c's buffer are done);
//   3c. kWaitReduced(p)    for every producer p: wait until reduced[p] is 1, then reset it;
//   3d. kGather(k)         the plan's gathers: pull the producers' reduced parts into my buffer;
//   4. kSignalConsumed(p)  for every producer p: write 1 into p's pad, slot consumed[me];
//   5. kWaitConsumed(c)    for every consumer c: wait until my pad's consumed[c] is 1, reset it to 0
//                          (nobody reads my input any more: the caller may overwrite it after Wait);
//   6. kReduce             the local reduction of the staging rows, if the plan has one (and no
//                          second phase).
// Flags, not sequence numbers: each handshake sets a flag and its waiter clears it, so every pad is
// back to all zeros after an operation and the same stream operations can be replayed from a CUDA
// graph (a baked-in sequence number would already be reached on the second replay). A flag is set
// again only after its previous value was cleared: the producer's next ready follows its
// kWaitConsumed, which follows the consumer's clear. The three handshakes have their own slots, so
// a fast peer's "reduced" never lands on a "ready" its waiter has not cleared yet. Writes go to
// peers' pads, waits are on the rank's own pad (remote writes, local polling). Plain C++:
// tests/exec/signal_protocol_test.cpp runs it on a model of several ranks, with their data, under
// random interleavings.
#pragma once

#include <cstdint>
#include <vector>

#include "exec/copy_engine_plan.h"

namespace braid::exec::ce {

enum class StepKind {
  kSignalReady,
  kWaitReady,
  kCopy,
  kSignalReduced,
  kWaitReduced,
  kGather,
  kSignalConsumed,
  kWaitConsumed,
  kReduce
};

struct Step {
  StepKind kind = StepKind::kCopy;
  int64_t peer = -1;  // world rank (signal and wait steps)
  size_t copy = 0;    // index into Plan::copies (kCopy) or Plan::gathers (kGather)
};

// The steps of one operation, from its plan (copies from this rank itself need no handshake).
std::vector<Step> signalSteps(const Plan& plan);

// Slot of a pad (32-bit words): ready[j], reduced[j] and consumed[j] of the team member j (team order).
inline int64_t readySlot(int64_t writerIndex) { return writerIndex; }
inline int64_t reducedSlot(int64_t teamSize, int64_t writerIndex) { return teamSize + writerIndex; }
inline int64_t consumedSlot(int64_t teamSize, int64_t writerIndex) { return 2 * teamSize + writerIndex; }
inline int64_t padWords(int64_t teamSize) { return 3 * teamSize; }
// The slot a signal or wait step of kind `k` uses, for the flag team member `writerIndex` writes.
inline int64_t flagSlot(StepKind k, int64_t teamSize, int64_t writerIndex) {
  switch (k) {
    case StepKind::kSignalReady:
    case StepKind::kWaitReady: return readySlot(writerIndex);
    case StepKind::kSignalReduced:
    case StepKind::kWaitReduced: return reducedSlot(teamSize, writerIndex);
    default: return consumedSlot(teamSize, writerIndex);
  }
}

}  // namespace braid::exec::ce
