// The semantics' shape and view rules, written once over any integer expression type: a buffer's
// shape from a tensor's printed domain, what HirAliasSelect and ShardByStream select, the shape
// a host op produces, and views as boxes of their base buffer. The bounded interpreter can run
// them on int64_t (ExprOps<int64_t>), passes and docs on braid's Scalar (ExprOps<Scalar>: the
// rules as symbolic expressions), and the Z3 checker on Z3 terms (its own ExprOps), so the three
// agree by construction.
//
// Every view a host program makes (HirAliasSelect, ShardByStream, Set into an unbound output,
// Set.Permute, broadcast, squeeze) is a *box* of its base buffer: per buffer dimension an
// interval [lo, lo + len), seen through the view's own dimension order. A box has exactly the
// element set of the strided Region the interpreter builds (toRegion), and two boxes of one
// buffer overlap iff their intervals overlap in every dimension, which keeps overlap and
// contiguity linear in the box bounds.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/expr.h"
#include "ir/host_ir.h"
#include "ir/scalar.h"
#include "ir/semantics/buffer_rules.h"
#include "ir/semantics/communication_rules.h"
#include "ir/semantics/region.h"
#include "ir/tensor_view.h"

namespace braid::sem {

// The operations the rules need. Booleans are expressions of the same type (E) for int64_t and
// Scalar (0 / 1); ExprOps<E>::Bool names the boolean type.
template <class E>
struct ExprOps;

template <>
struct ExprOps<int64_t> {
  using Bool = bool;
  static int64_t num(int64_t v) { return v; }
  static int64_t ite(bool c, int64_t a, int64_t b) { return c ? a : b; }
  static bool lt(int64_t a, int64_t b) { return a < b; }
  static bool le(int64_t a, int64_t b) { return a <= b; }
  static bool eq(int64_t a, int64_t b) { return a == b; }
  static bool both(bool a, bool b) { return a && b; }
  static bool either(bool a, bool b) { return a || b; }
  static bool negate(bool a) { return !a; }
  static bool truth(bool v) { return v; }
  // The exact ceiling of a / b (b != 0), as Scalar's ceilDiv.
  static int64_t ceilDiv(int64_t a, int64_t b) {
    int64_t q = a / b, r = a % b;
    return (r != 0 && ((r > 0) == (b > 0))) ? q + 1 : q;
  }
};

template <>
struct ExprOps<Scalar> {
  using Bool = Scalar;
  static Scalar num(int64_t v) { return Scalar(v); }
  // b + c * (a - b): Scalar booleans are 0 / 1.
  static Scalar ite(const Scalar& c, const Scalar& a, const Scalar& b) {
    if (auto v = c.constValue()) return *v != 0 ? a : b;
    if (a == b) return a;
    return b + c * (a - b);
  }
  static Scalar lt(const Scalar& a, const Scalar& b) { return braid::lt(a, b); }
  static Scalar le(const Scalar& a, const Scalar& b) { return braid::le(a, b); }
  static Scalar eq(const Scalar& a, const Scalar& b) { return braid::eq(a, b); }
  static Scalar both(const Scalar& a, const Scalar& b) { return logicalAnd(a, b); }
  static Scalar either(const Scalar& a, const Scalar& b) { return logicalOr(a, b); }
  static Scalar negate(const Scalar& a) { return Scalar::logicalNot(a).simplify(); }
  static Scalar truth(bool v) { return Scalar(v ? 1 : 0); }
  static Scalar ceilDiv(const Scalar& a, const Scalar& b) { return braid::ceilDiv(a, b); }
};

template <class E>
E minOf(const E& a, const E& b) {
  return ExprOps<E>::ite(ExprOps<E>::lt(a, b), a, b);
}
template <class E>
E maxOf(const E& a, const E& b) {
  return ExprOps<E>::ite(ExprOps<E>::lt(a, b), b, a);
}

// A view of a dense row-major buffer of shape `base`: per base dimension the interval
// [lo[d], lo[d] + len[d]), and the view's dimensions in its own order, each naming a base
// dimension (or -1: a dimension the view inserted, of size `unit[v]`: 1, or 0 once narrowed to
// nothing). Base dimensions the view selected away keep len 1 and appear in no view dimension.
template <class E>
struct BoxView {
  using Ops = ExprOps<E>;
  using Bool = typename Ops::Bool;

  std::vector<E> base;
  std::vector<E> lo, len;
  std::vector<int> dims;
  std::vector<E> unit;  // per view dimension; used where dims[v] < 0

  static BoxView whole(std::vector<E> shape) {
    BoxView v;
    v.base = std::move(shape);
    for (size_t d = 0; d < v.base.size(); ++d) {
      v.lo.push_back(Ops::num(0));
      v.len.push_back(v.base[d]);
      v.dims.push_back(static_cast<int>(d));
      v.unit.push_back(Ops::num(1));
    }
    return v;
  }

