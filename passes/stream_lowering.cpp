// Pass 6: stream lowering (nvFuser's StreamParallelType and the loop nesting of its host IR
// lowering, generalized to split and merged Stream axes).
//
// Consecutive top-level statements whose outputs' Stream axes map to each other (the same
// logical axis class, split the same way, same extent) share one `FOR` loop over the Stream
// axis; a statement without a Stream axis in between ends the loop. Inside a loop every operand
// that the op maps onto its output's Stream axis is read chunk by chunk (stream_views.h: a
// ShardByStream view, or HirAliasSelect of a logical Stream axis); a tensor whose allocation is
// Stream-sharded (finalize-allocation) and that lives entirely inside the loop is not
// materialized in full: each iteration allocates its own chunk (or uses the slot
// `i % numberOfStreams` of a ring). A DID -> Stream set becomes a pipeline (did_to_stream.h).
#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "ir/error.h"
#include "passes/did_to_stream.h"
#include "passes/fusion_utils.h"
#include "passes/host_builder.h"
#include "passes/pass.h"
#include "passes/stream_views.h"

namespace braid {
namespace {

const std::vector<TensorView*>& outputsOf(const Stmt& s) {
  static const std::vector<TensorView*> none;
  if (s.is<HostOp>()) return s.as<HostOp>()->op->outputs();
  if (s.is<PostOnStream>()) return s.as<PostOnStream>()->outputs;
  return none;
}

const std::vector<TensorView*>& inputsOf(const Stmt& s) {
  static const std::vector<TensorView*> none;
  if (s.is<HostOp>()) return s.as<HostOp>()->op->inputs();
  if (s.is<PostOnStream>()) return s.as<PostOnStream>()->inputs;
  return none;
}

// Step 1: the Stream axis of a top-level statement's outputs: the class of the logical axis it
// derives from, the splits, and its extent (the number of chunks).
struct StreamKey {
  int cls = -1;
  std::vector<SplitStep> steps;
  Scalar extent;
  bool operator==(const StreamKey& o) const { return cls == o.cls && steps == o.steps && extent == o.extent; }
};

std::optional<StreamKey> keyOfPath(const AxisGraph& g, const TensorView* ft) {
  auto p = streamPathOf(ft);
  if (!p) return std::nullopt;
  return StreamKey{g.classOf(ft, p->base[0]), p->steps, streamLoopAxis(ft)->extent()};
}

// The Stream -> DID reduction of this statement, if it is one.
const CommunicationInfo* streamToDid(const LoweringContext& ctx, const Stmt& s) {
  if (!s.is<HostOp>()) return nullptr;
  auto c = ctx.communications.find(ctx.originExpr.at(s.as<HostOp>()->op));
  return c != ctx.communications.end() && c->second.streamToDid ? &c->second : nullptr;
}

std::optional<StreamKey> streamKeyOf(const LoweringContext& ctx, const AxisGraph& g, const Stmt& s) {
  // A Stream -> DID reduction runs in the loop of its producer's chunks.
  if (streamToDid(ctx, s)) return keyOfPath(g, ctx.originExpr.at(s.as<HostOp>()->op)->input(0));
  std::optional<StreamKey> key;
  const TensorView* first = nullptr;
  for (const TensorView* out : outputsOf(s)) {
    const TensorView* ft = ctx.origin.at(out).fusionTv;
    std::optional<StreamKey> k = keyOfPath(g, ft);
    if (first != nullptr && k.has_value() != key.has_value())
      throw NotLowerableError("outputs " + tvLabel(first) + " and " + tvLabel(ft) +
                              " of one segment are not both stream-parallel");
    if (first != nullptr && k && !(*k == *key))
      throw NotLowerableError("outputs " + tvLabel(first) + " and " + tvLabel(ft) +
                              " of one segment have Stream axes that do not map to each other");
    key = k;
    first = ft;
  }
  return key;
}

// For a kernel: how each fusion tensor it touches is chunked, backward from the Stream axes of
// its outputs through its exprs. Seeded from the kernel's outputs only: an internal tensor's own
// Stream annotation may come from another role of it and must not decide its chunking here. A hash
// map: a kernel of a large fusion touches thousands of tensors, and they are only looked up.
std::unordered_map<const TensorView*, AxisPath> kernelStreamPaths(const LoweringContext& ctx, const PostOnStream& p) {
  const auto& exprs = ctx.unitExprs.at(p.hostUnit);
  std::unordered_map<const TensorView*, AxisPath> path_of;
  for (const TensorView* o : p.outputs) {
    const TensorView* ft = ctx.origin.at(o).fusionTv;
    if (auto s = streamPathOf(ft)) path_of.emplace(ft, *s);
  }
  for (auto it = exprs.rbegin(); it != exprs.rend(); ++it) {
    const Expr* e = *it;
    auto c = path_of.find(e->output(0));
    if (c == path_of.end()) continue;
    for (size_t k = 0; k < e->inputs().size(); ++k)
      if (auto in = pathToProducer(*e, k, c->second)) path_of.emplace(e->input(k), *in);
  }
  return path_of;
}

// How statement `s` reads program tensor `t` per iteration: the path (relative to t's fusion
// tensor) that it maps onto its output's Stream axis, or nullopt when it reads `t` whole.
std::optional<AxisPath> readPath(const LoweringContext& ctx, const Stmt& s, const TensorView* t) {
  const TensorView* ft = ctx.origin.at(t).fusionTv;
  if (streamToDid(ctx, s)) return streamPathOf(ft);
  if (s.is<HostOp>()) {
    const Expr* fe = ctx.originExpr.at(s.as<HostOp>()->op);
    auto out = streamPathOf(fe->output(0));
    if (!out) return std::nullopt;
    for (size_t k = 0; k < fe->inputs().size(); ++k) {
      if (fe->input(k) != ft) continue;
      auto p = pathToProducer(*fe, k, *out);
      if (p && ft->logical()[static_cast<size_t>(p->base[0])]->isBroadcast()) return std::nullopt;
      return p;
    }
    return std::nullopt;
  }
  if (s.is<PostOnStream>()) {
    auto paths = kernelStreamPaths(ctx, *s.as<PostOnStream>());
    auto it = paths.find(ft);
    if (it == paths.end()) return std::nullopt;
    return it->second;
  }
  return std::nullopt;
}

// Kernels rebuilt over chunks keep their exprs; ops whose attributes count axes (permute,
// broadcast, squeeze, reshape) are only rebuilt over buffers whose axes are the logical ones
// (minus a HirAliasSelect-dropped axis).
void checkKernelRanks(const LoweringContext& ctx, const PostOnStream& p,
                      const std::map<const TensorView*, TensorView*>& bound) {
  bool sensitive = false;
  for (const Expr* e : ctx.unitExprs.at(p.hostUnit)) {
    OpType t = e->type();
    sensitive = sensitive || t == OpType::kPermute || t == OpType::kBroadcast || t == OpType::kSqueeze ||
                t == OpType::kReshape;
  }
  if (!sensitive) return;
  for (const auto& [ft, v] : bound) {
    const AxisOrigin& o = ctx.origin.at(v);
    for (const AxisPath& path : o.paths)
      if (!path.isLogical())
        throw NotLowerableError("the kernel computing " + tvLabel(ctx.unitExprs.at(p.hostUnit).back()->output(0)) +
                                " permutes, broadcasts, squeezes or reshapes " + tvLabel(ft) +
                                ", whose buffer splits an axis (" + path.str() +
                                "); braid rebuilds such kernels only over buffers with logical axes");
  }
}

// The second operand of a matmul or linear, with its device axes (one element per rank) selected
// away by views when one sits among its two matrix axes: a [n, DIDx(d), k/d] weight would
// otherwise read as a batch of 1 x k/d matrices. nvFuser's evaluator squeezes the same axes.
// HirAliasSelect rebinds its view every time it runs, so the view is valid inside loops too.
TensorView* contractionOperand(LoweringContext& ctx, Scope& body, TensorView* t) {
  auto matrixAxisIsDevice = [](const TensorView* tv) {
    std::vector<const IterDomain*> data;
    for (const IterDomain* id : tv->logical())
      if (!id->isReduction()) data.push_back(id);
    return data.size() >= 2 && data[data.size() - 2]->isDeviceParallel();
  };
  if (!matrixAxisIsDevice(t)) return t;
  for (int guard = 0; guard < 8; ++guard) {
    int axis = -1;
    for (size_t i = 0; i < t->logical().size(); ++i)
      if (t->logical()[i]->isDeviceParallel() && !t->logical()[i]->isReduction()) axis = static_cast<int>(i);
    if (axis < 0) break;
    TensorView* v = cloneTensor(ctx.program.tensors(), t, axis, -1, false, MemoryType::kLocal);
    AxisOrigin o = ctx.origin.at(t);
    o.paths.erase(o.paths.begin() + axis);
    ctx.origin[v] = o;
    ctx.viewBase[v] = t;
    if (ctx.nonContiguousViews.count(t)) ctx.nonContiguousViews.insert(v);
    auto sel = std::make_unique<AliasSelect>();
    sel->out = v;
    sel->in = t;
    sel->axis = t->logical()[static_cast<size_t>(axis)];
    sel->index = Scalar(0);
    body.push_back(std::move(sel));
    t = v;
  }
  return t;
}

// Replaces a matmul / linear host op's weight by its device-axis-free view where needed.
void squeezeContractionWeight(LoweringContext& ctx, Scope& body, Expr& e) {
  if ((e.type() != OpType::kMatmul && e.type() != OpType::kLinear) || e.inputs().size() < 2) return;
  TensorView* w = e.input(1);
  TensorView* s = contractionOperand(ctx, body, w);
  if (s != w) {
    e.replaceInput(w, s);
    w->removeUse(&e);
    s->addUse(&e);
  }
}

class LoopBuilder {
 public:
  LoopBuilder(LoweringContext& ctx, Scalar idx, Scalar sidx, const std::unordered_set<const TensorView*>& per_iteration)
      : ctx_(ctx), idx_(idx), views_(ctx, body_, idx, sidx), per_iteration_(per_iteration) {}

