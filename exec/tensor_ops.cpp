// Fusion ops with ATen (see tensor_ops.h).
#ifdef BRAID_WITH_TORCH

#include "exec/tensor_ops.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "ir/error.h"
#include "ir/semantics/buffer_rules.h"

namespace braid::exec {

at::ScalarType toScalarType(DataType t) {
  switch (t) {
    case DataType::kFloat: return at::kFloat;
    case DataType::kDouble: return at::kDouble;
    case DataType::kHalf: return at::kHalf;
    case DataType::kBFloat16: return at::kBFloat16;
    case DataType::kInt32: return at::kInt;
    case DataType::kInt64: return at::kLong;
    case DataType::kBool: return at::kBool;
  }
  return at::kFloat;
}

std::string shapeStr(at::IntArrayRef sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

at::Tensor applyView(at::Tensor t, const std::vector<sem::ViewStep>& steps) {
  for (const sem::ViewStep& s : steps) {
    switch (s.kind) {
      case sem::ViewStep::Kind::kSelect:
        t = t.select(s.dim, s.start);
        break;
      case sem::ViewStep::Kind::kNarrow:
        t = t.narrow(s.dim, s.start, s.length);
        break;
      case sem::ViewStep::Kind::kPermute:
        t = t.permute(s.perm);
        break;
      case sem::ViewStep::Kind::kUnsqueeze:
        t = t.unsqueeze(s.dim);
        break;
      case sem::ViewStep::Kind::kReshape:
        t = t.view(s.shape);
        break;
    }
  }
  return t;
}

void inferSymbols(const TensorView& tv, at::IntArrayRef shape, bool full, Bindings& b) {
  std::vector<IterDomain*> dom;
  for (IterDomain* id : sem::bufferDomain(tv))
    if (!id->isReduction()) dom.push_back(id);
  if (dom.size() != shape.size()) return;  // the caller reports the shape mismatch
  for (size_t d = 0; d < dom.size(); ++d) {
    if (dom[d]->isBroadcast() || (dom[d]->isDeviceParallel() && !full)) continue;
    const Scalar& e = dom[d]->extent();
    int64_t size = shape[d];
    if (e.isSymbol()) {
      if (!b.count(e.name())) b[e.name()] = size;
    } else if ((e.op() == ScalarOp::kCeilDiv || e.op() == ScalarOp::kDiv) && e.lhs().isSymbol() &&
               e.rhs().isConst()) {
      if (!b.count(e.lhs().name())) b[e.lhs().name()] = size * *e.rhs().constValue();
    }
  }
}

void writeInto(const at::Tensor& out, const at::Tensor& value, const std::string& what) {
  if (out.is_same(value)) return;
  if (out.sizes() == value.sizes()) {
    out.copy_(value);
  } else if (out.numel() == value.numel()) {
    out.copy_(value.reshape(out.sizes()));
  } else {
    bool broadcastable = value.dim() <= out.dim();
    for (int64_t i = 1; broadcastable && i <= value.dim(); ++i) {
      int64_t vs = value.size(-i);
      broadcastable = vs == 1 || vs == out.size(-i);
    }
    if (!broadcastable)
      throw Error(what + ": the op produces shape " + shapeStr(value.sizes()) + " but its buffer has shape " +
                  shapeStr(out.sizes()));
    out.copy_(value);
  }
}

namespace {

// The type an op computes in.
at::ScalarType computeType(at::ScalarType out, const OpContext& ctx) {
  if (ctx.forceType) return *ctx.forceType;
  if ((out == at::kHalf || out == at::kBFloat16) && !ctx.native16) return at::kFloat;
  return out;
}

at::ScalarType storeType(const TensorView& tv, const OpContext& ctx) {
  return ctx.forceType ? *ctx.forceType : toScalarType(tv.dtype());
}

std::string opWhere(const Expr& op) {
  std::string s = op.outputs().empty() ? std::string("?") : op.output()->nameStr();
  return s + " = " + opTypeName(op.type());
}

// Positions (among the buffer's axes, reductions included) of the reduction axes of `out`.
std::vector<int64_t> reductionDims(const TensorView& out, bool full) {
  std::vector<IterDomain*> dom = full ? out.logical() : sem::bufferDomain(out);
  std::vector<int64_t> dims;
  for (size_t i = 0; i < dom.size(); ++i)
    if (dom[i]->isReduction()) dims.push_back(static_cast<int64_t>(i));
  return dims;
}

// Squeezes a matmul/linear weight's axes that hold one shard of a device-parallel axis (local size
// 1) so that a weight printed as [n, DIDx{D}, k/D] reads as [n, k/D] (nvFuser squeezes weights);
// batch axes beyond the last two keep torch.matmul broadcasting.
at::Tensor squeezeShardAxes(const at::Tensor& w, const TensorView& tv, bool full) {
  if (full || w.dim() <= 2) return w;
  std::vector<IterDomain*> dom;
  for (IterDomain* id : sem::bufferDomain(tv))
    if (!id->isReduction()) dom.push_back(id);
  at::Tensor r = w;
  for (int64_t d = w.dim() - 1; d >= 0; --d) {
    bool shard = static_cast<int64_t>(dom.size()) == w.dim() && dom[static_cast<size_t>(d)]->isDeviceParallel();
    bool leading = d < w.dim() - 2;
    if (r.size(d) == 1 && (shard || leading) && r.dim() > 2) r = r.squeeze(d);
  }
  return r;
}

at::Tensor unary(UnaryOpType t, const at::Tensor& x) {
  switch (t) {
    case UnaryOpType::kNeg: return at::neg(x);
    case UnaryOpType::kAbs: return at::abs(x);
    case UnaryOpType::kExp: return at::exp(x);
    case UnaryOpType::kLog: return at::log(x);
    case UnaryOpType::kSqrt: return at::sqrt(x);
    case UnaryOpType::kRelu: return at::relu(x);
    case UnaryOpType::kGelu: return at::gelu(x);
    case UnaryOpType::kTanh: return at::tanh(x);
    case UnaryOpType::kSigmoid: return at::sigmoid(x);
    case UnaryOpType::kSilu: return at::silu(x);
    case UnaryOpType::kCast: return x;
  }
  return x;
}

// Casts `t` to `type` unless it already has it.
at::Tensor as(const at::Tensor& t, at::ScalarType type) { return t.scalar_type() == type ? t : t.to(type); }

// The shape torch.matmul gives for a @ b (both at least 2-D), or empty when it cannot tell.
std::vector<int64_t> matmulShape(const at::Tensor& a, const at::Tensor& b) {
  if (a.dim() < 2 || b.dim() < 2 || a.size(-1) != b.size(-2)) return {};
  std::vector<int64_t> batch;
  try {
    auto v = at::infer_size(a.sizes().slice(0, a.dim() - 2), b.sizes().slice(0, b.dim() - 2));
    batch.assign(v.begin(), v.end());
  } catch (const std::exception&) {
    return {};
  }
  batch.push_back(a.size(-2));
  batch.push_back(b.size(-1));
  return batch;
}

}  // namespace

bool mmIntoRows(const at::Tensor& out, const at::Tensor& a, const at::Tensor& b) {
  if (!out.defined() || b.dim() != 2 || a.dim() < 2 || !out.is_contiguous()) return false;
  if (out.scalar_type() != a.scalar_type() || b.scalar_type() != a.scalar_type()) return false;
  const int64_t k = a.size(-1), n = b.size(1);
  if (k == 0 || b.size(0) != k) return false;
  const int64_t rows = a.numel() / k;
  if (out.numel() != rows * n) return false;
  at::Tensor o = out.view({rows, n});
  at::mm_out(o, a.reshape({rows, k}), b);
  return true;
}

namespace {

// `out` can take an ATen `*_out` result of `shape` and type `ct` in place (no resize, no cast).
bool fitsOut(const at::Tensor& out, at::IntArrayRef shape, at::ScalarType ct) {
  return out.defined() && out.scalar_type() == ct && out.is_contiguous() && out.sizes() == shape;
}

// Writes `value` (computed in the compute type) into `out` or returns it in the output's type.
at::Tensor finish(const Expr& op, at::Tensor value, const at::Tensor& out, const OpContext& ctx) {
  if (out.defined()) {
    writeInto(out, value, opWhere(op));
    return out;
  }
  return as(value, storeType(*op.output(), ctx));
}

}  // namespace

at::Tensor evalOp(const Expr& op, const std::vector<at::Tensor>& inputs, const at::Tensor& out,
                  const OpContext& ctx) {
  if (inputs.size() != op.inputs().size())
    throw Error(opWhere(op) + ": expected " + std::to_string(op.inputs().size()) + " inputs, got " +
                std::to_string(inputs.size()));
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i].defined()) throw Error(opWhere(op) + ": input " + op.input(i)->nameStr() + " has no value");
  const TensorView& otv = *op.output();
  at::ScalarType ct = computeType(storeType(otv, ctx), ctx);
  try {
    switch (op.type()) {
      case OpType::kSet: {
        if (out.defined()) {
          writeInto(out, inputs[0], opWhere(op));
          return out;
        }
        at::ScalarType st = storeType(otv, ctx);
        return as(inputs[0], st);  // a view when the type agrees (nvFuser's host evaluator)
      }
      case OpType::kPermute: {
        std::vector<int64_t> perm = op.permutation;
        if (static_cast<int64_t>(perm.size()) != inputs[0].dim())
          throw Error("permutation of " + std::to_string(perm.size()) + " axes for an input of shape " +
                      shapeStr(inputs[0].sizes()));
        at::Tensor v = inputs[0].permute(perm);
        if (out.defined()) {
          writeInto(out, v, opWhere(op));
          return out;
        }
        return as(v, storeType(otv, ctx));
      }
      case OpType::kUnary: {
        if (op.unaryOp == UnaryOpType::kCast) return finish(op, inputs[0], out, ctx);
        return finish(op, unary(op.unaryOp, as(inputs[0], ct)), out, ctx);
      }
      case OpType::kBinary: {
        at::Tensor a = as(inputs[0], ct), b = as(inputs[1], ct);
        if (out.defined() && out.scalar_type() == ct && out.sizes() == at::infer_size(a.sizes(), b.sizes())) {
          at::Tensor o = out;
          switch (op.binaryOp) {
            case BinaryOpType::kAdd: at::add_out(o, a, b); break;
            case BinaryOpType::kSub: at::sub_out(o, a, b); break;
            case BinaryOpType::kMul: at::mul_out(o, a, b); break;
            case BinaryOpType::kDiv: at::div_out(o, a, b); break;
          }
          return out;
        }
        at::Tensor r;
        switch (op.binaryOp) {
          case BinaryOpType::kAdd: r = a + b; break;
          case BinaryOpType::kSub: r = a - b; break;
          case BinaryOpType::kMul: r = a * b; break;
          case BinaryOpType::kDiv: r = a / b; break;
        }
        return finish(op, r, out, ctx);
      }
      case OpType::kReduction: {
        std::vector<int64_t> dims = reductionDims(otv, ctx.full);
        at::Tensor x = as(inputs[0], ct);
        for (int64_t d : dims)
          if (d >= x.dim())
            throw Error("reduction axis " + std::to_string(d) + " of " + otv.nameStr() + " is beyond the input's " +
                        std::to_string(x.dim()) + " axes (shape " + shapeStr(x.sizes()) + ")");
        at::Tensor r;
        if (!dims.empty() && out.defined()) {
          std::vector<int64_t> shape;
          for (int64_t d = 0; d < x.dim(); ++d)
            if (std::find(dims.begin(), dims.end(), d) == dims.end()) shape.push_back(x.size(d));
          if (fitsOut(out, shape, ct)) {
            at::Tensor o = out;
            switch (op.reductionOp) {
              case ReductionOpType::kAdd: at::sum_out(o, x, dims); break;
              case ReductionOpType::kMax: at::amax_out(o, x, dims); break;
              case ReductionOpType::kMin: at::amin_out(o, x, dims); break;
            }
            return out;
          }
        }
        if (dims.empty()) {
          r = x;
        } else {
          switch (op.reductionOp) {
            case ReductionOpType::kAdd: r = x.sum(dims); break;
            case ReductionOpType::kMax: r = x.amax(dims); break;
            case ReductionOpType::kMin: r = x.amin(dims); break;
          }
        }
        return finish(op, r, out, ctx);
      }
      case OpType::kBroadcast: {
        at::Tensor r = inputs[0];
        const auto& flags = op.broadcastFlags;
        for (size_t i = 0; i < flags.size(); ++i)
          if (flags[i]) r = r.unsqueeze(static_cast<int64_t>(i));
        return finish(op, as(r, ct), out, ctx);
      }
      case OpType::kSqueeze: {
        at::Tensor r = inputs[0];
        const auto& flags = op.squeezeFlags;
        for (int64_t i = static_cast<int64_t>(flags.size()) - 1; i >= 0; --i) {
          if (!flags[static_cast<size_t>(i)]) continue;
          if (i >= r.dim() || r.size(i) != 1)
            throw Error("squeeze of axis " + std::to_string(i) + " of shape " + shapeStr(r.sizes()));
          r = r.squeeze(i);
        }
        return finish(op, as(r, ct), out, ctx);
      }
      case OpType::kReshape: {
        sem::ShapeMode mode;
        mode.fullDevice = mode.logical = ctx.full;
        const Bindings none;
        std::vector<int64_t> shape =
            out.defined() ? out.sizes().vec() : sem::bufferShape(otv, ctx.bindings ? *ctx.bindings : none, mode);
        return finish(op, as(inputs[0], ct).reshape(shape), out, ctx);
      }
      case OpType::kMatmul: {
        at::Tensor a = as(inputs[0], ct);
        at::Tensor b = as(squeezeShardAxes(inputs[1], *op.input(1), ctx.full), ct);
        if (mmIntoRows(out, a, b)) return out;
        if (std::vector<int64_t> shape = matmulShape(a, b); !shape.empty() && fitsOut(out, shape, ct)) {
          at::Tensor o = out;
          at::matmul_out(o, a, b);  // a batched b
          return out;
        }
        return finish(op, at::matmul(a, b), out, ctx);
      }
      case OpType::kLinear: {
        at::Tensor x = as(inputs[0], ct);
        at::Tensor w = as(squeezeShardAxes(inputs[1], *op.input(1), ctx.full), ct);
        at::Tensor wt = w.transpose(-1, -2);
        if (inputs.size() == 2 && mmIntoRows(out, x, wt)) return out;
        if (std::vector<int64_t> shape = matmulShape(x, wt);
            inputs.size() == 2 && !shape.empty() && fitsOut(out, shape, ct)) {
          at::Tensor o = out;
          at::matmul_out(o, x, wt);  // a batched weight
          return out;
        }
        at::Tensor r = at::matmul(x, wt);
        if (inputs.size() > 2) {
          at::Tensor bias = as(inputs[2], ct);
          if (!ctx.full && bias.dim() > 1) bias = bias.reshape({-1});
          r = r + bias;
        }
        return finish(op, r, out, ctx);
      }
    }
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    std::string msg = e.what();
    auto nl = msg.find('\n');
    if (nl != std::string::npos) msg = msg.substr(0, nl);
    std::string shapes;
    for (const auto& t : inputs) shapes += (shapes.empty() ? "" : ", ") + shapeStr(t.sizes());
    throw Error(opWhere(op) + " failed on inputs of shapes " + shapes + ": " + msg);
  }
  throw Error(opWhere(op) + ": unsupported op");
}

