// The parametric model of a host program: what every statement does on the devices, as
// *templates* whose terms are Z3 expressions over the enclosing loops' index variables, the rank
// R, the stream count S and the symbolic extents. Instantiating a template at index terms gives
// one symbolic instance of the statement (encoding.h); two arbitrary iterations of every loop
// are enough to state the ordering facts pairwise (verifiers.md, section 2.5).
//
// symbolic_run.cpp builds it by running the host thread once symbolically (DESIGN.md, "The host
// program's meaning"), summarizing each loop's host state (current stream, bindings, posted
// communications) across iterations.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <z3++.h>

#include "ir/host_ir.h"
#include "ir/semantics/symbolic_rules.h"
#include "verify/finding.h"
#include "verify/parametric/z3_terms.h"

namespace braid::verify::parametric {

using View = sem::BoxView<z3::expr>;

// Default values for members (z3::expr has no default constructor); they use the context of the
// active Z3ContextScope.
inline z3::expr zeroTerm() { return Z3ContextScope::current().int_val(0); }
inline z3::expr trueTerm() { return Z3ContextScope::current().bool_val(true); }

// A stream as a pair of terms: its class and its key (the pool index, a name's number, a
// communicator's number). Streams are equal iff both are.
enum StreamClass : int { kDefaultStream = 0, kWorkerStream = 1, kPoolStream = 2, kCommStream = 3 };
struct SymStream {
  z3::expr cls = zeroTerm();
  z3::expr key = zeroTerm();
  z3::expr equals(const SymStream& o) const { return cls == o.cls && key == o.key; }
};

// One loop statement: its index variable and range [begin, end) (terms over outer loops).
struct LoopVar {
  int id = 0;
  const ForLoop* loop = nullptr;
  int depth = 0;  // 1 for a top-level loop
  z3::expr var = zeroTerm();
  z3::expr begin = zeroTerm();
  z3::expr end = zeroTerm();
  std::string name() const { return loop ? loop->index : "?"; }
};

// Where a buffer comes from: an Allocate, the fresh output of an op, or a program input.
struct BufferSite {
  int id = 0;
  const TensorView* tensor = nullptr;  // the tensor it is allocated for (its owner)
  const Stmt* stmt = nullptr;          // nullptr for inputs
  bool isInput = false;
  std::vector<const LoopVar*> loops;   // a buffer is one per iteration of these
};

// A buffer: the one its site allocated in iteration `idx` of the site's loops.
struct BufRef {
  int site = -1;
  std::vector<z3::expr> idx;
};

struct Access {
  z3::expr cond = trueTerm();  // the access happens (e.g. a Broadcast reads only on its root)
  BufRef buf;
  View view;
  bool write = false;
  const TensorView* tensor = nullptr;  // the name the statement used
};

enum class TemplateKind {
  kEntry,  // inputs written on the default stream
  kExit,   // the caller's stream at return; reads the outputs
  kWork,   // a kernel, host op, copy or memset
  kComm,   // a collective or a P2P operation / group, on its communicator's stream
  kSync,   // Synchronize: the current stream waits for `target`'s work so far
  kWait,   // Wait: the current stream waits for a communication
  kFree,   // the caching allocator may reuse `buf` from here on its allocation stream
  kAlloc,  // the allocation point of `buf` on its allocation stream
};
const char* templateKindName(TemplateKind k);
inline bool isMarkerKind(TemplateKind k) {
  return k != TemplateKind::kWork && k != TemplateKind::kComm && k != TemplateKind::kEntry;
}

// A step of a program position: a statement's index in its scope, or the index variable of the
// loop the position is inside (compared by value between instances).
struct PathStep {
  int pos = 0;
  const LoopVar* loop = nullptr;
};

// Which communication a Wait waits for, under `cond`: template `tmpl` at iteration `idx`.
struct WaitSource {
  z3::expr cond = trueTerm();
  int tmpl = -1;
  std::vector<z3::expr> idx;
};

// A collective or P2P operation's cross-rank data.
struct CommInfo {
  bool p2p = false;
  std::string communicator;  // "NCCL team (0 1)"; P2P: the world communicator
  const Communication* collective = nullptr;
  std::optional<z3::expr> root;    // rooted collectives
  z3::expr inputCount = zeroTerm();   // elements this rank sends (0 when it sends nothing)
  z3::expr outputCount = zeroTerm();  // elements this rank receives
  struct P2POp {
    P2PType type = P2PType::kSend;
    z3::expr peer = zeroTerm();
    z3::expr count = zeroTerm();
    DataType dtype = DataType::kFloat;
    const Stmt* stmt = nullptr;
  };
  std::vector<P2POp> ops;
};

struct Template {
  int id = 0;
  bool recorded = false;  // filled by the symbolic run (ids are handed out before)
  TemplateKind kind = TemplateKind::kWork;
  const Stmt* stmt = nullptr;
  std::string op;  // "Set", "Allgather", "Synchronize Stream 0", ...
  std::vector<const LoopVar*> loops;  // enclosing loops, outermost first
  z3::expr guard = trueTerm();        // the statement runs (branches taken, tensors usable)
  SymStream stream;                   // where it runs
  SymStream post;                     // kComm: the stream current when posted
  std::vector<PathStep> path;         // program position
  std::vector<Access> accesses;
  SymStream target;                   // kSync
  std::vector<WaitSource> waits;      // kWait
  BufRef buf;                         // kFree, kAlloc
  std::shared_ptr<CommInfo> comm;     // kComm
  int waitId = -1;                    // kComm: the id a Wait names
};

// A problem of the host thread itself (not of ordering): found where `guard` can hold.
struct HostIssue {
  FindingKind kind = FindingKind::kUnboundTensor;
  const Stmt* stmt = nullptr;
  std::vector<const LoopVar*> loops;
  z3::expr guard = trueTerm();
  std::string message;
  const Stmt* other = nullptr;
};

// An output at exit: the view it names under `cond`.
struct OutputAlt {
  const TensorView* tensor = nullptr;
  z3::expr cond = trueTerm();
  BufRef buf;
  View view;
};

struct ProgramModel {
  explicit ProgramModel(z3::context& c)
      : ctx(c), rank(c.int_const("rank")), streams(c.int_const("numberOfStreams")), domain(c.bool_val(true)) {}
  ProgramModel(const ProgramModel&) = delete;
  ProgramModel& operator=(const ProgramModel&) = delete;