  Scope& body() { return body_; }

  // The per-iteration operand for reading `t` along `path` (nullopt: whole), and the fusion axis
  // a HirAliasSelect dropped (-1: none).
  std::pair<TensorView*, int> input(TensorView* t, const std::optional<AxisPath>& path) {
    if (views_.isPerIterationBuffer(t)) return views_.perIteration(t, ctx_.origin.at(t).fusionTv);
    if (!path) return {t, -1};
    return views_.chunk(t, *path);
  }

  // The per-iteration operand for writing `t` (chunked along its own Stream axis).
  std::pair<TensorView*, int> output(TensorView* t) {
    const TensorView* ft = ctx_.origin.at(t).fusionTv;
    auto path = streamPathOf(ft);
    if (!path) return {t, -1};
    if (per_iteration_.count(ft)) return views_.perIteration(t, ft);
    return views_.chunk(t, *path);
  }

  void hostOp(const HostOp& op) {
    const Expr& e = *op.op;
    const Expr* fe = ctx_.originExpr.at(&e);
    auto comm = ctx_.communications.find(fe);
    if (comm != ctx_.communications.end() && comm->second.didToStream) {
      auto [out, dropped] = output(e.output(0));
      (void)dropped;
      auto copy = lowerDidToStream(ctx_, views_, body_, idx_, e, *fe, comm->second, out);
      // Only a chunk of its own iteration may be skipped: a tensor kept in full (an output, one
      // read after the loop, a prefetched one) must hold every shard, ours included.
      if (copy && per_iteration_.count(ctx_.origin.at(e.output(0)).fusionTv)) ctx_.ownShardCopies.push_back(*copy);
      return;
    }
    if (comm != ctx_.communications.end() && comm->second.streamToDid) {
      TensorView* in = input(e.input(0), streamPathOf(fe->input(0))).first;
      lowerStreamToDid(ctx_, views_, body_, e, *fe, comm->second, in);
      return;
    }
    if (e.type() == OpType::kReshape)
      throw NotLowerableError(tvLabel(fe->output(0)) + " = view(...) inside a stream-parallel region: a reshape does "
                              "not keep the Stream axis; move it out of the stream loop");
    auto out_path = streamPathOf(fe->output(0));
    std::vector<TensorView*> ins;
    std::vector<int> din;
    for (size_t k = 0; k < e.inputs().size(); ++k) {
      std::optional<AxisPath> p;
      if (out_path) p = pathToProducer(*fe, k, *out_path);
      if (p && fe->input(k)->logical()[static_cast<size_t>(p->base[0])]->isBroadcast()) p.reset();
      auto [v, a] = input(e.input(k), p);
      ins.push_back(v);
      din.push_back(a);
    }
    std::vector<TensorView*> outs;
    int dout = -1;
    for (TensorView* t : e.outputs()) {
      auto [v, a] = output(t);
      outs.push_back(v);
      dout = a;
    }
    Expr* c = cloneExpr(ctx_.program.tensors(), e, ins, outs, din, dout);
    ctx_.originExpr[c] = fe;
    squeezeContractionWeight(ctx_, body_, *c);
    body_.push_back(makeHostOp(c));
  }

