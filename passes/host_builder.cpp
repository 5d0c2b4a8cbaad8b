#include "passes/host_builder.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "ir/error.h"
#include "passes/fusion_utils.h"

namespace braid {

TensorView* cloneTensor(Fusion& into, const TensorView* src, int drop, int name, bool same_ids, MemoryType mem) {
  const std::vector<IterDomain*>& src_logical = src->logical();
  std::vector<IterDomain*> logical;
  logical.reserve(src_logical.size());
  for (size_t i = 0; i < src_logical.size(); ++i) {
    if (static_cast<int>(i) == drop) continue;
    const IterDomain* id = src_logical[i];
    // A new buffer or view made inside a stream loop holds one iteration's data: a Stream axis
    // left in it (of another loop's class) would read as "one chunk", so it becomes serial.
    ParallelType p = !same_ids && id->isStream() ? ParallelType::kSerial : id->parallelType();
    logical.push_back(
        into.newIterDomain(id->extent(), id->iterType(), p, id->isRFactor(), same_ids ? id->id() : -1));
  }
  // The root axes, as clones: logical axis i of `src` is clone i, or i - 1 past the dropped one.
  std::vector<IterDomain*> root;
  for (const IterDomain* id : src->root()) {
    const int i = static_cast<int>(std::find(src_logical.begin(), src_logical.end(), id) - src_logical.begin());
    if (i == static_cast<int>(src_logical.size()) || i == drop) continue;
    root.push_back(logical[static_cast<size_t>(drop >= 0 && i > drop ? i - 1 : i)]);
  }
  const bool keep_root = !src->root().empty() && root.size() == logical.size();
  TensorView* tv = into.newTensor(std::move(logical), src->dtype(), mem, name);
  if (src->hasDeviceMesh()) tv->setDeviceMesh(*src->deviceMesh());
  if (keep_root) tv->setRoot(root);
  return tv;
}

TensorView* cloneLayout(LoweringContext& ctx, const TensorView* ft, const std::vector<LayoutAxis>& layout, int drop,
                        int name, bool same_ids, MemoryType mem) {
  Fusion& into = ctx.program.tensors();
  std::vector<IterDomain*> logical;
  logical.reserve(layout.size());
  AxisOrigin o;
  o.fusionTv = ft;
  o.paths.reserve(layout.size());
  for (size_t i = 0; i < layout.size(); ++i) {
    if (static_cast<int>(i) == drop) continue;
    const IterDomain* id = layout[i].id;
    logical.push_back(
        into.newIterDomain(id->extent(), id->iterType(), layout[i].parallel, id->isRFactor(), same_ids ? id->id() : -1));
    o.paths.push_back(requireAxisPath(ft, id));
  }
  TensorView* tv = into.newTensor(std::move(logical), ft->dtype(), mem, name);
  if (ft->hasDeviceMesh()) tv->setDeviceMesh(*ft->deviceMesh());
  ctx.origin[tv] = std::move(o);
  return tv;
}

bool hasLocalExtentOne(const LoweringContext& ctx, const IterDomain* id) {
  if (auto it = ctx.chunkAxisExtent.find(id); it != ctx.chunkAxisExtent.end())
    return it->second.constValue() == std::optional<int64_t>(1);
  return hasLocalExtentOne(id);
}

Scalar chunkExtent(const Scalar& extent, const Scalar& chunks, const Scalar& index) {
  Scalar c = ceilDiv(extent, chunks);
  Scalar missing = (chunks * c - extent).simplify();
  if (missing.constValue() == std::optional<int64_t>(0)) return c.simplify();
  Scalar last = Scalar::binary(ScalarOp::kEq, index, (chunks - Scalar(1)).simplify());
  return Scalar::binary(ScalarOp::kSub, c, Scalar::binary(ScalarOp::kMul, last, missing));
}

TensorView* stagingBufferFor(LoweringContext& ctx, TensorView* t) {
  Fusion& f = ctx.program.tensors();
  TensorView* s = cloneTensor(f, t, -1, -1, false, MemoryType::kGlobal);
  if (auto it = ctx.chunkAxis.find(t); it != ctx.chunkAxis.end()) {
    std::vector<IterDomain*> dom = s->logical();
    dom[static_cast<size_t>(it->second.first)] = f.newIterDomain(it->second.second);
    s->setLogical(dom);
    s->setLoop(dom);
  }
  ctx.origin[s] = ctx.origin.at(t);
  return s;
}

int AxisOrigin::positionOf(const AxisPath& path) const {
  for (size_t i = 0; i < paths.size(); ++i)
    if (paths[i] == path) return static_cast<int>(i);
  return -1;
}

Expr* cloneExpr(Fusion& into, const Expr& src, std::vector<TensorView*> ins, std::vector<TensorView*> outs,
                const std::vector<int>& dropped_in, int dropped_out) {
  Expr* e = into.newExpr(src.type(), std::move(ins), std::move(outs));
  e->binaryOp = src.binaryOp;
  e->unaryOp = src.unaryOp;
  e->reductionOp = src.reductionOp;
  e->initValue = src.initValue;
  e->cacheOp = src.cacheOp;
  e->permutation = src.permutation;
  e->broadcastFlags = src.broadcastFlags;
  e->squeezeFlags = src.squeezeFlags;
  const int din = dropped_in.empty() ? -1 : dropped_in[0];
  if (src.type() == OpType::kPermute && dropped_out >= 0) {
    std::vector<int64_t> p;
    for (size_t i = 0; i < src.permutation.size(); ++i) {
      if (static_cast<int>(i) == dropped_out) continue;
      int64_t q = src.permutation[i];
      p.push_back(din >= 0 && q > din ? q - 1 : q);
    }
    e->permutation = p;
  }
  if (src.type() == OpType::kBroadcast && dropped_out >= 0 &&
      dropped_out < static_cast<int>(src.broadcastFlags.size()))
    e->broadcastFlags.erase(e->broadcastFlags.begin() + dropped_out);
  if (src.type() == OpType::kSqueeze && din >= 0 && din < static_cast<int>(src.squeezeFlags.size()))
    e->squeezeFlags.erase(e->squeezeFlags.begin() + din);
  return e;
}

HostUnit buildHostUnit(int id, const std::vector<const Expr*>& exprs,
                       const std::function<TensorView*(const TensorView*)>& boundary,
                       const std::function<int(const TensorView*)>& internal_drop) {
  HostUnit unit;
  unit.id = id;
  unit.fusion = std::make_unique<Fusion>();
  Fusion& f = *unit.fusion;
  // Hash maps: a kernel of a large fusion holds thousands of exprs, and these are only looked up.
  std::unordered_map<const TensorView*, TensorView*> m;
  std::unordered_map<const TensorView*, int> dropped;
  std::unordered_set<const TensorView*> produced;
  for (const Expr* e : exprs)
    for (const TensorView* o : e->outputs()) produced.insert(o);
  auto get = [&](const TensorView* ft, bool is_output) -> TensorView* {
    auto it = m.find(ft);
    if (it != m.end()) return it->second;
    TensorView* b = boundary(ft);
    TensorView* c;
    if (b != nullptr) {
      c = cloneTensor(f, b, -1, b->name(), true, b->memoryType());
      // A boundary tensor that is a stream slice lost the axis internal_drop names.
      dropped[ft] = b->logical().size() < ft->logical().size() ? internal_drop(ft) : -1;
      if (!is_output && !produced.count(ft)) f.addInput(c);
      if (is_output) f.addOutput(c);
    } else {
      int d = internal_drop(ft);
      c = cloneTensor(f, ft, d, ft->name(), false, MemoryType::kLocal);
      dropped[ft] = d;
    }
    m[ft] = c;
    return c;
  };
  for (const Expr* e : exprs) {
    std::vector<TensorView*> ins, outs;
    std::vector<int> din;
    for (const TensorView* in : e->inputs()) {
      ins.push_back(get(in, false));
      din.push_back(dropped[in]);
    }
    for (const TensorView* out : e->outputs()) outs.push_back(get(out, boundary(out) != nullptr));
    cloneExpr(f, *e, ins, outs, din, dropped[e->output(0)]);
  }
  return unit;
}

std::vector<TensorView*> stmtWrites(const Stmt& s) {
  std::vector<TensorView*> out;
  stmtWrites(s, out);
  return out;
}

void stmtWrites(const Stmt& s, std::vector<TensorView*>& out) {
  out.clear();
  switch (s.kind()) {
    case StmtKind::kHostOp: out = s.as<HostOp>()->op->outputs(); break;
    case StmtKind::kPostOnStream: out = s.as<PostOnStream>()->outputs; break;
    case StmtKind::kCommunication: out.push_back(s.as<Communication>()->output); break;
    case StmtKind::kP2PCommunication:
      if (s.as<P2PCommunication>()->type == P2PType::kRecv) out.push_back(s.as<P2PCommunication>()->buffer);
      break;
    default: break;
  }
}

TensorView* bufferOf(const LoweringContext& ctx, TensorView* tv) {
  for (int guard = 0; guard < 64; ++guard) {
    auto it = ctx.viewBase.find(tv);
    if (it == ctx.viewBase.end()) return tv;
    tv = it->second;
  }
  return tv;
}

StmtPtr makeHostOp(Expr* e) {
  auto s = std::make_unique<HostOp>();
  s->op = e;
  return s;
}

}  // namespace braid
