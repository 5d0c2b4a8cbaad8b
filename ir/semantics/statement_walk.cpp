// The statement walk: one rank's host thread, statement by statement (DESIGN.md, "The host
// program's meaning"; HOSTIR.md for the two ALLOCATE forms, views and view-vs-copy), recording
// device operations on streams and the buffers they touch.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <numeric>

#include "ir/checked_math.h"
#include "ir/semantics/budget.h"
#include "ir/semantics/buffer_rules.h"
#include "ir/semantics/interpreter_internal.h"
#include "ir/semantics/mesh_rule.h"
#include "ir/semantics/shape_inference.h"
#include "ir/semantics/view_rules.h"

namespace braid::sem::detail {

namespace {

std::string shapeStr(const std::vector<int64_t>& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
  return out + "]";
}

}  // namespace

// ---- streams and events ----

int32_t Interpreter::newStream(const std::string& name, StreamKind kind) {
  StreamInfo s;
  s.id = static_cast<int32_t>(g_.streams.size());
  s.rank = static_cast<int32_t>(st_->rank);
  s.kind = kind;
  s.name = name;
  g_.streams.push_back(std::move(s));
  return g_.streams.back().id;
}

int32_t Interpreter::enqueueOn(int32_t stream, EventKind kind, const Stmt* stmt, std::string op) {
  if (static_cast<int64_t>(g_.events.size()) >= eventLimit_)
    throw Error("the program unrolls into more than " + std::to_string(eventLimit_) +
                " device operations for these bindings (the budget: --max-events / --max-memory); use smaller sizes");
  if (progress_ && (g_.events.size() & ((size_t{1} << 20) - 1)) == 0 && !g_.events.empty())
    std::fprintf(stderr, "\rbraid: unrolling rank %lld, %zu events", static_cast<long long>(st_->rank), g_.events.size());
  Event e;
  e.id = static_cast<int32_t>(g_.events.size());
  e.rank = static_cast<int32_t>(st_->rank);
  e.stream = stream;
  e.issue = st_->issue;
  e.kind = kind;
  e.stmt = stmt;
  e.op = std::move(op);
  e.loops = st_->loops;
  StreamInfo& s = g_.streams[static_cast<size_t>(stream)];
  e.streamPos = static_cast<int32_t>(s.events.size());
  // A communicator runs its operations one at a time in issue order: that decides timing and
  // deadlocks, but it is not an ordering a program may rely on for memory (DESIGN.md).
  if (!s.events.empty())
    g_.edges.push_back({s.events.back(), e.id, s.isCommunicator() ? EdgeKind::kCommOrder : EdgeKind::kStream});
  s.events.push_back(e.id);
  g_.events.push_back(std::move(e));
  return g_.events.back().id;
}

int32_t Interpreter::resolveStream(const StreamRef& ref, const Stmt& s) {
  if (ref.kind == StreamRef::Kind::kNamed) {
    if (auto it = st_->namedVars.find(ref.name); it != st_->namedVars.end()) return it->second;
    auto [it, inserted] = st_->namedPool.try_emplace(ref.name, -1);
    if (inserted) it->second = newStream("pool stream " + ref.name, StreamKind::kWorker);
    return it->second;
  }
  int64_t key = evalScalar(ref.index, s);
  auto [it, inserted] = st_->indexed.try_emplace(key, -1);
  if (inserted) it->second = newStream("worker stream " + std::to_string(key), StreamKind::kWorker);
  return it->second;
}

int32_t Interpreter::communicatorStream(const std::string& communicator) {
  auto [it, inserted] = st_->communicators.try_emplace(communicator, -1);
  if (inserted) it->second = newStream(communicator, StreamKind::kCommunicator);
  return it->second;
}

// ---- issues and scalars ----

void Interpreter::issue(FindingKind kind, const Stmt* stmt, std::string message, int32_t event) {
  Issue i;
  i.kind = kind;
  i.rank = static_cast<int32_t>(st_->rank);
  i.stmt = stmt;
  i.stream = st_->current;
  i.loops = st_->loops;
  i.message = std::move(message);
  i.event = event;
  g_.issues.push_back(std::move(i));
}

void Interpreter::halt(FindingKind kind, const Stmt* stmt, std::string message) {
  issue(kind, stmt, std::move(message));
  throw RankHalted{};
}

const HostProgram& Interpreter::programOf(int64_t rank) const {
  auto it = o_.rankPrograms.find(rank);
  return it != o_.rankPrograms.end() && it->second ? *it->second : p_;
}

void Interpreter::refreshDefinitions() {
  auto [it, inserted] = definitions_.try_emplace(prog_);
  if (inserted)
    for (const auto& [name, value] : prog_->indexDefinitions())
      it->second.emplace_back(name, prog_->expandIndexDefinitions(value));
  // Written in undefined symbols only, so the order of evaluation does not matter.
  for (const auto& [name, value] : it->second) {
    if (auto v = value.tryEvaluate(st_->env)) {
      st_->env[name] = *v;
    } else {
      st_->env.erase(name);
    }
  }
}

void Interpreter::note(FindingKind kind, const Stmt* stmt, std::string message) {
  if (stmt && !st_->noted.insert(stmt).second) return;
  issue(kind, stmt, std::move(message));
}

// One note per rank for all the tensors of its program whose dtype is not printed.
void Interpreter::noteDtypes() {
  std::set<std::string> names;
  auto collect = [&](const Fusion& f) {
    for (const TensorView* tv : f.tensors())
      if (!tv->dtypeKnown()) names.insert(tv->nameStr());
  };
  collect(prog_->tensors());
  for (const auto& [id, unit] : prog_->hostUnits())
    if (unit.fusion) collect(*unit.fusion);
  if (names.empty()) return;
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  issue(FindingKind::kUnprintedDtype, nullptr,
        "the dump does not print dtypes (nvFuser's printer before September 2024): sizes in bytes assume "
        "4-byte elements for " + list);
}

int64_t Interpreter::evalScalar(const Scalar& s, const Stmt& stmt) {
  std::optional<int64_t> v;
  try {
    v = s.tryEvaluate(st_->env);
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + " in " + s.str() + boundValues(s, st_->env));
  }
  if (!v) {
    std::string names;
    for (const auto& n : s.substitute(st_->env).freeSymbols()) names += (names.empty() ? "" : ", ") + n;
    throw Error(stmt.loc.str() + ": cannot evaluate " + s.str() + ": unbound symbol(s) " + names +
                " (bind them with --bind NAME=VALUE)");
  }
  return *v;
}

