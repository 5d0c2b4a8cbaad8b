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
  if (!postsCommunication(c, rank)) {
    // Not a member: nvFuser posts a null work, which a Wait for it skips.
    st_->posted[c.id] = -2;
    return;
  }
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
  if (roles.writesOutput) {
    executorAllocated(c.output, c);
    out = need(c.output, c, "communication output");
  }

  auto [named, fresh] = communicatorNames_.try_emplace(&c);
  if (fresh) {
    named->second = communicatorName(c.backend, c.team);
    teams_[named->second] = c.team;
  }
  const std::string& key = named->second;
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

// The executor of 2024 (MultiDeviceExecutor::runWithInput) allocated the output of every
// communication whose mesh includes the device before running the program, which printed no
// ALLOCATE for it.
void Interpreter::executorAllocated(const TensorView* tv, const Stmt& s) {
  if (!prog_->printedBeforeAllocate || !tv || st_->bound.count(tv) || st_->deallocated.count(tv)) return;
  if (tv->hasDeviceMesh() && !tv->deviceMesh()->has(st_->rank)) return;
  int32_t b = newBuffer(tv, bufferShape(*tv, st_->env), nullptr);
  g_.buffers[static_cast<size_t>(b)].isInput = true;  // the executor's, not the program's to free
  bind(tv, Region::contiguous(b, g_.buffers[static_cast<size_t>(b)].shape), &s);
  note(FindingKind::kExecutorAllocated, &s,
       "receives into " + tv->nameStr() + ", which the program does not allocate: nvFuser's executor of 2024 " +
           "allocated communication outputs before running the program, and braid does the same");
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

// nvFuser's CollectivePermute: on the communicator of its team, a coalesced send of `input` to the
// member at team position `sendPeer` and receive into `output` from the member at `recvPeer` (the
// peers are positions in the team, as postSingleCommunication takes them); a local copy on the
// current stream when both are the rank itself.
void Interpreter::runCollectivePermute(const CollectivePermute& c) {
  auto me = std::find(c.team.begin(), c.team.end(), st_->rank);
  if (me == c.team.end()) {
    st_->posted[c.id] = -2;
    return;
  }
  const int64_t n = static_cast<int64_t>(c.team.size());
  const int64_t mine = me - c.team.begin();
  int64_t send = evalScalar(c.sendPeer, c);
  int64_t recv = evalScalar(c.recvPeer, c);
  for (auto [what, v] : {std::pair<const char*, int64_t>{"send", send}, {"receive", recv}}) {
    if (v < 0 || v >= n)
      halt(FindingKind::kBadPeer, &c,
           std::string("has ") + what + " peer " + std::to_string(v) + ", which is not a position in its team of " +
               std::to_string(n) + " (CollectivePermute's peers are positions in the team)");
  }
  Region in = need(c.input, c, "send buffer");
  Region out = need(c.output, c, "receive buffer");
  if (in.numel() != out.numel())
    issue(FindingKind::kCommunicationSize, &c,
          "sends " + std::to_string(in.numel()) + " elements of " + c.input->nameStr() + " but receives " +
              std::to_string(out.numel()) + " into " + c.output->nameStr() +
              " (a CollectivePermute moves buffers of one size)");
  if (send == mine && recv == mine) {
    int32_t id = enqueue(EventKind::kCopy, &c, "CollectivePermute local copy");
    ev(id).reads.push_back({in, c.input});
    ev(id).writes.push_back({out, c.output});
    ev(id).bytesRead = bytesOf(in, c.input);
    ev(id).bytesWritten = bytesOf(out, c.output);
    st_->posted[c.id] = -2;
    return;
  }
  for (auto [r, tv] : {std::pair<const Region*, const TensorView*>{&in, c.input}, {&out, c.output}})
    if (!r->isContiguous())
      issue(FindingKind::kNonContiguousComm, &c, "buffer " + tv->nameStr() + " is a non-contiguous view (" + r->str() + ")");
  P2POp s_op;
  s_op.type = P2PType::kSend;
  s_op.peer = c.team[static_cast<size_t>(send)];
  s_op.count = in.numel();
  s_op.dtype = c.input->dtype();
  s_op.bytes = bytesOf(in, c.input);
  s_op.backend = c.backend;
  s_op.stmt = &c;
  P2POp r_op = s_op;
  r_op.type = P2PType::kRecv;
  r_op.peer = c.team[static_cast<size_t>(recv)];
  r_op.count = out.numel();
  r_op.dtype = c.output->dtype();
  r_op.bytes = bytesOf(out, c.output);
  int32_t id = post(communicatorName(c.backend, c.team), EventKind::kP2P, &c, "CollectivePermute");
  Event& x = ev(id);
  x.p2p = {s_op, r_op};
  x.reads.push_back({in, c.input});
  x.writes.push_back({out, c.output});
  x.bytesRead = s_op.bytes;
  x.bytesWritten = r_op.bytes;
  x.messageBytes = std::max(s_op.bytes, r_op.bytes);
  x.dtype = s_op.dtype;
  p2pEvents_.push_back(id);
  st_->posted[c.id] = id;
}

// nvFuser's ShareMemHandles (the CUDA p2p backend): for each communication, the rank publishes the
// IPC handle of its buffer and blocks until its peer's handle arrives, then all ranks meet at a
// barrier. Host-side only: no stream work. Handles are cached per communication, peer and buffer,
// and a call that finds all of them cached exchanges nothing and skips the barrier.
void Interpreter::runShareMemHandles(const ShareMemHandles& s) {
  bool fresh = false;
  for (const P2PCommunication& c : s.communications) {
    int64_t peer = evalScalar(c.peer, s);
    if (peer == st_->rank)
      halt(FindingKind::kBadPeer, &s,
           "exchanges the handle of " + (c.buffer ? c.buffer->nameStr() : std::string("?")) +
               " with the rank itself (peer " + c.peer.str() + " = " + std::to_string(peer) +
               "): nvFuser refuses a send to self");
    if (peer < 0 || peer >= g_.numRanks)
      halt(FindingKind::kBadPeer, &s,
           "exchanges a handle with rank " + std::to_string(peer) + ", outside 0.." + std::to_string(g_.numRanks - 1));
    Region r = need(c.buffer, s, "buffer to share");
    if (!st_->ipcHandles.insert({c.id, peer, r.buffer, r.offset, r.numel()}).second) continue;
    fresh = true;
    exchanges_.push_back({st_->rank, peer, c.type, &s, st_->loops});
  }
  if (fresh) barriers_[st_->rank].push_back({static_cast<int32_t>(st_->rank), st_->issue, &s, st_->loops});
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
