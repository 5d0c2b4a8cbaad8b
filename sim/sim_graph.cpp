#include "sim/sim_graph.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <sstream>
#include <tuple>
#include <unordered_map>

#include "ir/error.h"

namespace braid::sim {

namespace {

bool isCommunication(sem::EventKind k) { return k == sem::EventKind::kCollective || k == sem::EventKind::kP2P; }

DataType dtypeOf(const sem::Event& e) {
  if (!e.writes.empty() && e.writes.front().tensor) return e.writes.front().tensor->dtype();
  if (!e.reads.empty() && e.reads.front().tensor) return e.reads.front().tensor->dtype();
  return e.dtype;
}

// A communication runs on the copy engines when its statement says backend=CUDA or the whole
// simulation puts every communication there (SimGraphOptions::copyEngines).
bool onCopyEngines(CommBackend backend, bool allOnCopyEngines) {
  return allOnCopyEngines || backend == CommBackend::kCuda;
}

KernelCost kernelCost(const sem::Event& e, const Machine& mc) {
  double bytes = static_cast<double>(e.bytesRead + e.bytesWritten);
  if (e.kind == sem::EventKind::kCopy || e.kind == sem::EventKind::kMemset) return copyCost(mc, bytes);
  // A matmul / linear: the GEMM the semantics computed (shape_inference.h, GemmDims).
  if (e.gemm.k > 0) return gemmCost(mc, e.flops, bytes, dtypeOf(e), e.gemm.batch, e.gemm.m, e.gemm.n);
  return vectorCost(mc, e.flops, bytes, dtypeOf(e));
}

// The full buffer S of a collective as nccl-tests counts it (cost_model.h), from any member.
double collectiveBytes(const sem::Event& e) {
  int64_t n = e.comm ? static_cast<int64_t>(e.comm->team.size()) : 1;
  bool root = e.root == e.rank;
  switch (e.comm ? e.comm->type : CommunicationType::kAllgather) {
    case CommunicationType::kScatter:
      return static_cast<double>(root ? e.bytesRead : e.bytesWritten * n);
    case CommunicationType::kGather:
      return static_cast<double>(root ? e.bytesWritten : e.bytesRead * n);
    default:
      return static_cast<double>(e.messageBytes);
  }
}

// A collective over a team of one: NCCL copies its input into its output when they are different
// buffers (on one H200, a 128 MiB Allgather or ReduceScatter took 64-70 us, a copy at HBM speed)
// and does nothing in place (an Allreduce of its own buffer, 2-3 us: the call).
double loneCopyUs(const sem::Event& e, const Machine& mc) {
  if (e.reads.empty() || e.writes.empty()) return 0;
  if (e.reads.front().region.sameElements(e.writes.front().region)) return 0;  // in place
  return copyCost(mc, static_cast<double>(e.bytesRead + e.bytesWritten)).totalUs();
}

int64_t nodesSpanned(const std::vector<int64_t>& team, const Machine& mc) {
  std::vector<int64_t> nodes;
  nodes.reserve(team.size());
  for (int64_t r : team) nodes.push_back(mc.nodeOf(r));
  std::sort(nodes.begin(), nodes.end());
  return std::max<int64_t>(1, std::unique(nodes.begin(), nodes.end()) - nodes.begin());
}

// The copy engines move data over CUDA IPC, which does not cross hosts (docs/EXEC.md).
Error crossHostCopy(const sem::EventGraph& g, int32_t event, int64_t nodes) {
  return Error(g.describe(event) + ": a communication on the copy engines (backend=CUDA) spans " +
               std::to_string(nodes) + " nodes of the machine; CUDA IPC does not cross hosts (use backend=NCCL)");
}

CommCost p2pEventCost(const sem::Event& e, const Machine& mc) {
  CommCost worst;
  for (const sem::P2POp& op : e.p2p) {
    CommCost c = p2pCost(mc, static_cast<double>(op.bytes), mc.nodeOf(e.rank) != mc.nodeOf(op.peer));
    if (c.us > worst.us) worst = c;
  }
  return worst;
}

// On the copy engines a rank pulls its receives one after the other; a rank that only sends
// waits until its peers pulled.
double copyEnginePulledBytes(const sem::Event& e) {
  double recv = 0, send = 0;
  for (const sem::P2POp& op : e.p2p) (op.type == P2PType::kRecv ? recv : send) += static_cast<double>(op.bytes);
  return recv > 0 ? recv : send;
}

struct UnionFind {
  std::vector<int32_t> parent;
  explicit UnionFind(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  int32_t find(int32_t x) {
    while (parent[static_cast<size_t>(x)] != x) {
      int32_t up = parent[static_cast<size_t>(x)];
      parent[static_cast<size_t>(x)] = parent[static_cast<size_t>(up)];
      x = up;
    }
    return x;
  }
  void unite(int32_t a, int32_t b) { parent[static_cast<size_t>(find(a))] = find(b); }
};

struct FlatEdge {
  int32_t to;
  int32_t from;
  DepKind kind;
};

// Kernel costs memoized by what they depend on: the loops of a program repeat the same shapes.
class KernelCosts {
 public:
  explicit KernelCosts(const Machine& mc) : mc_(mc) {}
  KernelCost of(const sem::Event& e) {
    Key k{static_cast<int>(e.kind), e.op, e.flops, e.bytesRead + e.bytesWritten, static_cast<int>(dtypeOf(e)),
          e.writes.empty() ? std::vector<int64_t>{} : e.writes.front().region.sizes,
          e.reads.size() < 2 ? 0 : e.reads[1].region.rank()};
    auto it = cache_.find(k);
    if (it != cache_.end()) return it->second;
    return cache_.emplace(std::move(k), kernelCost(e, mc_)).first->second;
  }

