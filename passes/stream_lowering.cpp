// Pass 6: stream lowering (nvFuser's StreamParallelType, generalized).
//
// Consecutive top-level statements whose outputs' Stream axes map to each other share one `FOR`
// loop over that Stream axis; a statement without a Stream axis in between ends the loop. Inside
// a loop every operand with an axis mapped to the loop becomes a per-iteration view
// (`HirAliasSelect` of the slice at the loop index); a tensor whose allocation is Stream-sharded
// (finalize-allocation) and that lives entirely inside the loop is not materialized in full:
// each iteration gets its own slice buffer (or, with ring buffers, the slot `i % numberOfStreams`
// of a ring allocated before the loop). A DID -> Stream set becomes a pipeline: a Broadcast whose
// root is the slice's owner (collective) or the P2P allgather ring of docs/WORKLOADS.md.
#include <algorithm>
#include <map>
#include <set>

#include "ir/error.h"
#include "passes/fusion_utils.h"
#include "passes/host_builder.h"
#include "passes/pass.h"

namespace braid {
namespace {

std::vector<TensorView*> outputsOf(const Stmt& s) {
  if (s.is<HostOp>()) return s.as<HostOp>()->op->outputs();
  if (s.is<PostOnStream>()) return s.as<PostOnStream>()->outputs;
  return {};
}

std::vector<TensorView*> inputsOf(const Stmt& s) {
  if (s.is<HostOp>()) return s.as<HostOp>()->op->inputs();
  if (s.is<PostOnStream>()) return s.as<PostOnStream>()->inputs;
  return {};
}

// Step 1: the stream class (an AxisGraph class) of a top-level statement, or -1.
int streamClassOf(const LoweringContext& ctx, const AxisGraph& g, const Stmt& s) {
  int cls = -1;
  const TensorView* first = nullptr;
  for (const TensorView* out : outputsOf(s)) {
    const TensorView* ft = ctx.origin.at(out).fusionTv;
    int a = logicalAxisOf(ft, ParallelType::kStream);
    int c = a < 0 ? -1 : g.classOf(ft, a);
    if (a >= 0 && ft->logical()[static_cast<size_t>(a)]->isReduction())
      throw NotLowerableError(tvLabel(ft) + ": the Stream axis " + ft->logical()[static_cast<size_t>(a)]->str() +
                              " is a reduction axis; reducing across stream iterations is not lowerable");
    if (first != nullptr && c != cls)
      throw NotLowerableError("outputs " + tvLabel(first) + " and " + tvLabel(ft) +
                              " of one segment have Stream axes that do not map to each other");
    cls = c;
    first = ft;
  }
  return cls;
}

// A device id as a function of its team position `i`: teams are arithmetic ranges.
Scalar deviceAt(const std::vector<int64_t>& team, const Scalar& i, const std::string& what) {
  if (team.empty()) throw NotLowerableError(what + ": empty team");
  int64_t step = team.size() > 1 ? team[1] - team[0] : 1;
  for (size_t k = 0; k < team.size(); ++k)
    if (team[k] != team[0] + static_cast<int64_t>(k) * step)
      throw NotLowerableError(what + ": the mesh must be an arithmetic range of devices to index it by the loop");
  return (Scalar(team[0]) + i * Scalar(step)).simplify();
}

// Each fusion tensor's axis that a kernel maps onto the Stream axis of its outputs, backward
// through the kernel's exprs. Seeded from the kernel's outputs only: an internal tensor's own
// Stream annotation may come from another role of it and must not decide its slicing here.
std::map<const TensorView*, int> kernelStreamAxes(const LoweringContext& ctx, const PostOnStream& p) {
  const auto& exprs = ctx.unitExprs.at(p.hostUnit);
  std::map<const TensorView*, int> axis_of;
  for (const TensorView* o : p.outputs) {
    const TensorView* ft = ctx.origin.at(o).fusionTv;
    if (int s = logicalAxisOf(ft, ParallelType::kStream); s >= 0) axis_of[ft] = s;
  }
  for (auto it = exprs.rbegin(); it != exprs.rend(); ++it) {
    const Expr* e = *it;
    auto c = axis_of.find(e->output(0));
    if (c == axis_of.end()) continue;
    for (size_t k = 0; k < e->inputs().size(); ++k) {
      std::vector<int> map = producerToConsumerMap(*e, k);
      for (size_t j = 0; j < map.size(); ++j)
        if (map[j] == c->second) axis_of.try_emplace(e->input(k), static_cast<int>(j));
    }
  }
  return axis_of;
}

// The axis of input `t` (a top-level program tensor) that statement `s` maps onto its outputs'
// Stream axis, or -1 when `s` reads `t` whole.
int readAxis(const LoweringContext& ctx, const Stmt& s, const TensorView* t) {
  if (s.is<HostOp>()) {
    const Expr& e = *s.as<HostOp>()->op;
    const int sa = logicalAxisOf(e.output(0), ParallelType::kStream);
    if (sa < 0) return -1;
    for (size_t k = 0; k < e.inputs().size(); ++k) {
      if (e.input(k) != t) continue;
      std::vector<int> map = producerToConsumerMap(e, k);
      for (size_t j = 0; j < map.size(); ++j)
        if (map[j] == sa) return static_cast<int>(j);
    }
    return -1;
  }
  if (s.is<PostOnStream>()) {
    auto axes = kernelStreamAxes(ctx, *s.as<PostOnStream>());
    auto it = axes.find(ctx.origin.at(t).fusionTv);
    return it == axes.end() ? -1 : it->second;
  }
  return -1;
}

class LoopBuilder {
 public:
  LoopBuilder(LoweringContext& ctx, Scalar idx, Scalar sidx, const std::set<const TensorView*>& per_iteration)
      : ctx_(ctx), idx_(std::move(idx)), sidx_(std::move(sidx)), per_iteration_(per_iteration) {}

