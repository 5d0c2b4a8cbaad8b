// Region: the exact set of elements of a buffer that a tensor binding (a buffer or a view of it)
// names. A view is `offset + sum_d k_d * strides[d]` for `0 <= k_d < sizes[d]`, in elements, so
// slices (HirAliasSelect, ShardByStream), strided views and permuted views (Set.Permute) are all
// Regions, and two of them compare exactly: overlap is decided on element addresses, not on
// start pointers or whole allocations.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace braid::sem {

struct Region {
  int32_t buffer = -1;  // EventGraph::buffers index (buffers are per rank)
  int64_t offset = 0;   // elements from the buffer's start
  std::vector<int64_t> sizes;
  std::vector<int64_t> strides;

  // The dense row-major region of `sizes` at offset 0 (what an allocation binds).
  static Region contiguous(int32_t buffer, std::vector<int64_t> sizes);

  int64_t numel() const;
  bool empty() const { return numel() == 0; }
  int rank() const { return static_cast<int>(sizes.size()); }
  // Smallest and largest element address (meaningless when empty()).
  int64_t minAddress() const;
  int64_t maxAddress() const;
  // Dense and row-major in its own dimension order (strides are the suffix products of the
  // sizes, size-1 dimensions ignored): what NCCL needs for a buffer.
  bool isContiguous() const;
  // The element set is one interval [minAddress, maxAddress] (in some order of dimensions).
  bool isInterval() const;

  // Exact: true iff some element address belongs to both (same buffer, both non-empty).
  bool overlaps(const Region& other) const;
  // Exact: every element of `other` belongs to this region.
  bool contains(const Region& other) const;
  // Same element set (not the same description: a permuted view of a whole buffer equals it).
  bool sameElements(const Region& other) const;

  // Calls f(lo, hi) for each maximal run of consecutive addresses [lo, hi) (after merging
  // dimensions that continue each other), in no particular order.
  void forEachRun(const std::function<void(int64_t, int64_t)>& f) const;
  // Number of runs forEachRun reports.
  int64_t runCount() const;

  // Views of this region (dimension indices refer to this region's dimensions).
  Region select(int dim, int64_t index) const;  // the dimension disappears
  Region narrow(int dim, int64_t start, int64_t length) const;
  Region permute(const std::vector<int64_t>& perm) const;  // new dim i = old dim perm[i]
  Region unsqueeze(int dim) const;                         // a size-1 dimension at `dim`

  // "[2, 8] @ +16 strides [8, 1]", or "elements [16, 32)" when it is one interval.
  std::string str() const;
  bool operator==(const Region&) const = default;
};

// A region after dropping size-1 dimensions and broadcast (stride 0) ones, making strides
// positive, sorting by decreasing stride and merging dimensions that continue each other. Two
// regions with equal canonical forms have the same elements (the converse holds for the
// injective layouts views produce).
Region canonicalRegion(const Region& r);

}  // namespace braid::sem
