// The lowering pipeline's pass interface and the state its passes share.
//
// Lowering runs in two halves. The first passes rewrite the scheduled Fusion in place
// (propagate shardings, finalize allocation domains, segment, classify communications); the
// later ones build and rewrite the HostProgram (host lowering, stream lowering, communications,
// allocation, stream assignment). Both halves share one LoweringContext, so every pass is a
// plain function of it: run() rewrites the context and says whether it changed anything.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/host_ir.h"
#include "ir/lowering_options.h"
#include "passes/communication_classifier.h"
#include "passes/schedule.h"

namespace braid {

// A group of fusion exprs run as one unit: a standalone host op (one expr, evaluated on the host
// or turned into a communication) or a kernel (a HostUnit run by PostOnStream).
struct Segment {
  enum class Kind { kHostOp, kKernel };
  Kind kind = Kind::kKernel;
  std::vector<Expr*> exprs;  // in a topological order
};

// Decides whether two kernel segments may become one kernel. The default refuses standalone host
// ops, mixed stream parallelization and mixed meshes; tests and users plug in their own.
using ShouldMergeFn = std::function<bool(const Segment& a, const Segment& b)>;

// Where a host-program tensor's axes came from: the fusion tensor and, for each of the program
// tensor's logical axes, how it derives from that fusion tensor's logical domain (a logical axis,
// a piece of a split; for a chunk view, the chunk of the split axis). HirAliasSelect views drop
// an axis.
struct AxisOrigin {
  const TensorView* fusionTv = nullptr;
  std::vector<AxisPath> paths;
  // The position of the program axis that derives from `path`, or -1.
  int positionOf(const AxisPath& path) const;
};

// The P2P pipeline's copy of this rank's own shard into the chunk it works on
// (`IF Manual ( j == deviceIdx.x ): chunk = Set( own )`, did_to_stream.h), which forward-own-shard
// removes by reading `own` in place.
struct OwnShardCopy {
  IfThenElse* branch = nullptr;  // its THEN body is the Set
  TensorView* own = nullptr;     // this rank's shard, a view of the input
  TensorView* chunk = nullptr;   // the iteration's chunk, a buffer of its own iteration
};

struct LoweringContext {
  LoweringContext(Fusion& f, LoweringOptions o, int64_t d) : fusion(f), options(std::move(o)), devices(d) {}

  Fusion& fusion;
  LoweringOptions options;
  int64_t devices = 1;

  // ---- fusion half ----
  // Tensors whose Stream axis shards the allocation (allocated per iteration of their loop).
  std::set<const TensorView*> streamShardedAllocation;
  std::vector<Segment> segments;
  ShouldMergeFn shouldMerge;  // empty: the default predicate
  std::map<const Expr*, CommunicationInfo> communications;  // resharding fusion exprs

  // ---- host half ----
  bool hasProgram = false;
  HostProgram program;
  // Set by the allocation pass: from then on the verifier also checks that every tensor is
  // defined before use and ALLOCATE / Deallocate come in pairs (WellFormednessOptions).
  bool allocationsPlaced = false;
  bool deallocationsPlaced = false;  // ... and with LoweringOptions::deallocate, Deallocates too
  // Per-tensor and per-expr facts are hash maps: the passes look them up once or more per
  // statement of programs with tens of thousands of statements, and never walk them in order.
  std::unordered_map<const TensorView*, TensorView*> hostTensor;  // fusion tensor -> program tensor
  std::unordered_map<const TensorView*, AxisOrigin> origin;       // program tensor -> fusion axes
  std::unordered_map<const Expr*, const Expr*> originExpr;        // program Expr -> fusion Expr
  std::map<int, std::vector<const Expr*>> unitExprs;              // HostUnit id -> its fusion exprs
  std::unordered_map<const TensorView*, TensorView*> viewBase;    // view -> the buffer it aliases
  std::unordered_set<const TensorView*> nonContiguousViews;
  // Program axes whose data extent is not their printed one: the chunked axis of a ShardByStream
  // view prints the chunk count and holds one chunk (a single element when the buffer had the
  // Stream axis itself).
  std::unordered_map<const IterDomain*, Scalar> chunkAxisExtent;
  // ShardByStream views: the chunked program axis and the chunk's extent there (a function of the
  // chunk index when the last chunk is shorter), for buffers that copy a chunk.
  std::unordered_map<const TensorView*, std::pair<int, Scalar>> chunkAxis;
  std::set<const ForLoop*> streamLoops;                  // top-level loops over a Stream axis
  // Stream loops that only post communications ahead of the stream loop right after them
  // (--prefetch): assign-streams gives their iteration i a stream of its own.
  std::set<const ForLoop*> prefetchLoops;
  // Own-shard copies whose chunk is a per-iteration buffer without staging (stream lowering).
  std::vector<OwnShardCopy> ownShardCopies;
  std::vector<std::string> notes;                        // choices a pass made, for --dump-passes
  int nextCommunicationId = 0;
  int nextLoopIndex = 0;

  // The stream-loop index scalar names in use (kept distinct from extent symbols).
  std::string freshLoopIndexName();
};

class Pass {
 public:
  virtual ~Pass() = default;
  virtual std::string name() const = 0;
  // Rewrites the context; returns whether anything changed. Throws NotLowerableError for
  // fusions that cannot be lowered, Error for bad options.
  virtual bool run(LoweringContext& ctx) = 0;
};

// The passes, in pipeline order (one per file in passes/).
std::unique_ptr<Pass> makePropagateShardingPass();
std::unique_ptr<Pass> makeDecomposeReshardingsPass();
std::unique_ptr<Pass> makeFinalizeAllocationPass();
std::unique_ptr<Pass> makeSegmentationPass();
std::unique_ptr<Pass> makeClassifyCommunicationsPass();
std::unique_ptr<Pass> makeHostLoweringPass();
std::unique_ptr<Pass> makeStreamLoweringPass();
std::unique_ptr<Pass> makeForwardOwnShardPass();
std::unique_ptr<Pass> makeLowerCommunicationsPass();
std::unique_ptr<Pass> makeAllocateAndDeallocatePass();
std::unique_ptr<Pass> makeAssignStreamsPass();
std::unique_ptr<Pass> makeSelectCommBackendPass();

// The default should-merge predicate of segmentation.
bool defaultShouldMerge(const Segment& a, const Segment& b);
// Standalone host ops are never merged into kernels: resharding ops, matmul, linear, set without
// permute, binary ops and reductions (nvFuser's isLowerableAsStandaloneHostOp).
bool isStandaloneHostOp(const Expr& e);

}  // namespace braid
