// The host-program evaluator on ATen (see evaluator.h).
#ifdef BRAID_WITH_TORCH

#include "exec/evaluator.h"

#include <algorithm>
#include <chrono>
#include <limits>

#include "exec/tensor_ops.h"
#include "ir/semantics/buffer_rules.h"
#include "ir/semantics/mesh_rule.h"
#include "ir/semantics/communication_rules.h"
#include "ir/semantics/view_rules.h"
#include "ir/error.h"

namespace braid::exec {

namespace {

std::string firstLine(const std::string& s) {
  auto nl = s.find('\n');
  return nl == std::string::npos ? s : s.substr(0, nl);
}

std::string where(const Stmt& s) {
  std::string w = s.loc.known() ? s.loc.str() + ": " : std::string();
  return w + stmtKindName(s.kind());
}

// [begin, end) bytes a tensor's elements span (conservative for interleaved strides).
std::pair<uintptr_t, uintptr_t> regionOf(const at::Tensor& t) {
  if (!t.defined() || t.numel() == 0) return {0, 0};
  auto begin = reinterpret_cast<uintptr_t>(t.data_ptr());
  int64_t last = 0;
  for (int64_t d = 0; d < t.dim(); ++d) last += (t.size(d) - 1) * std::max<int64_t>(t.stride(d), 0);
  return {begin, begin + static_cast<uintptr_t>((last + 1) * static_cast<int64_t>(t.element_size()))};
}

// A NaN-filled (or sentinel-filled) buffer: reads of never-written regions show up in checks.
at::Tensor fresh(const std::vector<int64_t>& shape, at::ScalarType type, bool zero, bool poison, at::Device dev) {
  auto opts = at::TensorOptions().dtype(type).device(dev);
  if (zero) return at::zeros(shape, opts);
  if (!poison) return at::empty(shape, opts);
  if (at::isFloatingType(type)) return at::full(shape, std::numeric_limits<double>::quiet_NaN(), opts);
  if (type == at::kBool) return at::zeros(shape, opts);
  return at::full(shape, -1234567, opts);
}

bool isCommunication(StmtKind k) {
  return k == StmtKind::kCommunication || k == StmtKind::kP2PCommunication || k == StmtKind::kEndCoalescing;
}

// Statements that enqueue device work (or a stream wait) worth a place on a measured timeline.
bool doesDeviceWork(StmtKind k) {
  switch (k) {
    case StmtKind::kAllocate:
    case StmtKind::kHostOp:
    case StmtKind::kPostOnStream:
    case StmtKind::kSynchronize:
    case StmtKind::kWait:
      return true;
    default:
      return isCommunication(k);
  }
}

std::string teamLane(const std::vector<int64_t>& team) {
  std::string s = "NCCL team (";
  for (size_t i = 0; i < team.size(); ++i) s += (i ? " " : "") + std::to_string(team[i]);
  return s + ")";
}

}  // namespace

void Evaluator::timeCommunication(const Stmt& s) {
  int id = 0;
  std::string lane = "NCCL world";
  if (s.is<Communication>()) {
    id = s.as<Communication>()->id;
    lane = teamLane(s.as<Communication>()->team);
  } else if (s.is<P2PCommunication>()) {
    if (coalescing_) return;
    id = s.as<P2PCommunication>()->id;
  } else if (s.is<EndCoalescing>()) {
    id = s.as<EndCoalescing>()->id;
  }
  auto it = works_.find(id);
  if (it == works_.end() || !it->second) return;
  auto [start, end] = it->second->deviceEvents();
  int32_t token = device_->addSpan(start, end);
  if (token >= 0) timed_.push_back({&s, token, iterationStr(), lane});
}

Evaluator::Evaluator(const HostProgram& program, Communicator& comm, EvalOptions options)
    : program_(program), comm_(comm), options_(std::move(options)) {
  device_ = options_.device;
  if (!device_) {
    cpu_ = makeCpuDevice();
    device_ = cpu_.get();
  }
}

int32_t Evaluator::resolveStream(const StreamRef& ref) {
  if (ref.kind == StreamRef::Kind::kNamed) {
    if (auto it = streamVars_.find(ref.name); it != streamVars_.end()) return it->second;
    auto [it, inserted] = namedStreams_.try_emplace(ref.name, nextSlot_);
    if (inserted) ++nextSlot_;
    return it->second;
  }
  auto [it, inserted] = indexedStreams_.try_emplace(eval(ref.index), nextSlot_);
  if (inserted) ++nextSlot_;
  return it->second;
}

void Evaluator::recordUses(const std::vector<at::Tensor>& ts) {
  if (device_->hostOrdered()) return;
  for (const auto& t : ts) device_->recordUse(t);
}

std::string Evaluator::iterationStr() const {
  std::string s;
  for (const ForLoop* f : loops_) {
    auto it = scalars_.find(f->index);
    if (it != scalars_.end()) s += (s.empty() ? "" : ", ") + f->index + "=" + std::to_string(it->second);
  }
  return s;
}

std::string Evaluator::currentStatement() const {
  const Stmt* s = current_.load();
  return s ? where(*s) : std::string();
}

int64_t Evaluator::eval(const Scalar& s) const {
  std::optional<int64_t> v = s.tryEvaluate(scalars_);
  if (!v) {
    std::string missing;
    for (const auto& sym : s.substitute(scalars_).freeSymbols()) missing += (missing.empty() ? "" : ", ") + sym;
    throw Error("cannot evaluate " + s.str() + ": " + missing + " unbound (bind with --bind NAME=N)");
  }
  return *v;
}

bool Evaluator::bound(const TensorView* tv) const {
  auto it = env_.find(tv->name());
  return it != env_.end() && it->second.defined();
}

at::Tensor& Evaluator::lookup(const TensorView* tv, const char* role) {
  auto it = env_.find(tv->name());
  if (it == env_.end() || !it->second.defined())
    throw Error(std::string(role) + " " + tv->nameStr() + " has no buffer here: it is neither an input nor "
                "allocated, aliased or computed before this statement (or it was deallocated)");
  return it->second;
}

void Evaluator::bindInputs(const std::vector<at::Tensor>& inputs) {
  const auto& ins = program_.inputs();
  if (inputs.size() != ins.size())
    throw Error("the program has " + std::to_string(ins.size()) + " inputs, " + std::to_string(inputs.size()) +
                " were given");
  for (size_t i = 0; i < ins.size(); ++i) {
    const TensorView& tv = *ins[i];
    const at::Tensor& t = inputs[i];
    std::vector<IterDomain*> dom;
    for (IterDomain* id : sem::bufferDomain(tv))
      if (!id->isReduction()) dom.push_back(id);
    if (static_cast<int64_t>(dom.size()) != t.dim())
      throw Error("input " + tv.nameStr() + " has " + std::to_string(dom.size()) + " axes, the tensor given has shape " +
                  shapeStr(t.sizes()));
    inferSymbols(tv, t.sizes(), false, scalars_);
  }
  for (size_t i = 0; i < ins.size(); ++i) {
    const TensorView& tv = *ins[i];
    std::vector<int64_t> want = sem::bufferShape(tv, scalars_);
    if (inputs[i].sizes().vec() != want)
      throw Error("input " + tv.nameStr() + " has shape " + shapeStr(inputs[i].sizes()) + " but the program expects " +
                  shapeStr(want) + " on this rank (with " + [&] {
                    std::string s;
                    for (const auto& [k, v] : scalars_) s += (s.empty() ? "" : ", ") + k + "=" + std::to_string(v);
                    return s;
                  }() + ")");
    at::Tensor t = inputs[i];
    if (t.scalar_type() != toScalarType(tv.dtype())) t = t.to(toScalarType(tv.dtype()));
    bind(nullptr, &tv, t);
  }
  for (const auto& [out, in] : program_.aliases()) bind(nullptr, out, lookup(in, "aliased input"));
}

std::vector<at::Tensor> Evaluator::run(const std::vector<at::Tensor>& inputs) {
  env_.clear();
  works_.clear();
  pending_.clear();
  executed_ = 0;
  coalescing_ = false;
  timed_.clear();
  streamVars_.clear();
  namedStreams_.clear();
  indexedStreams_.clear();
  nextSlot_ = 1;
  scalars_ = options_.bindings;
  scalars_[kNumberOfStreams] = options_.numberOfStreams;
  scalars_[kRank] = comm_.rank();
  scalars_[kDeviceIdxX] = comm_.rank();
  nestedNs_ = 0;
  using Clock = std::chrono::steady_clock;
  auto t0 = Clock::now();
  device_->beginRun();
  bindInputs(inputs);
  // The host profile covers the issue time: the entry, the statements, the exit.
  Clock::time_point tBody, tExit;
  if (profile_) tBody = Clock::now();
  runScope(program_.body(), 0);
  current_ = nullptr;
  if (profile_) tExit = Clock::now();
  // Every transfer completes before the run ends (on CUDA: the default stream waits for them,
  // then the host waits for the communicators, with their timeout, and for the device).
  device_->setCurrentStream(0);
  for (auto& p : pending_) p.work->wait();
  pending_.clear();
  auto t1 = Clock::now();
  issueUs_ = std::chrono::duration<double, std::micro>(t1 - t0).count();
  if (profile_) {
    profile_->add(kHostProfileRunEntry, std::chrono::duration_cast<std::chrono::nanoseconds>(tBody - t0).count());
    profile_->add(kHostProfileRunExit, std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - tExit).count());
  }
  if (!device_->capturing()) comm_.drain();
  device_->finishRun();
  std::vector<at::Tensor> outs;
  for (const TensorView* tv : program_.outputs()) outs.push_back(lookup(tv, "output"));
  return outs;
}

