// What the engine schedules: the event graph of ir/semantics turned into flat arrays with costs.
// One node per event (markers included, they take no time); its predecessors (stream order,
// Synchronize, Wait, communicator order, and the post edge of a communication); the host time at
// which its rank's host thread has issued it; its cost alone on the GPU; and rendezvous sets
// (the members of a collective, or a connected set of coalesced P2P groups) that start and
// complete together.
//
// Communications run on their communicator's own stream (DESIGN.md), as the event graph has them:
// after the communicator's previous operation on that rank, and after the last work enqueued on
// the posting stream before the post; work enqueued there after the post does not wait for them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/semantics/event_graph.h"
#include "ir/semantics/host_trace.h"
#include "ir/timeline.h"
#include "sim/cost_model.h"
#include "sim/machine.h"

namespace braid::sim {

enum class NodeKind : uint8_t { kMarker, kKernel, kComm };
// Why one node waits for another.
enum class DepKind : uint8_t { kStream, kSync, kWait, kPost, kCommOrder };

struct SimStream {
  int32_t gpu = 0;  // position of its rank in EventGraph::ranks
  TimelineStreamKind kind = TimelineStreamKind::kWorker;
  std::string name;
};

// Members of one collective (or of P2P groups linked by their pairs): they start when the last
// of them is ready and complete together.
struct Rendezvous {
  std::vector<int32_t> members;  // event ids
  CommCost cost;
  int64_t smsHeld = 0;  // SMs a member's NCCL kernel holds while it runs
  // Runs on the copy engines (backend=CUDA, or SimGraphOptions::copyEngines): no kernel, so it
  // holds no SMs, is not slowed by kernels beside it, and never queues behind a GEMM's CTAs.
  bool copyEngines = false;
};

struct SimGraph {
  int32_t numGpus = 0;  // = graph->ranks.size()

  // Per event (indexed by event id).
  std::vector<NodeKind> kind;
  std::vector<int32_t> gpu;
  std::vector<int32_t> stream;       // index into streams
  std::vector<double> hostReady;     // the host has issued it (plus the launch latency for work)
  std::vector<int32_t> kernel;       // index into kernels (kKernel), else -1
  std::vector<int32_t> rendezvous;   // index into rendezvous (kComm), -1 when unmatched
  std::vector<uint32_t> predBegin;   // predecessors of e: preds[predBegin[e] .. predBegin[e+1])
  std::vector<int32_t> preds;
  std::vector<DepKind> predKind;
  std::vector<uint32_t> succBegin;   // successors, the same way
  std::vector<int32_t> succs;

  std::vector<KernelCost> kernels;
  std::vector<Rendezvous> rendezvousSets;
  std::vector<SimStream> streams;
  std::vector<double> hostEnd;  // per GPU: when its host thread finishes the program

  size_t numEvents() const { return kind.size(); }
};

struct SimGraphOptions {
  // Host traces of the ranks that ran (same order as EventGraph::ranks); empty: no host costs.
  const std::vector<sem::HostTrace>* hostTraces = nullptr;
  // When each rank's host thread starts the program, by rank id (empty, or missing ranks: 0). A
  // measured run's ranks do not start together (rank_skew.h estimates by how much).
  const std::vector<double>* rankStartUs = nullptr;
  // Every rank's host starts this much later besides (the host after idle: Machine::host.afterIdle).
  double hostStartUs = 0;
  // Every communication runs on the copy engines (braid run --backend-override cuda), whatever its
  // statement's backend= says; without it, those whose statement says backend=CUDA do.
  bool copyEngines = false;
  // A CUDA-graph replay (SimOptions::graphReplay): instructions cost the host nothing, so each
  // rank issues its whole program at its start (rankStartUs still applies).
  bool graphReplay = false;
};

// Builds the schedule input. Costs come from `mc`; nodes spanned by a team from its topology.
SimGraph buildSimGraph(const sem::EventGraph& g, const Machine& mc, const SimGraphOptions& o);

// Host time one instruction costs. `inGroup`: between StartCoalescing and EndCoalescing;
// `groupOnEngines`: that group has a copy-engine transfer (its EndCoalescing pays the rendezvous).
double hostCost(const Stmt& s, const Machine& mc, bool copyEngines = false, bool inGroup = false,
                bool groupOnEngines = false);

}  // namespace braid::sim