// ---- buffers and bindings ----

int32_t Interpreter::newBuffer(const TensorView* tv, std::vector<int64_t> shape, const Stmt* stmt) {
  BufferInfo b;
  b.id = static_cast<int32_t>(g_.buffers.size());
  b.rank = static_cast<int32_t>(st_->rank);
  b.tensor = tv;
  b.dtype = tv->dtype();
  b.numel = checkedElementCount(shape, "buffer of " + tv->nameStr());
  b.shape = std::move(shape);
  b.allocStream = st_->current;
  b.allocIssue = st_->issue;
  b.allocStmt = stmt;
  b.allocLoops = st_->loops;
  g_.buffers.push_back(std::move(b));
  refs_.push_back(0);
  if (stmt) {
    // The allocation's point on its stream: the block may be one just freed there, still in use
    // by work enqueued before this point, so a use on another stream must be ordered after it.
    int32_t m = enqueue(EventKind::kAlloc, stmt, "alloc " + tv->nameStr());
    ev(m).target = g_.buffers.back().id;
    g_.buffers.back().allocEvent = m;
  }
  return g_.buffers.back().id;
}

void Interpreter::retain(int32_t buffer) {
  if (buffer >= 0) ++refs_[static_cast<size_t>(buffer)];
}

void Interpreter::release(int32_t buffer, const Stmt* stmt) {
  if (buffer < 0) return;
  if (--refs_[static_cast<size_t>(buffer)] > 0) return;
  freeBuffer(buffer, stmt);
}