void Evaluator::runScope(const Scope& scope, int loop_depth) {
  for (const auto& s : scope) exec(*s, loop_depth);
}

at::Tensor Evaluator::allocate(const TensorView& tv, bool zero) {
  // A Stream axis is one chunk only inside the loop over it (sem::allocatedPerStreamChunk).
  sem::ShapeMode mode;
  mode.streamChunk = sem::allocatedPerStreamChunk(tv, loops_);
  return fresh(sem::bufferShape(tv, scalars_, mode), toScalarType(tv.dtype()), zero, options_.poison,
               device_->device());
}

void Evaluator::bind(const Stmt* s, const TensorView* tv, const at::Tensor& t) {
  env_[tv->name()] = t;
  if (options_.onBind) options_.onBind(s, tv, t);
}

void Evaluator::record(int id, WorkPtr w, const std::vector<at::Tensor>& ts, bool collective) {
  works_[id] = w;
  Pending p{id, w, {}, collective};
  for (const auto& t : ts)
    if (t.defined()) p.regions.push_back(regionOf(t));
  pending_.push_back(std::move(p));
}

void Evaluator::waitFor(int id) {
  auto it = works_.find(id);
  if (it == works_.end())
    throw Error("Wait Communication " + std::to_string(id) +
                ": no communication with that id was posted before it (on this rank)");
  if (!it->second) return;  // a null work: this rank took no part in the communication
  it->second->wait();
  WorkPtr w = it->second;
  pending_.erase(std::remove_if(pending_.begin(), pending_.end(), [&](const Pending& p) { return p.work == w; }),
                 pending_.end());
}

