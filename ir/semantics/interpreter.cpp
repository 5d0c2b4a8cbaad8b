// The interpreter of host programs: one host thread per rank, as DESIGN.md ("The host
// program's meaning") and HOSTIR.md (view-vs-copy, the two ALLOCATE forms, HirAliasSelect and
// ShardByStream rules) describe it, recording an EventGraph.
#include "ir/semantics/interpreter.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>

#include "ir/error.h"

namespace braid::sem {

namespace {

int64_t product(const std::vector<int64_t>& v) {
  int64_t n = 1;
  for (int64_t x : v) n *= x;
  return n;
}

std::string teamStr(const std::vector<int64_t>& team) {
  std::ostringstream os;
  os << "(";
  for (size_t i = 0; i < team.size(); ++i) os << (i ? " " : "") << team[i];
  os << ")";
  return os.str();
}

std::string shapeStr(const std::vector<int64_t>& s) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < s.size(); ++i) os << (i ? ", " : "") << s[i];
  os << "]";
  return os.str();
}

// Right-aligned broadcasting of shapes (torch rules; size 1 stretches).
std::vector<int64_t> broadcastShapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  size_t n = std::max(a.size(), b.size());
  std::vector<int64_t> out(n, 1);
  for (size_t i = 0; i < n; ++i) {
    int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    out[i] = x == 1 ? y : x;
  }
  return out;
}

// Non-reduction positions of a domain: position in the domain -> buffer dimension.
std::vector<int> bufferDims(const std::vector<IterDomain*>& dom) {
  std::vector<int> dims(dom.size(), -1);
  int d = 0;
  for (size_t i = 0; i < dom.size(); ++i)
    if (!dom[i]->isReduction()) dims[i] = d++;
  return dims;
}

struct ShapeResult {
  std::vector<int64_t> shape;
  double flops = 0;
};

struct RankState {
  int64_t rank = 0;
  size_t pos = 0;  // index into graph.ranks
  Bindings env;
  int32_t defaultStream = 0;
  int32_t current = 0;
  std::map<std::string, int32_t> namedVars;  // captured by GetCurrentStream
  std::map<std::string, int32_t> namedPool;  // named but never captured: a pool stream
  std::map<int64_t, int32_t> indexed;
  std::unordered_map<const TensorView*, Region> bound;
  struct Dealloc {
    const Stmt* stmt;
    std::vector<LoopIndex> loops;
  };
  std::unordered_map<const TensorView*, Dealloc> deallocated;
  std::map<int, int32_t> posted;  // communication / EndCoalescing id -> event (-2: nothing posted)
  bool coalescing = false;
  const Stmt* coalesceStart = nullptr;
  std::vector<P2POp> pendingP2P;
  std::vector<Access> pendingReads, pendingWrites;
  std::vector<int> pendingIds;
  int64_t issue = 0;
  std::vector<LoopIndex> loops;
  int loopDepth = 0;
  std::map<std::string, int32_t> lastOnComm;
};

class Interpreter {
 public:
  Interpreter(const HostProgram& p, const SemanticsOptions& o, EventGraph& g) : p_(p), o_(o), g_(g) {}

  void runRank(int64_t rank, size_t pos);
  void matchCommunications();

 private:
  // ---- events and streams ----
  int32_t newStream(const std::string& name, bool is_default) {
    StreamInfo s;
    s.id = static_cast<int32_t>(g_.streams.size());
    s.rank = static_cast<int32_t>(st_->rank);
    s.isDefault = is_default;
    s.name = name;
    g_.streams.push_back(std::move(s));
    return g_.streams.back().id;
  }
  int32_t enqueueOn(int32_t stream, EventKind kind, const Stmt* stmt, std::string op) {
    if (static_cast<int64_t>(g_.events.size()) >= o_.maxEvents)
      throw Error("the program unrolls into more than " + std::to_string(o_.maxEvents) +
                  " device operations for these bindings; use smaller sizes");
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
    if (!s.events.empty()) g_.edges.push_back({s.events.back(), e.id, EdgeKind::kStream});
    s.events.push_back(e.id);
    g_.events.push_back(std::move(e));
    return g_.events.back().id;
  }
  int32_t enqueue(EventKind kind, const Stmt* stmt, std::string op) {
    return enqueueOn(st_->current, kind, stmt, std::move(op));
  }
  Event& ev(int32_t id) { return g_.events[static_cast<size_t>(id)]; }
  int32_t lastOn(int32_t stream) const {
    const auto& evs = g_.streams[static_cast<size_t>(stream)].events;
    return evs.empty() ? -1 : evs.back();
  }
  int32_t resolveStream(const StreamRef& ref, const Stmt& s) {
    if (ref.kind == StreamRef::Kind::kNamed) {
      if (auto it = st_->namedVars.find(ref.name); it != st_->namedVars.end()) return it->second;
      auto [it, inserted] = st_->namedPool.try_emplace(ref.name, -1);
      if (inserted) it->second = newStream("pool stream " + ref.name, false);
      return it->second;
    }
    int64_t key = evalScalar(ref.index, s);
    auto [it, inserted] = st_->indexed.try_emplace(key, -1);
    if (inserted) it->second = newStream("worker stream " + std::to_string(key), false);
    return it->second;
  }