  Scope& body() { return body_; }

  TensorView* view(TensorView* t, int axis, const Scalar& index, bool memoize = true) {
    auto key = std::make_pair(t, axis);
    if (memoize) {
      auto it = views_.find(key);
      if (it != views_.end()) return it->second;
    }
    Fusion& f = ctx_.program.tensors();
    TensorView* v = cloneTensor(f, t, axis, -1, false, MemoryType::kLocal);
    AxisOrigin o = ctx_.origin.at(t);
    o.positions.erase(o.positions.begin() + axis);
    ctx_.origin[v] = o;
    ctx_.viewBase[v] = t;
    // A slice is contiguous when every axis before the selected one has local extent 1, or
    // when the selected axis itself has local extent 1 (selecting it leaves no gaps).
    bool contiguous = !ctx_.nonContiguousViews.count(t);
    if (!hasLocalExtentOne(t->logical()[static_cast<size_t>(axis)])) {
      for (int k = 0; k < axis; ++k) {
        const IterDomain* id = t->logical()[static_cast<size_t>(k)];
        if (!id->isReduction() && !hasLocalExtentOne(id)) contiguous = false;
      }
    }
    if (!contiguous) ctx_.nonContiguousViews.insert(v);
    auto sel = std::make_unique<AliasSelect>();
    sel->out = v;
    sel->in = t;
    sel->axis = t->logical()[static_cast<size_t>(axis)];
    sel->index = index;
    body_.push_back(std::move(sel));
    if (memoize) views_[key] = v;
    return v;
  }

  // A fresh contiguous buffer shaped like `t` (for communications on strided slices).
  TensorView* stagingBuffer(TensorView* t) {
    TensorView* s = cloneTensor(ctx_.program.tensors(), t, -1, -1, false, MemoryType::kGlobal);
    ctx_.origin[s] = ctx_.origin.at(t);
    ctx_.notes.push_back(tvLabel(t) + ": strided slice staged through " + tvLabel(s));
    return s;
  }

