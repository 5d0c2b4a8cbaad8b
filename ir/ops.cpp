// The fusion builder API (ir/ops.h). Every op:
//  - checks its operands and their shapes, throwing Error messages that name the tensors;
//  - makes a fresh output logical domain (serial, not rfactor) in the first input's Fusion,
//    keeping reduction axes of its own as IterType::kReduction and dropping the reduction axes
//    of its inputs (they are not part of the data an op consumes, as in nvFuser);
//  - copies the first input's device mesh onto the output and records the Expr.
#include "ir/ops.h"

#include <algorithm>
#include <limits>
#include <map>
#include <numeric>
#include <set>
#include <string>

#include "ir/error.h"

namespace braid {

namespace {

std::string label(const TensorView* tv) { return "T" + std::to_string(tv->name()); }

void requireTensor(const char* op, const TensorView* tv, const char* role) {
  if (tv == nullptr) throw Error(std::string(op) + ": the " + role + " tensor is null");
  if (tv->fusion() == nullptr) throw Error(std::string(op) + ": " + label(tv) + " belongs to no fusion");
}

void requireSameFusion(const char* op, const TensorView* a, const TensorView* b) {
  if (a->fusion() != b->fusion())
    throw Error(std::string(op) + ": " + label(a) + " and " + label(b) + " belong to different fusions");
}

void requireSameDtype(const char* op, const TensorView* a, const TensorView* b) {
  if (a->dtype() != b->dtype())
    throw Error(std::string(op) + ": " + label(a) + " is " + std::string(dataTypeName(a->dtype())) + " but " +
                label(b) + " is " + std::string(dataTypeName(b->dtype())) + "; cast one of them first");
}

// The axes an op reads: the logical domain without reduction axes.
std::vector<IterDomain*> dataAxes(const TensorView* tv) {
  std::vector<IterDomain*> out;
  for (IterDomain* id : tv->logical())
    if (!id->isReduction()) out.push_back(id);
  return out;
}

std::string shapeStr(const std::vector<IterDomain*>& ids) {
  std::string s = "[";
  for (size_t i = 0; i < ids.size(); ++i) s += (i ? ", " : "") + ids[i]->extent().str();
  return s + "]";
}

// A new serial axis of the same extent and kind (iteration or broadcast).
IterDomain* freshLike(Fusion* f, const IterDomain* id) {
  IterType t = id->isBroadcast() ? IterType::kBroadcast : IterType::kIteration;
  return f->newIterDomain(id->extent(), t);
}

TensorView* newOutput(TensorView* first_input, std::vector<IterDomain*> logical, DataType dtype) {
  TensorView* out = first_input->fusion()->newTensor(std::move(logical), dtype);
  if (first_input->hasDeviceMesh()) out->inheritDeviceMesh(*first_input->deviceMesh());
  return out;
}

// `x` as a linear form: constant + sum of coefficient * term, where terms are the non-linear
// subexpressions (symbols, ceilDiv(...), products of symbols, ...) keyed by their spelling.
struct LinearForm {
  int64_t constant = 0;
  std::map<std::string, int64_t> terms;
};

void addLinear(const Scalar& x, int64_t coef, LinearForm& out) {
  switch (x.op()) {
    case ScalarOp::kConst: out.constant += coef * *x.constValue(); return;
    case ScalarOp::kAdd:
      addLinear(x.lhs(), coef, out);
      addLinear(x.rhs(), coef, out);
      return;
    case ScalarOp::kSub:
      addLinear(x.lhs(), coef, out);
      addLinear(x.rhs(), -coef, out);
      return;
    case ScalarOp::kMul:
      if (auto c = x.lhs().constValue()) return addLinear(x.rhs(), coef * *c, out);
      if (auto c = x.rhs().constValue()) return addLinear(x.lhs(), coef * *c, out);
      break;
    default: break;
  }
  out.terms[x.str()] += coef;
}

// Two extents are provably different when their difference is a nonzero constant (`64` vs `32`,
// `i0` vs `( i0 + 1 )`). Symbolic extents that are not provably different are accepted: a caller
// binding them inconsistently is caught when the program is evaluated.
bool provablyDifferent(const Scalar& x, const Scalar& y) {
  if (x == y) return false;
  LinearForm d;
  addLinear(x.simplify(), 1, d);
  addLinear(y.simplify(), -1, d);
  for (const auto& [term, coef] : d.terms)
    if (coef != 0) return false;
  return d.constant != 0;
}

// A size-1 axis broadcasts against any extent (torch semantics): a broadcast axis or a
// constant extent 1.
bool broadcastsFreely(const IterDomain* id) {
  return id->isBroadcast() || id->extent().constValue() == std::optional<int64_t>(1);
}

struct MergedAxis {
  Scalar extent;
  IterType type = IterType::kIteration;
};

// The output axis for two aligned input axes (either may be missing), or nullopt when they
// cannot broadcast together.
std::optional<MergedAxis> mergeAxes(const IterDomain* a, const IterDomain* b) {
  auto of = [](const IterDomain* id) {
    return MergedAxis{id->extent(), id->isBroadcast() ? IterType::kBroadcast : IterType::kIteration};
  };
  if (a == nullptr) return of(b);
  if (b == nullptr) return of(a);
  bool fa = broadcastsFreely(a), fb = broadcastsFreely(b);
  if (fa && !fb) return of(b);
  if (fb && !fa) return of(a);
  if (fa && fb) {
    // Both have size 1: the output is a broadcast axis only if both are.
    if (a->isBroadcast() && b->isBroadcast()) return of(a);
    return MergedAxis{Scalar(1), IterType::kIteration};
  }
  if (provablyDifferent(a->extent(), b->extent())) return std::nullopt;
  return of(a);
}

int normalizeAxis(const char* op, int axis, int rank, const TensorView* tv) {
  int a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    throw Error(std::string(op) + ": axis " + std::to_string(axis) + " is out of range for " + label(tv) +
                " with " + std::to_string(rank) + " axes " + shapeStr(dataAxes(tv)));
  return a;
}

TensorView* sameShapeOp(const char* op, TensorView* in, DataType dtype, OpType type, UnaryOpType uop) {
  requireTensor(op, in, "input");
  std::vector<IterDomain*> logical;
  for (IterDomain* id : dataAxes(in)) logical.push_back(freshLike(in->fusion(), id));
  TensorView* out = newOutput(in, std::move(logical), dtype);
  Expr* e = in->fusion()->newExpr(type, {in}, {out});
  e->unaryOp = uop;
  return out;
}

// nvFuser's spelling of a reduction's initial value: `float(0)`, `float(-inf)`, `int64_t(0)`.
std::string initValueFor(ReductionOpType op, DataType dtype) {
  bool floating = dtype == DataType::kFloat || dtype == DataType::kDouble || dtype == DataType::kHalf ||
                  dtype == DataType::kBFloat16;
  // Half-precision reductions accumulate in float, as nvFuser does.
  std::string type = dtype == DataType::kHalf || dtype == DataType::kBFloat16 ? "float"
                                                                              : std::string(dataTypeName(dtype));
  switch (op) {
    case ReductionOpType::kAdd:
      return dtype == DataType::kBool ? "bool(false)" : type + "(0)";
    case ReductionOpType::kMax:
      if (floating) return type + "(-inf)";
      if (dtype == DataType::kBool) return "bool(false)";
      return type + "(" +
             std::to_string(dtype == DataType::kInt32 ? int64_t{std::numeric_limits<int32_t>::min()}
                                                      : std::numeric_limits<int64_t>::min()) +
             ")";
    case ReductionOpType::kMin:
      if (floating) return type + "(inf)";
      if (dtype == DataType::kBool) return "bool(true)";
      return type + "(" +
             std::to_string(dtype == DataType::kInt32 ? int64_t{std::numeric_limits<int32_t>::max()}
                                                      : std::numeric_limits<int64_t>::max()) +
             ")";
  }
  return type + "(0)";
}

// The operands of a contraction, each without its reduction axes: batch axes, the row (m) or
// column (n) axis (null for a 1-D operand) and the contracted axis k.
struct ContractionSide {
  std::vector<IterDomain*> batch;
  IterDomain* free = nullptr;
  IterDomain* k = nullptr;
};

// The output [batch..., m, n, r(k)] of `a` (rows) contracted with `b` (columns) along k.
TensorView* contraction(const char* op, OpType type, TensorView* a, const ContractionSide& sa, TensorView* b,
                        const ContractionSide& sb, TensorView* bias) {
  Fusion* f = a->fusion();
  if (provablyDifferent(sa.k->extent(), sb.k->extent()))
    throw Error(std::string(op) + ": " + label(a) + " has k = " + sa.k->extent().str() + " but " + label(b) +
                " has k = " + sb.k->extent().str());
  // Batch axes broadcast right-aligned, as torch.matmul.
  size_t nb = std::max(sa.batch.size(), sb.batch.size());
  std::vector<IterDomain*> logical;
  for (size_t i = 0; i < nb; ++i) {
    // Position i of the output's batch, counted from the left; operands align at the right.
    const IterDomain* ia = i + sa.batch.size() >= nb ? sa.batch[i + sa.batch.size() - nb] : nullptr;
    const IterDomain* ib = i + sb.batch.size() >= nb ? sb.batch[i + sb.batch.size() - nb] : nullptr;
    auto m = mergeAxes(ia, ib);
    if (!m)
      throw Error(std::string(op) + ": batch axis " + std::to_string(i) + " (right-aligned) does not broadcast: " +
                  label(a) + " has " + ia->extent().str() + " but " + label(b) + " has " + ib->extent().str());
    logical.push_back(f->newIterDomain(m->extent, m->type));
  }
  if (sa.free != nullptr) logical.push_back(freshLike(f, sa.free));
  if (sb.free != nullptr) logical.push_back(freshLike(f, sb.free));
  logical.push_back(f->newIterDomain(sa.k->extent(), IterType::kReduction));

  std::vector<TensorView*> inputs{a, b};
  if (bias != nullptr) {
    requireTensor(op, bias, "bias");
    requireSameFusion(op, a, bias);
    requireSameDtype(op, a, bias);
    // The bias broadcasts right-aligned against the weight's axes without k ([batch..., n]).
    std::vector<IterDomain*> target = sb.batch;
    if (sb.free != nullptr) target.push_back(sb.free);
    std::vector<IterDomain*> bd = dataAxes(bias);
    if (bd.size() > target.size())
      throw Error(std::string(op) + ": bias " + label(bias) + " " + shapeStr(bd) + " has more axes than " +
                  label(b) + "'s output features " + shapeStr(target));
    for (size_t i = 0; i < bd.size(); ++i) {
      const IterDomain* t = target[target.size() - bd.size() + i];
      if (!mergeAxes(bd[i], t))
        throw Error(std::string(op) + ": bias " + label(bias) + " " + shapeStr(bd) + " does not match " +
                    label(b) + "'s output features " + shapeStr(target));
    }
    inputs.push_back(bias);
  }
  TensorView* out = newOutput(a, std::move(logical), a->dtype());
  f->newExpr(type, std::move(inputs), {out});
  return out;
}

}  // namespace

TensorView* set(TensorView* in) { return sameShapeOp("set", in, in ? in->dtype() : DataType::kFloat, OpType::kSet, UnaryOpType::kNeg); }

TensorView* permute(TensorView* in, const std::vector<int64_t>& permutation) {
  requireTensor("permute", in, "input");
  std::vector<IterDomain*> axes = dataAxes(in);
  int rank = static_cast<int>(axes.size());
  if (static_cast<int>(permutation.size()) != rank)
    throw Error("permute: " + label(in) + " has " + std::to_string(rank) + " axes but the permutation has " +
                std::to_string(permutation.size()) + " entries");
  std::vector<int64_t> perm;
  std::set<int64_t> seen;
  for (int64_t p : permutation) {
    int64_t q = p < 0 ? p + rank : p;
    if (q < 0 || q >= rank)
      throw Error("permute: entry " + std::to_string(p) + " is out of range for " + label(in) + " with " +
                  std::to_string(rank) + " axes");
    if (!seen.insert(q).second)
      throw Error("permute: the permutation of " + label(in) + " names axis " + std::to_string(q) + " twice");
    perm.push_back(q);
  }
  Fusion* f = in->fusion();
  // The root domain is in the input's order; the logical domain permutes it.
  std::vector<IterDomain*> root;
  for (IterDomain* id : axes) root.push_back(freshLike(f, id));
  std::vector<IterDomain*> logical;
  for (int64_t q : perm) logical.push_back(root[static_cast<size_t>(q)]);
  TensorView* out = newOutput(in, std::move(logical), in->dtype());
  out->setRoot(std::move(root));
  Expr* e = f->newExpr(OpType::kPermute, {in}, {out});
  e->permutation = std::move(perm);
  return out;
}

TensorView* unaryOp(UnaryOpType op, TensorView* in) {
  return sameShapeOp(unaryOpName(op), in, in ? in->dtype() : DataType::kFloat, OpType::kUnary, op);
}
TensorView* neg(TensorView* in) { return unaryOp(UnaryOpType::kNeg, in); }
TensorView* exp(TensorView* in) { return unaryOp(UnaryOpType::kExp, in); }
TensorView* relu(TensorView* in) { return unaryOp(UnaryOpType::kRelu, in); }
TensorView* gelu(TensorView* in) { return unaryOp(UnaryOpType::kGelu, in); }
TensorView* tanh(TensorView* in) { return unaryOp(UnaryOpType::kTanh, in); }
TensorView* castOp(DataType dtype, TensorView* in) {
  return sameShapeOp("cast", in, dtype, OpType::kUnary, UnaryOpType::kCast);
}

TensorView* binaryOp(BinaryOpType op, TensorView* a, TensorView* b) {
  std::string name = std::string("binary ") + binaryOpSymbol(op);
  requireTensor(name.c_str(), a, "left");
  requireTensor(name.c_str(), b, "right");
  requireSameFusion(name.c_str(), a, b);
  requireSameDtype(name.c_str(), a, b);
  std::vector<IterDomain*> da = dataAxes(a), db = dataAxes(b);
  if (da.size() != db.size())
    throw Error(name + ": " + label(a) + " " + shapeStr(da) + " and " + label(b) + " " + shapeStr(db) +
                " have different ranks; broadcast one of them first");
  Fusion* f = a->fusion();
  std::vector<IterDomain*> logical;
  for (size_t i = 0; i < da.size(); ++i) {
    auto m = mergeAxes(da[i], db[i]);
    if (!m)
      throw Error(name + ": axis " + std::to_string(i) + " of " + label(a) + " has extent " + da[i]->extent().str() +
                  " but " + label(b) + " has " + db[i]->extent().str());
    logical.push_back(f->newIterDomain(m->extent, m->type));
  }
  TensorView* out = newOutput(a, std::move(logical), a->dtype());
  Expr* e = f->newExpr(OpType::kBinary, {a, b}, {out});
  e->binaryOp = op;
  return out;
}
TensorView* add(TensorView* a, TensorView* b) { return binaryOp(BinaryOpType::kAdd, a, b); }
TensorView* sub(TensorView* a, TensorView* b) { return binaryOp(BinaryOpType::kSub, a, b); }
TensorView* mul(TensorView* a, TensorView* b) { return binaryOp(BinaryOpType::kMul, a, b); }
TensorView* div(TensorView* a, TensorView* b) { return binaryOp(BinaryOpType::kDiv, a, b); }

TensorView* reductionOp(ReductionOpType op, TensorView* in, const std::vector<int>& axes) {
  std::string name = std::string("reduction ") + reductionOpName(op);
  requireTensor(name.c_str(), in, "input");
  std::vector<IterDomain*> da = dataAxes(in);
  int rank = static_cast<int>(da.size());
  if (axes.empty()) throw Error(name + ": no axis to reduce in " + label(in) + " " + shapeStr(da));
  std::set<int> reduced;
  for (int a : axes) {
    int n = normalizeAxis(name.c_str(), a, rank, in);
    if (!reduced.insert(n).second)
      throw Error(name + ": axis " + std::to_string(n) + " of " + label(in) + " is named twice");
  }
  Fusion* f = in->fusion();
  std::vector<IterDomain*> logical;
  for (int i = 0; i < rank; ++i) {
    IterDomain* id = da[static_cast<size_t>(i)];
    logical.push_back(reduced.count(i) ? f->newIterDomain(id->extent(), IterType::kReduction) : freshLike(f, id));
  }
  TensorView* out = newOutput(in, std::move(logical), in->dtype());
  Expr* e = f->newExpr(OpType::kReduction, {in}, {out});
  e->reductionOp = op;
  e->initValue = initValueFor(op, in->dtype());
  return out;
}
TensorView* sum(TensorView* in, const std::vector<int>& axes) { return reductionOp(ReductionOpType::kAdd, in, axes); }
TensorView* max(TensorView* in, const std::vector<int>& axes) { return reductionOp(ReductionOpType::kMax, in, axes); }
TensorView* min(TensorView* in, const std::vector<int>& axes) { return reductionOp(ReductionOpType::kMin, in, axes); }

TensorView* broadcast(TensorView* in, const std::vector<bool>& flags) {
  requireTensor("broadcast", in, "input");
  std::vector<IterDomain*> da = dataAxes(in);
  size_t kept = static_cast<size_t>(std::count(flags.begin(), flags.end(), false));
  if (kept != da.size())
    throw Error("broadcast: " + label(in) + " has " + std::to_string(da.size()) + " axes " + shapeStr(da) +
                " but the flags keep " + std::to_string(kept) + " (flags have the output's rank; false keeps an input axis)");
  Fusion* f = in->fusion();
  std::vector<IterDomain*> logical;
  size_t j = 0;
  for (bool b : flags)
    logical.push_back(b ? f->newIterDomain(Scalar(1), IterType::kBroadcast) : freshLike(f, da[j++]));
  TensorView* out = newOutput(in, std::move(logical), in->dtype());
  Expr* e = f->newExpr(OpType::kBroadcast, {in}, {out});
  e->broadcastFlags = flags;
  return out;
}

TensorView* squeeze(TensorView* in, const std::vector<bool>& flags) {
  requireTensor("squeeze", in, "input");
  std::vector<IterDomain*> da = dataAxes(in);
  if (flags.size() != da.size())
    throw Error("squeeze: " + label(in) + " has " + std::to_string(da.size()) + " axes " + shapeStr(da) + " but " +
                std::to_string(flags.size()) + " flags were given");
  Fusion* f = in->fusion();
  std::vector<IterDomain*> logical;
  for (size_t i = 0; i < da.size(); ++i) {
    if (!flags[i]) {
      logical.push_back(freshLike(f, da[i]));
    } else if (!broadcastsFreely(da[i])) {
      throw Error("squeeze: axis " + std::to_string(i) + " of " + label(in) + " has extent " + da[i]->extent().str() +
                  ", not 1");
    }
  }
  TensorView* out = newOutput(in, std::move(logical), in->dtype());
  Expr* e = f->newExpr(OpType::kSqueeze, {in}, {out});
  e->squeezeFlags = flags;
  return out;
}

TensorView* reshape(TensorView* in, const std::vector<Scalar>& new_shape) {
  requireTensor("reshape", in, "input");
  std::vector<IterDomain*> da = dataAxes(in);
  Scalar numel(1);
  for (IterDomain* id : da) numel = numel * id->extent();
  // At most one -1 entry, inferred from the element count.
  int inferred = -1;
  Scalar known(1);
  for (size_t i = 0; i < new_shape.size(); ++i) {
    auto c = new_shape[i].constValue();
    if (c == std::optional<int64_t>(-1)) {
      if (inferred >= 0) throw Error("reshape: more than one -1 in the new shape of " + label(in));
      inferred = static_cast<int>(i);
      continue;
    }
    if (c && *c <= 0)
      throw Error("reshape: extent " + std::to_string(*c) + " at position " + std::to_string(i) + " for " +
                  label(in) + " must be positive");
    known = known * new_shape[i];
  }
  std::vector<Scalar> shape = new_shape;
  if (inferred >= 0) {
    auto cn = numel.constValue(), ck = known.constValue();
    if (cn && ck && *cn % *ck != 0)
      throw Error("reshape: " + label(in) + " has " + std::to_string(*cn) + " elements, not divisible by " +
                  std::to_string(*ck));
    shape[static_cast<size_t>(inferred)] = (numel / known).simplify();
  } else if (provablyDifferent(numel.simplify(), known.simplify())) {
    throw Error("reshape: " + label(in) + " " + shapeStr(da) + " has " + numel.str() + " elements but the new shape has " +
                known.str());
  }
  Fusion* f = in->fusion();
  std::vector<IterDomain*> logical;
  for (const Scalar& e : shape) logical.push_back(f->newIterDomain(e));
  TensorView* out = newOutput(in, std::move(logical), in->dtype());
  f->newExpr(OpType::kReshape, {in}, {out});
  return out;
}

TensorView* matmul(TensorView* a, TensorView* b) {
  requireTensor("matmul", a, "left");
  requireTensor("matmul", b, "right");
  requireSameFusion("matmul", a, b);
  requireSameDtype("matmul", a, b);
  std::vector<IterDomain*> da = dataAxes(a), db = dataAxes(b);
  if (da.empty() || db.empty())
    throw Error("matmul: " + label(da.empty() ? a : b) + " has no axes; matmul needs at least 1-D operands");
  ContractionSide sa, sb;
  sa.k = da.back();
  if (da.size() >= 2) {
    sa.free = da[da.size() - 2];
    sa.batch.assign(da.begin(), da.end() - 2);
  }
  if (db.size() == 1) {
    sb.k = db[0];
  } else {
    sb.k = db[db.size() - 2];
    sb.free = db.back();
    sb.batch.assign(db.begin(), db.end() - 2);
  }
  return contraction("matmul", OpType::kMatmul, a, sa, b, sb, nullptr);
}

TensorView* linear(TensorView* in, TensorView* weight, TensorView* bias) {
  requireTensor("linear", in, "input");
  requireTensor("linear", weight, "weight");
  requireSameFusion("linear", in, weight);
  requireSameDtype("linear", in, weight);
  std::vector<IterDomain*> da = dataAxes(in), dw = dataAxes(weight);
  if (da.empty() || dw.empty())
    throw Error("linear: " + label(da.empty() ? in : weight) + " has no axes; linear needs at least 1-D operands");
  ContractionSide sa, sw;
  sa.k = da.back();
  if (da.size() >= 2) {
    sa.free = da[da.size() - 2];
    sa.batch.assign(da.begin(), da.end() - 2);
  }
  // linear(X, W) = matmul(X, W^T): the weight's last axis is k, the one before it n.
  sw.k = dw.back();
  if (dw.size() >= 2) {
    sw.free = dw[dw.size() - 2];
    sw.batch.assign(dw.begin(), dw.end() - 2);
  }
  return contraction("linear", OpType::kLinear, in, sa, weight, sw, bias);
}

}  // namespace braid
