// Classification of resharding exprs into communications (nvFuser's getCommunicationInfo): a
// pure function of the expr, its operands' schedules and meshes. Device axes are compared by
// how they derive from the logical domain (passes/schedule.h), so a DIDx axis split off a logical
// axis compares equal to the same split on the other side of the op, and on a 2D mesh DIDx and
// DIDy are classified separately: a collective over DIDx runs within each row of the mesh (a
// sub-team per row), one over DIDy within each column.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/host_ir.h"
#include "passes/schedule.h"

namespace braid {

struct CommunicationInfo {
  CommunicationType type = CommunicationType::kAllgather;
  // The teams, in mesh order: the whole mesh for a 1D mesh (or two meshes), one slice of the mesh
  // along `along` for a 2D mesh (its rows for DIDx, its columns for DIDy). Every rank of the mesh
  // is in exactly one. `team` is the first.
  std::vector<std::vector<int64_t>> teams;
  std::vector<int64_t> team;
  ParallelType along = ParallelType::kDIDx;
  // Rooted types: the root's position in each team (a fixed device of a fixed team for the
  // mesh-changing 1D cases; `root` is then that device).
  std::optional<int64_t> rootIndex;
  std::optional<int64_t> root;
  // DID -> Stream: the producer's sharded axis becomes the consumer's Stream axis. The root (or
  // the peers of the P2P pipeline) then depends on the stream loop's index.
  bool didToStream = false;
  // Stream -> DID: the consumer's sharded axis is the producer's Stream axis (a reduction of
  // partial results chunk by chunk): iteration i reduces chunk i onto its owner, team[i] (a
  // Reduce rooted at the stream index).
  bool streamToDid = false;
  std::optional<ReductionOpType> redOp;   // reducing types
  int producerAxis = -1;  // logical axis of the producer that is sharded (or scattered from)
  int consumerAxis = -1;  // logical axis of the consumer that is sharded (or gathered into)
  // How the sharded axes derive from the operands' logical domains: the producer's device axis
  // (Allgather, Gather, AllToAll, DID -> Stream; the partial axis of Allreduce / ReduceScatter)
  // and the consumer's (Scatter, ReduceScatter, AllToAll).
  std::optional<AxisPath> producerPath;
  std::optional<AxisPath> consumerPath;
  std::string str() const;
};

// Whether `e` changes the sharding of some input/output pair: different meshes, or a device
// axis that the other side does not shard the same way (broadcast axes and consumer axes that
// the producer does not have, which it replicates, do not count), or a device-parallel
// reduction (partial results to combine).
bool isResharding(const Expr& e);
// The same question for one input/output pair of `e`.
bool isReshardingPair(const Expr& e, size_t input_index);

// The communication that implements the resharding expr `e`. Throws NotLowerableError, naming the
// expr and what to do, when it is not one lowerable communication (more than one sharding
// change, an op other than set/reduction, a change between meshes of more than one dimension, ...).
CommunicationInfo classifyCommunication(const Expr& e);

// Whether `tv` holds partial results along device type `p`: its `p` axis is an rfactor axis or
// derives from one of its logical reduction axes (an rfactored contraction: each device summed
// its shard of k).
bool isPartialAlong(const TensorView* tv, ParallelType p);

// The slices of `mesh` along device type `p` (rows for DIDx, columns for DIDy), in mesh order.
std::vector<std::vector<int64_t>> meshSlices(const DeviceMesh& mesh, ParallelType p);

}  // namespace braid
