#include "ir/semantics/region.h"

#include <algorithm>
#include <numeric>
#include <sstream>

#include "ir/error.h"

namespace braid::sem {

namespace {

int64_t floorDiv(int64_t a, int64_t b) {  // b > 0
  int64_t q = a / b;
  if ((a % b != 0) && (a < 0)) --q;
  return q;
}

int64_t ceilDivFloor(int64_t a, int64_t b) {
  return -floorDiv(-a, b);
}  // b > 0

// A canonical region with precomputed suffix data for the branch-and-bound overlap search.
struct Canon {
  int64_t offset = 0;
  bool empty = false;
  std::vector<int64_t> sizes, strides;  // decreasing strides, all > 0, sizes > 1
  std::vector<int64_t> span;            // span[d] = sum_{j>=d} (sizes[j]-1)*strides[j]; span[n] = 0
  std::vector<int64_t> gcd;             // gcd of strides[d..n); 0 at n

  explicit Canon(const Region& r) {
    Region c = canonicalRegion(r);
    offset = c.offset;
    if (c.sizes.size() == 1 && c.sizes[0] == 0) {
      empty = true;
      return;
    }
    sizes = c.sizes;
    strides = c.strides;
    size_t n = sizes.size();
    span.assign(n + 1, 0);
    gcd.assign(n + 1, 0);
    for (size_t d = n; d-- > 0;) {
      span[d] = span[d + 1] + (sizes[d] - 1) * strides[d];
      gcd[d] = std::gcd(gcd[d + 1], strides[d]);
    }
  }
  int levels() const { return static_cast<int>(sizes.size()); }
  // The elements of level d (dims d..n) at `off` form one interval.
  bool intervalAt(int d) const {
    int n = levels();
    return d == n || (d == n - 1 && strides[static_cast<size_t>(d)] == 1);
  }
};

bool overlapRec(const Canon& a, int64_t a_off, int ad, const Canon& b, int64_t b_off, int bd) {
  int64_t a_hi = a_off + a.span[static_cast<size_t>(ad)];
  int64_t b_hi = b_off + b.span[static_cast<size_t>(bd)];
  if (a_hi < b_off || b_hi < a_off) return false;
  bool a_int = a.intervalAt(ad);
  bool b_int = b.intervalAt(bd);
  if (a_int && b_int) return true;
  // Every address of a level lies in off + gcd(strides) * Z: different residues never meet.
  int64_t ga = a_int ? 1 : a.gcd[static_cast<size_t>(ad)];
  int64_t gb = b_int ? 1 : b.gcd[static_cast<size_t>(bd)];
  int64_t g = std::gcd(ga, gb);
  if (g > 1 && ((a_off - b_off) % g) != 0) return false;
  // Split the non-interval side with the larger hull along its outermost dimension, visiting
  // only the sub-blocks whose hull meets the other side's hull.
  bool split_a = !a_int && (b_int || a.span[static_cast<size_t>(ad)] >= b.span[static_cast<size_t>(bd)]);
  const Canon& x = split_a ? a : b;
  int64_t x_off = split_a ? a_off : b_off;
  int xd = split_a ? ad : bd;
  int64_t o_lo = split_a ? b_off : a_off;
  int64_t o_hi = split_a ? b_hi : a_hi;
  int64_t s = x.strides[static_cast<size_t>(xd)];
  int64_t n = x.sizes[static_cast<size_t>(xd)];
  int64_t inner = x.span[static_cast<size_t>(xd) + 1];
  int64_t k_lo = std::max<int64_t>(0, ceilDivFloor(o_lo - inner - x_off, s));
  int64_t k_hi = std::min<int64_t>(n - 1, floorDiv(o_hi - x_off, s));
  for (int64_t k = k_lo; k <= k_hi; ++k) {
    int64_t sub = x_off + k * s;
    bool hit = split_a ? overlapRec(a, sub, ad + 1, b, b_off, bd) : overlapRec(a, a_off, ad, b, sub, bd + 1);
    if (hit) return true;
  }
  return false;
}

// Number of elements of level d at `off` inside [lo, hi] (inclusive), for injective layouts.
int64_t countIn(const Canon& c, int64_t off, int d, int64_t lo, int64_t hi) {
  int64_t top = off + c.span[static_cast<size_t>(d)];
  if (top < lo || off > hi) return 0;
  if (c.intervalAt(d)) return std::min(top, hi) - std::max(off, lo) + 1;
  int64_t total = 1;
  for (size_t j = static_cast<size_t>(d); j < c.sizes.size(); ++j) total *= c.sizes[j];
  if (off >= lo && top <= hi) return total;
  int64_t s = c.strides[static_cast<size_t>(d)];
  int64_t n = c.sizes[static_cast<size_t>(d)];
  int64_t inner = c.span[static_cast<size_t>(d) + 1];
  int64_t k_lo = std::max<int64_t>(0, ceilDivFloor(lo - inner - off, s));
  int64_t k_hi = std::min<int64_t>(n - 1, floorDiv(hi - off, s));
  int64_t count = 0;
  for (int64_t k = k_lo; k <= k_hi; ++k) count += countIn(c, off + k * s, d + 1, lo, hi);
  return count;
}

}  // namespace

Region Region::contiguous(int32_t buffer, std::vector<int64_t> sizes) {
  Region r;
  r.buffer = buffer;
  r.strides.assign(sizes.size(), 1);
  int64_t s = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    r.strides[d] = s;
    s *= std::max<int64_t>(sizes[d], 1);
  }
  r.sizes = std::move(sizes);
  return r;
}

