// The interpreter's state and its parts (private to ir/semantics): one host thread per rank that
// records an EventGraph. statement_walk.cpp runs statements and owns streams and buffers,
// communication_walk.cpp posts and waits for communications, communication_matching.cpp matches
// them across ranks. The rules they apply (shapes, views, communication roles) live in
// buffer_rules.h, view_rules.h, shape_inference.h and communication_rules.h, shared with exec.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/semantics/event_graph.h"
#include "ir/semantics/interpreter.h"
#include "ir/semantics/view_rules.h"

namespace braid::sem::detail {

// Thrown inside a rank's host thread after an issue that leaves nothing sensible to run (a view
// out of bounds, an unbound tensor, ...): the rank stops there, as the real runtime would.
struct RankHalted {};

struct RankState {
  int64_t rank = 0;
  size_t pos = 0;  // index into graph.ranks
  Bindings env;
  int32_t defaultStream = 0;
  int32_t current = 0;
  std::map<std::string, int32_t> namedVars;  // captured by GetCurrentStream (first capture wins)
  std::map<std::string, int32_t> namedPool;  // named but never captured: a pool stream
  std::map<int64_t, int32_t> indexed;
  std::map<std::string, int32_t> communicators;  // communicator name -> its stream on this rank
  std::unordered_map<const TensorView*, Region> bound;
  struct Dealloc {
    const Stmt* stmt;
    std::vector<LoopIndex> loops;
    int32_t stream = -1;  // current when the Deallocate ran
  };
  std::unordered_map<const TensorView*, Dealloc> deallocated;
  std::map<int, int32_t> posted;  // communication / EndCoalescing id -> event (-2: nothing posted)
  // An open StartCoalescing group.
  const Stmt* coalesceStart = nullptr;
  std::vector<P2POp> pendingP2P;
  std::vector<Access> pendingReads, pendingWrites;
  std::vector<int> pendingIds;
  int64_t issue = 0;
  std::vector<LoopIndex> loops;
  std::vector<const ForLoop*> loopStmts;  // enclosing loops, outermost first
  // Notes already recorded (one per statement).
  std::set<const Stmt*> noted;
  // IPC handles already exchanged (ShareMemHandles caches them by communication, peer and buffer).
  std::set<std::tuple<int, int64_t, int32_t, int64_t, int64_t>> ipcHandles;
};

// One side of a ShareMemHandles exchange: `rank` publishes the handle of its buffer for a send to
// (or a receive from) `peer` and takes the peer's.
struct HandleExchange {
  int64_t rank = 0;
  int64_t peer = 0;
  P2PType type = P2PType::kSend;
  const Stmt* stmt = nullptr;
  std::vector<LoopIndex> loops;
};

class Interpreter {
 public:
  Interpreter(const HostProgram& p, const SemanticsOptions& o, EventGraph& g, int64_t eventLimit, bool progress)
      : p_(p), o_(o), g_(g), eventLimit_(eventLimit), progress_(progress) {}

  void runRank(int64_t rank, size_t pos);
  void matchCommunications();
  // ShareMemHandles: pairs the handle exchanges and forms the barriers (communication_matching.cpp).
  void matchRendezvous();

 private:
  // ---- streams and events (statement_walk.cpp) ----
  int32_t newStream(const std::string& name, StreamKind kind);
  int32_t enqueueOn(int32_t stream, EventKind kind, const Stmt* stmt, std::string op);
  int32_t enqueue(EventKind kind, const Stmt* stmt, std::string op) {
    return enqueueOn(st_->current, kind, stmt, std::move(op));
  }
  Event& ev(int32_t id) { return g_.events[static_cast<size_t>(id)]; }
  int32_t lastOn(int32_t stream) const {
    const auto& evs = g_.streams[static_cast<size_t>(stream)].events;
    return evs.empty() ? -1 : evs.back();
  }
  int32_t resolveStream(const StreamRef& ref, const Stmt& s);
  int32_t communicatorStream(const std::string& communicator);

  // ---- issues ----
  void issue(FindingKind kind, const Stmt* stmt, std::string message, int32_t event = -1);
  // Records the issue and stops this rank's host thread.
  [[noreturn]] void halt(FindingKind kind, const Stmt* stmt, std::string message);

  // `message` located at `s` (with the rank and loop indices), for the CLI to quote.
  ParseError locatedError(const Stmt& s, std::string message) const;

