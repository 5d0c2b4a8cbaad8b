// Host IR: the host program that braid lowers to and that verify, sim and exec all read.
// One statement class per node of ../shared/formats/HOSTIR.md (docs/HOSTIR.md in this repo).
//
// A HostProgram owns a Fusion holding every tensor it names (and the Exprs of its host-evaluated
// ops), a body (a Scope: a list of statements, loops and branches nest Scopes), and HostUnits
// (the fusions that PostOnStream runs as kernels). Statements refer to tensors by pointer into
// that Fusion; each statement remembers where it was read from (for diagnostics).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "ir/comm_backend.h"
#include "ir/error.h"
#include "ir/fusion.h"

namespace braid {

enum class StmtKind {
  kAllocate,
  kDeallocate,
  kAliasSelect,       // HirAliasSelect
  kShardByStream,
  kGetCurrentStream,
  kSetCurrentStream,
  kSynchronize,
  kForLoop,
  kIfThenElse,
  kHostOp,            // a fusion op evaluated on the host (set, add, sum, matmul, linear, ...)
  kPostOnStream,      // runs a HostUnit as one kernel
  kCommunication,
  kP2PCommunication,
  kStartCoalescing,
  kEndCoalescing,
  kWait,
  kLaunchKernel,            // a compiled kernel (FusionExecutorCache's host programs)
  kShareMemHandles,         // IPC handle exchange for the CUDA p2p backend
  kCollectivePermute,       // coalesced send + recv with loop-dependent peers
  kSymmetricContiguousView,
  kSelect,                  // nvFuser's `select(` evaluated on the host: a view
  kSlice,                   // nvFuser's `slice(` evaluated on the host: a view
  kScalarAssign,            // `i45 = i12 + 3;`: a scalar the host computes
};

const char* stmtKindName(StmtKind k);

// A stream operand: either a stream *variable* named by an integer or an address
// (`Stream 0`, `Stream 0x55d0c0`: captured by GetCurrentStream, or a pool stream keyed by that
// name if never captured), or an *indexed* stream whose key is a scalar expression
// (`Stream i`, `Stream ( StreamIdx % numberOfStreams )`).
struct StreamRef {
  enum class Kind { kNamed, kIndexed };
  Kind kind = Kind::kNamed;
  std::string name;  // kNamed: "0", "0x55d0c0"
  Scalar index;      // kIndexed

  static StreamRef named(std::string n) { return {Kind::kNamed, std::move(n), Scalar()}; }
  static StreamRef indexed(Scalar i) { return {Kind::kIndexed, "", std::move(i)}; }
  std::string str() const;  // "Stream 0", "Stream ( StreamIdx % numberOfStreams )"
  bool operator==(const StreamRef& o) const;
};

enum class CommunicationType { kAllgather, kAllreduce, kReduceScatter, kBroadcast, kReduce, kScatter, kGather, kSendRecv, kAllToAll };

enum class P2PType { kSend, kRecv };

const char* communicationTypeName(CommunicationType t);  // "Allgather", ...
std::optional<CommunicationType> parseCommunicationType(const std::string& s);
bool isRooted(CommunicationType t);     // Broadcast, Reduce, Scatter, Gather, SendRecv
bool isReducing(CommunicationType t);   // Allreduce, ReduceScatter, Reduce

// A scalar among the operands of a kernel (`Inputs:{i0, T2_g[ bS3{1} ], }`): its position in
// the printed list (tensors and scalars together) and its value.
struct ScalarOperand {
  size_t position = 0;
  Scalar value;
  bool operator==(const ScalarOperand& o) const { return position == o.position && value == o.value; }
};

class Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Scope = std::vector<StmtPtr>;

class Stmt {
 public:
  explicit Stmt(StmtKind k) : kind_(k) {}
  virtual ~Stmt() = default;
  StmtKind kind() const { return kind_; }
  template <class T> T* as() { return static_cast<T*>(this); }
  template <class T> const T* as() const { return static_cast<const T*>(this); }
  template <class T> bool is() const { return kind_ == T::kKind; }

  SourceLoc loc;  // where the parser read it; unknown for built programs

