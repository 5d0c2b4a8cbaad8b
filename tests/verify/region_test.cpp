// Region overlap is exact: slices, strided views and permuted views, checked against a brute
// force enumeration of element addresses.
#include "ir/semantics/region.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <set>

namespace braid::sem {
namespace {

std::set<int64_t> elements(const Region& r) {
  std::set<int64_t> out;
  std::vector<int64_t> k(r.sizes.size(), 0);
  if (r.empty()) return out;
  while (true) {
    int64_t a = r.offset;
    for (size_t d = 0; d < k.size(); ++d) a += k[d] * r.strides[d];
    out.insert(a);
    size_t d = k.size();
    bool done = true;
    while (d > 0) {
      --d;
      if (++k[d] < r.sizes[d]) {
        done = false;
        break;
      }
      k[d] = 0;
    }
    if (done) break;
  }
  return out;
}

bool bruteOverlap(const Region& a, const Region& b) {
  auto ea = elements(a), eb = elements(b);
  for (int64_t x : ea)
    if (eb.count(x)) return true;
  return false;
}

Region region(int64_t offset, std::vector<int64_t> sizes, std::vector<int64_t> strides) {
  Region r;
  r.buffer = 0;
  r.offset = offset;
  r.sizes = std::move(sizes);
  r.strides = std::move(strides);
  return r;
}

TEST(Region, RowSlicesOfAMatrix) {
  Region m = Region::contiguous(0, {4, 6});
  Region row1 = m.select(0, 1), row2 = m.select(0, 2);
  EXPECT_FALSE(row1.overlaps(row2));
  EXPECT_TRUE(row1.overlaps(m));
  EXPECT_TRUE(m.contains(row1));
  EXPECT_TRUE(row1.isContiguous());
  EXPECT_EQ(row1.str(), "elements [6, 12)");
}

TEST(Region, ColumnSlicesAreStridedAndDisjoint) {
  Region m = Region::contiguous(0, {4, 6});
  Region c0 = m.select(1, 0), c1 = m.select(1, 1);
  EXPECT_FALSE(c0.overlaps(c1));
  EXPECT_FALSE(c0.isContiguous());
  Region row = m.select(0, 2);
  EXPECT_TRUE(c1.overlaps(row));  // element (2, 1)
  EXPECT_FALSE(m.narrow(0, 0, 2).select(1, 3).overlaps(m.select(0, 3)));
}

TEST(Region, ChunksAlongAStreamAxis) {
  Region t = Region::contiguous(0, {4, 1, 3, 5});
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 4; ++j) EXPECT_EQ(t.narrow(0, i, 1).overlaps(t.narrow(0, j, 1)), i == j);
}

TEST(Region, PermutedViewHasTheSameElements) {
  Region m = Region::contiguous(0, {3, 4});
  Region p = m.permute({1, 0});
  EXPECT_FALSE(p.isContiguous());
  EXPECT_TRUE(p.sameElements(m));
  EXPECT_TRUE(p.select(0, 1).sameElements(m.select(1, 1)));
  EXPECT_FALSE(p.select(0, 1).overlaps(m.select(1, 2)));
}

TEST(Region, InterleavedStridesDoNotOverlap) {
  Region even = region(0, {50}, {2});
  Region odd = region(1, {50}, {2});
  EXPECT_FALSE(even.overlaps(odd));
  EXPECT_TRUE(even.overlaps(region(10, {1}, {1})));
  EXPECT_FALSE(region(0, {10}, {3}).overlaps(region(1, {10}, {3})));
  EXPECT_TRUE(region(0, {10}, {3}).overlaps(region(2, {10}, {2})));  // 6
}

TEST(Region, DifferentBuffersNeverOverlap) {
  Region a = Region::contiguous(0, {8});
  Region b = Region::contiguous(1, {8});
  EXPECT_FALSE(a.overlaps(b));
}

TEST(Region, EmptyNeverOverlaps) {
  Region m = Region::contiguous(0, {4, 6});
  EXPECT_FALSE(m.narrow(0, 1, 0).overlaps(m));
}

TEST(Region, RunsCoverTheElements) {
  Region m = Region::contiguous(0, {4, 6}).narrow(1, 1, 3);
  std::set<int64_t> seen;
  m.forEachRun([&](int64_t lo, int64_t hi) {
    for (int64_t a = lo; a < hi; ++a) seen.insert(a);
  });
  EXPECT_EQ(seen, elements(m));
  EXPECT_EQ(m.runCount(), 4);
}

RC_GTEST_PROP(RegionProperty, OverlapMatchesBruteForce, ()) {
  auto gen_region = [] {
    int rank = *rc::gen::inRange(0, 4);
    Region r;
    r.buffer = 0;
    r.offset = *rc::gen::inRange<int64_t>(0, 20);
    for (int d = 0; d < rank; ++d) {
      r.sizes.push_back(*rc::gen::inRange<int64_t>(0, 5));
      r.strides.push_back(*rc::gen::inRange<int64_t>(-6, 13));
    }
    // Keep addresses non-negative.
    r.offset += 60;
    return r;
  };
  Region a = gen_region();
  Region b = gen_region();
  RC_ASSERT(a.overlaps(b) == bruteOverlap(a, b));
  std::set<int64_t> runs;
  a.forEachRun([&](int64_t lo, int64_t hi) {
    for (int64_t x = lo; x < hi; ++x) runs.insert(x);
  });
  RC_ASSERT(runs == elements(a));
}

}  // namespace
}  // namespace braid::sem