  void post(const PostOnStream& p) {
    for (const Expr* e : ctx_.unitExprs.at(p.hostUnit))
      if (e->type() == OpType::kReshape)
        throw NotLowerableError(tvLabel(e->output(0)) + " = view(...) inside a stream-parallel region: a reshape does "
                                "not keep the Stream axis; move it out of the stream loop");
    const std::unordered_map<const TensorView*, AxisPath> paths = kernelStreamPaths(ctx_, p);
    std::map<const TensorView*, int> dropped;
    auto pathOf = [&](const TensorView* ft) -> std::optional<AxisPath> {
      auto it = paths.find(ft);
      if (it == paths.end() || ft->logical()[static_cast<size_t>(it->second.base[0])]->isBroadcast())
        return std::nullopt;
      return it->second;
    };
    auto post = std::make_unique<PostOnStream>();
    post->hostUnit = p.hostUnit;
    std::map<const TensorView*, TensorView*> bound;
    for (TensorView* t : p.inputs) {
      const TensorView* ft = ctx_.origin.at(t).fusionTv;
      auto [v, d] = input(t, pathOf(ft));
      post->inputs.push_back(v);
      bound[ft] = v;
      dropped[ft] = d;
    }
    for (TensorView* t : p.outputs) {
      const TensorView* ft = ctx_.origin.at(t).fusionTv;
      auto [v, d] = output(t);
      post->outputs.push_back(v);
      bound[ft] = v;
      dropped[ft] = d;
    }
    checkKernelRanks(ctx_, p, bound);
    ctx_.program.hostUnits()[p.hostUnit] = buildHostUnit(
        p.hostUnit, ctx_.unitExprs.at(p.hostUnit),
        [&](const TensorView* ft) -> TensorView* {
          auto it = bound.find(ft);
          return it == bound.end() ? nullptr : it->second;
        },
        [&](const TensorView* ft) {
          // Internal tensors lose the axis their HirAliasSelect operands lost (logical Stream
          // axes); chunks of split Stream axes keep every axis.
          if (auto it = dropped.find(ft); it != dropped.end()) return it->second;
          auto pp = pathOf(ft);
          return pp && pp->isLogical() ? pp->base[0] : -1;
        });
    body_.push_back(std::move(post));
  }