  int rank() const { return static_cast<int>(dims.size()); }
  E size(int v) const {
    int d = dims.at(static_cast<size_t>(v));
    return d < 0 ? unit[static_cast<size_t>(v)] : len[static_cast<size_t>(d)];
  }
  // Some inserted dimension was narrowed to nothing.
  Bool noUnits() const {
    Bool r = Ops::truth(false);
    for (size_t v = 0; v < dims.size(); ++v)
      if (dims[v] < 0) r = Ops::either(r, Ops::eq(unit[v], Ops::num(0)));
    return r;
  }
  std::vector<E> sizes() const {
    std::vector<E> s;
    for (int v = 0; v < rank(); ++v) s.push_back(size(v));
    return s;
  }
  E numel() const {
    E n = Ops::num(1);
    for (const E& l : len) n = n * l;
    for (size_t v = 0; v < dims.size(); ++v)
      if (dims[v] < 0) n = n * unit[v];
    return n;
  }
  // Elements between consecutive indices of base dimension d (Region::contiguous's strides).
  E stride(int d) const {
    E s = Ops::num(1);
    for (size_t e = static_cast<size_t>(d) + 1; e < base.size(); ++e) s = s * maxOf(base[e], Ops::num(1));
    return s;
  }

  BoxView select(int v, const E& index) const {
    BoxView r = *this;
    int d = dims.at(static_cast<size_t>(v));
    if (d >= 0) {
      r.lo[static_cast<size_t>(d)] = lo[static_cast<size_t>(d)] + index;
      r.len[static_cast<size_t>(d)] = Ops::num(1);
    }
    r.dims.erase(r.dims.begin() + v);
    r.unit.erase(r.unit.begin() + v);
    return r;
  }
  BoxView narrow(int v, const E& start, const E& length) const {
    BoxView r = *this;
    int d = dims.at(static_cast<size_t>(v));
    if (d >= 0) {
      r.lo[static_cast<size_t>(d)] = lo[static_cast<size_t>(d)] + start;
      r.len[static_cast<size_t>(d)] = length;
    } else {
      r.unit[static_cast<size_t>(v)] = length;
    }
    return r;
  }
  // New view dimension i is old dimension perm[i].
  BoxView permute(const std::vector<int64_t>& perm) const {
    BoxView r = *this;
    for (size_t i = 0; i < perm.size(); ++i) {
      r.dims[i] = dims.at(static_cast<size_t>(perm[i]));
      r.unit[i] = unit.at(static_cast<size_t>(perm[i]));
    }
    return r;
  }
  BoxView unsqueeze(int v) const {
    BoxView r = *this;
    r.dims.insert(r.dims.begin() + v, -1);
    r.unit.insert(r.unit.begin() + v, Ops::num(1));
    return r;
  }
  // No elements (what an out-of-bounds view binds).
  BoxView emptied() const {
    BoxView r = *this;
    if (!r.len.empty()) r.len[0] = Ops::num(0);
    return r;
  }