// The caching allocator may hand the block to the next allocation on its allocation stream,
// without waiting for other streams: a marker there is the point where it may be reused.
void Interpreter::freeBuffer(int32_t buffer, const Stmt* stmt) {
  BufferInfo& b = g_.buffers[static_cast<size_t>(buffer)];
  if (b.isInput || b.freeEvent >= 0) return;
  int32_t f = enqueueOn(b.allocStream, EventKind::kFree, stmt, "free " + b.tensor->nameStr());
  ev(f).target = b.id;
  b.freeEvent = f;
  b.freeStmt = stmt;
  b.freeLoops = st_->loops;
}

void Interpreter::bind(const TensorView* tv, const Region& r, const Stmt* stmt) {
  if (o_.onBind) o_.onBind(st_->rank, stmt, tv, r);
  retain(r.buffer);
  auto it = st_->bound.find(tv);
  if (it != st_->bound.end()) {
    int32_t old = it->second.buffer;
    it->second = r;
    release(old, stmt);
  } else {
    st_->bound.emplace(tv, r);
  }
  st_->deallocated.erase(tv);
}

void Interpreter::unbind(const TensorView* tv, const Stmt* stmt) {
  auto it = st_->bound.find(tv);
  if (it == st_->bound.end()) return;
  int32_t old = it->second.buffer;
  st_->bound.erase(it);
  release(old, stmt);
}

Region Interpreter::need(const TensorView* tv, const Stmt& s, const char* role) {
  if (!tv) halt(FindingKind::kUnboundTensor, &s, std::string("the statement has no ") + role + " tensor");
  auto it = st_->bound.find(tv);
  const BufferInfo* freed = nullptr;
  if (it != st_->bound.end()) {
    const BufferInfo& b = g_.buffers[static_cast<size_t>(it->second.buffer)];
    if (b.freeEvent < 0) return it->second;
    freed = &b;
  }
  if (freed || st_->deallocated.count(tv)) {
    Issue i;
    i.kind = FindingKind::kUseAfterDeallocate;
    i.rank = static_cast<int32_t>(st_->rank);
    i.stmt = &s;
    i.stream = st_->current;
    i.loops = st_->loops;
    i.otherRank = i.rank;
    if (freed) {
      i.otherStmt = freed->freeStmt;
      i.otherLoops = freed->freeLoops;
      i.otherStream = g_.events[static_cast<size_t>(freed->freeEvent)].stream;
      i.message = std::string("uses ") + tv->nameStr() + " (" + role + "), a view of " + freed->tensor->nameStr() +
                  ", whose memory was deallocated";
    } else {
      const auto& d = st_->deallocated.at(tv);
      i.otherStmt = d.stmt;
      i.otherLoops = d.loops;
      i.otherStream = d.stream;
      i.message = std::string("uses ") + tv->nameStr() + " (" + role + ") after it was deallocated";
    }
    g_.issues.push_back(std::move(i));
    throw RankHalted{};
  }
  halt(FindingKind::kUnboundTensor, &s,
       std::string("uses ") + tv->nameStr() + " (" + role + "), which nothing allocated or bound");
}

Region Interpreter::outputRegion(const TensorView* tv, const std::vector<int64_t>& shape, const Stmt* stmt) {
  auto it = st_->bound.find(tv);
  if (it != st_->bound.end()) {
    const BufferInfo& b = g_.buffers[static_cast<size_t>(it->second.buffer)];
    if (b.freeEvent >= 0) {
      Issue i;
      i.kind = FindingKind::kUseAfterDeallocate;
      i.rank = static_cast<int32_t>(st_->rank);
      i.stmt = stmt;
      i.stream = st_->current;
      i.loops = st_->loops;
      i.otherStmt = b.freeStmt;
      i.otherRank = i.rank;
      i.otherLoops = b.freeLoops;
      i.otherStream = g_.events[static_cast<size_t>(b.freeEvent)].stream;
      i.message = "writes " + tv->nameStr() + ", a view of " + b.tensor->nameStr() + ", whose memory was deallocated";
      g_.issues.push_back(std::move(i));
      throw RankHalted{};
    }
    if (it->second.numel() != checkedElementCount(shape, "buffer of " + tv->nameStr()))
      issue(FindingKind::kShapeMismatch, stmt,
            tv->nameStr() + " is bound to " + std::to_string(it->second.numel()) +
                " elements but the operation produces " + shapeStr(shape));
    return it->second;
  }
  int32_t b = newBuffer(tv, shape, stmt);
  Region r = Region::contiguous(b, shape);
  bind(tv, r, stmt);
  return r;
}