  // ---- scalars ----
  int64_t evalScalar(const Scalar& s, const Stmt& stmt);
  // Binds the program's index definitions that the current scalars determine (and unbinds the
  // others), after anything they may depend on changed.
  void refreshDefinitions();

  // ---- notes: what the semantics assumed (once per statement) ----
  void note(FindingKind kind, const Stmt* stmt, std::string message);
  void noteDtypes();

  // ---- buffers and bindings (statement_walk.cpp) ----
  int32_t newBuffer(const TensorView* tv, std::vector<int64_t> shape, const Stmt* stmt);
  void retain(int32_t buffer);
  void release(int32_t buffer, const Stmt* stmt);
  void freeBuffer(int32_t buffer, const Stmt* stmt);
  void bind(const TensorView* tv, const Region& r, const Stmt* stmt);
  void unbind(const TensorView* tv, const Stmt* stmt);
  // The region `tv` names; halts the rank when it is not bound.
  Region need(const TensorView* tv, const Stmt& s, const char* role);
  // Binds an op's output: the preallocated / aliased region, or a fresh buffer of `shape`.
  Region outputRegion(const TensorView* tv, const std::vector<int64_t>& shape, const Stmt* stmt);
  std::vector<int64_t> allocationShape(const TensorView* tv);
  int64_t bytesOf(const Region& r, const TensorView* tv) const;

  // ---- statements ----
  void runScope(const Scope& scope);
  void runStmt(const Stmt& s);
  void runAllocate(const Allocate& a);
  void runDeallocate(const Deallocate& d);
  void runAliasSelect(const AliasSelect& a);
  void runShardByStream(const ShardByStream& a);
  void runHostOp(const HostOp& h);
  void runPostOnStream(const PostOnStream& k);
  void runLaunchKernel(const LaunchKernel& k);
  // A kernel: reads its inputs and writes its outputs whole on the current stream.
  int32_t runKernel(const Stmt& s, const std::vector<TensorView*>& inputs, const std::vector<TensorView*>& outputs,
                    bool outputsMustBeBound, std::string op);
  void runSymmetricContiguousView(const SymmetricContiguousView& v);
  void runSelect(const Select& s);
  // Binds `out` to the view `rule` makes of `in` (halts the rank on a bad view).
  template <class S>
  void bindView(const S& s, const TensorView* in, const TensorView* out,
                ViewRule (*rule)(const S&, const std::vector<int64_t>&, const Bindings&));
  void runSlice(const Slice& s);
  // A statement the mesh rule leaves out on this rank (mesh_rule.h).
  void skip(const Stmt& s);
  void runSynchronize(const Synchronize& s);
  void runFor(const ForLoop& f);
  void runExit();
  // communication_walk.cpp
  void runCommunication(const Communication& c);
  void executorAllocated(const TensorView* tv, const Stmt& s);
  void runP2P(const P2PCommunication& c);
  void runStartCoalescing(const StartCoalescing& s);
  void runEndCoalescing(const EndCoalescing& c);
  void runWait(const Wait& w);
  void runCollectivePermute(const CollectivePermute& c);
  void runShareMemHandles(const ShareMemHandles& s);
  // Enqueues a communication on its communicator's stream, ordered after the current stream's
  // work so far.
  int32_t post(const std::string& communicator, EventKind kind, const Stmt* stmt, std::string op);

  // The program rank `rank` runs: its own (per-rank programs) or the shared one.
  const HostProgram& programOf(int64_t rank) const;

  const HostProgram& p_;
  const SemanticsOptions& o_;
  EventGraph& g_;
  int64_t eventLimit_;
  bool progress_;
  RankState* st_ = nullptr;
  const HostProgram* prog_ = nullptr;  // the program the current rank runs
  // Per program: its index definitions written in the symbols they finally depend on.
  std::map<const HostProgram*, std::vector<std::pair<std::string, Scalar>>> definitions_;
  std::vector<HandleExchange> exchanges_;
  // rank -> its ShareMemHandles barriers in issue order
  std::map<int64_t, std::vector<HostRendezvous::Arrival>> barriers_;
  std::vector<int32_t> refs_;
  // communicator -> rank -> its collectives in issue order
  std::map<std::string, std::map<int64_t, std::vector<int32_t>>> collectives_;
  std::map<std::string, std::vector<int64_t>> teams_;
  // communicatorName of each Communication statement, built once: an 8192-rank team's name is
  // 40 KB, and a loop posts the same statement many times.
  std::unordered_map<const Communication*, std::string> communicatorNames_;
  std::vector<int32_t> p2pEvents_;
};

}  // namespace braid::sem::detail