void Evaluator::waitOverlapping(const std::vector<at::Tensor>& ts, bool collectives_only) {
  // On a device with streams only the program's own Wait / Synchronize order work.
  if (pending_.empty() || !device_->hostOrdered()) return;
  std::vector<std::pair<uintptr_t, uintptr_t>> regions;
  for (const auto& t : ts)
    if (t.defined()) regions.push_back(regionOf(t));
  // Wait in posting order, up to the last overlapping one (earlier works complete first anyway).
  size_t last = 0;
  bool any = false;
  for (size_t i = 0; i < pending_.size(); ++i) {
    if (collectives_only && !pending_[i].collective) continue;
    for (const auto& a : pending_[i].regions)
      for (const auto& b : regions)
        if (a.first < b.second && b.first < a.second && a.first != a.second) {
          last = i;
          any = true;
        }
  }
  if (!any) return;
  std::vector<Pending> keep;
  for (size_t i = 0; i < pending_.size(); ++i) {
    bool wait = i <= last && (!collectives_only || pending_[i].collective);
    if (wait) {
      pending_[i].work->wait();
    } else {
      keep.push_back(pending_[i]);
    }
  }
  pending_ = std::move(keep);
}

// The one size rule of every backend (ir/semantics/communication_rules.h, as verify and sim
// apply it): checked here, before any communicator sees the buffers, so Gloo, NCCL and the copy
// engines report a wrong size with the same words. A rule on a buffer the rank lacks is left to
// the "has no input/output" checks of postCommunication.
void Evaluator::checkSizes(const Communication& c, const at::Tensor& in, const at::Tensor& out, bool isRoot) {
  sem::CommRoles roles = sem::commRoles(c.type, isRoot);
  if ((roles.readsInput && !in.defined()) || (roles.writesOutput && !out.defined())) {
    // Allreduce and Broadcast without an output work in place on the input: nothing to relate.
    return;
  }
  std::string problem = sem::communicationSizeProblem(c.type, static_cast<int64_t>(c.team.size()), isRoot, roles,
                                                      in.defined() ? in.numel() : 0, out.defined() ? out.numel() : 0);
  if (!problem.empty()) throw Error(std::string(communicationTypeName(c.type)) + " " + std::to_string(c.id) + ": " + problem);
}