 private:
  StmtKind kind_;
};

template <StmtKind K>
struct StmtOf : Stmt {
  static constexpr StmtKind kKind = K;
  StmtOf() : Stmt(K) {}
};

// Two forms, as in nvFuser (see HOSTIR.md): `legacy` is `ALLOCATE(buffer=..., size=...)`, which
// allocates only if the tensor is not bound yet; otherwise `ALLOCATE(mem_type=..., zero_init=...)`
// always allocates a fresh buffer.
struct Allocate : StmtOf<StmtKind::kAllocate> {
  TensorView* tv = nullptr;
  MemoryType memType = MemoryType::kGlobal;
  bool legacy = true;
  std::optional<Scalar> size;  // legacy form: number of elements as printed
  bool zeroInit = false;
  bool resetsToZero = false;
};

struct Deallocate : StmtOf<StmtKind::kDeallocate> {
  TensorView* tv = nullptr;
};

// The fields of the two select statements: out = the slice of `in` at `index` along `axis`.
template <StmtKind K>
struct SelectStmt : StmtOf<K> {
  TensorView* out = nullptr;
  TensorView* in = nullptr;
  IterDomain* axis = nullptr;  // an IterDomain of `in`
  Scalar index;
};

// HirAliasSelect: out names the slice of `in` at `index` along `axis` (the axis disappears). On a
// broadcast or size-1 axis the index is 0, on a reduction axis `out` is `in` (HOSTIR.md).
struct AliasSelect : SelectStmt<StmtKind::kAliasSelect> {};

// out = the `streamIndex`-th chunk of `in` along its stream-parallel axis.
struct ShardByStream : StmtOf<StmtKind::kShardByStream> {
  TensorView* out = nullptr;
  TensorView* in = nullptr;
  Scalar streamIndex;
};

struct GetCurrentStream : StmtOf<StmtKind::kGetCurrentStream> {
  StreamRef stream;  // always kNamed: the variable that captures the current stream
};

struct SetCurrentStream : StmtOf<StmtKind::kSetCurrentStream> {
  StreamRef stream;
};

// The current stream waits for everything enqueued on `stream` so far.
struct Synchronize : StmtOf<StmtKind::kSynchronize> {
  StreamRef stream;
};

// `FOR StreamIdx in iStreamIdx4{i0}:` (domain set; runs [0, extent)) or `FOR i17 from 0 to 4:`.
struct ForLoop : StmtOf<StmtKind::kForLoop> {
  std::string index;
  IterDomain* domain = nullptr;
  Scalar start;
  Scalar stop;
  Scope body;
  Scalar begin() const { return domain ? Scalar(0) : start; }
  Scalar end() const { return domain ? domain->extent() : stop; }
};

// `IF Manual ( pred ):` ... `ELSE:` ...
struct IfThenElse : StmtOf<StmtKind::kIfThenElse> {
  Scalar predicate;
  Scope thenBody;
  Scope elseBody;
};

struct HostOp : StmtOf<StmtKind::kHostOp> {
  Expr* op = nullptr;  // owned by the program's Fusion
};

// Runs HostUnit `hostUnit` as one kernel on the current stream. The unit may be absent from
// the program (a dump that printed only this line) or elided (`[...]`): see HostUnit.
struct PostOnStream : StmtOf<StmtKind::kPostOnStream> {
  int hostUnit = 0;  // key into HostProgram::hostUnits
  std::vector<TensorView*> inputs;
  std::vector<TensorView*> outputs;
  std::vector<ScalarOperand> scalarInputs;  // e.g. a loop index passed to the kernel
};

// A kernel compiled ahead of the program (nvFuser's LaunchKernel): reads its inputs and writes
// its outputs, which must already be allocated, on the current stream. nvFuser printed it on
// one line without an id (early 2025), then with `Index: N`, then with `Group ID: N`.
struct LaunchKernel : StmtOf<StmtKind::kLaunchKernel> {
  std::optional<int64_t> groupId;
  std::vector<TensorView*> inputs;
  std::vector<TensorView*> outputs;
  std::vector<ScalarOperand> scalarInputs;
};

struct Communication : StmtOf<StmtKind::kCommunication> {
  int id = 0;  // `Communication 41`
  CommunicationType type = CommunicationType::kAllgather;
  std::vector<int64_t> team;
  std::optional<Scalar> root;  // rooted types only: a device id (may depend on the loop index)
  std::optional<ReductionOpType> redOp;  // reducing types (default add)
  TensorView* input = nullptr;
  TensorView* output = nullptr;
  CommBackend backend = CommBackend::kNccl;
};

struct P2PCommunication : StmtOf<StmtKind::kP2PCommunication> {
  int id = 0;
  P2PType type = P2PType::kSend;
  TensorView* buffer = nullptr;
  Scalar peer;
  CommBackend backend = CommBackend::kNccl;
};

// Coalesced send to `sendPeer` and receive from `recvPeer` (device ids, usually functions of the
// loop index) among `team`: `output` receives what the recv peer sends of its `input`.
struct CollectivePermute : StmtOf<StmtKind::kCollectivePermute> {
  int id = 0;  // waited on by `Wait Communication <id>`
  std::vector<int64_t> team;
  Scalar sendPeer;
  Scalar recvPeer;
  TensorView* input = nullptr;
  TensorView* output = nullptr;
  CommBackend backend = CommBackend::kNccl;
};

// Exchanges the IPC handles of the buffers of `communications` with their peers (a blocking
// host-side rendezvous; nvFuser ends it with a barrier). The communications are copies of the
// P2PCommunication statements they name (same ids), as nvFuser prints them inline.
struct ShareMemHandles : StmtOf<StmtKind::kShareMemHandles> {
  std::vector<P2PCommunication> communications;
};

// out = one contiguous view, across the ranks of its mesh, of the symmetric tensor `in` whose
// outermost axis is device-parallel.
struct SymmetricContiguousView : StmtOf<StmtKind::kSymmetricContiguousView> {
  TensorView* out = nullptr;
  TensorView* in = nullptr;
};

// nvFuser's `select(` evaluated on the host: out = in.select(axis, index), a view (no special
// cases: that is ATen's select).
struct Select : SelectStmt<StmtKind::kSelect> {};

// out = in[start:stop:step, ...]: a view, one range per non-reduction axis of `in`.
struct SliceRange {
  Scalar start;
  Scalar stop;
  Scalar step;
  bool operator==(const SliceRange& o) const { return start == o.start && stop == o.stop && step == o.step; }
};
struct Slice : StmtOf<StmtKind::kSlice> {
  TensorView* out = nullptr;
  TensorView* in = nullptr;
  std::vector<SliceRange> ranges;
};

// `i45 = i12 + 3;`: binds the symbol `name` to the value of `value` when it runs (nvFuser puts
// the computation of loop-dependent peers in the loop body this way).
struct ScalarAssign : StmtOf<StmtKind::kScalarAssign> {
  std::string name;
  Scalar value;
};

struct StartCoalescing : StmtOf<StmtKind::kStartCoalescing> {};

struct EndCoalescing : StmtOf<StmtKind::kEndCoalescing> {
  int id = 0;  // `EndCoalescing 45`, waited on by `Wait Communication 45`
};

// Waits (on the current stream) for the Communication, CollectivePermute, P2PCommunication or
// EndCoalescing `id`.
struct Wait : StmtOf<StmtKind::kWait> {
  int id = 0;
};

// The fusion a PostOnStream runs: `HostUnit<N>: Inputs={...} -> Outputs={...}` and its kernel.
// A kernel whose body braid does not model (ops it does not know, such as `iota`, or scalar
// statements) keeps its text verbatim; a body elided as `[...]` keeps nothing. Either way the
// unit's inputs and outputs are known, and the semantics treat it as a kernel that reads its
// inputs and writes its outputs whole.
struct HostUnit {
  enum class Body { kModelled, kOpaque, kElided };
  int id = 0;
  std::unique_ptr<Fusion> fusion;  // inputs/outputs are fusion->inputs()/outputs()
  std::vector<ScalarOperand> scalarInputs;  // `Inputs={i7, T2_g[...], }`
  Body body = Body::kModelled;
  std::string bodyText;  // kOpaque: the lines between `%kernel {` and its `}`, as printed
};

class HostProgram {
 public:
  HostProgram() : tensors_(std::make_unique<Fusion>()) {}
  HostProgram(HostProgram&&) = default;
  HostProgram& operator=(HostProgram&&) = default;

