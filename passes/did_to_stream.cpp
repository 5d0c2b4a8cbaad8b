#include "passes/did_to_stream.h"

#include "ir/error.h"
#include "passes/fusion_utils.h"
#include "passes/host_builder.h"
#include "passes/team_branches.h"

namespace braid {

namespace {

// A device id as a function of its team position `i`: teams are arithmetic ranges.
Scalar deviceAt(const std::vector<int64_t>& team, const Scalar& i, const std::string& what) {
  if (team.empty()) throw NotLowerableError(what + ": empty team");
  int64_t step = team.size() > 1 ? team[1] - team[0] : 1;
  for (size_t k = 0; k < team.size(); ++k)
    if (team[k] != team[0] + static_cast<int64_t>(k) * step)
      throw NotLowerableError(what + ": the team must be an arithmetic range of devices to index it by the loop");
  return (Scalar(team[0]) + i * Scalar(step)).simplify();
}

StmtPtr copyOp(LoweringContext& ctx, TensorView* from, TensorView* to, const Expr& fe) {
  Expr* copy = ctx.program.tensors().newExpr(OpType::kSet, {from}, {to});
  ctx.originExpr[copy] = &fe;
  return makeHostOp(copy);
}

}  // namespace

Scalar p2pChunkIndex(const Scalar& idx, const CommunicationInfo& info) {
  const int64_t d = static_cast<int64_t>(info.team.size());
  return Scalar::binary(ScalarOp::kMod, Scalar::binary(ScalarOp::kAdd, idx, Scalar::symbol(kDeviceIdxX)), Scalar(d));
}

std::optional<OwnShardCopy> lowerDidToStream(LoweringContext& ctx, StreamViews& views, Scope& body, const Scalar& idx,
                                             const Expr& e, const Expr& fe, const CommunicationInfo& info,
                                             TensorView* out) {
  const std::string what = "DID -> Stream set " + tvLabel(fe.output(0));
  TensorView* in = e.input(0);
  const int pa = ctx.origin.at(in).positionOf(*info.producerPath);
  if (pa < 0) throw NotLowerableError(what + ": the device axis of " + tvLabel(fe.input(0)) + " is not in its buffer");
  const Scalar chunks = streamLoopAxis(fe.output(0))->extent();
  if (auto ext = chunks.constValue(); ext && *ext != static_cast<int64_t>(info.team.size()))
    throw NotLowerableError(what + ": the Stream axis has extent " + std::to_string(*ext) + " but the team has " +
                            std::to_string(info.team.size()) +
                            " devices; a DID -> Stream pipeline has one chunk per device");
  // This rank's shard, without the device axis (local extent 1, so index 0).
  TensorView* local = views.select(in, pa, Scalar(0), false);
  const Scalar& sidx = views.chunkIndex();
  // Communications need contiguous buffers: strided chunks go through staging copies.
  TensorView* send_buf = local;
  if (ctx.nonContiguousViews.count(local)) {
    send_buf = views.stagingBuffer(local);
    body.push_back(copyOp(ctx, local, send_buf, fe));
  }
  TensorView* recv_buf = ctx.nonContiguousViews.count(out) ? views.stagingBuffer(out) : out;
  if (ctx.options.pipeline == PipelineKind::kCollective) {
    forEachTeam(info, *fe.input(0)->deviceMesh(), body, [&](const std::vector<int64_t>& team, Scope& into) {
      auto c = std::make_unique<Communication>();
      c->id = ctx.nextCommunicationId++;
      c->type = CommunicationType::kBroadcast;
      c->team = team;
      c->root = deviceAt(team, sidx, what);
      c->input = send_buf;
      c->output = recv_buf;
      auto w = std::make_unique<Wait>();
      w->id = c->id;
      into.push_back(std::move(c));
      into.push_back(std::move(w));
      if (recv_buf != out) into.push_back(copyOp(ctx, recv_buf, out, fe));
    });
    return std::nullopt;
  }
  // P2P: shard j = (i + rank) % D; j == rank copies locally (forward-own-shard reads the
  // shard in place instead under --own-shard in-place), otherwise receive shard j from its owner and send our shard to
  // (rank - i + D) % D, which handles our shard in this same iteration: sends and receives pair
  // within one iteration on every rank.
  if (info.teams.size() != 1 || info.team.front() != 0 || deviceAt(info.team, Scalar(1), "p2p") != Scalar(1))
    throw NotLowerableError(what + ": the P2P pipeline needs the 1D mesh {0 .. D-1}");
  const int64_t d = static_cast<int64_t>(info.team.size());
  Scalar rank = Scalar::symbol(kDeviceIdxX);
  auto branch = std::make_unique<IfThenElse>();
  branch->predicate = Scalar::binary(ScalarOp::kEq, sidx, rank);
  branch->thenBody.push_back(copyOp(ctx, local, out, fe));
  auto start = std::make_unique<StartCoalescing>();
  auto recv = std::make_unique<P2PCommunication>();
  recv->id = ctx.nextCommunicationId++;
  recv->type = P2PType::kRecv;
  recv->buffer = recv_buf;
  recv->peer = sidx;
  auto send = std::make_unique<P2PCommunication>();
  send->id = ctx.nextCommunicationId++;
  send->type = P2PType::kSend;
  send->buffer = send_buf;
  send->peer = Scalar::binary(ScalarOp::kMod,
                              Scalar::binary(ScalarOp::kAdd, Scalar::binary(ScalarOp::kSub, rank, idx), Scalar(d)),
                              Scalar(d));
  auto end = std::make_unique<EndCoalescing>();
  end->id = ctx.nextCommunicationId++;
  auto w = std::make_unique<Wait>();
  w->id = end->id;
  branch->elseBody.push_back(std::move(start));
  branch->elseBody.push_back(std::move(recv));
  branch->elseBody.push_back(std::move(send));
  branch->elseBody.push_back(std::move(end));
  branch->elseBody.push_back(std::move(w));
  if (recv_buf != out) branch->elseBody.push_back(copyOp(ctx, recv_buf, out, fe));
  std::optional<OwnShardCopy> copy;
  if (send_buf == local && recv_buf == out) copy = OwnShardCopy{branch.get(), local, out};
  body.push_back(std::move(branch));
  return copy;
}

void lowerStreamToDid(LoweringContext& ctx, StreamViews& views, Scope& body, const Expr& e, const Expr& fe,
                      const CommunicationInfo& info, TensorView* in) {
  const std::string what = "Stream -> DID reduction " + tvLabel(fe.output(0));
  const Scalar chunks = streamLoopAxis(fe.input(0))->extent();
  if (auto ext = chunks.constValue(); ext && *ext != static_cast<int64_t>(info.team.size()))
    throw NotLowerableError(what + ": the Stream axis of " + tvLabel(fe.input(0)) + " has extent " +
                            std::to_string(*ext) + " but the team has " + std::to_string(info.team.size()) +
                            " devices; iteration i reduces onto the owner of chunk i");
  TensorView* send_buf = in;
  if (ctx.nonContiguousViews.count(in)) {
    send_buf = views.stagingBuffer(in);
    body.push_back(copyOp(ctx, in, send_buf, fe));
  }
  TensorView* out = e.output(0);
  const Scalar& sidx = views.chunkIndex();
  forEachTeam(info, *fe.input(0)->deviceMesh(), body, [&](const std::vector<int64_t>& team, Scope& into) {
    auto c = std::make_unique<Communication>();
    c->id = ctx.nextCommunicationId++;
    c->type = CommunicationType::kReduce;
    c->team = team;
    c->root = deviceAt(team, sidx, what);
    c->redOp = info.redOp.value_or(ReductionOpType::kAdd);
    c->input = send_buf;
    c->output = out;
    auto w = std::make_unique<Wait>();
    w->id = c->id;
    into.push_back(std::move(c));
    into.push_back(std::move(w));
  });
}

}  // namespace braid