void Evaluator::postCommunication(const Communication& c) {
  int64_t me = comm_.rank();
  if (!sem::postsCommunication(c, me)) {  // not a member: a null work, which a Wait skips
    works_[c.id] = nullptr;
    return;
  }
  std::optional<int64_t> root;
  if (c.root) root = eval(*c.root);
  if (isRooted(c.type) && !root)
    throw Error(std::string(communicationTypeName(c.type)) + " needs a root");
  ReduceOp op = ReduceOp::kSum;
  if (c.redOp == ReductionOpType::kMax) op = ReduceOp::kMax;
  if (c.redOp == ReductionOpType::kMin) op = ReduceOp::kMin;
  at::Tensor in = c.input && bound(c.input) ? lookup(c.input, "communication input") : at::Tensor();
  at::Tensor out;
  if (c.output) {
    if (!bound(c.output)) bind(&c, c.output, allocate(*c.output, false));
    out = lookup(c.output, "communication output");
  }
  auto need = [&](const at::Tensor& t, const char* what) {
    if (!t.defined())
      throw Error(std::string(communicationTypeName(c.type)) + " " + std::to_string(c.id) + " has no " + what);
  };
  checkSizes(c, in, out, root && *root == me);
  waitOverlapping({in, out}, /*collectives_only=*/true);
  comm_.useBackend(c.backend);
  comm_.setContext(where(c) + " " + std::to_string(c.id) + " (" + communicationTypeName(c.type) + ")");
  WorkPtr w;
  switch (c.type) {
    case CommunicationType::kAllgather:
      need(in, "input"), need(out, "output");
      w = comm_.allgather(c.team, in, out);
      break;
    case CommunicationType::kAllreduce:
      need(in, "input");
      if (!out.defined()) out = in;
      if (!out.is_alias_of(in) && out.numel() == in.numel() && out.scalar_type() == in.scalar_type())
        w = comm_.allreduceInto(c.team, in, out, op);
      if (!w) {
        if (!out.is_same(in)) writeInto(out, in, "Allreduce output");
        w = comm_.allreduce(c.team, out, op);
      }
      break;
    case CommunicationType::kReduceScatter:
      need(in, "input"), need(out, "output");
      w = comm_.reduceScatter(c.team, in, out, op);
      break;
    case CommunicationType::kBroadcast: {
      at::Tensor buf = out.defined() ? out : in;
      need(buf, "buffer");
      if (*root == me && in.defined() && !buf.is_same(in)) writeInto(buf, in, "Broadcast output");
      w = comm_.broadcast(c.team, buf, *root);
      break;
    }
    case CommunicationType::kReduce:
      need(in, "input");
      w = comm_.reduce(c.team, in, out, *root, op);
      break;
    case CommunicationType::kScatter:
      need(out, "output");
      if (*root == me) need(in, "input");
      w = comm_.scatter(c.team, in, out, *root);
      break;
    case CommunicationType::kGather:
      need(in, "input");
      if (*root == me) need(out, "output");
      w = comm_.gather(c.team, in, out, *root);
      break;
    case CommunicationType::kSendRecv: {
      // root sends its input to the other member, which receives into its output.
      int64_t sender = *root;
      int64_t receiver = sender;
      for (int64_t r : c.team)
        if (r != sender) receiver = r;
      if (sender == receiver) {
        need(in, "input"), need(out, "output");
        writeInto(out, in, "SendRecv output");
        w = completedWork();
      } else if (me == sender) {
        need(in, "input");
        w = comm_.send(in, receiver);
      } else {
        need(out, "output");
        w = comm_.recv(out, sender);
      }
      break;
    }
    case CommunicationType::kAllToAll:
      need(in, "input"), need(out, "output");
      w = comm_.allToAll(c.team, in, out);
      break;
  }
  record(c.id, w, {in, out}, c.type != CommunicationType::kSendRecv);
}