std::vector<at::Tensor> evalFusion(const Fusion& fusion, const std::vector<at::Tensor>& inputs,
                                   const OpContext& ctx) {
  if (inputs.size() != fusion.inputs().size())
    throw Error("the fusion has " + std::to_string(fusion.inputs().size()) + " inputs, " +
                std::to_string(inputs.size()) + " given");
  std::map<const TensorView*, at::Tensor> env;
  for (size_t i = 0; i < inputs.size(); ++i) env[fusion.inputs()[i]] = inputs[i];
  // Creation order is topological for built fusions, but lowering may insert exprs later: run
  // every expr whose inputs are ready until nothing is left.
  std::vector<const Expr*> todo;
  for (const Expr* e : fusion.exprs()) todo.push_back(e);
  while (!todo.empty()) {
    std::vector<const Expr*> later;
    for (const Expr* e : todo) {
      std::vector<at::Tensor> ins;
      bool ready = true;
      for (const TensorView* tv : e->inputs()) {
        auto it = env.find(tv);
        if (it == env.end()) {
          ready = false;
          break;
        }
        ins.push_back(it->second);
      }
      if (!ready) {
        later.push_back(e);
        continue;
      }
      env[e->output()] = evalOp(*e, ins, at::Tensor(), ctx);
    }
    if (later.size() == todo.size()) {
      const Expr* e = later.front();
      for (const TensorView* tv : e->inputs())
        if (!env.count(tv)) throw Error(opWhere(*e) + ": input " + tv->nameStr() + " is never computed");
    }
    todo = std::move(later);
  }
  std::vector<at::Tensor> outs;
  for (const TensorView* tv : fusion.outputs()) {
    auto it = env.find(tv);
    if (it == env.end()) throw Error("fusion output " + tv->nameStr() + " is never computed");
    outs.push_back(it->second);
  }
  return outs;
}

}  // namespace braid::exec

#endif  // BRAID_WITH_TORCH
