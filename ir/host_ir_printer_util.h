// Pieces of the host IR printer that the parser and tests share (internal to ir/).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/expr.h"
#include "ir/iter_domain.h"

namespace braid {

// The permutation of a Set.Permute that maps `in` axes onto `out` axes by equal extents
// (out[i] has the extent of in[perm[i]]), when exactly one exists; empty otherwise.
std::vector<int64_t> inferPermutation(const std::vector<IterDomain*>& in, const std::vector<IterDomain*>& out);

}  // namespace braid