std::vector<int64_t> Interpreter::allocationShape(const TensorView* tv) {
  ShapeMode mode;
  mode.streamChunk = allocatedPerStreamChunk(*tv, st_->loopStmts);
  return bufferShape(*tv, st_->env, mode);
}

int64_t Interpreter::bytesOf(const Region& r, const TensorView* tv) const {
  return r.numel() * dataTypeSize(tv->dtype());
}

// ---- the rank's host thread ----

void Interpreter::runRank(int64_t rank, size_t pos) {
  RankState state;
  st_ = &state;
  state.rank = rank;
  state.pos = pos;
  state.env = o_.bindings;
  state.env[kRank] = rank;
  state.env[kDeviceIdxX] = rank;
  if (!state.env.count(kDeviceIdxY)) state.env[kDeviceIdxY] = 0;
  state.env[kNumberOfStreams] = g_.numberOfStreams;
  state.defaultStream = newStream("default stream", StreamKind::kDefault);
  state.current = state.defaultStream;
  prog_ = &programOf(rank);
  refreshDefinitions();
  noteDtypes();

  // Entry: the caller's inputs are ready on the default stream.
  int32_t entry = enqueue(EventKind::kEntry, nullptr, "program entry");
  for (const TensorView* in : prog_->inputs()) {
    if (state.bound.count(in)) continue;
    std::vector<int64_t> shape;
    try {
      shape = bufferShape(*in, state.env);
    } catch (const Error& e) {
      // Located at the input's first use: the header line that declares it has no statement.
      std::string message = std::string(e.what()) + " (" + in->nameStr() + " is an input of the program, first used here)";
      const Stmt* first = nullptr;
      forEachStmt(prog_->body(), [&](const Stmt& s, int) {
        if (first || !s.loc.known()) return;
        for (const TensorView* tv : stmtTensors(s))
          if (tv == in) first = &s;
      });
      if (first) throw locatedError(*first, message);
      throw Error(message + " (on rank " + std::to_string(rank) + ")");
    }
    int32_t b = newBuffer(in, std::move(shape), nullptr);
    g_.buffers[static_cast<size_t>(b)].isInput = true;
    Region r = Region::contiguous(b, g_.buffers[static_cast<size_t>(b)].shape);
    retain(b);  // the caller's reference
    bind(in, r, nullptr);
    ev(entry).writes.push_back({r, in});
    ev(entry).bytesWritten += bytesOf(r, in);
  }
  for (const auto& [out, in] : prog_->aliases()) {
    auto it = state.bound.find(in);
    if (it != state.bound.end()) bind(out, it->second, nullptr);
  }
  g_.entryEvent[pos] = entry;

  try {
    runScope(prog_->body());
    if (state.coalesceStart)
      halt(FindingKind::kUnclosedCoalescing, state.coalesceStart,
           "opens a group of sends and receives that no EndCoalescing closes before the program returns");
    runExit();
  } catch (const RankHalted&) {
    g_.haltedRanks.push_back(rank);
  }
  st_ = nullptr;
}

