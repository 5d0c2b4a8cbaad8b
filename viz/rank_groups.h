// Ranks that did the same thing at the same time: a symmetric program's predicted timeline has
// identical ranks, and drawing 8 copies of one rank hides what matters. A group is drawn once.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/timeline.h"

namespace braid::viz {

struct RankGroup {
  std::vector<int64_t> ranks;  // ascending; ranks.front() is the one drawn
  int64_t representative() const { return ranks.front(); }
};

// Groups the ranks that have ops. Two ranks are identical when they have the same streams (kind
// and position among the rank's streams of that kind), each stream holds the same ops (kind and
// name) in the same order, and every start and end differs by at most `toleranceUs`.
// toleranceUs < 0 disables grouping (one group per rank). Groups are ordered by first rank.
std::vector<RankGroup> groupIdenticalRanks(const Timeline& t, double toleranceUs);

// "3", "0-7", "0-3, 5, 7".
std::string rankListStr(const std::vector<int64_t>& ranks);

}  // namespace braid::viz
