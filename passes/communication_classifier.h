// Classification of resharding exprs into communications (nvFuser's getCommunicationInfo): a
// pure function of the expr, its operands' shardings and meshes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/host_ir.h"

namespace braid {

struct CommunicationInfo {
  CommunicationType type = CommunicationType::kAllgather;
  std::vector<int64_t> team;              // device ids, in mesh order
  std::optional<int64_t> root;            // rooted types, when the root is a fixed device
  // DID -> Stream: the producer's sharded axis becomes the consumer's Stream axis. The root (or
  // the peers of the P2P pipeline) then depends on the stream loop's index.
  bool didToStream = false;
  std::optional<ReductionOpType> redOp;   // reducing types
  int producerAxis = -1;  // logical axis of the producer that is sharded (or scattered into)
  int consumerAxis = -1;  // logical axis of the consumer that is sharded (or gathered into)
  std::string str() const;
};

// Whether `e` changes the sharding of some input/output pair: different meshes, or a
// device-parallel axis that the other side does not shard the same way (broadcast axes and
// unmapped consumer axes, which the producer replicates, do not count).
bool isResharding(const Expr& e);
// The same question for one input/output pair of `e`.
bool isReshardingPair(const Expr& e, size_t input_index);

// The communication that implements the resharding expr `e`. Throws NotLowerableError, naming the
// expr and what to do, when it is not one lowerable communication (more than one sharding
// change, an op other than set/reduction, 2D meshes, ...).
CommunicationInfo classifyCommunication(const Expr& e);

}  // namespace braid