 private:
  LoweringContext& ctx_;
  Scalar idx_;
  Scope body_;
  StreamViews views_;
  const std::unordered_set<const TensorView*>& per_iteration_;
};

class StreamLowering : public Pass {
 public:
  std::string name() const override { return "stream-lowering"; }
  bool run(LoweringContext& ctx) override {
    if (ctx.options.ringBuffers && ctx.options.indexing == StreamIndexing::kRaw)
      throw Error("ring buffers need modulo stream indexing (--indexing modulo): iterations i and "
                  "i + numberOfStreams share a ring slot, which is only safe when one stream runs both in order");
    AxisGraph g(ctx.fusion);
    Scope old = std::move(ctx.program.body());
    ctx.program.body().clear();
    // Step 1: keys and groups of consecutive statements.
    std::vector<std::optional<StreamKey>> key;
    for (const auto& s : old) key.push_back(streamKeyOf(ctx, g, *s));
    std::vector<size_t> group_of(old.size());
    size_t groups = 0;
    // A statement that reads a tensor of the current loop other than chunk by chunk (along the
    // producer's own Stream axis) needs all of it: it starts a new loop. `produced` holds the
    // outputs of the current group's statements so far (kept as the loop goes, so that grouping
    // stays linear in the program's size).
    std::unordered_set<const TensorView*> produced;
    auto readsChunkWise = [&](size_t i) {
      for (TensorView* t : inputsOf(*old[i]))
        if (produced.count(t) && readPath(ctx, *old[i], t) != streamPathOf(ctx.origin.at(t).fusionTv)) return false;
      return true;
    };
    for (size_t i = 0; i < old.size(); ++i) {
      if (i > 0 && key[i] && key[i - 1] && *key[i] == *key[i - 1] && readsChunkWise(i)) {
        group_of[i] = group_of[i - 1];
      } else {
        group_of[i] = groups++;
        produced.clear();
      }
      for (TensorView* o : outputsOf(*old[i])) produced.insert(o);
    }
    // Step 2: tensors allocated per iteration: Stream-sharded allocation, defined and used only
    // inside one loop. A consumer in another loop (separated by a non-stream op) needs the
    // full tensor. One pass over the statements finds the group each tensor appears in, or that
    // it appears in several.
    struct Groups {
      size_t first;
      bool several;
    };
    std::unordered_map<const TensorView*, Groups> groups_of_tensor;
    std::vector<bool> group_is_loop(groups, false);
    auto appears = [&](const TensorView* t, size_t group) {
      auto [it, inserted] = groups_of_tensor.try_emplace(t, Groups{group, false});
      if (!inserted && it->second.first != group) it->second.several = true;
    };
    for (size_t i = 0; i < old.size(); ++i) {
      for (TensorView* t : outputsOf(*old[i])) appears(t, group_of[i]);
      for (TensorView* t : inputsOf(*old[i])) appears(t, group_of[i]);
      if (key[i]) group_is_loop[group_of[i]] = true;
    }
    std::unordered_set<const TensorView*> per_iteration;
    for (const TensorView* ft : ctx.streamShardedAllocation) {
      const TensorView* pt = ctx.hostTensor.at(ft);
      auto where = groups_of_tensor.find(pt);
      bool in_loop = where != groups_of_tensor.end() && !where->second.several && group_is_loop[where->second.first];
      if (in_loop)
        per_iteration.insert(ft);
      else
        ctx.notes.push_back(tvLabel(ft) + ": used across stream loops, allocated in full");
    }
    // Deferred waits: a communication whose outputs no later statement of its loop reads waits
    // in the join, after the worker has moved on; its input must outlive the iteration, so it is
    // allocated in full (a per-iteration chunk would be freed on the worker before the wait).
    if (ctx.options.deferWaits) {
      for (size_t i = 0; i < old.size(); ++i) {
        if (!key[i] || !old[i]->is<HostOp>()) continue;
        auto c = ctx.communications.find(ctx.originExpr.at(old[i]->as<HostOp>()->op));
        if (c == ctx.communications.end() || c->second.didToStream) continue;
        bool read_later = false;
        for (size_t j = i + 1; j < old.size() && group_of[j] == group_of[i]; ++j)
          for (TensorView* t : inputsOf(*old[j]))
            for (TensorView* o : outputsOf(*old[i])) read_later = read_later || t == o;
        if (read_later) continue;
        for (TensorView* t : inputsOf(*old[i]))
          if (per_iteration.erase(ctx.origin.at(t).fusionTv))
            ctx.notes.push_back(tvLabel(ctx.origin.at(t).fusionTv) + ": sent by a communication whose wait is deferred, allocated in full");
      }
    }
    // Prefetch: a communication of a loop whose inputs no earlier statement of the loop computes
    // moves to a loop of its own before the compute; what it receives crosses loops, so it is
    // allocated in full. Only when something is left to compute.
    std::vector<bool> prefetched(old.size(), false);
    if (ctx.options.prefetch) {
      for (size_t i = 0; i < old.size();) {
        size_t j = i;
        std::set<const TensorView*> made;
        std::vector<size_t> comms;
        for (; j < old.size() && group_of[j] == group_of[i]; ++j) {
          bool fed = false;
          for (TensorView* t : inputsOf(*old[j])) fed = fed || made.count(t) > 0;
          for (TensorView* o : outputsOf(*old[j])) made.insert(o);
          if (!key[j] || fed || !old[j]->is<HostOp>()) continue;
          if (ctx.communications.count(ctx.originExpr.at(old[j]->as<HostOp>()->op))) comms.push_back(j);
        }
        if (!comms.empty() && comms.size() < j - i)
          for (size_t c : comms) {
            prefetched[c] = true;
            for (TensorView* o : outputsOf(*old[c]))
              if (per_iteration.erase(ctx.origin.at(o).fusionTv))
                ctx.notes.push_back(tvLabel(ctx.origin.at(o).fusionTv) + ": prefetched ahead of its loop, allocated in full");
          }
        i = j;
      }
    }
    // Step 3: build the loops.
    bool changed = false;
    for (size_t i = 0; i < old.size();) {
      if (!key[i]) {
        if (old[i]->is<HostOp>()) squeezeContractionWeight(ctx, ctx.program.body(), *old[i]->as<HostOp>()->op);
        ctx.program.body().push_back(std::move(old[i]));
        ++i;
        continue;
      }
      size_t j = i;
      while (j < old.size() && group_of[j] == group_of[i]) ++j;
      lowerGroup(ctx, old, i, j, per_iteration, *key[i], prefetched);
      changed = true;
      i = j;
    }
    return changed;
  }

