// Checked int64 arithmetic for everything braid computes from its input: extents, element counts,
// offsets, strides, trip counts, event counts and costs. A hostile file can put any int64 into a
// size; plain `a * b` would wrap (undefined behaviour, then wrong shapes, heap corruption or a
// wrong verdict). Every helper here throws a braid::Error that names the values instead; callers
// that know the statement add its location (see the interpreter's runStmt).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "ir/error.h"

namespace braid {

// The most elements one buffer, view or extent product may have: 2^50 (a petabyte of bytes),
// far above any real GPU allocation and far below where int64 address arithmetic on element
// counts times strides could overflow.
inline constexpr int64_t kMaxElements = int64_t{1} << 50;

// The most ranks a program may run on (device ids, --ranks, team members): 65536.
inline constexpr int64_t kMaxRanks = 65536;

// The most streams per rank (numberOfStreams, --streams): 4096, far above the 4-64 real programs use.
inline constexpr int64_t kMaxStreams = 4096;

namespace detail {
[[noreturn]] inline void overflow(int64_t a, const char* op, int64_t b, std::string_view what) {
  std::string m = "integer overflow: " + std::to_string(a) + " " + op + " " + std::to_string(b) +
                  " does not fit in 64 bits";
  if (!what.empty()) m += std::string(" (") + std::string(what) + ")";
  throw Error(m);
}
}  // namespace detail

inline int64_t checkedAdd(int64_t a, int64_t b, std::string_view what = {}) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) detail::overflow(a, "+", b, what);
  return r;
}

inline int64_t checkedSub(int64_t a, int64_t b, std::string_view what = {}) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) detail::overflow(a, "-", b, what);
  return r;
}

inline int64_t checkedMul(int64_t a, int64_t b, std::string_view what = {}) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) detail::overflow(a, "*", b, what);
  return r;
}

// a / b truncating toward zero; INT64_MIN / -1 is the one quotient that overflows.
inline int64_t checkedDiv(int64_t a, int64_t b, std::string_view what = {}) {
  if (b == 0) throw Error(what.empty() ? std::string("division by zero") : "division by zero (" + std::string(what) + ")");
  if (a == std::numeric_limits<int64_t>::min() && b == -1) detail::overflow(a, "/", b, what);
  return a / b;
}

// a % b (sign of a); INT64_MIN % -1 is 0, but the hardware division traps, so it is special-cased.
inline int64_t checkedMod(int64_t a, int64_t b, std::string_view what = {}) {
  if (b == 0) throw Error(what.empty() ? std::string("remainder modulo zero") : "remainder modulo zero (" + std::string(what) + ")");
  if (b == -1) return 0;
  return a % b;
}

// a * b, saturating at INT64_MAX for non-negative operands: for estimates that only need to know
// "more than the budget".
inline int64_t saturatingMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::numeric_limits<int64_t>::max();
  return r;
}

inline int64_t saturatingAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::numeric_limits<int64_t>::max();
  return r;
}

// The element count of `shape` (every size >= 0), refused with an Error naming `what` and the
// shape when it exceeds kMaxElements (or int64).
inline int64_t checkedElementCount(const std::vector<int64_t>& shape, std::string_view what) {
  auto shapeStr = [&] {
    std::string s = "[";
    for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
  };
  int64_t n = 1;
  bool zero = false;
  for (int64_t s : shape) zero = zero || s == 0;
  if (zero) return 0;  // an empty tensor, whatever its other sizes
  for (int64_t s : shape) {
    if (s < 0) throw Error(std::string(what) + " has a negative size in shape " + shapeStr());
    if (__builtin_mul_overflow(n, s, &n) || n > kMaxElements)
      throw Error(std::string(what) + " of shape " + shapeStr() + " has more than 2^50 elements (braid's limit on " +
                  "one buffer: kMaxElements = " + std::to_string(kMaxElements) + ")");
  }
  return n;
}

}  // namespace braid