int64_t Region::numel() const {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

int64_t Region::minAddress() const {
  int64_t a = offset;
  for (size_t d = 0; d < sizes.size(); ++d)
    if (strides[d] < 0) a += (sizes[d] - 1) * strides[d];
  return a;
}

int64_t Region::maxAddress() const {
  int64_t a = offset;
  for (size_t d = 0; d < sizes.size(); ++d)
    if (strides[d] > 0) a += (sizes[d] - 1) * strides[d];
  return a;
}

bool Region::isContiguous() const {
  int64_t expected = 1;
  for (size_t d = sizes.size(); d-- > 0;) {
    if (sizes[d] == 1) continue;
    if (sizes[d] == 0) return true;
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

bool Region::isInterval() const {
  if (empty()) return true;
  Region c = canonicalRegion(*this);
  return c.sizes.empty() || (c.sizes.size() == 1 && c.strides[0] == 1);
}

Region canonicalRegion(const Region& r) {
  Region c;
  c.buffer = r.buffer;
  c.offset = r.offset;
  if (r.empty()) {
    c.sizes = {0};
    c.strides = {1};
    return c;
  }
  std::vector<std::pair<int64_t, int64_t>> dims;  // (stride, size)
  for (size_t d = 0; d < r.sizes.size(); ++d) {
    int64_t n = r.sizes[d];
    int64_t s = r.strides[d];
    if (n == 1 || s == 0) continue;
    if (s < 0) {
      c.offset += (n - 1) * s;
      s = -s;
    }
    dims.emplace_back(s, n);
  }
  std::sort(dims.begin(), dims.end(),
            [](const auto& x, const auto& y) { return x.first != y.first ? x.first > y.first : x.second > y.second; });
  // Merge an outer dimension into the inner one it continues (stride_o == stride_i * size_i).
  std::vector<std::pair<int64_t, int64_t>> merged;
  for (size_t i = dims.size(); i-- > 0;) {
    if (!merged.empty() && dims[i].first == merged.back().first * merged.back().second) {
      merged.back().second *= dims[i].second;
    } else {
      merged.push_back(dims[i]);
    }
  }
  std::reverse(merged.begin(), merged.end());
  for (auto& [s, n] : merged) {
    c.sizes.push_back(n);
    c.strides.push_back(s);
  }
  return c;
}

bool Region::overlaps(const Region& other) const {
  if (buffer != other.buffer) return false;
  Canon a(*this), b(other);
  if (a.empty || b.empty) return false;
  return overlapRec(a, a.offset, 0, b, b.offset, 0);
}

bool Region::contains(const Region& other) const {
  if (other.empty()) return true;
  if (buffer != other.buffer) return false;
  if (other.minAddress() < minAddress() || other.maxAddress() > maxAddress()) return false;
  Canon c(*this);
  if (c.empty) return false;
  bool all = true;
  other.forEachRun([&](int64_t lo, int64_t hi) {
    if (all && countIn(c, c.offset, 0, lo, hi - 1) != hi - lo) all = false;
  });
  return all;
}

bool Region::sameElements(const Region& other) const {
  if (buffer != other.buffer) return false;
  if (empty() || other.empty()) return empty() == other.empty();
  return contains(other) && other.contains(*this);
}

void Region::forEachRun(const std::function<void(int64_t, int64_t)>& f) const {
  if (empty()) return;
  Region c = canonicalRegion(*this);
  size_t n = c.sizes.size();
  int64_t run = 1;
  size_t outer = n;
  if (n > 0 && c.strides[n - 1] == 1) {
    run = c.sizes[n - 1];
    outer = n - 1;
  }
  std::vector<int64_t> k(outer, 0);
  while (true) {
    int64_t a = c.offset;
    for (size_t d = 0; d < outer; ++d) a += k[d] * c.strides[d];
    f(a, a + run);
    size_t d = outer;
    while (d > 0) {
      --d;
      if (++k[d] < c.sizes[d]) break;
      k[d] = 0;
      if (d == 0) return;
    }
    if (outer == 0) return;
  }
}

int64_t Region::runCount() const {
  if (empty()) return 0;
  Region c = canonicalRegion(*this);
  size_t n = c.sizes.size();
  int64_t count = 1;
  for (size_t d = 0; d < n; ++d)
    if (!(d == n - 1 && c.strides[d] == 1)) count *= c.sizes[d];
  return count;
}

Region Region::select(int dim, int64_t index) const {
  if (dim < 0 || dim >= rank()) throw Error("select: dimension " + std::to_string(dim) + " out of range");
  Region r = *this;
  r.offset += index * strides[static_cast<size_t>(dim)];
  r.sizes.erase(r.sizes.begin() + dim);
  r.strides.erase(r.strides.begin() + dim);
  return r;
}

Region Region::narrow(int dim, int64_t start, int64_t length) const {
  if (dim < 0 || dim >= rank()) throw Error("narrow: dimension " + std::to_string(dim) + " out of range");
  Region r = *this;
  r.offset += start * strides[static_cast<size_t>(dim)];
  r.sizes[static_cast<size_t>(dim)] = length;
  return r;
}

Region Region::permute(const std::vector<int64_t>& perm) const {
  if (perm.size() != sizes.size()) throw Error("permute: permutation has the wrong rank");
  Region r = *this;
  for (size_t i = 0; i < perm.size(); ++i) {
    r.sizes[i] = sizes.at(static_cast<size_t>(perm[i]));
    r.strides[i] = strides.at(static_cast<size_t>(perm[i]));
  }
  return r;
}

Region Region::unsqueeze(int dim) const {
  Region r = *this;
  int64_t stride = 1;
  if (dim < rank()) stride = strides[static_cast<size_t>(dim)] * std::max<int64_t>(sizes[static_cast<size_t>(dim)], 1);
  r.sizes.insert(r.sizes.begin() + dim, 1);
  r.strides.insert(r.strides.begin() + dim, stride);
  return r;
}

std::string Region::str() const {
  std::ostringstream os;
  if (empty()) return "no elements";
  if (isInterval() && isContiguous()) {
    os << "elements [" << minAddress() << ", " << maxAddress() + 1 << ")";
    return os.str();
  }
  os << "sizes [";
  for (size_t d = 0; d < sizes.size(); ++d) os << (d ? ", " : "") << sizes[d];
  os << "] strides [";
  for (size_t d = 0; d < strides.size(); ++d) os << (d ? ", " : "") << strides[d];
  os << "] at +" << offset;
  return os.str();
}

}  // namespace braid::sem