// Exit: the caller's stream reaches the end; the outputs are the caller's from here on.
void Interpreter::runExit() {
  st_->current = st_->defaultStream;
  int32_t exit = enqueue(EventKind::kExit, nullptr, "program exit");
  g_.exitEvent[st_->pos] = exit;
  for (const TensorView* out : prog_->outputs()) {
    // A rank outside the output's mesh owes nothing.
    if (out->hasDeviceMesh() && !out->deviceMesh()->has(st_->rank)) continue;
    auto it = st_->bound.find(out);
    if (it == st_->bound.end()) {
      issue(FindingKind::kUnboundTensor, nullptr, "output " + out->nameStr() + " is never allocated or written", exit);
      continue;
    }
    BufferInfo& b = g_.buffers[static_cast<size_t>(it->second.buffer)];
    if (b.freeEvent >= 0) {
      issue(FindingKind::kUseAfterDeallocate, b.freeStmt,
            "deallocates " + b.tensor->nameStr() + ", but output " + out->nameStr() +
                " is a view of it: the caller receives freed memory",
            exit);
      continue;
    }
    b.isOutput = true;
    ev(exit).reads.push_back({it->second, out});
  }
}

void Interpreter::runScope(const Scope& scope) {
  for (const auto& s : scope) {
    // An error of bad input (an unbound symbol, a negative size, ceilDiv by zero, an overflow)
    // names the innermost statement that raised it, with the rank and loop indices there.
    try {
      runStmt(*s);
    } catch (const ParseError&) {
      throw;
    } catch (const Error& e) {
      throw locatedError(*s, e.what());
    }
  }
}

ParseError Interpreter::locatedError(const Stmt& s, std::string message) const {
  // Messages written with the location in front lose it: ParseError puts it there.
  std::string prefix = s.loc.str() + ": ";
  if (message.rfind(prefix, 0) == 0) message.erase(0, prefix.size());
  std::string where = "on rank " + std::to_string(st_->rank);
  for (const LoopIndex& l : st_->loops) where += ", " + l.name + " = " + std::to_string(l.value);
  if (!s.loc.known()) return ParseError(SourceLoc{prog_ ? prog_->sourceName : std::string()}, message + " (" + where + ")");
  return ParseError(s.loc, message + " (" + where + ")");
}

void Interpreter::skip(const Stmt& s) {
  // nvFuser's program for this device has no such statement; a Wait for it finds nothing to wait
  // for (as a Communication a rank is not a member of posts a null work that Wait skips).
  int id = 0;
  if (isWaitable(s, &id)) st_->posted[id] = -2;
}

void Interpreter::runStmt(const Stmt& s) {
  ++st_->issue;
  if (!runsOnRank(s, st_->rank)) {
    skip(s);
    return;
  }
  switch (s.kind()) {
    case StmtKind::kAllocate:
      runAllocate(*s.as<Allocate>());
      break;
    case StmtKind::kDeallocate:
      runDeallocate(*s.as<Deallocate>());
      break;
    case StmtKind::kAliasSelect:
      runAliasSelect(*s.as<AliasSelect>());
      break;
    case StmtKind::kShardByStream:
      runShardByStream(*s.as<ShardByStream>());
      break;
    case StmtKind::kGetCurrentStream:
      // nvFuser stores the capture with a map insert that never overwrites: a later run of the
      // statement (in a loop) keeps the first capture.
      st_->namedVars.try_emplace(s.as<GetCurrentStream>()->stream.name, st_->current);
      break;
    case StmtKind::kSetCurrentStream:
      st_->current = resolveStream(s.as<SetCurrentStream>()->stream, s);
      break;
    case StmtKind::kSynchronize:
      runSynchronize(*s.as<Synchronize>());
      break;
    case StmtKind::kForLoop:
      runFor(*s.as<ForLoop>());
      break;
    case StmtKind::kIfThenElse: {
      const auto* i = s.as<IfThenElse>();
      runScope(evalScalar(i->predicate, s) != 0 ? i->thenBody : i->elseBody);
      break;
    }
    case StmtKind::kHostOp:
      runHostOp(*s.as<HostOp>());
      break;
    case StmtKind::kPostOnStream:
      runPostOnStream(*s.as<PostOnStream>());
      break;
    case StmtKind::kCommunication:
      runCommunication(*s.as<Communication>());
      break;
    case StmtKind::kP2PCommunication:
      runP2P(*s.as<P2PCommunication>());
      break;
    case StmtKind::kStartCoalescing:
      runStartCoalescing(*s.as<StartCoalescing>());
      break;
    case StmtKind::kEndCoalescing:
      runEndCoalescing(*s.as<EndCoalescing>());
      break;
    case StmtKind::kWait:
      runWait(*s.as<Wait>());
      break;
    case StmtKind::kLaunchKernel:
      runLaunchKernel(*s.as<LaunchKernel>());
      break;
    case StmtKind::kShareMemHandles:
      runShareMemHandles(*s.as<ShareMemHandles>());
      break;
    case StmtKind::kCollectivePermute:
      runCollectivePermute(*s.as<CollectivePermute>());
      break;
    case StmtKind::kSymmetricContiguousView:
      runSymmetricContiguousView(*s.as<SymmetricContiguousView>());
      break;
    case StmtKind::kSelect:
      runSelect(*s.as<Select>());
      break;
    case StmtKind::kSlice:
      runSlice(*s.as<Slice>());
      break;
    case StmtKind::kScalarAssign: {
      const auto* a = s.as<ScalarAssign>();
      st_->env[a->name] = evalScalar(a->value, s);
      refreshDefinitions();
      break;
    }
  }
}

