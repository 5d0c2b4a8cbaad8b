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

}  // namespace braid