void Evaluator::postP2P(const P2PCommunication& c) {
  at::Tensor buf = lookup(c.buffer, c.type == P2PType::kSend ? "send buffer" : "receive buffer");
  int64_t peer = eval(c.peer);
  waitOverlapping({buf}, /*collectives_only=*/true);
  comm_.useBackend(c.backend);
  comm_.setContext(where(c) + " " + std::to_string(c.id) + (c.type == P2PType::kSend ? " (send" : " (recv") +
                   " with rank " + std::to_string(peer) + ")");
  WorkPtr w = c.type == P2PType::kSend ? comm_.send(buf, peer) : comm_.recv(buf, peer);
  record(c.id, w, {buf}, false);
}

void Evaluator::exec(const Stmt& s, int loop_depth) {
  if (profile_) {
    execProfiled(s, loop_depth);
  } else {
    execStmt(s, loop_depth);
  }
}

// The statement's host time, less the profiled time of the statements nested in it (a loop's
// body), goes to its kind; a statement this rank skips goes to kHostProfileSkipped.
void Evaluator::execProfiled(const Stmt& s, int loop_depth) {
  using Clock = std::chrono::steady_clock;
  const int64_t outerNested = nestedNs_;
  const int64_t executedBefore = executed_;
  nestedNs_ = 0;
  const auto t0 = Clock::now();
  execStmt(s, loop_depth);
  const int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
  const bool control = s.is<ForLoop>() || s.is<IfThenElse>();
  profile_->add(control || executed_ != executedBefore ? hostProfileKind(s) : kHostProfileSkipped, ns - nestedNs_);
  nestedNs_ = outerNested + ns;
}