void Interpreter::runSynchronize(const Synchronize& s) {
  int32_t x = resolveStream(s.stream, s);
  if (x == st_->current) return;  // a stream is always ordered after its own work
  int32_t last = lastOn(x);
  if (last < 0) return;  // nothing enqueued there yet: nothing to wait for
  int32_t m = enqueue(EventKind::kSync, &s, "Synchronize " + g_.streams[static_cast<size_t>(x)].name);
  ev(m).target = x;
  g_.edges.push_back({last, m, EdgeKind::kSync});
}

void Interpreter::runFor(const ForLoop& f) {
  int64_t begin = evalScalar(f.begin(), f);
  int64_t end = evalScalar(f.end(), f);
  LoopRun run;
  run.rank = static_cast<int32_t>(st_->rank);
  run.loop = &f;
  run.outer = st_->loops;
  std::optional<int64_t> saved;
  if (auto it = st_->env.find(f.index); it != st_->env.end()) saved = it->second;
  st_->loopStmts.push_back(&f);
  for (int64_t i = begin; i < end; ++i) {
    st_->env[f.index] = i;
    refreshDefinitions();
    st_->loops.push_back({f.index, i});
    LoopRun::Iteration it;
    it.value = i;
    it.begin = static_cast<int32_t>(g_.events.size());
    try {
      runScope(f.body);
    } catch (const RankHalted&) {
      it.end = static_cast<int32_t>(g_.events.size());
      run.iterations.push_back(it);
      g_.loops.push_back(std::move(run));
      throw;
    }
    it.end = static_cast<int32_t>(g_.events.size());
    run.iterations.push_back(it);
    st_->loops.pop_back();
  }
  st_->loopStmts.pop_back();
  if (saved) {
    st_->env[f.index] = *saved;
  } else {
    st_->env.erase(f.index);
  }
  refreshDefinitions();
  g_.loops.push_back(std::move(run));
}

void Interpreter::runAllocate(const Allocate& a) {
  if (!a.tv) throw Error(a.loc.str() + ": ALLOCATE without a tensor");
  // `ALLOCATE(buffer=...)` (nvFuser's kir::Allocate) does nothing when the tensor is bound: after
  // a HirAliasSelect the op that follows writes into the slice.
  if (a.legacy && st_->bound.count(a.tv)) return;
  int32_t b = newBuffer(a.tv, allocationShape(a.tv), &a);
  Region r = Region::contiguous(b, g_.buffers[static_cast<size_t>(b)].shape);
  bind(a.tv, r, &a);
  if (a.zeroInit) {
    g_.buffers[static_cast<size_t>(b)].zeroInit = true;
    int32_t e = enqueue(EventKind::kMemset, &a, "zero-fill " + a.tv->nameStr());
    ev(e).writes.push_back({r, a.tv});
    ev(e).bytesWritten = bytesOf(r, a.tv);
  }
}