  StmtPtr copyOp(TensorView* from, TensorView* to, const Expr& fe) {
    Expr* copy = ctx_.program.tensors().newExpr(OpType::kSet, {from}, {to});
    ctx_.originExpr[copy] = &fe;
    return makeHostOp(copy);
  }

  // The per-iteration operand for reading `t`, whose axis `a` the consuming op maps onto its
  // output's Stream axis (-1: none, `t` is read whole), and the axis it dropped.
  std::pair<TensorView*, int> input(TensorView* t, int a) {
    auto it = slices_.find(t);
    if (it != slices_.end()) return {it->second, slice_axis_.at(t)};
    if (a < 0) return {t, -1};
    return {view(t, a, sidx_), a};
  }

  // The per-iteration operand for writing `t` (sliced along its own Stream axis).
  std::pair<TensorView*, int> output(TensorView* t) {
    auto it = slices_.find(t);
    if (it != slices_.end()) return {it->second, slice_axis_.at(t)};
    int a = logicalAxisOf(t, ParallelType::kStream);
    if (a < 0) return {t, -1};
    const TensorView* ft = ctx_.origin.at(t).fusionTv;
    if (!per_iteration_.count(ft)) return {view(t, a, sidx_), a};
    Fusion& f = ctx_.program.tensors();
    TensorView* s;
    if (ctx_.options.ringBuffers) {
      // A ring of numberOfStreams slices, allocated once before the loop; iteration i uses slot
      // i % numberOfStreams, which only stream (i % numberOfStreams) touches, in order.
      TensorView* ring = cloneTensor(f, t, -1, -1, false, MemoryType::kGlobal);
      IterDomain* slot = ring->logical()[static_cast<size_t>(a)];
      slot->setExtent(Scalar::symbol(kNumberOfStreams));
      slot->parallelize(ParallelType::kSerial);
      ctx_.origin[ring] = ctx_.origin.at(t);
      s = view(ring, a, Scalar::binary(ScalarOp::kMod, idx_, Scalar::symbol(kNumberOfStreams)), false);
      ctx_.notes.push_back(tvLabel(ft) + ": ring of numberOfStreams slices " + tvLabel(ring));
    } else {
      s = cloneTensor(f, t, a, -1, false, MemoryType::kGlobal);
      AxisOrigin o = ctx_.origin.at(t);
      o.positions.erase(o.positions.begin() + a);
      ctx_.origin[s] = o;
    }
    slices_[t] = s;
    slice_axis_[t] = a;
    return {s, a};
  }

