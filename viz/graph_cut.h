// Which events of a large event graph a picture shows: a graph of thousands of events is no
// picture, so it is cut to what matters, and the cut is described for the caption.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "ir/semantics/event_graph.h"
#include "viz/hb_graph.h"

namespace braid::viz {

struct Selection {
  std::vector<bool> keep;  // per event
  int64_t kept = 0;
  std::vector<std::string> notes;  // what was left out, for the picture
};

// Everything on the ranks asked for (GraphDrawOptions::ranks) when that is at most maxEvents;
// else the `focus` events (a finding's) and their neighbours within `neighbourhood` steps along
// ordering edges and collective rendezvous (fewer steps if still too many); else, without focus,
// the first maxEvents events of the first rank drawn.
Selection selectEvents(const sem::EventGraph& g, const std::set<int32_t>& focus, const GraphDrawOptions& o);

}  // namespace braid::viz