 private:
  using Key = std::tuple<int, std::string, double, int64_t, int, std::vector<int64_t>, int>;
  const Machine& mc_;
  std::map<Key, KernelCost> cache_;
};

DepKind depOf(sem::EdgeKind k) {
  switch (k) {
    case sem::EdgeKind::kSync:
      return DepKind::kSync;
    case sem::EdgeKind::kWait:
      return DepKind::kWait;
    case sem::EdgeKind::kCommOrder:
      return DepKind::kCommOrder;
    case sem::EdgeKind::kPost:
      return DepKind::kPost;
    case sem::EdgeKind::kStream:
      return DepKind::kStream;
  }
  return DepKind::kStream;
}

// "NCCL team (0 1 2 ... 7)" -> "NCCL team (0-7)": communicator names of teams of more than four
// ranks stay short enough for a trace's or a picture's lane label.
std::string shortCommunicatorName(const std::string& key) {
  auto open = key.find('(');
  auto close = key.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return key;
  std::vector<int64_t> ranks;
  std::istringstream in(key.substr(open + 1, close - open - 1));
  for (int64_t r; in >> r;) ranks.push_back(r);
  if (ranks.size() <= 4) return key;
  std::string out;
  size_t i = 0, ranges = 0;
  while (i < ranks.size()) {
    size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (ranges == 4) {
      out += ", ...";
      break;
    }
    out += (ranges ? ", " : "") + std::to_string(ranks[i]) + (j > i ? "-" + std::to_string(ranks[j]) : "");
    ++ranges;
    i = j + 1;
  }
  return key.substr(0, open + 1) + out + ")";
}

}  // namespace

double hostCost(const Stmt& s, const Machine& mc, bool copyEngines, bool inGroup, bool groupOnEngines) {
  const HostCosts& h = mc.host;
  // A copy-engine post also publishes and looks up buffers through the store: once per
  // communication, and once per coalescing group at its end (the executor's runGroup), not per
  // transfer inside it.
  switch (s.kind()) {
    case StmtKind::kHostOp:
      return h.atenOpUs;
    case StmtKind::kPostOnStream:
      return h.kernelLaunchUs;
    case StmtKind::kCommunication:
      return h.communicationCallUs + (onCopyEngines(s.as<Communication>()->backend, copyEngines) ? mc.copyEngines.hostCallUs : 0);
    case StmtKind::kP2PCommunication:
      return h.communicationCallUs +
             (!inGroup && onCopyEngines(s.as<P2PCommunication>()->backend, copyEngines) ? mc.copyEngines.hostCallUs : 0);
    case StmtKind::kCollectivePermute:  // a coalesced send + recv: one post, one rendezvous on the copy engines
      return h.communicationCallUs +
             (onCopyEngines(s.as<CollectivePermute>()->backend, copyEngines) ? mc.copyEngines.hostCallUs : 0);
    case StmtKind::kShareMemHandles:  // IPC handles exchanged through the store: the copy engines' rendezvous
      return h.communicationCallUs + mc.copyEngines.hostCallUs;
    case StmtKind::kEndCoalescing:
      return h.communicationCallUs + (groupOnEngines ? mc.copyEngines.hostCallUs : 0);
    case StmtKind::kLaunchKernel:
      return h.kernelLaunchUs;
    case StmtKind::kGetCurrentStream:
    case StmtKind::kSetCurrentStream:
    case StmtKind::kSynchronize:
    case StmtKind::kWait:
    case StmtKind::kStartCoalescing:
      return h.streamCallUs;
    case StmtKind::kAllocate:
    case StmtKind::kDeallocate:
      return h.allocationUs;
    case StmtKind::kAliasSelect:
    case StmtKind::kShardByStream:
    case StmtKind::kSymmetricContiguousView:
    case StmtKind::kSelect:
    case StmtKind::kSlice:
      return h.viewUs;
    case StmtKind::kForLoop:
    case StmtKind::kIfThenElse:
    case StmtKind::kScalarAssign:
      return h.controlUs;
  }
  return 0;
}

SimGraph buildSimGraph(const sem::EventGraph& g, const Machine& mc, const SimGraphOptions& o) {
  SimGraph s;
  s.numGpus = static_cast<int32_t>(g.ranks.size());
  size_t n = g.events.size();
  s.kind.assign(n, NodeKind::kMarker);
  s.gpu.assign(n, 0);
  s.stream.assign(n, -1);
  s.hostReady.assign(n, 0);
  s.kernel.assign(n, -1);
  s.rendezvous.assign(n, -1);

  std::vector<int32_t> gpu_of_rank(static_cast<size_t>(std::max<int64_t>(g.numRanks, 1)), -1);
  for (size_t i = 0; i < g.ranks.size(); ++i) gpu_of_rank.at(static_cast<size_t>(g.ranks[i])) = static_cast<int32_t>(i);

  // Host time at which each rank's k-th statement is issued: prefix sums of instruction costs.
  std::vector<std::vector<double>> host_at(g.ranks.size());
  s.hostEnd.assign(g.ranks.size(), 0);
  if (o.hostTraces) {
    if (o.hostTraces->size() != g.ranks.size()) throw Error("internal: one host trace per rank expected");
    for (size_t r = 0; r < g.ranks.size(); ++r) {
      const auto& stmts = (*o.hostTraces)[r].stmts;
      auto& h = host_at[r];
      h.resize(stmts.size() + 1);
      size_t rank = static_cast<size_t>(g.ranks[r]);
      h[0] = (o.rankStartUs && rank < o.rankStartUs->size() ? (*o.rankStartUs)[rank] : 0) + o.hostStartUs;
      bool inGroup = false, groupOnEngines = false;  // inside StartCoalescing .. EndCoalescing
      for (size_t k = 0; k < stmts.size(); ++k) {
        const Stmt& st = *stmts[k];
        if (st.kind() == StmtKind::kStartCoalescing) inGroup = true, groupOnEngines = false;
        if (inGroup && st.kind() == StmtKind::kP2PCommunication)
          groupOnEngines |= onCopyEngines(st.as<P2PCommunication>()->backend, o.copyEngines);
        h[k + 1] = h[k] + (o.graphReplay ? 0 : hostCost(st, mc, o.copyEngines, inGroup, groupOnEngines));
        if (st.kind() == StmtKind::kEndCoalescing) inGroup = false;
      }
      s.hostEnd[r] = h.back();
    }
  }

  // Nodes and costs.
  KernelCosts costs(mc);
  for (size_t i = 0; i < n; ++i) {
    const sem::Event& e = g.events[i];
    int32_t gpu = gpu_of_rank[static_cast<size_t>(e.rank)];
    s.gpu[i] = gpu;
    const auto& h = host_at[static_cast<size_t>(gpu)];
    double issued = h.empty() ? 0 : h[static_cast<size_t>(std::clamp<int64_t>(e.issue, 0, static_cast<int64_t>(h.size()) - 1))];
    if (e.isMarker()) {
      s.kind[i] = NodeKind::kMarker;
      s.hostReady[i] = issued;
    } else if (isCommunication(e.kind)) {
      s.kind[i] = NodeKind::kComm;
      s.hostReady[i] = issued + mc.gpu.launchLatencyUs;
    } else {
      s.kind[i] = NodeKind::kKernel;
      s.hostReady[i] = issued + mc.gpu.launchLatencyUs;
      s.kernel[i] = static_cast<int32_t>(s.kernels.size());
      s.kernels.push_back(costs.of(e));
    }
  }

  // Streams and edges are the event graph's: stream FIFOs, Synchronize, Wait, post, and each
  // communicator's own stream in issue order.
  for (const sem::StreamInfo& si : g.streams) {
    TimelineStreamKind kind = si.isDefault()        ? TimelineStreamKind::kDefault
                              : si.isCommunicator() ? TimelineStreamKind::kCommunicator
                                                    : TimelineStreamKind::kWorker;
    s.streams.push_back({gpu_of_rank[static_cast<size_t>(si.rank)], kind,
                         si.isCommunicator() ? shortCommunicatorName(si.name) : si.name});
    for (int32_t id : si.events) s.stream[static_cast<size_t>(id)] = si.id;
  }
  std::vector<FlatEdge> edges;
  edges.reserve(g.edges.size());
  for (const sem::Edge& e : g.edges) edges.push_back({e.to, e.from, depOf(e.kind)});

  // Predecessors grouped by node (a counting sort; repeated ones dropped), then successors.
  std::vector<uint32_t> begin(n + 1, 0);
  for (const FlatEdge& e : edges) ++begin[static_cast<size_t>(e.to) + 1];
  for (size_t i = 0; i < n; ++i) begin[i + 1] += begin[i];
  std::vector<std::pair<int32_t, DepKind>> grouped(edges.size());
  {
    std::vector<uint32_t> fill(begin.begin(), begin.end() - 1);
    for (const FlatEdge& e : edges) grouped[fill[static_cast<size_t>(e.to)]++] = {e.from, e.kind};
  }
  s.predBegin.assign(n + 1, 0);
  s.preds.reserve(edges.size());
  s.predKind.reserve(edges.size());
  s.succBegin.assign(n + 1, 0);
  for (size_t i = 0; i < n; ++i) {
    auto first = grouped.begin() + begin[i], last = grouped.begin() + begin[i + 1];
    std::sort(first, last, [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto it = first; it != last; ++it) {
      if (it != first && it->first == (it - 1)->first) continue;
      s.preds.push_back(it->first);
      s.predKind.push_back(it->second);
      ++s.succBegin[static_cast<size_t>(it->first) + 1];
    }
    s.predBegin[i + 1] = static_cast<uint32_t>(s.preds.size());
  }
  for (size_t i = 0; i < n; ++i) s.succBegin[i + 1] += s.succBegin[i];
  s.succs.resize(s.preds.size());
  std::vector<uint32_t> fill(s.succBegin.begin(), s.succBegin.end() - 1);
  for (size_t i = 0; i < n; ++i)
    for (uint32_t k = s.predBegin[i]; k < s.predBegin[i + 1]; ++k)
      s.succs[fill[static_cast<size_t>(s.preds[k])]++] = static_cast<int32_t>(i);

  // Rendezvous: collectives by their group; coalesced P2P groups joined through their pairs.
  const int64_t ncclSms = mc.contention.smSharing ? mc.nccl.channels * mc.nccl.smsPerChannel : 0;
  std::unordered_map<const Communication*, int64_t> nodes_of;  // a statement's team spans these nodes
  for (const sem::CollectiveGroup& grp : g.groups) {
    if (grp.p2p || grp.members.empty()) continue;
    const sem::Event& first = g.events[static_cast<size_t>(grp.members.front())];
    Rendezvous r;
    r.members = grp.members;
    const std::vector<int64_t>& team = first.comm->team;
    auto [nodes, fresh] = nodes_of.try_emplace(first.comm, 0);
    if (fresh) nodes->second = nodesSpanned(team, mc);
    r.copyEngines = onCopyEngines(first.comm->backend, o.copyEngines);
    if (r.copyEngines && nodes->second > 1) throw crossHostCopy(g, grp.members.front(), nodes->second);
    r.cost = r.copyEngines ? copyEngineCollectiveCost(mc, first.comm->type, static_cast<int64_t>(team.size()),
                                                      collectiveBytes(first))
                           : collectiveCost(mc, first.comm->type, static_cast<int64_t>(team.size()), nodes->second,
                                            collectiveBytes(first));
    const bool lone = team.size() == 1;  // NCCL launches no kernel: a memcpy or nothing
    if (lone && !r.copyEngines) r.cost.us += loneCopyUs(first, mc);
    r.smsHeld = r.copyEngines || lone ? 0 : ncclSms;
    for (int32_t m : grp.members) s.rendezvous[static_cast<size_t>(m)] = static_cast<int32_t>(s.rendezvousSets.size());
    s.rendezvousSets.push_back(std::move(r));
  }
  std::set<int32_t> unpaired;
  for (const sem::Issue& is : g.issues)
    if (is.kind == sem::FindingKind::kP2PUnpaired && is.event >= 0) unpaired.insert(is.event);
  UnionFind uf(n);
  std::vector<int32_t> p2p_events;
  for (size_t i = 0; i < n; ++i) {
    if (s.kind[i] != NodeKind::kComm || g.events[i].kind != sem::EventKind::kP2P) continue;
    p2p_events.push_back(static_cast<int32_t>(i));
    for (int32_t grp : g.events[i].pairGroups)
      for (int32_t m : g.groups[static_cast<size_t>(grp)].members) uf.unite(static_cast<int32_t>(i), m);
  }
  std::map<int32_t, int32_t> set_of_root;
  for (int32_t e : p2p_events) {
    if (unpaired.count(e)) continue;  // never completes: the engine reports who waits for it
    auto [it, inserted] = set_of_root.try_emplace(uf.find(e), static_cast<int32_t>(s.rendezvousSets.size()));
    const sem::Event& ev = g.events[static_cast<size_t>(e)];
    const bool ce = !ev.p2p.empty() && onCopyEngines(ev.p2p.front().backend, o.copyEngines);
    if (ce)
      for (const sem::P2POp& op : ev.p2p)
        if (mc.nodeOf(ev.rank) != mc.nodeOf(op.peer)) throw crossHostCopy(g, e, 2);
    if (inserted) {
      Rendezvous r;
      r.copyEngines = ce;
      r.smsHeld = ce ? 0 : ncclSms;
      s.rendezvousSets.push_back(std::move(r));
    }
    Rendezvous& r = s.rendezvousSets[static_cast<size_t>(it->second)];
    r.members.push_back(e);
    CommCost c = ce ? copyEngineP2PCost(mc, copyEnginePulledBytes(ev)) : p2pEventCost(ev, mc);
    if (c.us > r.cost.us) r.cost = c;
    s.rendezvous[static_cast<size_t>(e)] = it->second;
  }
  // Unpaired P2P members poison their whole set: its paired members wait for them.
  for (int32_t e : unpaired) {
    int32_t root = uf.find(e);
    if (auto it = set_of_root.find(root); it != set_of_root.end()) {
      for (int32_t m : s.rendezvousSets[static_cast<size_t>(it->second)].members) s.rendezvous[static_cast<size_t>(m)] = -1;
    }
  }
  return s;
}

}  // namespace braid::sim
