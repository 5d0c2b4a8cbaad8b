// Pipelines that turn a device axis into a Stream axis and back, one chunk per device.
//
// DID -> Stream (`A2 = set(A)` where A's device axis becomes A2's Stream axis): iteration i
// brings device i's shard to every rank of the team, either as a Broadcast rooted at the shard's
// owner (`--pipeline collective`) or as the P2P ring of docs/WORKLOADS.md (`--pipeline p2p`:
// rank r handles shard (i + r) % D, copying its own, which forward_own_shard.cpp reads in place
// instead under --own-shard in-place, and receiving the others in pairs within one iteration).
//
// Stream -> DID (`C = sum(P)` where P's Stream axis becomes C's device axis, P partial sums):
// iteration i reduces every rank's chunk i onto rank i, which owns those rows of C: a Reduce
// rooted at the chunk's owner (nvFuser's reduce-based MM + RS).
#pragma once

#include <optional>

#include "passes/pass.h"
#include "passes/stream_views.h"

namespace braid {

// The shard the P2P pipeline's iteration `idx` works on: `( ( idx + deviceIdx.x ) % D )`.
Scalar p2pChunkIndex(const Scalar& idx, const CommunicationInfo& info);

// Emits iteration `idx`'s part of the pipeline for the set `e` (a program expr; `fe` its fusion
// expr) into `body`, receiving into `out` (this iteration's chunk of the set's output). Returns the
// P2P pipeline's own-shard copy when it is a plain Set (no staging copy on either side), for
// forward-own-shard; nullopt otherwise.
std::optional<OwnShardCopy> lowerDidToStream(LoweringContext& ctx, StreamViews& views, Scope& body, const Scalar& idx,
                                             const Expr& e, const Expr& fe, const CommunicationInfo& info,
                                             TensorView* out);

// Emits iteration `idx`'s Reduce for the Stream -> DID reduction `e` (`fe` its fusion expr),
// reading this iteration's chunk `in` of the partial sums into the output's local shard.
void lowerStreamToDid(LoweringContext& ctx, StreamViews& views, Scope& body, const Expr& e, const Expr& fe,
                      const CommunicationInfo& info, TensorView* in);

}  // namespace braid
