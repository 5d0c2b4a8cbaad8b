// Ranks that provably do the same thing: the same statements, on the same streams, with the same
// sizes, in the same communication teams. Their event graphs are the same up to the rank number,
// so a consumer that only needs timing (the simulator) can run one representative per class and
// copy its results to the others.
//
// The proof is syntactic, so it is cheap at any number of ranks: a rank's host thread differs
// from another's only through the scalars `rank` / `deviceIdx.x` and through which teams it
// belongs to (DESIGN.md, "The host program's meaning"). So if no loop bound, branch predicate,
// stream key, view index or extent mentions the rank, every rank executes the same statements
// with the same sizes and streams, and two ranks that belong to the same teams post the same
// communications, in the same order, as members of the same groups. A branch whose predicate
// names only the rank (one branch per row of a 2D mesh) is decided per rank: ranks that take
// branches posting the same communication in teams of the same shape (the same members relative
// to the first, spread the same way over nodes) are equivalent too. A collective's root may
// depend on the rank (it changes who reads and who writes, not how long the collective takes).
// P2P peers pair a rank with specific others, so a program with P2P communications is only
// folded on one rank.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/host_ir.h"

namespace braid::sem {

struct RankClasses {
  int64_t numRanks = 1;
  std::vector<int64_t> representatives;  // the smallest rank of each class, ascending
  std::vector<int32_t> classOf;          // per rank: index into representatives
  std::vector<int64_t> classSize;        // per class
  // Why ranks could not be folded (empty when they were, or when there is one rank): the first
  // statement whose behaviour depends on the rank, "line 12: IF ( StreamIdx == deviceIdx.x )
  // depends on the rank".
  std::string notFoldedBecause;

  bool folded() const { return static_cast<int64_t>(representatives.size()) < numRanks; }
  // "0-7" / "0, 2, 4" style list of the ranks of class `c` (at most `limit` ranges).
  std::string members(int32_t c, int limit = 4) const;
};

// Every rank in a class of its own (no folding).
RankClasses singletonClasses(int64_t numRanks);

// The classes of ranks 0..numRanks-1 of `p` (for any binding of its symbolic extents). With
// `ranksPerNode` > 0, ranks whose teams spread differently over nodes of that many ranks are told
// apart (a collective's cost depends on it); 0 compares teams by shape alone.
RankClasses rankClasses(const HostProgram& p, int64_t numRanks, int64_t ranksPerNode = 0);

}  // namespace braid::sem