  void hostOp(const HostOp& op) {
    const Expr& e = *op.op;
    const Expr* fe = ctx_.originExpr.at(&e);
    auto comm = ctx_.communications.find(fe);
    if (comm != ctx_.communications.end() && comm->second.didToStream) {
      didToStream(e, *fe, comm->second);
      return;
    }
    if (e.type() == OpType::kReshape)
      throw NotLowerableError(tvLabel(fe->output(0)) + " = view(...) inside a stream-parallel region: a reshape does "
                              "not keep the Stream axis; move it out of the stream loop");
    // The operands' axes that this op maps onto its output's Stream axis (a local, exact map:
    // classes of the whole fusion can conflate axes of a tensor read in two roles).
    const int sa = logicalAxisOf(e.output(0), ParallelType::kStream);
    std::vector<TensorView*> ins;
    std::vector<int> din;
    for (size_t k = 0; k < e.inputs().size(); ++k) {
      int q = -1;
      if (sa >= 0) {
        std::vector<int> map = producerToConsumerMap(e, k);
        for (size_t j = 0; j < map.size(); ++j)
          if (map[j] == sa) q = static_cast<int>(j);
      }
      auto [v, a] = input(e.input(k), q);
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
    body_.push_back(makeHostOp(c));
  }

  void post(const PostOnStream& p) {
    for (const Expr* e : ctx_.unitExprs.at(p.hostUnit))
      if (e->type() == OpType::kReshape)
        throw NotLowerableError(tvLabel(e->output(0)) + " = view(...) inside a stream-parallel region: a reshape does "
                                "not keep the Stream axis; move it out of the stream loop");
    std::map<const TensorView*, int> axis_of = kernelStreamAxes(ctx_, p);
    auto axisOf = [&](const TensorView* ft) {
      auto it = axis_of.find(ft);
      return it == axis_of.end() ? -1 : it->second;
    };
    auto post = std::make_unique<PostOnStream>();
    post->hostUnit = p.hostUnit;
    std::map<const TensorView*, TensorView*> bound;
    for (TensorView* t : p.inputs) {
      TensorView* v = input(t, axisOf(ctx_.origin.at(t).fusionTv)).first;
      post->inputs.push_back(v);
      bound[ctx_.origin.at(t).fusionTv] = v;
    }
    for (TensorView* t : p.outputs) {
      TensorView* v = output(t).first;
      post->outputs.push_back(v);
      bound[ctx_.origin.at(t).fusionTv] = v;
    }
    ctx_.program.hostUnits()[p.hostUnit] = buildHostUnit(
        p.hostUnit, ctx_.unitExprs.at(p.hostUnit),
        [&](const TensorView* ft) -> TensorView* {
          auto it = bound.find(ft);
          return it == bound.end() ? nullptr : it->second;
        },
        [&](const TensorView* ft) { return axisOf(ft); });
    body_.push_back(std::move(post));
  }

  // A set from a DID-sharded producer to a Stream-parallel consumer: iteration i brings shard
  // sidx (the stream index, offset by the rank for p2p) to every rank.
  void didToStream(const Expr& e, const Expr& fe, const CommunicationInfo& info) {
    TensorView* in = e.input(0);
    TensorView* out_full = e.output(0);
    int pa = -1;
    const AxisOrigin& o = ctx_.origin.at(in);
    for (size_t k = 0; k < o.positions.size(); ++k)
      if (o.positions[k] == info.producerAxis) pa = static_cast<int>(k);
    if (pa < 0) throw NotLowerableError("DID -> Stream set " + tvLabel(fe.output(0)) + ": producer axis not found");
    if (auto ext = out_full->logical()[static_cast<size_t>(logicalAxisOf(out_full, ParallelType::kStream))]
                       ->extent()
                       .constValue();
        ext && *ext != static_cast<int64_t>(info.team.size()))
      throw NotLowerableError("DID -> Stream set " + tvLabel(fe.output(0)) + ": the Stream axis has extent " +
                              std::to_string(*ext) + " but the mesh has " + std::to_string(info.team.size()) +
                              " devices; a DID -> Stream pipeline has one chunk per device");
    // This rank's shard, without the device axis (local extent 1, so index 0).
    TensorView* local = view(in, pa, Scalar(0), false);
    TensorView* out = output(out_full).first;
    Scalar owner = deviceAt(info.team, sidx_, "DID -> Stream set " + tvLabel(fe.output(0)));
    // Communications need contiguous buffers: strided slices go through staging copies.
    TensorView* send_buf = local;
    if (ctx_.nonContiguousViews.count(local)) {
      send_buf = stagingBuffer(local);
      body_.push_back(copyOp(local, send_buf, fe));
    }
    TensorView* recv_buf = ctx_.nonContiguousViews.count(out) ? stagingBuffer(out) : out;
    if (ctx_.options.pipeline == PipelineKind::kCollective) {
      auto c = std::make_unique<Communication>();
      c->id = ctx_.nextCommunicationId++;
      c->type = CommunicationType::kBroadcast;
      c->team = info.team;
      c->root = owner;
      c->input = send_buf;
      c->output = recv_buf;
      auto w = std::make_unique<Wait>();
      w->id = c->id;
      body_.push_back(std::move(c));
      body_.push_back(std::move(w));
      if (recv_buf != out) body_.push_back(copyOp(recv_buf, out, fe));
      return;
    }
    // P2P: shard j = (i + rank) % D; j == rank copies locally, otherwise receive shard j from
    // its owner and send our shard to (rank - i + D) % D, which handles our shard in this same
    // iteration: sends and receives pair within one iteration on every rank.
    if (info.team.front() != 0 || deviceAt(info.team, Scalar(1), "p2p") != Scalar(1))
      throw NotLowerableError("the P2P pipeline needs the mesh {0 .. D-1}");
    const int64_t d = static_cast<int64_t>(info.team.size());
    Scalar rank = Scalar::symbol(kDeviceIdxX);
    auto branch = std::make_unique<IfThenElse>();
    branch->predicate = Scalar::binary(ScalarOp::kEq, sidx_, rank);
    branch->thenBody.push_back(copyOp(local, out, fe));
    auto start = std::make_unique<StartCoalescing>();
    auto recv = std::make_unique<P2PCommunication>();
    recv->id = ctx_.nextCommunicationId++;
    recv->type = P2PType::kRecv;
    recv->buffer = recv_buf;
    recv->peer = sidx_;
    auto send = std::make_unique<P2PCommunication>();
    send->id = ctx_.nextCommunicationId++;
    send->type = P2PType::kSend;
    send->buffer = send_buf;
    send->peer = Scalar::binary(ScalarOp::kMod,
                                Scalar::binary(ScalarOp::kAdd, Scalar::binary(ScalarOp::kSub, rank, idx_), Scalar(d)),
                                Scalar(d));
    auto end = std::make_unique<EndCoalescing>();
    end->id = ctx_.nextCommunicationId++;
    auto w = std::make_unique<Wait>();
    w->id = end->id;
    branch->elseBody.push_back(std::move(start));
    branch->elseBody.push_back(std::move(recv));
    branch->elseBody.push_back(std::move(send));
    branch->elseBody.push_back(std::move(end));
    branch->elseBody.push_back(std::move(w));
    if (recv_buf != out) branch->elseBody.push_back(copyOp(recv_buf, out, fe));
    body_.push_back(std::move(branch));
  }

 private:
  LoweringContext& ctx_;
  Scalar idx_;
  Scalar sidx_;
  const std::set<const TensorView*>& per_iteration_;
  Scope body_;
  std::map<std::pair<TensorView*, int>, TensorView*> views_;
  std::map<TensorView*, TensorView*> slices_;
  std::map<TensorView*, int> slice_axis_;
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
    // Step 1: classes and groups of consecutive statements.
    std::vector<int> cls;
    std::vector<Scalar> extent;
    for (const auto& s : old) {
      cls.push_back(streamClassOf(ctx, g, *s));
      Scalar e;
      if (cls.back() >= 0) {
        const TensorView* out = outputsOf(*s).at(0);
        e = out->logical()[static_cast<size_t>(logicalAxisOf(out, ParallelType::kStream))]->extent();
      }
      extent.push_back(e);
    }
    // Consecutive statements share a loop when their Stream axes map and have the same extent.
    std::vector<size_t> group_of(old.size());
    size_t groups = 0;
    // A statement that reads a tensor of the current loop other than slice by slice (along the
    // producer's own Stream axis) needs all of it: it starts a new loop.
    auto readsSliceWise = [&](size_t i, size_t group_begin) {
      for (TensorView* t : inputsOf(*old[i])) {
        bool produced_here = false;
        for (size_t j = group_begin; j < i; ++j)
          for (TensorView* o : outputsOf(*old[j])) produced_here = produced_here || o == t;
        if (produced_here && readAxis(ctx, *old[i], t) != logicalAxisOf(t, ParallelType::kStream)) return false;
      }
      return true;
    };
    size_t group_begin = 0;
    for (size_t i = 0; i < old.size(); ++i) {
      if (i > 0 && cls[i] >= 0 && cls[i] == cls[i - 1] && extent[i] == extent[i - 1] && readsSliceWise(i, group_begin)) {
        group_of[i] = group_of[i - 1];
      } else {
        group_of[i] = groups++;
        group_begin = i;
      }
    }
    // Step 2: tensors allocated per iteration: Stream-sharded allocation, defined and used only
    // inside one loop. A consumer in another loop (separated by a non-stream op) needs the
    // full tensor.
    std::set<const TensorView*> per_iteration;
    for (const TensorView* ft : ctx.streamShardedAllocation) {
      const TensorView* pt = ctx.hostTensor.at(ft);
      std::set<size_t> where;
      for (size_t i = 0; i < old.size(); ++i) {
        for (TensorView* t : outputsOf(*old[i])) if (t == pt) where.insert(group_of[i]);
        for (TensorView* t : inputsOf(*old[i])) if (t == pt) where.insert(group_of[i]);
      }
      bool in_loop = false;
      for (size_t i = 0; i < old.size(); ++i)
        if (where.size() == 1 && group_of[i] == *where.begin() && cls[i] >= 0) in_loop = true;
      if (in_loop)
        per_iteration.insert(ft);
      else
        ctx.notes.push_back(tvLabel(ft) + ": used across stream loops, allocated in full");
    }
    // Step 3: build the loops.
    bool changed = false;
    for (size_t i = 0; i < old.size();) {
      if (cls[i] < 0) {
        ctx.program.body().push_back(std::move(old[i]));
        ++i;
        continue;
      }
      size_t j = i;
      while (j < old.size() && group_of[j] == group_of[i]) ++j;
      lowerGroup(ctx, old, i, j, per_iteration);
      changed = true;
      i = j;
    }
    return changed;
  }