void Interpreter::runDeallocate(const Deallocate& d) {
  auto it = st_->bound.find(d.tv);
  if (it == st_->bound.end()) return;
  int32_t buffer = it->second.buffer;
  unbind(d.tv, &d);
  st_->deallocated[d.tv] = {&d, st_->loops, st_->current};
  // DESIGN.md: after Deallocate the memory may be handed to a later allocation, even if views of
  // it are still bound (they dangle from here on).
  if (buffer >= 0 && g_.buffers[static_cast<size_t>(buffer)].tensor == d.tv) freeBuffer(buffer, &d);
}

template <class S>
void Interpreter::bindView(const S& s, const TensorView* in_tv, const TensorView* out,
                           ViewRule (*rule)(const S&, const std::vector<int64_t>&, const Bindings&)) {
  Region in = need(in_tv, s, "input");
  ViewRule v = rule(s, in.sizes, st_->env);
  if (v.problem) halt(*v.problem, &s, v.message);
  bind(out, applyView(in, v.steps), &s);
}

void Interpreter::runAliasSelect(const AliasSelect& a) { bindView(a, a.in, a.out, aliasSelectView); }

void Interpreter::runShardByStream(const ShardByStream& a) { bindView(a, a.in, a.out, shardByStreamView); }

void Interpreter::runHostOp(const HostOp& h) {
  const Expr* e = h.op;
  if (!e) throw Error(h.loc.str() + ": host op without an expression");
  std::vector<Region> ins;
  for (size_t i = 0; i < e->inputs().size(); ++i) ins.push_back(need(e->input(i), h, "operand"));
  if (e->outputs().empty()) return;
  const TensorView* out = e->output(0);
  std::string name = opTypeName(e->type());
  if (e->type() == OpType::kUnary) name = unaryOpName(e->unaryOp);
  if (e->type() == OpType::kBinary) name = std::string("binary ") + binaryOpSymbol(e->binaryOp);
  if (e->type() == OpType::kReduction) name = std::string("reduction ") + reductionOpName(e->reductionOp);

  // Views, as nvFuser's host evaluator makes them when the output is not preallocated.
  if (!st_->bound.count(out) && !ins.empty()) {
    std::optional<ViewRule> v = opView(*e, ins[0].sizes, ins[0].isContiguous(), allocationShape(out));
    if (v && v->problem) {
      issue(*v->problem, &h, v->message);
      v->steps.clear();
    }
    if (v) {
      bind(out, applyView(ins[0], v->steps), &h);
      return;
    }
  }

  std::vector<std::vector<int64_t>> in_shapes;
  for (const Region& r : ins) in_shapes.push_back(r.sizes);
  OpResult res = inferOpResult(*e, in_shapes, allocationShape(out));
  bool copy = e->type() == OpType::kSet || e->type() == OpType::kPermute;
  Region w = outputRegion(out, res.shape, &h);
  int32_t id = enqueue(copy ? EventKind::kCopy : EventKind::kCompute, &h, name);
  Event& x = ev(id);
  for (size_t i = 0; i < ins.size(); ++i) {
    x.reads.push_back({ins[i], e->input(i)});
    x.bytesRead += bytesOf(ins[i], e->input(i));
  }
  x.writes.push_back({w, out});
  x.bytesWritten = bytesOf(w, out);
  x.flops = copy ? 0 : res.flops;
  x.gemm = res.gemm;
}

int32_t Interpreter::runKernel(const Stmt& s, const std::vector<TensorView*>& inputs,
                               const std::vector<TensorView*>& outputs, bool outputsMustBeBound, std::string op) {
  std::vector<std::pair<Region, const TensorView*>> ins;
  for (const TensorView* tv : inputs) ins.emplace_back(need(tv, s, "kernel input"), tv);
  std::vector<std::pair<Region, const TensorView*>> outs;
  for (const TensorView* tv : outputs) {
    auto it = st_->bound.find(tv);
    if (outputsMustBeBound || it != st_->bound.end()) {
      outs.emplace_back(need(tv, s, "kernel output"), tv);
    } else {
      outs.emplace_back(outputRegion(tv, allocationShape(tv), &s), tv);
    }
  }
  int32_t id = enqueue(EventKind::kCompute, &s, std::move(op));
  Event& x = ev(id);
  for (auto& [r, tv] : ins) {
    x.reads.push_back({r, tv});
    x.bytesRead += bytesOf(r, tv);
  }
  for (auto& [r, tv] : outs) {
    x.writes.push_back({r, tv});
    x.bytesWritten += bytesOf(r, tv);
  }
  return id;
}