  Fusion& tensors() { return *tensors_; }
  const Fusion& tensors() const { return *tensors_; }
  std::vector<TensorView*>& inputs() { return inputs_; }
  const std::vector<TensorView*>& inputs() const { return inputs_; }
  std::vector<TensorView*>& outputs() { return outputs_; }
  const std::vector<TensorView*>& outputs() const { return outputs_; }
  // Output -> input it aliases (the output is written in place into the input's buffer).
  std::vector<std::pair<TensorView*, TensorView*>>& aliases() { return aliases_; }
  const std::vector<std::pair<TensorView*, TensorView*>>& aliases() const { return aliases_; }
  Scope& body() { return body_; }
  const Scope& body() const { return body_; }
  std::map<int, HostUnit>& hostUnits() { return host_units_; }
  const std::map<int, HostUnit>& hostUnits() const { return host_units_; }
  // Scalars among the program's inputs and outputs (`(T0_g_float[...], i5) -> (...)`).
  std::vector<ScalarOperand>& scalarInputs() { return scalar_inputs_; }
  const std::vector<ScalarOperand>& scalarInputs() const { return scalar_inputs_; }
  std::vector<ScalarOperand>& scalarOutputs() { return scalar_outputs_; }
  const std::vector<ScalarOperand>& scalarOutputs() const { return scalar_outputs_; }
  // The "Index definitions:" section nvFuser prints after a dump (NVFUSER_DUMP=host_ir(indices)):
  // symbols the program uses (`i84`) defined in terms of others (`i84 = i82 % 8`), in the order
  // printed (not necessarily an order of definition).
  std::vector<std::pair<std::string, Scalar>>& indexDefinitions() { return index_definitions_; }
  const std::vector<std::pair<std::string, Scalar>>& indexDefinitions() const { return index_definitions_; }
  // `s` with every symbol of indexDefinitions() replaced by its definition, recursively (the
  // definitions form no cycle: the parser refuses one).
  Scalar expandIndexDefinitions(const Scalar& s) const;
  // Tensors whose dtype the file did not print (nvFuser before September 2024: `T0_g[...]`): see
  // TensorView::dtypeKnown.
  static bool isUntyped(const TensorView* tv) { return tv && !tv->dtypeKnown(); }