  // ---- issues ----
  void issue(IssueKind kind, const Stmt* stmt, std::string message, int32_t event = -1) {
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

  // ---- scalars and shapes ----
  int64_t evalScalar(const Scalar& s, const Stmt& stmt) {
    auto v = s.tryEvaluate(st_->env);
    if (!v) {
      std::string names;
      for (const auto& n : s.freeSymbols())
        if (!st_->env.count(n)) names += (names.empty() ? "" : ", ") + n;
      throw Error(stmt.loc.str() + ": cannot evaluate " + s.str() + ": unbound symbol(s) " + names +
                  " (bind them with --bind NAME=VALUE)");
    }
    return *v;
  }
  std::vector<int64_t> shapeOf(const TensorView* tv, bool stream_chunk) {
    return bufferShape(*tv, st_->env, stream_chunk);
  }

  // ---- buffers and bindings ----
  int32_t newBuffer(const TensorView* tv, std::vector<int64_t> shape, const Stmt* stmt) {
    BufferInfo b;
    b.id = static_cast<int32_t>(g_.buffers.size());
    b.rank = static_cast<int32_t>(st_->rank);
    b.tensor = tv;
    b.dtype = tv->dtype();
    b.numel = product(shape);
    b.shape = std::move(shape);
    b.allocStream = st_->current;
    b.allocIssue = st_->issue;
    b.allocStmt = stmt;
    b.allocLoops = st_->loops;
    g_.buffers.push_back(std::move(b));
    refs_.push_back(0);
    return g_.buffers.back().id;
  }
  void retain(int32_t buffer) {
    if (buffer >= 0) ++refs_[static_cast<size_t>(buffer)];
  }
  void release(int32_t buffer, const Stmt* stmt) {
    if (buffer < 0) return;
    if (--refs_[static_cast<size_t>(buffer)] > 0) return;
    freeBuffer(buffer, stmt);
  }
  // The caching allocator may hand the block to the next allocation on its allocation stream,
  // without waiting for other streams: a marker there is the point where it may be reused.
  void freeBuffer(int32_t buffer, const Stmt* stmt) {
    BufferInfo& b = g_.buffers[static_cast<size_t>(buffer)];
    if (b.isInput || b.freeEvent >= 0) return;
    int32_t f = enqueueOn(b.allocStream, EventKind::kFree, stmt, "free " + b.tensor->nameStr());
    ev(f).target = b.id;
    b.freeEvent = f;
    b.freeStmt = stmt;
    b.freeLoops = st_->loops;
  }
  void bind(const TensorView* tv, const Region& r, const Stmt* stmt) {
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
  void unbind(const TensorView* tv, const Stmt* stmt) {
    auto it = st_->bound.find(tv);
    if (it == st_->bound.end()) return;
    int32_t old = it->second.buffer;
    st_->bound.erase(it);
    release(old, stmt);
  }
  // The region `tv` names, or nullopt (with an issue) when it is not bound.
  std::optional<Region> need(const TensorView* tv, const Stmt& s, const char* role) {
    if (!tv) {
      issue(IssueKind::kUnboundTensor, &s, std::string("the statement has no ") + role + " tensor");
      return std::nullopt;
    }
    auto it = st_->bound.find(tv);
    if (it != st_->bound.end()) {
      const BufferInfo& b = g_.buffers[static_cast<size_t>(it->second.buffer)];
      if (b.freeEvent < 0) return it->second;
      Issue i;
      i.kind = IssueKind::kUseAfterDeallocate;
      i.rank = static_cast<int32_t>(st_->rank);
      i.stmt = &s;
      i.stream = st_->current;
      i.loops = st_->loops;
      i.otherStmt = b.freeStmt;
      i.otherRank = i.rank;
      i.otherLoops = b.freeLoops;
      i.message = std::string("uses ") + tv->nameStr() + " (" + role + "), a view of " + b.tensor->nameStr() +
                  ", whose memory was deallocated";
      g_.issues.push_back(std::move(i));
      return std::nullopt;
    }
    if (auto d = st_->deallocated.find(tv); d != st_->deallocated.end()) {
      Issue i;
      i.kind = IssueKind::kUseAfterDeallocate;
      i.rank = static_cast<int32_t>(st_->rank);
      i.stmt = &s;
      i.stream = st_->current;
      i.loops = st_->loops;
      i.otherStmt = d->second.stmt;
      i.otherRank = i.rank;
      i.otherLoops = d->second.loops;
      i.message = std::string("uses ") + tv->nameStr() + " (" + role + ") after it was deallocated";
      g_.issues.push_back(std::move(i));
      return std::nullopt;
    }
    issue(IssueKind::kUnboundTensor, &s,
          std::string("uses ") + tv->nameStr() + " (" + role + "), which nothing allocated or bound");
    return std::nullopt;
  }
  // Binds an op's output: the preallocated / aliased region, or a fresh buffer of `shape`.
  Region outputRegion(const TensorView* tv, const std::vector<int64_t>& shape, const Stmt* stmt) {
    auto it = st_->bound.find(tv);
    if (it != st_->bound.end() && g_.buffers[static_cast<size_t>(it->second.buffer)].freeEvent >= 0) {
      const BufferInfo& b = g_.buffers[static_cast<size_t>(it->second.buffer)];
      Issue i;
      i.kind = IssueKind::kUseAfterDeallocate;
      i.rank = static_cast<int32_t>(st_->rank);
      i.stmt = stmt;
      i.stream = st_->current;
      i.loops = st_->loops;
      i.otherStmt = b.freeStmt;
      i.otherRank = i.rank;
      i.otherLoops = b.freeLoops;
      i.message = "writes " + tv->nameStr() + ", a view of " + b.tensor->nameStr() + ", whose memory was deallocated";
      g_.issues.push_back(std::move(i));
    } else if (it != st_->bound.end()) {
      if (it->second.numel() != product(shape)) {
        issue(IssueKind::kShapeMismatch, stmt,
              tv->nameStr() + " is bound to " + std::to_string(it->second.numel()) +
                  " elements but the operation produces " + shapeStr(shape));
      }
      return it->second;
    }
    int32_t b = newBuffer(tv, shape, stmt);
    Region r = Region::contiguous(b, shape);
    bind(tv, r, stmt);
    return r;
  }
  int64_t bytesOf(const Region& r, const TensorView* tv) const { return r.numel() * dataTypeSize(tv->dtype()); }

  // ---- statements ----
  void runScope(const Scope& scope) {
    for (const auto& s : scope) runStmt(*s);
  }
  void runStmt(const Stmt& s);
  void runAllocate(const Allocate& a);
  void runAliasSelect(const AliasSelect& a);
  void runShardByStream(const ShardByStream& a);
  void runHostOp(const HostOp& h);
  void runPostOnStream(const PostOnStream& k);
  void runCommunication(const Communication& c);
  void runP2P(const P2PCommunication& c);
  void runEndCoalescing(const EndCoalescing& c);
  void runWait(const Wait& w);
  void runFor(const ForLoop& f);
  ShapeResult inferShape(const Expr& e, const std::vector<Region>& ins);
  double kernelFlops(const PostOnStream& k);
  void addCommOrder(const std::string& key, int32_t e) {
    auto [it, inserted] = st_->lastOnComm.try_emplace(key, e);
    if (!inserted) {
      g_.edges.push_back({it->second, e, EdgeKind::kCommOrder});
      it->second = e;
    }
  }
  std::string communicatorKey(CommBackend backend, std::vector<int64_t> team) const {
    std::sort(team.begin(), team.end());
    return std::string(commBackendName(backend)) + " team " + teamStr(team);
  }
  std::string worldKey(CommBackend backend) const {
    std::vector<int64_t> all;
    for (int64_t r = 0; r < g_.numRanks; ++r) all.push_back(r);
    return communicatorKey(backend, all);
  }

  const HostProgram& p_;
  const SemanticsOptions& o_;
  EventGraph& g_;
  RankState* st_ = nullptr;
  std::vector<int32_t> refs_;
  // communicator -> rank -> its collectives in issue order
  std::map<std::string, std::map<int64_t, std::vector<int32_t>>> collectives_;
  std::map<std::string, std::vector<int64_t>> teams_;
  std::vector<int32_t> p2pEvents_;
};

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
  state.defaultStream = newStream("default stream", true);
  state.current = state.defaultStream;

  // Entry: the caller's inputs are ready on the default stream.
  int32_t entry = enqueue(EventKind::kEntry, nullptr, "program entry");
  for (const TensorView* in : p_.inputs()) {
    if (state.bound.count(in)) continue;
    int32_t b = newBuffer(in, shapeOf(in, false), nullptr);
    g_.buffers[static_cast<size_t>(b)].isInput = true;
    Region r = Region::contiguous(b, g_.buffers[static_cast<size_t>(b)].shape);
    retain(b);  // the caller's reference
    bind(in, r, nullptr);
    ev(entry).writes.push_back({r, in});
    ev(entry).bytesWritten += bytesOf(r, in);
  }
  for (const auto& [out, in] : p_.aliases()) {
    auto it = state.bound.find(in);
    if (it != state.bound.end()) bind(out, it->second, nullptr);
  }
  g_.entryEvent[pos] = entry;

  runScope(p_.body());

  // Exit: the caller's stream reaches the end; the outputs are the caller's from here on.
  st_->current = state.defaultStream;
  int32_t exit = enqueue(EventKind::kExit, nullptr, "program exit");
  for (const TensorView* out : p_.outputs()) {
    auto it = state.bound.find(out);
    if (it == state.bound.end()) {
      // Usually the consequence of an earlier issue on this rank (an op that could not run).
      bool earlier = std::any_of(g_.issues.begin(), g_.issues.end(),
                                 [&](const Issue& i) { return i.rank == static_cast<int32_t>(rank); });
      if (!earlier)
        issue(IssueKind::kUnboundTensor, nullptr, "output " + out->nameStr() + " is never allocated or written", exit);
      continue;
    }
    BufferInfo& b = g_.buffers[static_cast<size_t>(it->second.buffer)];
    if (b.freeEvent >= 0) {
      issue(IssueKind::kUseAfterDeallocate, b.freeStmt,
            "deallocates " + b.tensor->nameStr() + ", but output " + out->nameStr() +
                " is a view of it: the caller receives freed memory",
            exit);
      continue;
    }
    b.isOutput = true;
    ev(exit).reads.push_back({it->second, out});
  }
  g_.exitEvent[pos] = exit;
  st_ = nullptr;
}

void Interpreter::runStmt(const Stmt& s) {
  ++st_->issue;
  switch (s.kind()) {
    case StmtKind::kAllocate:
      runAllocate(*s.as<Allocate>());
      break;
    case StmtKind::kDeallocate: {
      const auto* d = s.as<Deallocate>();
      auto it = st_->bound.find(d->tv);
      if (it != st_->bound.end()) {
        int32_t buffer = it->second.buffer;
        unbind(d->tv, &s);
        st_->deallocated[d->tv] = {&s, st_->loops};
        // DESIGN.md: after Deallocate the memory may be handed to a later allocation, even if
        // views of it are still bound (they dangle from here on).
        if (buffer >= 0 && g_.buffers[static_cast<size_t>(buffer)].tensor == d->tv) freeBuffer(buffer, &s);
      }
      break;
    }
    case StmtKind::kAliasSelect:
      runAliasSelect(*s.as<AliasSelect>());
      break;
    case StmtKind::kShardByStream:
      runShardByStream(*s.as<ShardByStream>());
      break;
    case StmtKind::kGetCurrentStream:
      st_->namedVars[s.as<GetCurrentStream>()->stream.name] = st_->current;
      break;
    case StmtKind::kSetCurrentStream:
      st_->current = resolveStream(s.as<SetCurrentStream>()->stream, s);
      break;
    case StmtKind::kSynchronize: {
      int32_t x = resolveStream(s.as<Synchronize>()->stream, s);
      if (x == st_->current) break;  // a stream is always ordered after its own work
      int32_t last = lastOn(x);
      if (last < 0) break;  // nothing enqueued there yet: nothing to wait for
      int32_t m = enqueue(EventKind::kSync, &s, "Synchronize " + g_.streams[static_cast<size_t>(x)].name);
      ev(m).target = x;
      g_.edges.push_back({last, m, EdgeKind::kSync});
      break;
    }
    case StmtKind::kForLoop:
      runFor(*s.as<ForLoop>());
      break;
    case StmtKind::kIfThenElse: {
      const auto* i = s.as<IfThenElse>();
      if (evalScalar(i->predicate, s) != 0) {
        runScope(i->thenBody);
      } else {
        runScope(i->elseBody);
      }
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
      st_->coalescing = true;
      st_->coalesceStart = &s;
      st_->pendingP2P.clear();
      st_->pendingReads.clear();
      st_->pendingWrites.clear();
      st_->pendingIds.clear();
      break;
    case StmtKind::kEndCoalescing:
      runEndCoalescing(*s.as<EndCoalescing>());
      break;
    case StmtKind::kWait:
      runWait(*s.as<Wait>());
      break;
  }
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
  ++st_->loopDepth;
  for (int64_t i = begin; i < end; ++i) {
    st_->env[f.index] = i;
    st_->loops.push_back({f.index, i});
    LoopRun::Iteration it;
    it.value = i;
    it.begin = static_cast<int32_t>(g_.events.size());
    runScope(f.body);
    it.end = static_cast<int32_t>(g_.events.size());
    run.iterations.push_back(it);
    st_->loops.pop_back();
  }
  --st_->loopDepth;
  if (saved) {
    st_->env[f.index] = *saved;
  } else {
    st_->env.erase(f.index);
  }
  g_.loops.push_back(std::move(run));
}

void Interpreter::runAllocate(const Allocate& a) {
  if (!a.tv) throw Error(a.loc.str() + ": ALLOCATE without a tensor");
  // `ALLOCATE(buffer=...)` (nvFuser's kir::Allocate) does nothing when the tensor is bound: after
  // a HirAliasSelect the op that follows writes into the slice.
  if (a.legacy && st_->bound.count(a.tv)) return;
  int32_t b = newBuffer(a.tv, shapeOf(a.tv, st_->loopDepth > 0), &a);
  Region r = Region::contiguous(b, g_.buffers[static_cast<size_t>(b)].shape);
  bind(a.tv, r, &a);
  if (a.zeroInit) {
    g_.buffers[static_cast<size_t>(b)].zeroInit = true;
    int32_t e = enqueue(EventKind::kMemset, &a, "zero-fill " + a.tv->nameStr());
    ev(e).writes.push_back({r, a.tv});
    ev(e).bytesWritten = bytesOf(r, a.tv);
  }
}

void Interpreter::runAliasSelect(const AliasSelect& a) {
  auto in = need(a.in, a, "input");
  if (!in) return;
  const auto& dom = a.in->loop();
  auto pos = std::find(dom.begin(), dom.end(), a.axis);
  if (pos == dom.end()) {
    for (auto it = dom.begin(); it != dom.end(); ++it)
      if (a.axis && (*it)->id() == a.axis->id()) pos = it;
  }
  if (pos == dom.end()) throw Error(a.loc.str() + ": HirAliasSelect axis is not an axis of " + a.in->nameStr());
  if ((*pos)->isReduction()) {  // not in the buffer: the input unchanged
    bind(a.out, *in, &a);
    return;
  }
  int dim = bufferDims(dom)[static_cast<size_t>(pos - dom.begin())];
  if (dim >= in->rank()) {
    issue(IssueKind::kShapeMismatch, &a,
          a.in->nameStr() + " is bound to a view with " + std::to_string(in->rank()) + " dimensions; axis " +
              (*pos)->str() + " would be dimension " + std::to_string(dim));
    return;
  }
  int64_t size = in->sizes[static_cast<size_t>(dim)];
  int64_t index = 0;
  if (!(*pos)->isBroadcast() && size != 1) index = evalScalar(a.index, a);
  if (index < 0 || index >= size) {
    issue(IssueKind::kViewOutOfBounds, &a,
          "selects index " + std::to_string(index) + " of " + a.in->nameStr() + " along " + (*pos)->str() +
              ", which has " + std::to_string(size) + " elements there");
    Region empty = in->narrow(dim, 0, 0).select(dim, 0);
    bind(a.out, empty, &a);
    return;
  }
  bind(a.out, in->select(dim, index), &a);
}

void Interpreter::runShardByStream(const ShardByStream& a) {
  auto in = need(a.in, a, "input");
  if (!in) return;
  // The chunk count is the extent of the Stream axis (of the output's domain, else the input's).
  const TensorView* ref = a.out;
  int stream_pos = ref ? ref->loopAxisOf(ParallelType::kStream) : -1;
  if (stream_pos < 0) {
    ref = a.in;
    stream_pos = a.in->loopAxisOf(ParallelType::kStream);
  }
  if (stream_pos < 0) {
    issue(IssueKind::kShapeMismatch, &a, "neither " + a.in->nameStr() + " nor its shard has a Stream axis");
    return;
  }
  const auto& dom = ref->loop();
  int dim = bufferDims(dom)[static_cast<size_t>(stream_pos)];
  int out_rank = 0;
  for (IterDomain* id : a.out->loop()) out_rank += id->isReduction() ? 0 : 1;
  if (dim >= in->rank()) dim = 0;
  int64_t chunks = evalScalar(dom[static_cast<size_t>(stream_pos)]->extent(), a);
  int64_t size = in->sizes[static_cast<size_t>(dim)];
  int64_t index = evalScalar(a.streamIndex, a);
  int64_t chunk = chunks > 0 ? (size + chunks - 1) / chunks : size;
  int64_t start = index * chunk;
  if (chunks <= 0 || index < 0 || start >= size) {
    issue(IssueKind::kViewOutOfBounds, &a,
          "takes chunk " + std::to_string(index) + " of " + std::to_string(chunks) + " of " + a.in->nameStr() +
              " along dimension " + std::to_string(dim) + " (" + std::to_string(size) +
              " elements: " + std::to_string(size == 0 || chunk == 0 ? 0 : (size + chunk - 1) / chunk) + " chunks)");
    bind(a.out, in->narrow(dim, 0, 0), &a);
    return;
  }
  Region r = in->narrow(dim, start, std::min(chunk, size - start));
  // A shard of an input without the Stream axis (pipeline B): the output's domain splits the axis.
  if (out_rank == in->rank() + 1) r = r.unsqueeze(dim);
  bind(a.out, r, &a);
}

ShapeResult Interpreter::inferShape(const Expr& e, const std::vector<Region>& ins) {
  ShapeResult res;
  auto outDomainShape = [&]() { return shapeOf(e.output(0), st_->loopDepth > 0); };
  switch (e.type()) {
    case OpType::kSet:
    case OpType::kUnary:
    case OpType::kBinary: {
      std::vector<int64_t> s = ins.empty() ? outDomainShape() : ins[0].sizes;
      for (size_t i = 1; i < ins.size(); ++i) s = broadcastShapes(s, ins[i].sizes);
      res.shape = s;
      res.flops = static_cast<double>(product(s));
      return res;
    }
    case OpType::kPermute: {
      const auto& in = ins.at(0).sizes;
      if (e.permutation.size() == in.size()) {
        for (int64_t p : e.permutation) res.shape.push_back(in[static_cast<size_t>(p)]);
      } else {
        res.shape = outDomainShape();
      }
      return res;
    }
    case OpType::kReduction: {
      const auto& in = ins.at(0).sizes;
      const auto& dom = e.output(0)->loop();
      res.flops = static_cast<double>(product(in));
      if (dom.size() == in.size()) {
        for (size_t i = 0; i < dom.size(); ++i)
          if (!dom[i]->isReduction()) res.shape.push_back(in[i]);
      } else {
        res.shape = outDomainShape();
      }
      return res;
    }
    case OpType::kMatmul:
    case OpType::kLinear: {
      std::vector<int64_t> a = ins.at(0).sizes;
      std::vector<int64_t> b = ins.size() > 1 ? ins[1].sizes : std::vector<int64_t>{};
      if (e.type() == OpType::kLinear && b.size() >= 2) std::swap(b[b.size() - 1], b[b.size() - 2]);
      if (a.empty() || b.empty()) {
        res.shape = outDomainShape();
        return res;
      }
      int64_t k = a.back();
      std::vector<int64_t> out;
      if (b.size() == 1) {
        out.assign(a.begin(), a.end() - 1);
      } else if (a.size() == 1) {
        out.assign(b.begin(), b.end() - 2);
        out.push_back(b.back());
      } else {
        std::vector<int64_t> ba(a.begin(), a.end() - 2), bb(b.begin(), b.end() - 2);
        out = broadcastShapes(ba, bb);
        out.push_back(a[a.size() - 2]);
        out.push_back(b.back());
      }
      res.shape = out;
      res.flops = 2.0 * static_cast<double>(product(out)) * static_cast<double>(k);
      return res;
    }
    case OpType::kBroadcast:
    case OpType::kSqueeze:
    case OpType::kReshape:
      res.shape = outDomainShape();
      return res;
  }
  res.shape = outDomainShape();
  return res;
}

void Interpreter::runHostOp(const HostOp& h) {
  const Expr* e = h.op;
  if (!e) throw Error(h.loc.str() + ": host op without an expression");
  std::vector<Region> ins;
  for (size_t i = 0; i < e->inputs().size(); ++i) {
    auto r = need(e->input(i), h, "operand");
    if (!r) return;
    ins.push_back(*r);
  }
  if (e->outputs().empty()) return;
  const TensorView* out = e->output(0);
  bool out_bound = st_->bound.count(out) > 0;
  std::string name = opTypeName(e->type());
  if (e->type() == OpType::kUnary) name = unaryOpName(e->unaryOp);
  if (e->type() == OpType::kBinary) name = std::string("binary ") + binaryOpSymbol(e->binaryOp);
  if (e->type() == OpType::kReduction) name = std::string("reduction ") + reductionOpName(e->reductionOp);

  // Views, as nvFuser's host evaluator makes them when the output is not preallocated.
  if (!out_bound && !ins.empty()) {
    const Region& in = ins[0];
    if (e->type() == OpType::kSet) {
      bind(out, in, &h);
      return;
    }
    if (e->type() == OpType::kPermute) {
      if (e->permutation.size() == static_cast<size_t>(in.rank())) {
        bind(out, in.permute(e->permutation), &h);
      } else {
        issue(IssueKind::kShapeMismatch, &h,
              "Set.Permute's permutation has " + std::to_string(e->permutation.size()) + " axes but " +
                  e->input(0)->nameStr() + " has " + std::to_string(in.rank()));
        bind(out, in, &h);
      }
      return;
    }
    if (e->type() == OpType::kBroadcast && !e->broadcastFlags.empty()) {
      Region r = in;
      int d = 0;
      for (bool f : e->broadcastFlags) {
        if (f) r = r.unsqueeze(std::min(d, r.rank()));
        ++d;
      }
      bind(out, r, &h);
      return;
    }
    if (e->type() == OpType::kSqueeze && !e->squeezeFlags.empty()) {
      Region r = in;
      for (size_t d = e->squeezeFlags.size(); d-- > 0;)
        if (e->squeezeFlags[d] && static_cast<int>(d) < r.rank() && r.sizes[d] == 1)
          r = r.select(static_cast<int>(d), 0);
      bind(out, r, &h);
      return;
    }
    if (e->type() == OpType::kReshape && in.isContiguous()) {
      std::vector<int64_t> shape = shapeOf(out, st_->loopDepth > 0);
      if (product(shape) == in.numel()) {
        Region r = Region::contiguous(in.buffer, shape);
        r.offset = in.minAddress();
        bind(out, r, &h);
        return;
      }
    }
  }

  ShapeResult shape = inferShape(*e, ins);
  bool copy = e->type() == OpType::kSet || e->type() == OpType::kPermute;
  Region w = outputRegion(out, shape.shape, &h);
  int32_t id = enqueue(copy ? EventKind::kCopy : EventKind::kCompute, &h, name);
  Event& x = ev(id);
  for (size_t i = 0; i < ins.size(); ++i) {
    x.reads.push_back({ins[i], e->input(i)});
    x.bytesRead += bytesOf(ins[i], e->input(i));
  }
  x.writes.push_back({w, out});
  x.bytesWritten = bytesOf(w, out);
  x.flops = copy ? 0 : shape.flops;
}

double Interpreter::kernelFlops(const PostOnStream& k) {
  auto it = p_.hostUnits().find(k.hostUnit);
  if (it == p_.hostUnits().end() || !it->second.fusion) return 0;
  double flops = 0;
  for (const Expr* e : it->second.fusion->exprs()) {
    try {
      std::vector<int64_t> out = bufferShape(*e->output(0), st_->env, false);
      double n = static_cast<double>(product(out));
      if ((e->type() == OpType::kMatmul || e->type() == OpType::kLinear) && !e->inputs().empty()) {
        std::vector<int64_t> a = bufferShape(*e->input(0), st_->env, false);
        flops += 2.0 * n * static_cast<double>(a.empty() ? 1 : a.back());
      } else if (e->type() == OpType::kReduction && !e->inputs().empty()) {
        flops += static_cast<double>(product(bufferShape(*e->input(0), st_->env, false)));
      } else {
        flops += n;
      }
    } catch (const Error&) {
      // A kernel whose sizes do not evaluate here contributes no flops estimate.
    }
  }
  return flops;
}

void Interpreter::runPostOnStream(const PostOnStream& k) {
  std::vector<std::pair<Region, const TensorView*>> ins;
  for (const TensorView* tv : k.inputs) {
    auto r = need(tv, k, "kernel input");
    if (!r) return;
    ins.emplace_back(*r, tv);
  }
  std::vector<std::pair<Region, const TensorView*>> outs;
  for (const TensorView* tv : k.outputs) {
    auto it = st_->bound.find(tv);
    if (it != st_->bound.end()) {
      outs.emplace_back(it->second, tv);
    } else {
      outs.emplace_back(outputRegion(tv, shapeOf(tv, st_->loopDepth > 0), &k), tv);
    }
  }
  int32_t id = enqueue(EventKind::kCompute, &k, "kernel HostUnit" + std::to_string(k.hostUnit));
  Event& x = ev(id);
  for (auto& [r, tv] : ins) {
    x.reads.push_back({r, tv});
    x.bytesRead += bytesOf(r, tv);
  }
  for (auto& [r, tv] : outs) {
    x.writes.push_back({r, tv});
    x.bytesWritten += bytesOf(r, tv);
  }
  x.flops = kernelFlops(k);
}

void Interpreter::runCommunication(const Communication& c) {
  int64_t rank = st_->rank;
  if (std::find(c.team.begin(), c.team.end(), rank) == c.team.end()) return;  // not posted here
  int64_t root = -1;
  if (c.root) root = evalScalar(*c.root, c);
  CommunicationType t = c.type;
  bool is_root = root == rank;
  bool reads = false, writes = false;
  switch (t) {
    case CommunicationType::kAllgather:
    case CommunicationType::kAllreduce:
    case CommunicationType::kReduceScatter:
    case CommunicationType::kAllToAll:
      reads = writes = true;
      break;
    case CommunicationType::kBroadcast:
    case CommunicationType::kScatter:
      reads = is_root;
      writes = true;
      break;
    case CommunicationType::kReduce:
    case CommunicationType::kGather:
      reads = true;
      writes = is_root;
      break;
    case CommunicationType::kSendRecv:
      reads = is_root;
      writes = !is_root;
      break;
  }
  // A root's output may be absent (e.g. a Broadcast whose root keeps its input).
  if (t == CommunicationType::kBroadcast && is_root && c.output && !st_->bound.count(c.output) &&
      !st_->deallocated.count(c.output))
    writes = false;
  std::optional<Region> in, out;
  if (reads && !(in = need(c.input, c, "communication input"))) return;
  if (writes && !(out = need(c.output, c, "communication output"))) return;

  std::string key = communicatorKey(c.backend, c.team);
  teams_[key] = c.team;
  int32_t id = enqueue(EventKind::kCollective, &c, communicationTypeName(t));
  Event& x = ev(id);
  x.comm = &c;
  x.root = root;
  x.communicator = key;
  const TensorView* dt = c.input ? c.input : c.output;
  if (dt) x.dtype = dt->dtype();
  if (in) {
    x.reads.push_back({*in, c.input});
    x.bytesRead = bytesOf(*in, c.input);
    x.inputCount = in->numel();
  }
  if (out) {
    x.writes.push_back({*out, c.output});
    x.bytesWritten = bytesOf(*out, c.output);
    x.outputCount = out->numel();
  }
  x.messageBytes = std::max(x.bytesRead, x.bytesWritten);
  if (isReducing(t)) x.flops = static_cast<double>(x.inputCount);
  if (in && !in->isContiguous())
    issue(IssueKind::kNonContiguousComm, &c,
          "input " + c.input->nameStr() + " is a non-contiguous view (" + in->str() + ")", id);
  if (out && !out->isContiguous())
    issue(IssueKind::kNonContiguousComm, &c,
          "output " + c.output->nameStr() + " is a non-contiguous view (" + out->str() + ")", id);
  addCommOrder(key, id);
  collectives_[key][rank].push_back(id);
  st_->posted[c.id] = id;
}

void Interpreter::runP2P(const P2PCommunication& c) {
  auto r = need(c.buffer, c, c.type == P2PType::kSend ? "send buffer" : "receive buffer");
  if (!r) return;
  if (!r->isContiguous())
    issue(IssueKind::kNonContiguousComm, &c,
          "buffer " + c.buffer->nameStr() + " is a non-contiguous view (" + r->str() + ")");
  P2POp op;
  op.type = c.type;
  op.peer = evalScalar(c.peer, c);
  op.count = r->numel();
  op.dtype = c.buffer->dtype();
  op.bytes = bytesOf(*r, c.buffer);
  op.stmt = &c;
  Access a{*r, c.buffer};
  if (st_->coalescing) {
    st_->pendingP2P.push_back(op);
    (c.type == P2PType::kSend ? st_->pendingReads : st_->pendingWrites).push_back(a);
    st_->pendingIds.push_back(c.id);
    return;
  }
  int32_t id = enqueue(EventKind::kP2P, &c, c.type == P2PType::kSend ? "send" : "recv");
  Event& x = ev(id);
  x.p2p.push_back(op);
  (c.type == P2PType::kSend ? x.reads : x.writes).push_back(a);
  (c.type == P2PType::kSend ? x.bytesRead : x.bytesWritten) = op.bytes;
  x.messageBytes = op.bytes;
  x.dtype = op.dtype;
  x.communicator = worldKey(c.backend);
  addCommOrder(x.communicator, id);
  p2pEvents_.push_back(id);
  st_->posted[c.id] = id;
}

void Interpreter::runEndCoalescing(const EndCoalescing& c) {
  st_->coalescing = false;
  if (st_->pendingP2P.empty()) {
    st_->posted[c.id] = -2;
    return;
  }
  int32_t id = enqueue(EventKind::kP2P, &c, "P2P group");
  Event& x = ev(id);
  x.p2p = st_->pendingP2P;
  x.reads = st_->pendingReads;
  x.writes = st_->pendingWrites;
  for (const auto& op : x.p2p) {
    (op.type == P2PType::kSend ? x.bytesRead : x.bytesWritten) += op.bytes;
    x.messageBytes = std::max(x.messageBytes, op.bytes);
  }
  x.dtype = x.p2p.front().dtype;
  x.communicator = worldKey(CommBackend::kNccl);
  addCommOrder(x.communicator, id);
  p2pEvents_.push_back(id);
  st_->posted[c.id] = id;
  for (int pid : st_->pendingIds) st_->posted[pid] = id;
  st_->pendingP2P.clear();
}

void Interpreter::runWait(const Wait& w) {
  auto it = st_->posted.find(w.id);
  if (it == st_->posted.end()) {
    issue(IssueKind::kWaitWithoutPost, &w,
          "waits for communication " + std::to_string(w.id) + ", which this rank did not post (or already waited for)");
    return;
  }
  int32_t c = it->second;
  st_->posted.erase(it);
  if (c < 0) return;
  int32_t m = enqueue(EventKind::kWait, &w, "Wait " + ev(c).op + " " + std::to_string(w.id));
  ev(m).target = c;
  g_.edges.push_back({c, m, EdgeKind::kWait});
}

// ---- across ranks ----

void Interpreter::matchCommunications() {
  auto issueAt = [&](IssueKind kind, int32_t e, int32_t other, std::string msg) {
    Issue i;
    i.kind = kind;
    const Event& x = g_.events[static_cast<size_t>(e)];
    i.rank = x.rank;
    i.stmt = x.stmt;
    i.stream = x.stream;
    i.loops = x.loops;
    i.event = e;
    if (other >= 0) {
      const Event& y = g_.events[static_cast<size_t>(other)];
      i.otherStmt = y.stmt;
      i.otherRank = y.rank;
      i.otherLoops = y.loops;
      i.otherEvent = other;
    }
    i.message = std::move(msg);
    g_.issues.push_back(std::move(i));
  };
  std::set<int64_t> ran(g_.ranks.begin(), g_.ranks.end());

  for (auto& [key, per_rank] : collectives_) {
    std::vector<int64_t> team = teams_[key];
    std::sort(team.begin(), team.end());
    std::vector<int64_t> members;
    for (int64_t r : team)
      if (ran.count(r)) members.push_back(r);
    size_t most = 0;
    for (int64_t r : members) most = std::max(most, per_rank[r].size());
    for (size_t k = 0; k < most; ++k) {
      std::vector<int32_t> evs;
      int64_t missing = -1;
      for (int64_t r : members) {
        if (k < per_rank[r].size()) {
          evs.push_back(per_rank[r][k]);
        } else if (missing < 0) {
          missing = r;
        }
      }
      if (missing >= 0) {
        for (int32_t e : evs)
          issueAt(IssueKind::kCollectiveUnmatched, e, -1,
                  "is collective #" + std::to_string(k + 1) + " of rank " + std::to_string(ev(e).rank) + " on " + key +
                      ", but rank " + std::to_string(missing) + " issues only " +
                      std::to_string(per_rank[missing].size()) + " collective(s) there: rank " +
                      std::to_string(ev(e).rank) + " waits for it forever");
        continue;
      }
      // Same type, root, reduction op and dtype on every member; sizes consistent.
      const Event& a = ev(evs.front());
      int64_t n = static_cast<int64_t>(team.size());  // the team, also when only some ranks run
      for (int32_t eid : evs) {
        const Event& b = ev(eid);
        std::string diff;
        const Communication& ca = *a.comm;
        const Communication& cb = *b.comm;
        if (ca.type != cb.type) {
          diff = std::string("type ") + communicationTypeName(ca.type) + " vs " + communicationTypeName(cb.type);
        } else if (a.root != b.root) {
          diff = "root " + std::to_string(a.root) + " vs " + std::to_string(b.root);
        } else if (isReducing(ca.type) &&
                   ca.redOp.value_or(ReductionOpType::kAdd) != cb.redOp.value_or(ReductionOpType::kAdd)) {
          diff = std::string("reduction op ") + reductionOpName(ca.redOp.value_or(ReductionOpType::kAdd)) + " vs " +
                 reductionOpName(cb.redOp.value_or(ReductionOpType::kAdd));
        } else if (a.dtype != b.dtype) {
          diff =
              std::string("dtype ") + std::string(dataTypeName(a.dtype)) + " vs " + std::string(dataTypeName(b.dtype));
        } else {
          bool sym = ca.type == CommunicationType::kAllgather || ca.type == CommunicationType::kAllreduce ||
                     ca.type == CommunicationType::kReduceScatter || ca.type == CommunicationType::kAllToAll;
          int64_t ia = a.inputCount ? a.inputCount : a.outputCount;
          int64_t ib = b.inputCount ? b.inputCount : b.outputCount;
          if (sym && (a.inputCount != b.inputCount || a.outputCount != b.outputCount)) {
            diff = "sizes: rank " + std::to_string(a.rank) + " sends " + std::to_string(a.inputCount) + " / receives " +
                   std::to_string(a.outputCount) + " elements, rank " + std::to_string(b.rank) + " sends " +
                   std::to_string(b.inputCount) + " / receives " + std::to_string(b.outputCount);
          } else if (!sym && ca.type != CommunicationType::kScatter && ca.type != CommunicationType::kGather &&
                     ia != ib) {
            diff = "sizes: " + std::to_string(ia) + " elements on rank " + std::to_string(a.rank) + " vs " +
                   std::to_string(ib) + " on rank " + std::to_string(b.rank);
          }
        }
        if (!diff.empty()) {
          issueAt(IssueKind::kCollectiveMismatch, evs.front(), eid,
                  "collective #" + std::to_string(k + 1) + " on " + key + " differs between ranks " +
                      std::to_string(a.rank) + " and " + std::to_string(b.rank) + ": " + diff);
          break;
        }
      }
      // Per-rank size rules of each type.
      for (int32_t eid : evs) {
        const Event& b = ev(eid);
        std::string bad;
        switch (b.comm->type) {
          case CommunicationType::kAllgather:
            if (b.outputCount != n * b.inputCount)
              bad = "an Allgather over " + std::to_string(n) + " ranks needs an output of " + std::to_string(n) +
                    " x " + std::to_string(b.inputCount) + " elements, got " + std::to_string(b.outputCount);
            break;
          case CommunicationType::kReduceScatter:
            if (b.inputCount != n * b.outputCount)
              bad = "a ReduceScatter over " + std::to_string(n) + " ranks needs an input of " + std::to_string(n) +
                    " x " + std::to_string(b.outputCount) + " elements, got " + std::to_string(b.inputCount);
            break;
          case CommunicationType::kAllreduce:
            if (b.outputCount != b.inputCount)
              bad = "an Allreduce needs input and output of the same size, got " + std::to_string(b.inputCount) +
                    " and " + std::to_string(b.outputCount);
            break;
          default:
            break;
        }
        if (!bad.empty()) issueAt(IssueKind::kCollectiveMismatch, eid, -1, bad);
      }
      CollectiveGroup grp;
      grp.id = static_cast<int32_t>(g_.groups.size());
      grp.communicator = key;
      grp.sequence = static_cast<int64_t>(k);
      grp.members = evs;
      for (int32_t e : evs) ev(e).group = grp.id;
      g_.groups.push_back(std::move(grp));
    }
  }

  // P2P: the k-th send from s to d pairs with the k-th receive on d from s.
  struct Side {
    int32_t event;
    size_t op;
  };
  std::map<std::pair<int64_t, int64_t>, std::vector<Side>> sends, recvs;
  for (int32_t e : p2pEvents_) {
    const Event& x = ev(e);
    for (size_t i = 0; i < x.p2p.size(); ++i) {
      const P2POp& op = x.p2p[i];
      if (op.type == P2PType::kSend) {
        sends[{x.rank, op.peer}].push_back({e, i});
      } else {
        recvs[{op.peer, x.rank}].push_back({e, i});
      }
    }
  }
  auto describeOp = [&](const Side& s) {
    const Event& x = ev(s.event);
    const P2POp& op = x.p2p[s.op];
    return std::string(op.type == P2PType::kSend ? "the send to " : "the receive from ") + "rank " +
           std::to_string(op.peer) + " (" + std::to_string(op.count) + " x " + std::string(dataTypeName(op.dtype)) +
           ")";
  };
  std::set<std::pair<int64_t, int64_t>> keys;
  for (auto& [k, v] : sends) keys.insert(k);
  for (auto& [k, v] : recvs) keys.insert(k);
  for (const auto& key : keys) {
    auto& s = sends[key];
    auto& r = recvs[key];
    size_t n = std::max(s.size(), r.size());
    for (size_t k = 0; k < n; ++k) {
      if (k >= s.size() || k >= r.size()) {
        const Side& lone = k < s.size() ? s[k] : r[k];
        bool is_send = k < s.size();
        int64_t peer = is_send ? key.second : key.first;
        std::string why = !ran.count(peer)
                              ? "rank " + std::to_string(peer) + " does not exist (or does not run)"
                              : "rank " + std::to_string(peer) + " posts only " +
                                    std::to_string(is_send ? r.size() : s.size()) +
                                    (is_send ? " receive(s) from " : " send(s) to ") + "rank " +
                                    std::to_string(ev(lone.event).rank) + "; this is #" + std::to_string(k + 1);
        issueAt(IssueKind::kP2PUnpaired, lone.event, -1,
                describeOp(lone) + " has no matching " + (is_send ? "receive" : "send") + ": " + why);
        continue;
      }
      const P2POp& so = ev(s[k].event).p2p[s[k].op];
      const P2POp& ro = ev(r[k].event).p2p[r[k].op];
      if (so.count != ro.count || so.dtype != ro.dtype)
        issueAt(IssueKind::kCollectiveMismatch, s[k].event, r[k].event,
                "rank " + std::to_string(key.first) + " sends " + std::to_string(so.count) + " x " +
                    std::string(dataTypeName(so.dtype)) + " to rank " + std::to_string(key.second) +
                    ", which receives " + std::to_string(ro.count) + " x " + std::string(dataTypeName(ro.dtype)));
      if (s[k].event == r[k].event) continue;
      CollectiveGroup grp;
      grp.id = static_cast<int32_t>(g_.groups.size());
      grp.p2p = true;
      grp.communicator = ev(s[k].event).communicator;
      grp.members = {s[k].event, r[k].event};
      ev(s[k].event).pairGroups.push_back(grp.id);
      ev(r[k].event).pairGroups.push_back(grp.id);
      g_.groups.push_back(std::move(grp));
    }
  }
}

void collectSymbols(const Scalar& s, std::set<std::string>& out) {
  for (const auto& n : s.freeSymbols()) out.insert(n);
}

}  // namespace

std::vector<int64_t> bufferShape(const TensorView& tv, const Bindings& b, bool stream_chunk) {
  std::vector<int64_t> shape;
  for (const IterDomain* id : tv.loop()) {
    if (id->isReduction()) continue;
    if (id->isDeviceParallel() || id->isBroadcast() || (stream_chunk && id->isStream())) {
      shape.push_back(1);
      continue;
    }
    auto v = id->extent().tryEvaluate(b);
    if (!v) {
      std::string names;
      for (const auto& n : id->extent().freeSymbols())
        if (!b.count(n)) names += (names.empty() ? "" : ", ") + n;
      throw Error("the size of " + tv.nameStr() + " (axis " + id->str() + ") depends on unbound symbol(s) " + names +
                  " (bind them with --bind NAME=VALUE)");
    }
    if (*v < 0)
      throw Error("the size of " + tv.nameStr() + " (axis " + id->str() + ") is negative: " + std::to_string(*v));
    shape.push_back(*v);
  }
  return shape;
}

int64_t ranksFromProgram(const HostProgram& p) {
  int64_t most = 0;
  for (const TensorView* tv : p.tensors().tensors())
    if (tv->hasDeviceMesh())
      for (int64_t d : tv->deviceMesh()->devices()) most = std::max(most, d + 1);
  forEachStmt(p.body(), [&](const Stmt& s, int) {
    if (s.is<Communication>())
      for (int64_t d : s.as<Communication>()->team) most = std::max(most, d + 1);
  });
  return std::max<int64_t>(most, 1);
}

std::set<std::string> unboundSymbols(const HostProgram& p, const Bindings& bindings) {
  std::set<std::string> used;
  std::set<std::string> loop_indices;
  auto addTensor = [&](const TensorView* tv) {
    for (const IterDomain* id : tv->loop()) collectSymbols(id->extent(), used);
  };
  for (const TensorView* tv : p.tensors().tensors()) addTensor(tv);
  auto streamRef = [&](const StreamRef& r) {
    if (r.kind == StreamRef::Kind::kIndexed) collectSymbols(r.index, used);
  };
  forEachStmt(p.body(), [&](const Stmt& s, int) {
    switch (s.kind()) {
      case StmtKind::kForLoop: {
        const auto* f = s.as<ForLoop>();
        loop_indices.insert(f->index);
        collectSymbols(f->begin(), used);
        collectSymbols(f->end(), used);
        break;
      }
      case StmtKind::kAliasSelect:
        collectSymbols(s.as<AliasSelect>()->index, used);
        break;
      case StmtKind::kShardByStream:
        collectSymbols(s.as<ShardByStream>()->streamIndex, used);
        break;
      case StmtKind::kSetCurrentStream:
        streamRef(s.as<SetCurrentStream>()->stream);
        break;
      case StmtKind::kSynchronize:
        streamRef(s.as<Synchronize>()->stream);
        break;
      case StmtKind::kIfThenElse:
        collectSymbols(s.as<IfThenElse>()->predicate, used);
        break;
      case StmtKind::kCommunication:
        if (s.as<Communication>()->root) collectSymbols(*s.as<Communication>()->root, used);
        break;
      case StmtKind::kP2PCommunication:
        collectSymbols(s.as<P2PCommunication>()->peer, used);
        break;
      default:
        break;
    }
  });
  std::set<std::string> out;
  for (const auto& n : used) {
    if (loop_indices.count(n) || bindings.count(n)) continue;
    if (n == kNumberOfStreams || n == kRank || n == kDeviceIdxX || n == kDeviceIdxY) continue;
    out.insert(n);
  }
  return out;
}

EventGraph buildEventGraph(const HostProgram& p, const SemanticsOptions& o) {
  EventGraph g;
  g.numRanks = o.numRanks > 0 ? o.numRanks : ranksFromProgram(p);
  g.numberOfStreams = o.numberOfStreams;
  if (auto it = o.bindings.find(kNumberOfStreams); it != o.bindings.end()) g.numberOfStreams = it->second;
  if (g.numberOfStreams <= 0) throw Error("numberOfStreams must be positive, got " + std::to_string(g.numberOfStreams));
  if (o.ranks.empty()) {
    for (int64_t r = 0; r < g.numRanks; ++r) g.ranks.push_back(r);
  } else {
    g.ranks = o.ranks;
    for (int64_t r : g.ranks)
      if (r < 0 || r >= g.numRanks)
        throw Error("rank " + std::to_string(r) + " is outside 0.." + std::to_string(g.numRanks - 1));
  }
  g.entryEvent.assign(g.ranks.size(), -1);
  g.exitEvent.assign(g.ranks.size(), -1);
  Interpreter interp(p, o, g);
  for (size_t i = 0; i < g.ranks.size(); ++i) interp.runRank(g.ranks[i], i);
  interp.matchCommunications();
  return g;
}

}  // namespace braid::sem