void Interpreter::runPostOnStream(const PostOnStream& k) {
  // A PostOnStream may preallocate all of its outputs or none: the kernel allocates the others.
  int32_t id = runKernel(k, k.inputs, k.outputs, false, "kernel HostUnit" + std::to_string(k.hostUnit));
  std::string unit_name = "HostUnit" + std::to_string(k.hostUnit);
  const std::string whole = ": the kernel is treated as reading its inputs and writing its outputs whole";
  auto unit = prog_->hostUnits().find(k.hostUnit);
  if (unit == prog_->hostUnits().end()) {
    note(FindingKind::kOpaqueKernel, &k, unit_name + " is not printed" + whole);
  } else if (unit->second.body == HostUnit::Body::kElided) {
    note(FindingKind::kOpaqueKernel, &k, unit_name + "'s kernel is elided ('[...]')" + whole);
  } else if (unit->second.body == HostUnit::Body::kOpaque) {
    note(FindingKind::kOpaqueKernel, &k, unit_name + "'s kernel uses operations braid does not model" + whole);
  } else if (unit->second.fusion) {
    ev(id).flops = fusionFlops(*unit->second.fusion, st_->env);
  }
}

// nvFuser's LaunchKernel runs a kernel compiled ahead of the program; every output must already be
// bound (the evaluator asserts it), so an unallocated output is an unbound tensor.
void Interpreter::runLaunchKernel(const LaunchKernel& k) {
  runKernel(k, k.inputs, k.outputs, true,
            "kernel" + (k.groupId ? " group " + std::to_string(*k.groupId) : std::string()));
}

// One view across the ranks of `in`'s mesh of their symmetric buffers (a multicast / VA mapping):
// memory of other ranks, which braid's per-rank buffers cannot alias. `out` names a buffer of its
// own, ready at entry like the other ranks' shards, and the accesses through it are checked on this
// rank only (a note says so).
void Interpreter::runSymmetricContiguousView(const SymmetricContiguousView& v) {
  if (v.in && v.in->memoryType() != MemoryType::kSymmetric)
    throw Error(v.loc.str() + ": SymmetricContiguousView needs a symmetric input (`_sym`); " + v.in->nameStr() +
                " is " + std::string(memoryTypeName(v.in->memoryType())));
  need(v.in, v, "symmetric input");
  if (!v.out) throw Error(v.loc.str() + ": SymmetricContiguousView without an output");
  ShapeMode mode;
  std::vector<int64_t> shape = bufferShape(*v.out, st_->env, mode);
  int32_t b = newBuffer(v.out, shape, nullptr);
  g_.buffers[static_cast<size_t>(b)].isInput = true;  // not the program's to free
  Region r = Region::contiguous(b, shape);
  int32_t entry = g_.entryEvent[st_->pos];
  ev(entry).writes.push_back({r, v.out});
  bind(v.out, r, &v);
  std::string mesh = v.in->hasDeviceMesh() ? v.in->deviceMesh()->str() : std::string("its ranks");
  note(FindingKind::kCrossRankView, &v,
       "makes " + v.out->nameStr() + " a view of the symmetric buffers of " + v.in->nameStr() + " on every rank of " +
           mesh + ": braid checks the accesses through it on this rank only, not against the other ranks' "
           "writes to their shards");
}

void Interpreter::runSelect(const Select& a) { bindView(a, a.in, a.out, selectView); }

void Interpreter::runSlice(const Slice& a) { bindView(a, a.in, a.out, sliceView); }

}  // namespace braid::sem::detail