  // The file it was read from ("" for built programs), for diagnostics.
  std::string sourceName;
  // Provenance, not part of the program's structure: set by the parser when the text shows the
  // oldest printer's spelling (`T0_g[ iS0{4} ]`, `Input=`, statements run together on a line).
  // nvFuser's executor of that time allocated communication outputs before running the program
  // (the program has no ALLOCATE for them); the semantics follow it.
  bool printedBeforeAllocate = false;

 private:
  std::unique_ptr<Fusion> tensors_;
  std::vector<TensorView*> inputs_;
  std::vector<TensorView*> outputs_;
  std::vector<std::pair<TensorView*, TensorView*>> aliases_;
  Scope body_;
  std::map<int, HostUnit> host_units_;
  std::vector<ScalarOperand> scalar_inputs_;
  std::vector<ScalarOperand> scalar_outputs_;
  std::vector<std::pair<std::string, Scalar>> index_definitions_;
};

// The tensors a statement names (inputs, outputs, views' bases, buffers; not nested bodies), each
// once, in a fixed order. Used by the mesh rule: a statement with tensor operands runs only on the
// ranks of their meshes (nvFuser's per-device lowering).
std::vector<TensorView*> stmtTensors(const Stmt& s);
// The same into `out` (cleared first), for walks over many statements that reuse one buffer
// instead of allocating a vector per statement.
void stmtTensors(const Stmt& s, std::vector<TensorView*>& out);

// The HostUnits that PostOnStream statements run but the program does not define (a dump that
// printed only the PostOnStream lines).
std::set<int> missingHostUnits(const HostProgram& p);

// True for the statements a Wait can name: Communication, CollectivePermute, P2PCommunication,
// EndCoalescing (their `id`); `id` is set when true.
bool isWaitable(const Stmt& s, int* id = nullptr);

// Calls f(stmt, depth) on every statement in program order, descending into loops and branches.
template <class F>
void forEachStmt(const Scope& scope, F&& f, int depth = 0) {
  for (const auto& s : scope) {
    f(*s, depth);
    if (s->is<ForLoop>()) forEachStmt(s->as<ForLoop>()->body, f, depth + 1);
    if (s->is<IfThenElse>()) {
      forEachStmt(s->as<IfThenElse>()->thenBody, f, depth + 1);
      forEachStmt(s->as<IfThenElse>()->elseBody, f, depth + 1);
    }
  }
}

}  // namespace braid
