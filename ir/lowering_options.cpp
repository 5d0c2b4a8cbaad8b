#include "ir/lowering_options.h"

namespace braid {

const char* streamProtocolName(StreamProtocol p) {
  return p == StreamProtocol::kSeparateSyncLoop ? "A" : "B";
}

const char* pipelineKindName(PipelineKind p) { return p == PipelineKind::kCollective ? "collective" : "p2p"; }

}  // namespace braid