  // Region::isContiguous, which walks the dimensions from the innermost out: size-1 ones are
  // skipped, a size-0 one ends the walk (empty: contiguous), any other must have the stride
  // E_v = the product of the sizes inside it. As a formula over the walk's remainder:
  // R(v) = n_v == 0 || ((n_v == 1 || stride_v == E_v) && R(v - 1)), R(-1) = true.
  Bool contiguous() const {
    std::vector<E> inner(static_cast<size_t>(rank()) + 1, Ops::num(1));
    for (int v = rank(); v-- > 0;) inner[static_cast<size_t>(v)] = inner[static_cast<size_t>(v) + 1] * size(v);
    Bool r = Ops::truth(true);
    for (int v = 0; v < rank(); ++v) {
      int d = dims[static_cast<size_t>(v)];
      E n = size(v);
      if (d < 0) {  // an inserted dimension: size 1 (skipped) or 0 (empty)
        r = Ops::either(Ops::eq(n, Ops::num(0)), r);
        continue;
      }
      Bool step = Ops::either(Ops::eq(n, Ops::num(1)), Ops::eq(stride(d), inner[static_cast<size_t>(v) + 1]));
      r = Ops::either(Ops::eq(n, Ops::num(0)), Ops::both(step, r));
    }
    return r;
  }
  // Some element belongs to both views (of the same buffer).
  Bool overlaps(const BoxView& o) const {
    Bool r = Ops::both(Ops::negate(noUnits()), Ops::negate(o.noUnits()));
    for (size_t d = 0; d < lo.size() && d < o.lo.size(); ++d) {
      r = Ops::both(r, Ops::lt(Ops::num(0), len[d]));
      r = Ops::both(r, Ops::lt(Ops::num(0), o.len[d]));
      r = Ops::both(r, Ops::lt(lo[d], o.lo[d] + o.len[d]));
      r = Ops::both(r, Ops::lt(o.lo[d], lo[d] + len[d]));
    }
    return r;
  }
  // The element at base index `point` belongs to this view.
  Bool contains(const std::vector<E>& point) const {
    Bool r = Ops::negate(noUnits());
    for (size_t d = 0; d < lo.size(); ++d) {
      r = Ops::both(r, Ops::le(lo[d], point[d]));
      r = Ops::both(r, Ops::lt(point[d], lo[d] + len[d]));
    }
    return r;
  }
};

// The strided Region a concrete box names (the interpreter's representation).
inline Region toRegion(const BoxView<int64_t>& v, int32_t buffer) {
  Region r;
  r.buffer = buffer;
  for (size_t d = 0; d < v.lo.size(); ++d) r.offset += v.lo[d] * v.stride(static_cast<int>(d));
  for (int i = 0; i < v.rank(); ++i) {
    int d = v.dims[static_cast<size_t>(i)];
    r.sizes.push_back(v.size(i));
    r.strides.push_back(d < 0 ? 1 : v.stride(d));
  }
  return r;
}

// ---- rules ----

// Position of each axis of `dom` among the buffer's dimensions (-1 for reduction axes, which the
// buffer does not have).
inline std::vector<int> bufferDimsOf(const std::vector<IterDomain*>& dom) {
  std::vector<int> dims(dom.size(), -1);
  int d = 0;
  for (size_t i = 0; i < dom.size(); ++i)
    if (!dom[i]->isReduction()) dims[i] = d++;
  return dims;
}

// The shape of the buffer a tensor names (buffer_rules.h, bufferShape): the non-reduction axes of
// its buffer domain in order; device-parallel and broadcast axes have size 1; with
// `streamChunk`, so do stream-parallel axes (a tensor allocated inside the loop over that axis).
// `extent` turns an axis extent into an E.
template <class E, class ExtentFn>
std::vector<E> bufferShapeRule(const TensorView& tv, bool streamChunk, ExtentFn&& extent) {
  std::vector<E> shape;
  for (const IterDomain* id : bufferDomain(tv)) {
    if (id->isReduction()) continue;
    if (id->isDeviceParallel() || id->isBroadcast() || (streamChunk && id->isStream())) {
      shape.push_back(ExprOps<E>::num(1));
      continue;
    }
    shape.push_back(extent(id->extent()));
  }
  return shape;
}

template <class E>
struct ViewRuleResult {
  BoxView<E> view;      // the view when inBounds
  BoxView<E> outside;   // what is bound otherwise (no elements)
  typename ExprOps<E>::Bool inBounds;
};

// HirAliasSelect along buffer dimension `dim` of `in`: index 0 on a broadcast axis or a size-1
// dimension, else `index`, which must lie in [0, size).
template <class E>
ViewRuleResult<E> aliasSelectRule(const BoxView<E>& in, int dim, bool broadcastAxis, const E& index) {
  using Ops = ExprOps<E>;
  E size = in.size(dim);
  E idx = broadcastAxis ? Ops::num(0) : Ops::ite(Ops::eq(size, Ops::num(1)), Ops::num(0), index);
  auto ok = Ops::both(Ops::le(Ops::num(0), idx), Ops::lt(idx, size));
  return {in.select(dim, idx), in.narrow(dim, Ops::num(0), Ops::num(0)).select(dim, Ops::num(0)), ok};
}

// ShardByStream: chunk `index` of `chunks` along buffer dimension `dim` (chunks of
// ceilDiv(size, chunks) elements, the last one possibly shorter); `unsqueeze` when the shard's
// domain splits the axis instead (pipeline B: the input has no Stream axis).
template <class E>
ViewRuleResult<E> shardByStreamRule(const BoxView<E>& in, int dim, const E& chunks, const E& index, bool unsqueeze) {
  using Ops = ExprOps<E>;
  E size = in.size(dim);
  auto positive = Ops::lt(Ops::num(0), chunks);
  E chunk = Ops::ite(positive, Ops::ceilDiv(size, chunks), size);
  E start = index * chunk;
  auto ok = Ops::both(Ops::both(positive, Ops::lt(index, chunks)),
                      Ops::both(Ops::le(Ops::num(0), index), Ops::lt(start, size)));
  BoxView<E> v = in.narrow(dim, start, minOf(chunk, size - start));
  if (unsqueeze) v = v.unsqueeze(dim);
  return {v, in.narrow(dim, Ops::num(0), Ops::num(0)), ok};
}

// communicationSizeProblem (communication_rules.h) as a condition: the counts a member reads
// (`in`) and writes (`out`) follow its type's size rule on a team of `n`.
template <class E>
typename ExprOps<E>::Bool communicationSizeRule(CommunicationType t, int64_t n, const typename ExprOps<E>::Bool& isRoot,
                                                const typename ExprOps<E>::Bool& readsInput,
                                                const typename ExprOps<E>::Bool& writesOutput, const E& in,
                                                const E& out) {
  using Ops = ExprOps<E>;
  E team = Ops::num(n);
  switch (t) {
    case CommunicationType::kAllgather:
      return Ops::eq(out, team * in);
    case CommunicationType::kReduceScatter:
      return Ops::eq(in, team * out);
    case CommunicationType::kAllreduce:
      return Ops::eq(in, out);
    case CommunicationType::kAllToAll: {
      // in = out, and in divides into n parts: in = n * (in / n) with the truncating division.
      auto parts = n > 0 ? Ops::eq(in, team * (in / team)) : Ops::truth(true);
      return Ops::both(Ops::eq(in, out), parts);
    }
    case CommunicationType::kScatter:
      return Ops::either(Ops::negate(isRoot), Ops::eq(in, team * out));
    case CommunicationType::kGather:
      return Ops::either(Ops::negate(isRoot), Ops::eq(out, team * in));
    case CommunicationType::kBroadcast:
    case CommunicationType::kReduce:
      return Ops::either(Ops::negate(Ops::both(readsInput, writesOutput)), Ops::eq(in, out));
    case CommunicationType::kSendRecv:
      return Ops::truth(true);
  }
  return Ops::truth(true);
}

// Right-aligned broadcasting (torch's rule: a size-1 dimension stretches).
template <class E>
std::vector<E> broadcastShapesRule(const std::vector<E>& a, const std::vector<E>& b) {
  using Ops = ExprOps<E>;
  size_t n = std::max(a.size(), b.size());
  std::vector<E> out;
  for (size_t i = 0; i < n; ++i) {
    E x = i < n - a.size() ? Ops::num(1) : a[i - (n - a.size())];
    E y = i < n - b.size() ? Ops::num(1) : b[i - (n - b.size())];
    out.push_back(Ops::ite(Ops::eq(x, Ops::num(1)), y, x));
  }
  return out;
}

// The shape a host-evaluated op produces from its inputs' view sizes; `outDomainShape()` is the
// output's printed shape, used where the op does not determine it.
template <class E, class OutShapeFn>
std::vector<E> opOutputShapeRule(const Expr& e, const std::vector<std::vector<E>>& ins, OutShapeFn&& outDomainShape) {
  switch (e.type()) {
    case OpType::kSet:
    case OpType::kUnary:
    case OpType::kBinary: {
      if (ins.empty()) return outDomainShape();
      std::vector<E> s = ins[0];
      for (size_t i = 1; i < ins.size(); ++i) s = broadcastShapesRule(s, ins[i]);
      return s;
    }
    case OpType::kPermute: {
      const auto& in = ins.at(0);
      if (e.permutation.size() != in.size()) return outDomainShape();
      std::vector<E> s;
      for (int64_t p : e.permutation) s.push_back(in[static_cast<size_t>(p)]);
      return s;
    }
    case OpType::kReduction: {
      const auto& in = ins.at(0);
      const auto& dom = e.output(0)->loop();
      if (dom.size() != in.size()) return outDomainShape();
      std::vector<E> s;
      for (size_t i = 0; i < dom.size(); ++i)
        if (!dom[i]->isReduction()) s.push_back(in[i]);
      return s;
    }
    case OpType::kMatmul:
    case OpType::kLinear: {
      std::vector<E> a = ins.at(0);
      std::vector<E> b = ins.size() > 1 ? ins[1] : std::vector<E>{};
      if (e.type() == OpType::kLinear && b.size() >= 2) std::swap(b[b.size() - 1], b[b.size() - 2]);
      if (a.empty() || b.empty()) return outDomainShape();
      std::vector<E> out;
      if (b.size() == 1) {
        out.assign(a.begin(), a.end() - 1);
      } else if (a.size() == 1) {
        out.assign(b.begin(), b.end() - 2);
        out.push_back(b.back());
      } else {
        std::vector<E> ba(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
        out = broadcastShapesRule(ba, bb);
        out.push_back(a[a.size() - 2]);
        out.push_back(b.back());
      }
      return out;
    }
    case OpType::kBroadcast:
    case OpType::kSqueeze:
    case OpType::kReshape:
      return outDomainShape();
  }
  return outDomainShape();
}

}  // namespace braid::sem