 private:
  void lowerGroup(LoweringContext& ctx, Scope& old, size_t begin, size_t end,
                  const std::unordered_set<const TensorView*>& per_iteration, const StreamKey& key,
                  const std::vector<bool>& prefetched) {
    // The loop's IterDomain (pipeline A's loop header): the Stream axis of the first output the
    // program keeps in full when its buffer has one, else a fresh Stream IterDomain of the
    // chunk count.
    IterDomain* axis = nullptr;
    for (size_t i = end; i-- > begin;)
      for (TensorView* t : outputsOf(*old[i])) {
        if (per_iteration.count(ctx.origin.at(t).fusionTv)) continue;
        for (IterDomain* id : t->logical())
          if (id->isStream() && id->extent() == key.extent) axis = id;
      }
    if (axis == nullptr) axis = ctx.program.tensors().newIterDomain(key.extent, IterType::kIteration, ParallelType::kStream);
    auto loop = std::make_unique<ForLoop>();
    if (usesPipelineALoops(ctx.options.protocol)) {
      loop->index = "StreamIdx";
      loop->domain = axis;
    } else {
      loop->index = ctx.freshLoopIndexName();
      loop->start = Scalar(0);
      loop->stop = key.extent;
    }
    // The prefetch loop runs over the same index as the compute loop.
    auto ahead = std::make_unique<ForLoop>();
    ahead->index = loop->index;
    ahead->domain = loop->domain;
    ahead->start = loop->start;
    ahead->stop = loop->stop;
    Scalar idx = Scalar::symbol(loop->index);
    Scalar sidx = idx;
    // With the P2P pipeline, iteration i works on chunk (i + rank) % D throughout the loop.
    for (size_t i = begin; i < end; ++i) {
      if (!old[i]->is<HostOp>()) continue;
      auto c = ctx.communications.find(ctx.originExpr.at(old[i]->as<HostOp>()->op));
      if (c != ctx.communications.end() && c->second.didToStream && ctx.options.pipeline == PipelineKind::kP2P)
        sidx = p2pChunkIndex(idx, c->second);
    }
    LoopBuilder b(ctx, idx, sidx, per_iteration);
    LoopBuilder pre(ctx, idx, sidx, per_iteration);
    for (size_t i = begin; i < end; ++i) {
      if (prefetched[i]) pre.hostOp(*old[i]->as<HostOp>());
      else if (old[i]->is<HostOp>()) b.hostOp(*old[i]->as<HostOp>());
      else b.post(*old[i]->as<PostOnStream>());
    }
    if (!pre.body().empty()) {
      ahead->body = std::move(pre.body());
      ctx.streamLoops.insert(ahead.get());
      ctx.prefetchLoops.insert(ahead.get());
      ctx.program.body().push_back(std::move(ahead));
    }
    loop->body = std::move(b.body());
    ctx.streamLoops.insert(loop.get());
    ctx.program.body().push_back(std::move(loop));
  }
};

}  // namespace

std::string LoweringContext::freshLoopIndexName() {
  std::set<std::string> taken;
  for (const TensorView* tv : program.tensors().tensors())
    for (const IterDomain* id : tv->logical())
      for (const std::string& s : id->extent().freeSymbols()) taken.insert(s);
  for (;;) {
    std::string n = "i" + std::to_string(100 + nextLoopIndex++);
    if (!taken.count(n)) return n;
  }
}

std::unique_ptr<Pass> makeStreamLoweringPass() { return std::make_unique<StreamLowering>(); }

}  // namespace braid
