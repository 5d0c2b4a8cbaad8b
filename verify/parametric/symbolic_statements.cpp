// What each statement does in the symbolic run, as the interpreter's statement and
// communication walks do it (ir/semantics/statement_walk.cpp, communication_walk.cpp), with
// terms and guarded alternatives instead of values.
#include <algorithm>

#include "verify/parametric/symbolic_run_internal.h"

namespace braid::verify::parametric::detail {

namespace {

// The alternatives a view rule gives one alternative of its input: the view where it is in
// bounds, what the interpreter binds otherwise.
void addViewAlts(const ViewAlt& alt, const sem::ViewRuleResult<z3::expr>& r, std::vector<ViewAlt>& out) {
  ViewAlt x = alt;
  x.cond = conj(alt.cond, r.inBounds).simplify();
  x.view = r.view;
  if (!x.cond.is_false()) out.push_back(x);
  ViewAlt y = alt;
  y.cond = conj(alt.cond, !r.inBounds).simplify();
  y.view = r.outside;
  if (!y.cond.is_false()) out.push_back(y);
}

}  // namespace


void SymbolicRun::runAllocate(const Allocate& a) {
  if (!a.tv) throw Error(a.loc.str() + ": ALLOCATE without a tensor");
  // `ALLOCATE(buffer=...)` allocates only where the tensor is not bound yet.
  z3::expr when = a.legacy ? (!boundCond(a.tv)).simplify() : tru();
  if (when.is_false()) return;
  int st = site(&a, 0, a.tv);
  ViewAlt f;
  f.buf = freshBuffer(st);
  f.view = View::whole(allocationShape(*a.tv, &a));
  allocMarker(&a, f.buf, when, a.tv);
  bindWhen(a.tv, when, {f}, &a);
  if (a.zeroInit && record_) {
    int id = templateId(&a, 0);
    Template* t = emit(id, TemplateKind::kWork, &a, "zero-fill " + a.tv->nameStr(), conj(pc_, when));
    f.cond = tru();
    addAccesses(t, {f}, true, a.tv, tru());
  }
}

void SymbolicRun::runDeallocate(const Deallocate& d) {
  const auto as = alts(d.tv);
  if (as.empty()) return;
  z3::expr bound = boundCond(d.tv);
  for (const auto& a : as) {
    const BufferSite& s = m_.sites[static_cast<size_t>(a.buf.site)];
    // The owner's Deallocate frees its buffer even while views of it are bound; any other name's
    // frees it when it held the last reference.
    z3::expr frees = conj(a.cond, !a.freed);
    if (s.tensor != d.tv) frees = conj(frees, !referencedElsewhere(a.buf, d.tv, {}));
    frees = frees.simplify();
    emitFree(&d, a.buf, frees, d.tv);
    if (s.tensor == d.tv) {
      for (auto& [tv, other] : st_.bound) {
        if (tv == d.tv) continue;
        for (auto& o : other)
          if (o.buf.site == a.buf.site) o.freed = disj(o.freed, conj(frees, bufEquals(o.buf, a.buf))).simplify();
      }
    }
  }
  st_.bound.erase(d.tv);
  auto& dl = st_.deallocated[d.tv];
  for (auto& x : dl) x.cond = conj(!bound, x.cond).simplify();
  dl.push_back({bound, &d});
  pruneState(st_);
}

void SymbolicRun::runAliasSelect(const AliasSelect& a) {
  Need in = need(a.in, a, "input", tru());
  if (in.alts.empty()) return;
  const std::vector<IterDomain*> dom = sem::bufferDomain(*a.in);
  auto pos = std::find(dom.begin(), dom.end(), a.axis);
  if (pos == dom.end()) {
    for (auto it = dom.begin(); it != dom.end(); ++it)
      if (a.axis && (*it)->id() == a.axis->id()) pos = it;
  }
  if (pos == dom.end()) throw Error(a.loc.str() + ": HirAliasSelect axis is not an axis of " + a.in->nameStr());
  std::vector<ViewAlt> out;
  if ((*pos)->isReduction()) {
    out = in.alts;
  } else {
    int dim = sem::bufferDimsOf(dom)[static_cast<size_t>(pos - dom.begin())];
    z3::expr index = evalInt(a.index, &a);
    for (const auto& alt : in.alts) {
      if (dim >= alt.view.rank()) {
        issue(FindingKind::kShapeMismatch, &a, alt.cond,
              a.in->nameStr() + " is bound to a view with fewer dimensions than its domain");
        unsupported(&a, a.in->nameStr() + " is bound to a view with fewer dimensions than its domain");
        continue;
      }
      auto r = sem::aliasSelectRule(alt.view, dim, (*pos)->isBroadcast(), index);
      issue(FindingKind::kViewOutOfBounds, &a, conj(alt.cond, !r.inBounds),
            "selects index " + a.index.str() + " of " + a.in->nameStr() + " along " + (*pos)->str() +
                ", outside its extent");
      addViewAlts(alt, r, out);
    }
  }
  bindWhen(a.out, in.ok, out, &a);
}

void SymbolicRun::runShardByStream(const ShardByStream& a) {
  Need in = need(a.in, a, "input", tru());
  if (in.alts.empty()) return;
  // The chunk count is the extent of the Stream axis of the output's buffer domain, else the
  // input's (view_rules.cpp, shardByStreamView).
  auto streamAxis = [](const std::vector<IterDomain*>& d) {
    return std::find_if(d.begin(), d.end(), [](const IterDomain* id) { return id->isStream(); });
  };
  std::vector<IterDomain*> dom = sem::bufferDomain(*a.out);
  auto stream = streamAxis(dom);
  if (stream == dom.end()) {
    dom = sem::bufferDomain(*a.in);
    stream = streamAxis(dom);
  }
  if (stream == dom.end()) {
    issue(FindingKind::kShapeMismatch, &a, tru(), "neither " + a.in->nameStr() + " nor its shard has a Stream axis");
    unsupported(&a, "a ShardByStream without a Stream axis");
    return;
  }
  size_t streamPos = static_cast<size_t>(stream - dom.begin());
  int dim = sem::bufferDimsOf(dom)[streamPos];
  int outRank = 0;
  for (IterDomain* id : a.out->loop()) outRank += id->isReduction() ? 0 : 1;
  z3::expr chunks = evalInt(dom[streamPos]->extent(), &a);
  z3::expr index = evalInt(a.streamIndex, &a);
  std::vector<ViewAlt> out;
  for (const auto& alt : in.alts) {
    if (dim >= alt.view.rank()) {
      issue(FindingKind::kShapeMismatch, &a, alt.cond,
            "the Stream axis of " + a.in->nameStr() + " is beyond the dimensions of its view");
      unsupported(&a, "a ShardByStream along a dimension its input's view does not have");
      continue;
    }
    int d = dim;
    auto r = sem::shardByStreamRule(alt.view, d, chunks, index, outRank == alt.view.rank() + 1);
    issue(FindingKind::kViewOutOfBounds, &a, conj(alt.cond, !r.inBounds),
          "takes chunk " + a.streamIndex.str() + " of " + dom[streamPos]->extent().str() + " of " +
              a.in->nameStr() + " along dimension " + std::to_string(d) + ", outside its extent");
    addViewAlts(alt, r, out);
  }
  bindWhen(a.out, in.ok, out, &a);
}

void SymbolicRun::runHostOp(const HostOp& h) {
  const Expr* e = h.op;
  if (!e) throw Error(h.loc.str() + ": host op without an expression");
  std::vector<Need> ins;
  z3::expr ok = tru();
  for (size_t i = 0; i < e->inputs().size(); ++i) {
    ins.push_back(need(e->input(i), h, "operand", ok));
    ok = conj(ok, ins.back().ok).simplify();
  }
  if (e->outputs().empty() || ok.is_false()) return;
  const TensorView* out = e->output(0);
  std::string name = opTypeName(e->type());
  if (e->type() == OpType::kUnary) name = unaryOpName(e->unaryOp);
  if (e->type() == OpType::kBinary) name = std::string("binary ") + binaryOpSymbol(e->binaryOp);
  if (e->type() == OpType::kReduction) name = std::string("reduction ") + reductionOpName(e->reductionOp);

  // Views, as nvFuser's host evaluator makes them when the output is not allocated or bound.
  z3::expr outBound = boundCond(out);
  bool viewOp = !ins.empty() &&
                (e->type() == OpType::kSet || e->type() == OpType::kPermute ||
                 (e->type() == OpType::kBroadcast && !e->broadcastFlags.empty()) ||
                 (e->type() == OpType::kSqueeze && !e->squeezeFlags.empty()) || e->type() == OpType::kReshape);
  z3::expr viewCond = viewOp ? conj(ok, !outBound).simplify() : fls();
  if (!viewCond.is_false()) {
    std::vector<ViewAlt> views;
    for (const auto& alt : ins[0].alts) {
      ViewAlt v = alt;
      switch (e->type()) {
        case OpType::kSet:
          break;
        case OpType::kPermute:
          if (e->permutation.size() == static_cast<size_t>(alt.view.rank())) {
            v.view = alt.view.permute(e->permutation);
          } else {
            issue(FindingKind::kShapeMismatch, &h, alt.cond,
                  "Set.Permute's permutation has " + std::to_string(e->permutation.size()) + " axes but " +
                      e->input(0)->nameStr() + " has " + std::to_string(alt.view.rank()));
          }
          break;
        case OpType::kBroadcast: {
          int d = 0;
          for (bool flag : e->broadcastFlags) {
            if (flag) v.view = v.view.unsqueeze(std::min(d, v.view.rank()));
            ++d;
          }
          break;
        }
        case OpType::kSqueeze:
          for (size_t d = e->squeezeFlags.size(); d-- > 0;) {
            if (!e->squeezeFlags[d] || static_cast<int>(d) >= v.view.rank()) continue;
            z3::expr size = v.view.size(static_cast<int>(d)).simplify();
            int64_t sv = 0;
            if (size.is_numeral_i64(sv) && sv == 1) {
              v.view = v.view.select(static_cast<int>(d), num(0));
            } else if (!(size.is_numeral_i64(sv))) {
              unsupported(&h, "a squeeze of a dimension whose size is symbolic");
            }
          }
          break;
        default:
          // A reshape reinterprets the memory: not a box of its base.
          unsupported(&h, "a reshape (view) of a tensor: the parametric checker models views as boxes of their buffer");
          break;
      }
      views.push_back(v);
    }
    bindWhen(out, viewCond, views, &h);
  }
  z3::expr computeCond = viewOp ? conj(ok, outBound).simplify() : ok;
  if (computeCond.is_false()) return;
  std::vector<std::vector<z3::expr>> inSizes;
  for (const auto& n : ins) inSizes.push_back(n.alts.empty() ? std::vector<z3::expr>{} : n.alts.front().view.sizes());
  bool copy = e->type() == OpType::kSet || e->type() == OpType::kPermute;
  std::vector<z3::expr> shape = sem::opOutputShapeRule<z3::expr>(
      *e, inSizes, [&]() { return allocationShape(*out, &h); });
  std::vector<ViewAlt> w = outputViews(out, shape, h, computeCond);
  int id = templateId(&h, 0);
  Template* t = emit(id, copy ? TemplateKind::kWork : TemplateKind::kWork, &h, name, conj(pc_, computeCond));
  for (size_t i = 0; i < ins.size(); ++i) addAccesses(t, ins[i].alts, false, e->input(i), tru());
  addAccesses(t, w, true, out, tru());
}

void SymbolicRun::runPostOnStream(const PostOnStream& k) {
  std::vector<Need> ins;
  z3::expr ok = tru();
  for (const TensorView* tv : k.inputs) {
    ins.push_back(need(tv, k, "kernel input", ok));
    ok = conj(ok, ins.back().ok).simplify();
  }
  if (ok.is_false()) return;
  std::vector<std::vector<ViewAlt>> outs;
  for (const TensorView* tv : k.outputs) {
    // A bound output is written where it is bound (as the interpreter does, even when freed).
    std::vector<ViewAlt> w;
    z3::expr bound = boundCond(tv);
    for (auto a : alts(tv)) {
      a.cond = conj(ok, a.cond).simplify();
      w.push_back(a);
    }
    z3::expr freshWhen = conj(ok, !bound).simplify();
    if (!freshWhen.is_false()) {
      auto f = outputViews(tv, allocationShape(*tv, &k), k, freshWhen);
      w.insert(w.end(), f.begin(), f.end());
    }
    outs.push_back(w);
  }
  int id = templateId(&k, 0);
  Template* t = emit(id, TemplateKind::kWork, &k, "kernel HostUnit" + std::to_string(k.hostUnit), conj(pc_, ok));
  for (size_t i = 0; i < ins.size(); ++i) addAccesses(t, ins[i].alts, false, k.inputs[i], tru());
  for (size_t i = 0; i < outs.size(); ++i) addAccesses(t, outs[i], true, k.outputs[i], tru());
}

void SymbolicRun::runCommunication(const Communication& c) {
  z3::expr inTeam = fls();
  for (int64_t r : c.team) inTeam = disj(inTeam, m_.rank == num(r));
  inTeam = inTeam.simplify();
  if (inTeam.is_false()) return;
  z3::expr root = num(-1);
  if (c.root) {
    root = evalInt(*c.root, &c);
    z3::expr member = fls();
    for (int64_t r : c.team) member = disj(member, root == num(r));
    issue(FindingKind::kBadRoot, &c, conj(inTeam, !member),
          "has root " + c.root->str() + ", which is not a member of its team");
  } else if (isRooted(c.type)) {
    throw Error(c.loc.str() + ": a " + communicationTypeName(c.type) + " needs a root");
  }
  z3::expr isRoot = (root == m_.rank).simplify();
  z3::expr reads = tru(), writes = tru();
  switch (c.type) {
    case CommunicationType::kAllgather:
    case CommunicationType::kAllreduce:
    case CommunicationType::kReduceScatter:
    case CommunicationType::kAllToAll:
      break;
    case CommunicationType::kBroadcast:
    case CommunicationType::kScatter:
      reads = isRoot;
      break;
    case CommunicationType::kReduce:
    case CommunicationType::kGather:
      writes = isRoot;
      break;
    case CommunicationType::kSendRecv:
      reads = isRoot;
      writes = !isRoot;
      break;
  }
  // A root's output may be absent (a Broadcast whose root keeps its input).
  if (c.type == CommunicationType::kBroadcast && c.output)
    writes = conj(writes, !conj(isRoot, conj(!boundCond(c.output), !deallocCond(c.output)))).simplify();
  z3::expr when = inTeam;
  Need in{{}, tru()}, out{{}, tru()};
  if (!reads.is_false()) in = need(c.input, c, "communication input", conj(when, reads));
  if (!writes.is_false()) out = need(c.output, c, "communication output", conj(when, writes));
  z3::expr ok = conj(when, conj(disj(!reads, in.ok), disj(!writes, out.ok))).simplify();
  auto info = std::make_shared<CommInfo>();
  info->communicator = teamKey(c.backend, c.team);
  info->collective = &c;
  if (c.root) info->root = root;
  if (!reads.is_false()) info->inputCount = z3::ite(reads, numelOf(in.alts), num(0)).simplify();
  if (!writes.is_false()) info->outputCount = z3::ite(writes, numelOf(out.alts), num(0)).simplify();
  z3::expr sized = sem::communicationSizeRule<z3::expr>(c.type, static_cast<int64_t>(c.team.size()), isRoot, reads,
                                                         writes, info->inputCount, info->outputCount);
  issue(FindingKind::kCommunicationSize, &c, conj(ok, !sized),
        std::string("the buffers of this ") + communicationTypeName(c.type) + " break its size rule over " +
            std::to_string(c.team.size()) + " ranks");
  for (const auto& a : in.alts)
    issue(FindingKind::kNonContiguousComm, &c, conj(conj(ok, reads), conj(a.cond, !a.view.contiguous())),
          "input " + c.input->nameStr() + " is a non-contiguous view");
  for (const auto& a : out.alts)
    issue(FindingKind::kNonContiguousComm, &c, conj(conj(ok, writes), conj(a.cond, !a.view.contiguous())),
          "output " + c.output->nameStr() + " is a non-contiguous view");
  int id = templateId(&c, 0);
  SymStream post = st_.cur;
  SymStream commStream{num(kCommStream), num(0)};
  if (Template* t = emit(id, TemplateKind::kComm, &c, communicationTypeName(c.type), conj(pc_, ok))) {
    t->post = post;
    t->stream = commStream;
    t->comm = info;
    t->waitId = c.id;
    addAccesses(t, in.alts, false, c.input, reads);
    addAccesses(t, out.alts, true, c.output, writes);
  }
  remember(c.id, id, ok);
}

void SymbolicRun::runP2P(const P2PCommunication& c) {
  Need r = need(c.buffer, c, c.type == P2PType::kSend ? "send buffer" : "receive buffer", tru());
  if (r.ok.is_false()) return;
  for (const auto& a : r.alts)
    issue(FindingKind::kNonContiguousComm, &c, conj(a.cond, !a.view.contiguous()),
          "buffer " + c.buffer->nameStr() + " is a non-contiguous view");
  CommInfo::P2POp op;
  op.type = c.type;
  op.peer = evalInt(c.peer, &c);
  op.count = numelOf(r.alts);
  op.dtype = c.buffer->dtype();
  op.stmt = &c;
  if (coalescing_) {
    pendingOps_.push_back(op);
    pendingAccesses_.emplace_back(r.alts, c.type == P2PType::kRecv, c.buffer);
    pendingIds_.push_back(c.id);
    pendingOk_ = conj(pendingOk_, r.ok).simplify();
    return;
  }
  auto info = std::make_shared<CommInfo>();
  info->p2p = true;
  info->communicator = "NCCL world";
  info->ops.push_back(op);
  int id = templateId(&c, 0);
  if (Template* t = emit(id, TemplateKind::kComm, &c, c.type == P2PType::kSend ? "send" : "recv", conj(pc_, r.ok))) {
    t->post = st_.cur;
    t->stream = {num(kCommStream), num(1)};
    t->comm = info;
    t->waitId = c.id;
    addAccesses(t, r.alts, c.type == P2PType::kRecv, c.buffer, tru());
  }
  remember(c.id, id, r.ok);
}

void SymbolicRun::runEndCoalescing(const EndCoalescing& c) {
  coalescing_ = false;
  if (pendingOps_.empty()) {
    remember(c.id, -1, tru());
    return;
  }
  auto info = std::make_shared<CommInfo>();
  info->p2p = true;
  info->communicator = "NCCL world";
  info->ops = pendingOps_;
  int id = templateId(&c, 0);
  if (Template* t = emit(id, TemplateKind::kComm, &c, "P2P group", conj(pc_, pendingOk_))) {
    t->post = st_.cur;
    t->stream = {num(kCommStream), num(1)};
    t->comm = info;
    t->waitId = c.id;
    for (const auto& [as, write, tv] : pendingAccesses_) addAccesses(t, as, write, tv, tru());
  }
  remember(c.id, id, pendingOk_);
  for (int pid : pendingIds_) remember(pid, id, pendingOk_);
  pendingOps_.clear();
  pendingAccesses_.clear();
  pendingIds_.clear();
}

void SymbolicRun::runWait(const Wait& w) {
  std::vector<PostAlt> as;
  if (auto it = st_.posted.find(w.id); it != st_.posted.end()) as = it->second;
  z3::expr posted = fls(), real = fls();
  for (const auto& a : as) {
    posted = disj(posted, a.cond);
    if (a.tmpl >= 0) real = disj(real, a.cond);
  }
  issue(FindingKind::kWaitWithoutPost, &w, !posted,
        "waits for communication " + std::to_string(w.id) + ", which this rank did not post (or already waited for)");
  int id = templateId(&w, 0);
  if (Template* t = emit(id, TemplateKind::kWait, &w, "Wait " + std::to_string(w.id), conj(pc_, real))) {
    for (const auto& a : as)
      if (a.tmpl >= 0) t->waits.push_back({a.cond, a.tmpl, a.idx});
  }
  st_.posted.erase(w.id);
}
}  // namespace braid::verify::parametric::detail