  z3::context& ctx;
  const HostProgram* program = nullptr;
  int64_t numRanks = 1;
  z3::expr rank;     // R, in [0, numRanks)
  z3::expr streams;  // S (a numeral when fixed)
  std::map<std::string, z3::expr> extents;  // symbolic extents (i0, i2, ...) of the program
  z3::expr domain;   // parameters where the program's divisions are defined (extents >= 1, S >= 1)
  std::vector<std::string> domainNotes;  // extra conditions of `domain`, for the verdict

  std::vector<std::unique_ptr<LoopVar>> loops;
  std::vector<BufferSite> sites;
  std::vector<Template> templates;
  std::vector<HostIssue> issues;
  std::vector<OutputAlt> outputs;
  std::vector<std::string> poolNames;  // named streams never captured, by pool key
  int entry = -1;
  int exit = -1;
  // Constructs the symbolic run could not summarize (the model is then incomplete and nothing
  // is claimed): each entry says what and where.
  std::vector<std::string> unsupported;

  const Template& t(int id) const { return templates[static_cast<size_t>(id)]; }
  std::string describe(const Template& t) const;  // "Set at line 12 (Stream ( i % numberOfStreams ))"
};

struct ModelOptions {
  int64_t ranks = 0;                   // 0: from the program's meshes and teams
  std::optional<int64_t> streams;      // fixed S; nullopt: symbolic
  Bindings bindings;                   // extents fixed by the caller (the rest stay symbolic)
  std::vector<Scalar> assumptions;     // conditions on extents / numberOfStreams the caller assumes
};

// The templates, sites and issues, one per line (BRAID_DUMP=model prints it while checking).
std::string dumpModel(const ProgramModel& m);

// Runs the host program symbolically. Throws Error for malformed programs (as the bounded
// interpreter does); constructs it cannot summarize go to ProgramModel::unsupported.
std::unique_ptr<ProgramModel> buildModel(const HostProgram& p, z3::context& c, const ModelOptions& o);

}  // namespace braid::verify::parametric