void Evaluator::execStmt(const Stmt& s, int loop_depth) {
  if (s.is<ForLoop>()) {
    const auto* f = s.as<ForLoop>();
    int64_t begin = eval(f->begin());
    int64_t end = eval(f->end());
    std::optional<int64_t> saved;
    if (auto it = scalars_.find(f->index); it != scalars_.end()) saved = it->second;
    loops_.push_back(f);
    for (int64_t i = begin; i < end; ++i) {
      scalars_[f->index] = i;
      runScope(f->body, loop_depth + 1);
    }
    loops_.pop_back();
    if (saved) {
      scalars_[f->index] = *saved;
    } else {
      scalars_.erase(f->index);
    }
    return;
  }
  if (s.is<IfThenElse>()) {
    const auto* b = s.as<IfThenElse>();
    runScope(eval(b->predicate) != 0 ? b->thenBody : b->elseBody, loop_depth);
    return;
  }
  if (!sem::runsOnRank(s, comm_.rank())) {
    // nvFuser's program for this device has no such statement (ir/semantics/mesh_rule.h); a
    // communication it skips posts a null work, which a Wait on it skips.
    if (int id = 0; isWaitable(s, &id)) works_[id] = nullptr;
    return;
  }
  current_ = &s;
  if (options_.onStatement) options_.onStatement(s, executed_);
  ++executed_;
  // Device timing: events around the statement's work on the current stream (communications
  // are timed on their communicator's stream instead, below).
  const bool timeIt = device_->timing() && doesDeviceWork(s.kind());
  const int32_t token = timeIt && !isCommunication(s.kind()) ? device_->beginOp() : -1;
  try {
    switch (s.kind()) {
      case StmtKind::kAllocate: {
        const auto* a = s.as<Allocate>();
        if (a->legacy && bound(a->tv)) break;  // nvFuser: allocate only if not bound yet
        bind(&s, a->tv, allocate(*a->tv, a->zeroInit));
        break;
      }
      case StmtKind::kDeallocate:
        env_.erase(s.as<Deallocate>()->tv->name());
        break;
      case StmtKind::kAliasSelect: {
        const auto* a = s.as<AliasSelect>();
        at::Tensor in = lookup(a->in, "HirAliasSelect input");
        sem::ViewRule v = sem::aliasSelectView(*a, in.sizes().vec(), scalars_);
        if (v.problem) throw Error(a->in->nameStr() + ": " + v.message);
        bind(&s, a->out, applyView(in, v.steps));
        break;
      }
      case StmtKind::kShardByStream: {
        const auto* sh = s.as<ShardByStream>();
        at::Tensor in = lookup(sh->in, "ShardByStream input");
        sem::ViewRule v = sem::shardByStreamView(*sh, in.sizes().vec(), scalars_);
        if (v.problem) throw Error(v.message);
        bind(&s, sh->out, applyView(in, v.steps));
        break;
      }
      case StmtKind::kGetCurrentStream:
        // nvFuser keeps the first capture of a variable (a map insert that never overwrites).
        streamVars_.try_emplace(s.as<GetCurrentStream>()->stream.name, device_->currentStream());
        break;
      case StmtKind::kSetCurrentStream:
        device_->setCurrentStream(resolveStream(s.as<SetCurrentStream>()->stream));
        break;
      case StmtKind::kSynchronize:
        device_->synchronize(resolveStream(s.as<Synchronize>()->stream));
        break;
      case StmtKind::kHostOp: {
        const Expr& op = *s.as<HostOp>()->op;
        std::vector<at::Tensor> ins;
        for (const TensorView* tv : op.inputs()) ins.push_back(lookup(tv, "input"));
        const TensorView* otv = op.output();
        at::Tensor out = bound(otv) ? lookup(otv, "output") : at::Tensor();
        // An unbound output of a view-making op views its input (sem::opView, as the interpreter).
        if (!out.defined() && !ins.empty() && ins[0].scalar_type() == toScalarType(otv->dtype())) {
          sem::ShapeMode mode;
          mode.streamChunk = sem::allocatedPerStreamChunk(*otv, loops_);
          std::optional<sem::ViewRule> v =
              sem::opView(op, ins[0].sizes().vec(), ins[0].is_contiguous(), sem::bufferShape(*otv, scalars_, mode));
          if (v && v->problem) throw Error(v->message);
          if (v) {
            bind(&s, otv, applyView(ins[0], v->steps));
            break;
          }
        }
        std::vector<at::Tensor> touched = ins;
        touched.push_back(out);
        waitOverlapping(touched, false);
        recordUses(touched);
        OpContext ctx{&scalars_, false, std::nullopt, !device_->hostOrdered()};
        at::Tensor r = evalOp(op, ins, out, ctx);
        if (!out.defined()) bind(&s, otv, r);
        break;
      }
      case StmtKind::kPostOnStream: {
        const auto* p = s.as<PostOnStream>();
        auto uit = program_.hostUnits().find(p->hostUnit);
        if (uit == program_.hostUnits().end())
          throw Error("HostUnit" + std::to_string(p->hostUnit) + " is not defined in this program");
        const Fusion& f = *uit->second.fusion;
        if (f.inputs().size() != p->inputs.size() || f.outputs().size() != p->outputs.size())
          throw Error("HostUnit" + std::to_string(p->hostUnit) + " has " + std::to_string(f.inputs().size()) +
                      " inputs and " + std::to_string(f.outputs().size()) + " outputs; PostOnStream passes " +
                      std::to_string(p->inputs.size()) + " and " + std::to_string(p->outputs.size()));
        std::vector<at::Tensor> ins, touched;
        for (const TensorView* tv : p->inputs) ins.push_back(lookup(tv, "kernel input"));
        touched = ins;
        for (const TensorView* tv : p->outputs)
          if (bound(tv)) touched.push_back(lookup(tv, "kernel output"));
        waitOverlapping(touched, false);
        recordUses(touched);
        // The kernel: the unit's fusion, op by op, on names local to the unit.
        std::map<int, at::Tensor> local;
        for (size_t i = 0; i < ins.size(); ++i) local[f.inputs()[i]->name()] = ins[i];
        OpContext ctx{&scalars_, false, std::nullopt, !device_->hostOrdered()};
        for (const Expr* e : f.exprs()) {
          std::vector<at::Tensor> eins;
          for (const TensorView* tv : e->inputs()) {
            auto it = local.find(tv->name());
            if (it == local.end())
              throw Error("HostUnit" + std::to_string(p->hostUnit) + ": " + tv->nameStr() + " is used before it is computed");
            eins.push_back(it->second);
          }
          local[e->output()->name()] = evalOp(*e, eins, at::Tensor(), ctx);
        }
        for (size_t i = 0; i < p->outputs.size(); ++i) {
          auto it = local.find(f.outputs()[i]->name());
          if (it == local.end())
            throw Error("HostUnit" + std::to_string(p->hostUnit) + " never computes its output " +
                        f.outputs()[i]->nameStr());
          const TensorView* otv = p->outputs[i];
          if (bound(otv)) {
            writeInto(lookup(otv, "kernel output"), it->second, otv->nameStr());
          } else {
            // A kernel writes a fresh buffer (never a view of its inputs).
            at::Tensor fresh_out = at::empty(it->second.sizes(), it->second.options().dtype(toScalarType(otv->dtype())));
            fresh_out.copy_(it->second);
            bind(&s, otv, fresh_out);
          }
        }
        break;
      }
      case StmtKind::kCommunication:
        postCommunication(*s.as<Communication>());
        break;
      case StmtKind::kP2PCommunication:
        postP2P(*s.as<P2PCommunication>());
        break;
      case StmtKind::kStartCoalescing:
        comm_.startCoalescing();
        coalescing_ = true;
        break;
      case StmtKind::kEndCoalescing: {
        const auto* e = s.as<EndCoalescing>();
        coalescing_ = false;
        WorkPtr w = comm_.endCoalescing();
        works_[e->id] = w;
        pending_.push_back(Pending{e->id, w, {}, false});
        break;
      }
      case StmtKind::kWait:
        waitFor(s.as<Wait>()->id);
        break;
      case StmtKind::kForLoop:
      case StmtKind::kIfThenElse:
        break;
      default:
        // LaunchKernel, ShareMemHandles, CollectivePermute, SymmetricContiguousView, select, slice
        // and scalar statements: verify and sim know them (ir/semantics); the executor does not yet.
        throw Error(std::string(stmtKindName(s.kind())) + " is not supported by braid run yet");
    }
    if (token >= 0) {
      device_->endOp(token);
      timed_.push_back({&s, token, iterationStr(), ""});
    } else if (timeIt) {
      timeCommunication(s);
    }
  } catch (const Error& e) {
    throw Error(where(s) + ": " + e.what());
  } catch (const std::exception& e) {
    throw Error(where(s) + ": " + firstLine(e.what()));
  }
}

}  // namespace braid::exec

#endif  // BRAID_WITH_TORCH
