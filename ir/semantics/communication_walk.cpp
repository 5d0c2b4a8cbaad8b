// Posting and waiting for communications on one rank. A communication runs on its communicator's
// stream: posting orders it after the work already enqueued on the current stream, and nothing
// else; only Wait orders later work after its completion (DESIGN.md, c10d's ProcessGroupNCCL).
#include <algorithm>

#include "ir/semantics/communication_rules.h"
#include "ir/semantics/interpreter_internal.h"

namespace braid::sem::detail {

int32_t Interpreter::post(const std::string& communicator, EventKind kind, const Stmt* stmt, std::string op) {
  int32_t posting = st_->current;
  int32_t before = lastOn(posting);
  int32_t id = enqueueOn(communicatorStream(communicator), kind, stmt, std::move(op));
  if (before >= 0) g_.edges.push_back({before, id, EdgeKind::kPost});
  ev(id).postedOn = posting;
  ev(id).communicator = communicator;
  return id;
}

void Interpreter::runCommunication(const Communication& c) {
  int64_t rank = st_->rank;
  if (!postsCommunication(c, rank)) return;  // not a member: nothing is posted here
  int64_t root = -1;
  if (c.root) {
    root = evalScalar(*c.root, c);
    if (!postsCommunication(c, root)) {
      std::string team;
      for (int64_t r : c.team) team += (team.empty() ? "" : " ") + std::to_string(r);
      halt(FindingKind::kBadRoot, &c,
           std::string("has root ") + c.root->str() + " = " + std::to_string(root) + ", which is not a member of its team (" +
               team + ")");
    }
  } else if (isRooted(c.type)) {
    throw Error(c.loc.str() + ": a " + communicationTypeName(c.type) + " needs a root");
  }
  CommunicationType t = c.type;
  bool is_root = root == rank;
  CommRoles roles = commRoles(t, is_root);
  // A root's output may be absent (a Broadcast whose root keeps its input).
  if (t == CommunicationType::kBroadcast && is_root && c.output && !st_->bound.count(c.output) &&
      !st_->deallocated.count(c.output))
    roles.writesOutput = false;
  std::optional<Region> in, out;
  if (roles.readsInput) in = need(c.input, c, "communication input");
  if (roles.writesOutput) out = need(c.output, c, "communication output");

  std::string key = communicatorName(c.backend, c.team);
  teams_[key] = c.team;
  int32_t id = post(key, EventKind::kCollective, &c, communicationTypeName(t));
  Event& x = ev(id);
  x.comm = &c;
  x.root = root;
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
    issue(FindingKind::kNonContiguousComm, &c,
          "input " + c.input->nameStr() + " is a non-contiguous view (" + in->str() + ")", id);
  if (out && !out->isContiguous())
    issue(FindingKind::kNonContiguousComm, &c,
          "output " + c.output->nameStr() + " is a non-contiguous view (" + out->str() + ")", id);
  std::string size = communicationSizeProblem(t, static_cast<int64_t>(c.team.size()), is_root, roles, x.inputCount,
                                              x.outputCount);
  if (!size.empty()) issue(FindingKind::kCommunicationSize, &c, size, id);
  collectives_[key][rank].push_back(id);
  st_->posted[c.id] = id;
}

void Interpreter::runP2P(const P2PCommunication& c) {
  Region r = need(c.buffer, c, c.type == P2PType::kSend ? "send buffer" : "receive buffer");
  if (!r.isContiguous())
    issue(FindingKind::kNonContiguousComm, &c,
          "buffer " + c.buffer->nameStr() + " is a non-contiguous view (" + r.str() + ")");
  P2POp op;
  op.type = c.type;
  op.peer = evalScalar(c.peer, c);
  op.count = r.numel();
  op.dtype = c.buffer->dtype();
  op.bytes = bytesOf(r, c.buffer);
  op.backend = c.backend;
  op.stmt = &c;
  Access a{r, c.buffer};
  if (st_->coalesceStart) {
    st_->pendingP2P.push_back(op);
    (c.type == P2PType::kSend ? st_->pendingReads : st_->pendingWrites).push_back(a);
    st_->pendingIds.push_back(c.id);
    return;
  }
  std::vector<int64_t> world;
  for (int64_t i = 0; i < g_.numRanks; ++i) world.push_back(i);
  int32_t id = post(communicatorName(c.backend, world), EventKind::kP2P, &c, c.type == P2PType::kSend ? "send" : "recv");
  Event& x = ev(id);
  x.p2p.push_back(op);
  (c.type == P2PType::kSend ? x.reads : x.writes).push_back(a);
  (c.type == P2PType::kSend ? x.bytesRead : x.bytesWritten) = op.bytes;
  x.messageBytes = op.bytes;
  x.dtype = op.dtype;
  p2pEvents_.push_back(id);
  st_->posted[c.id] = id;
}

void Interpreter::runStartCoalescing(const StartCoalescing& s) {
  if (st_->coalesceStart)
    halt(FindingKind::kUnclosedCoalescing, st_->coalesceStart,
         "opens a group of sends and receives that is still open when another StartCoalescing (line " +
             std::to_string(s.loc.line) + ") begins: groups do not nest");
  st_->coalesceStart = &s;
  st_->pendingP2P.clear();
  st_->pendingReads.clear();
  st_->pendingWrites.clear();
  st_->pendingIds.clear();
}

void Interpreter::runEndCoalescing(const EndCoalescing& c) {
  st_->coalesceStart = nullptr;
  if (st_->pendingP2P.empty()) {
    st_->posted[c.id] = -2;
    return;
  }
  // The group closes on the communicator its sends and receives use.
  std::vector<int64_t> world;
  for (int64_t i = 0; i < g_.numRanks; ++i) world.push_back(i);
  int32_t id = post(communicatorName(st_->pendingP2P.front().backend, world), EventKind::kP2P, &c, "P2P group");
  Event& x = ev(id);
  x.p2p = st_->pendingP2P;
  x.reads = st_->pendingReads;
  x.writes = st_->pendingWrites;
  for (const auto& op : x.p2p) {
    (op.type == P2PType::kSend ? x.bytesRead : x.bytesWritten) += op.bytes;
    x.messageBytes = std::max(x.messageBytes, op.bytes);
  }
  x.dtype = x.p2p.front().dtype;
  p2pEvents_.push_back(id);
  st_->posted[c.id] = id;
  for (int pid : st_->pendingIds) st_->posted[pid] = id;
  st_->pendingP2P.clear();
}

void Interpreter::runWait(const Wait& w) {
  auto it = st_->posted.find(w.id);
  if (it == st_->posted.end()) {
    issue(FindingKind::kWaitWithoutPost, &w,
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

}  // namespace braid::sem::detail
