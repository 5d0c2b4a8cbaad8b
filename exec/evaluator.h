// Evaluator: runs a host program on one rank over at::Tensor buffers, with a Communicator for its
// collectives (docs/EXEC.md). It follows DESIGN.md and HOSTIR.md (nvFuser's HostIrEvaluator):
// - shapes, buffer domains, views (AliasSelect, ShardByStream, Set.Permute, reshapes) and the
//   per-chunk allocation rule come from ir/semantics, the one definition verify and sim use too;
//   this file only turns them into at::Tensor operations;
// - inputs (and aliased outputs) are bound by name; symbolic extents are inferred from them;
// - legacy ALLOCATE allocates only when the tensor is unbound, the newer form always does;
//   fresh buffers are poisoned with NaN (unless zero_init) so a region nobody wrote shows up;
// - HirAliasSelect / ShardByStream bind views; Set / Set.Permute bind a view of their input when
//   the output is unbound and copy into it otherwise; other ops write into a bound output;
// - PostOnStream runs its HostUnit's fusion op by op;
// - Communications are posted asynchronously; `Wait` waits; an op that touches a buffer region
//   of a pending transfer waits for it first (so CPU results never depend on stream timing);
// - streams: the program's stream operands resolve to slots as in ir/semantics (slot 0 is the
//   default stream) and the Device makes them real (exec/device.h). On CPU they have no effect:
//   every op runs on the host thread in program order (one valid schedule of the program's
//   stream semantics). On CUDA every op is enqueued on the current stream and only the program's
//   Synchronize / Wait order streams;
// - with a HostProfile set (setHostProfile), every statement's host time goes to its kind
//   (exec/host_profile.h; `braid run --host-profile`).
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <ATen/ATen.h>

#include "exec/communicator.h"
#include "exec/device.h"
#include "exec/host_profile.h"
#include "ir/host_ir.h"

namespace braid::exec {

struct EvalOptions {
  int64_t numberOfStreams = 4;
  Bindings bindings;        // user-bound symbols (i0=...)
  bool poison = true;       // fill fresh, non-zero-init buffers with NaN (ints: a sentinel)
  // Called before every statement with the running count of executed statements (fault
  // injection, progress). May throw.
  std::function<void(const Stmt&, int64_t)> onStatement;
  // Called whenever a tensor is bound to a buffer or a view (statement null for inputs and
  // aliases): the differential test compares these with the semantics' regions.
  std::function<void(const Stmt*, const TensorView*, const at::Tensor&)> onBind;
  // Where buffers live and streams run; null: the CPU (no streams). Not owned.
  Device* device = nullptr;
};

// One statement whose device work was timed (Device::setTiming): `token` indexes
// Device::spans() after the run; `lane` is the communicator's team for communications ("" else).
struct TimedStatement {
  const Stmt* stmt = nullptr;
  int32_t token = -1;
  std::string iteration;  // "StreamIdx=2, i=0"
  std::string lane;
};

class Evaluator {
 public:
  Evaluator(const HostProgram& program, Communicator& comm, EvalOptions options = {});

  // Runs the program once. `inputs` follow program.inputs() (this rank's local buffers).
  // Returns this rank's outputs, in program.outputs() order. Throws braid::Error with the
  // statement's location on any failure.
  std::vector<at::Tensor> run(const std::vector<at::Tensor>& inputs);

  // The symbols bound at the end of the last run (inputs' inferred extents included).
  const Bindings& scalars() const { return scalars_; }
  // "file:line: Wait" for the statement being executed (for watchdogs), "" when idle.
  std::string currentStatement() const;
  // The timed statements of the last run, in execution order (empty unless the device times).
  const std::vector<TimedStatement>& timed() const { return timed_; }
  // Statements executed by the last run (the host instructions, for per-instruction overhead).
  int64_t executedStatements() const { return executed_; }
  // Host time of the last run up to its final wait (the time to issue its work), microseconds.
  double lastIssueUs() const { return issueUs_; }
  // Adds every later run's host time, per statement kind, to `profile` (exec/host_profile.h);
  // null (the default) stops. Not owned. Off, it costs one branch per statement.
  void setHostProfile(HostProfile* profile) { profile_ = profile; }

 private:
  struct Pending {
    int id;
    WorkPtr work;
    std::vector<std::pair<uintptr_t, uintptr_t>> regions;
    bool collective;
  };

  void runScope(const Scope& scope, int loop_depth);
  void exec(const Stmt& s, int loop_depth);
  void execProfiled(const Stmt& s, int loop_depth);
  void execStmt(const Stmt& s, int loop_depth);
  void bindInputs(const std::vector<at::Tensor>& inputs);
  at::Tensor& lookup(const TensorView* tv, const char* role);
  bool bound(const TensorView* tv) const;
  at::Tensor allocate(const TensorView& tv, bool zero);
  void bind(const Stmt* s, const TensorView* tv, const at::Tensor& t);
  void checkSizes(const Communication& c, const at::Tensor& in, const at::Tensor& out, bool isRoot);
  void postCommunication(const Communication& c);
  void postP2P(const P2PCommunication& c);
  void waitFor(int id);
  void waitOverlapping(const std::vector<at::Tensor>& ts, bool collectives_only);
  void record(int id, WorkPtr w, const std::vector<at::Tensor>& ts, bool collective);
  int64_t eval(const Scalar& s) const;
  int32_t resolveStream(const StreamRef& ref);
  void recordUses(const std::vector<at::Tensor>& ts);
  std::string iterationStr() const;
  void timeCommunication(const Stmt& s);

  const HostProgram& program_;
  Communicator& comm_;
  EvalOptions options_;
  Bindings scalars_;
  std::map<int, at::Tensor> env_;  // by tensor name (T<n>): the IR is not SSA, binds overwrite
  std::vector<const ForLoop*> loops_;  // enclosing loops, outermost first
  std::map<int, WorkPtr> works_;
  std::vector<Pending> pending_;
  int64_t executed_ = 0;
  std::atomic<const Stmt*> current_{nullptr};
  std::unique_ptr<Device> cpu_;  // used when options_.device is null
  Device* device_ = nullptr;
  // Stream slots, as ir/semantics resolves them: captured variables, uncaptured names, indices.
  std::map<std::string, int32_t> streamVars_, namedStreams_;
  std::map<int64_t, int32_t> indexedStreams_;
  int32_t nextSlot_ = 1;
  bool coalescing_ = false;
  double issueUs_ = 0;  // between StartCoalescing and EndCoalescing (P2P timed as the group)
  std::vector<TimedStatement> timed_;
  HostProfile* profile_ = nullptr;
  int64_t nestedNs_ = 0;  // profiled time of the statements nested in the one being profiled
};

}  // namespace braid::exec