 private:
  void lowerGroup(LoweringContext& ctx, Scope& old, size_t begin, size_t end,
                  const std::set<const TensorView*>& per_iteration) {
    // The loop's axis: the Stream axis of the first output the program keeps in full (a fusion
    // output, usually), else of the first statement's first output.
    TensorView* ref = outputsOf(*old[begin]).at(0);
    for (size_t i = end; i-- > begin;)
      for (TensorView* t : outputsOf(*old[i]))
        if (!per_iteration.count(ctx.origin.at(t).fusionTv)) ref = t;
    const TensorView* ref_f = ctx.origin.at(ref).fusionTv;
    IterDomain* axis = ref->logical()[static_cast<size_t>(logicalAxisOf(ref_f, ParallelType::kStream))];
    auto loop = std::make_unique<ForLoop>();
    if (usesPipelineALoops(ctx.options.protocol)) {
      loop->index = "StreamIdx";
      loop->domain = axis;
    } else {
      loop->index = ctx.freshLoopIndexName();
      loop->start = Scalar(0);
      loop->stop = axis->extent();
    }
    Scalar idx = Scalar::symbol(loop->index);
    Scalar sidx = idx;
    // With the P2P pipeline, iteration i works on shard (i + rank) % D throughout the loop.
    for (size_t i = begin; i < end; ++i) {
      if (!old[i]->is<HostOp>()) continue;
      auto c = ctx.communications.find(ctx.originExpr.at(old[i]->as<HostOp>()->op));
      if (c != ctx.communications.end() && c->second.didToStream && ctx.options.pipeline == PipelineKind::kP2P) {
        int64_t d = static_cast<int64_t>(c->second.team.size());
        sidx = Scalar::binary(ScalarOp::kMod, Scalar::binary(ScalarOp::kAdd, idx, Scalar::symbol(kDeviceIdxX)),
                              Scalar(d));
      }
    }
    LoopBuilder b(ctx, idx, sidx, per_iteration);
    for (size_t i = begin; i < end; ++i) {
      if (old[i]->is<HostOp>()) b.hostOp(*old[i]->as<HostOp>());
      else b.post(*old[i]->as<PostOnStream>());
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
