#include "ir/lowering_options.h"

namespace braid {

const char* streamProtocolName(StreamProtocol p) {
  switch (p) {
    case StreamProtocol::kSeparateSyncLoop: return "A";
    case StreamProtocol::kInLoopSync: return "B";
    case StreamProtocol::kPerIterationJoin: return "C";
  }
  return "?";
}

const char* pipelineKindName(PipelineKind p) { return p == PipelineKind::kCollective ? "collective" : "p2p"; }

std::string scheduleLabel(const LoweringOptions& o) {
  return std::string(o.deferWaits ? ", deferred waits" : "") + (o.prefetch ? ", prefetch" : "") +
         (o.ownShardInPlace ? ", own shard in place" : "") +
         (o.commBackend == CommBackend::kCuda ? ", copy engines" : o.commBackend == CommBackend::kUcc ? ", UCC" : "");
}

}  // namespace braid
