// Golden output of one pass at a time for the schedules of lowering round 2 (split and merged
// parallel axes, rfactor, ShardByStream chunks, 2D meshes): each case runs the pipeline up to
// its pass and compares what the pass left (the fusion for the fusion passes, the host program
// after) with tests/passes/golden/passes/<case>.txt. Must-not-fire cases check that the pass
// changes nothing on a fusion it has no business with. Regenerate with BRAID_UPDATE_GOLDEN=1 and
// review the diff.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>

#include "ir/host_ir_text.h"
#include "ir/ops.h"
#include "passes/fusion_utils.h"
#include "lowering_test_util.h"
#include "passes/pass_manager.h"

namespace braid {
namespace {

struct PassCase {
  std::string name;
  std::string pass;
  std::function<void(Fusion&)> build;
  int64_t devices = 2;
  LoweringOptions options;
  bool mustNotFire = false;
};

void PrintTo(const PassCase& c, std::ostream* os) { *os << c.name << " (" << c.pass << ")"; }

std::string stateOf(const LoweringContext& ctx) {
  return ctx.hasProgram ? print(ctx.program) : printFusion(ctx.fusion);
}

// Runs the standard pipeline up to and including `c.pass`; returns the state before and after it,
// its notes, and whether it reported a change.
struct PassRun {
  std::string before, after, notes;
  bool changed = false;
};

PassRun runUpTo(const PassCase& c, Fusion& f) {
  LoweringOptions o = c.options;
  LoweringContext ctx(f, o, c.devices);
  PassRun r;
  bool found = false;
  for (auto& pass : standardPasses()) {
    const bool target = pass->name() == c.pass;
    if (target) r.before = stateOf(ctx);
    size_t notes = ctx.notes.size();
    bool changed = pass->run(ctx);
    verifyAfterPass(ctx, pass->name());
    if (!target) continue;
    found = true;
    r.changed = changed;
    r.after = stateOf(ctx);
    for (size_t i = notes; i < ctx.notes.size(); ++i) r.notes += "// " + ctx.notes[i] + "\n";
    break;
  }
  EXPECT_TRUE(found) << "no pass named " << c.pass;
  return r;
}

LoweringOptions protocolB(int64_t streams) {
  LoweringOptions o;
  o.protocol = StreamProtocol::kInLoopSync;
  o.indexing = StreamIndexing::kRaw;
  o.streams = streams;
  return o;
}

const DeviceMesh kMesh2 = DeviceMesh::range(2);
const DeviceMesh kMesh2x2({0, 1, 2, 3}, {2, 2});

TensorView* meshedInput(Fusion& f, std::vector<Scalar> shape, const DeviceMesh& m = kMesh2) {
  TensorView* tv = f.makeTensor(shape);
  tv->setDeviceMesh(m);
  f.addInput(tv);
  return tv;
}

// nvFuser's row_parallel_linear_forward, small: X [s*, m/s, DIDx(d), k/d], W [n, DIDx(d), k/d].
void rowParallelLinear(Fusion& f) {
  TensorView* x = meshedInput(f, {8, 4});
  TensorView* w = meshedInput(f, {3, 4});
  x->outerSplit(0, 2)->parallelize(0, ParallelType::kStream);
  x->outerSplit(2, 2)->parallelize(2, ParallelType::kDIDx);
  w->outerSplit(1, 2)->parallelize(1, ParallelType::kDIDx);
  f.addOutput(linear(x, w));
}

std::vector<PassCase> cases() {
  std::vector<PassCase> v;
  // ---- propagate-sharding ----
  v.push_back({"propagate_split_device_axis", "propagate-sharding", [](Fusion& f) {
                 TensorView* x = meshedInput(f, {8, 4});
                 x->outerSplit(0, 2)->parallelize(0, ParallelType::kDIDx);
                 f.addOutput(relu(x));  // takes [DIDx{2}, 4, 4] by replaying the split
               }});
  v.push_back({"propagate_weight_first_into_reduction", "propagate-sharding", rowParallelLinear});
  v.push_back({"propagate_user_mesh_is_kept", "propagate-sharding",
               [](Fusion& f) {
                 TensorView* x = meshedInput(f, {8, 4});
                 x->outerSplit(0, 2)->parallelize(0, ParallelType::kDIDx);
                 TensorView* y = set(x);
                 y->setDeviceMesh(kMesh2);  // the user's: replicated, an Allgather
                 f.addOutput(y);
               },
               2, LoweringOptions{}, /*mustNotFire=*/true});
  // ---- decompose-reshardings ----
  v.push_back({"decompose_rfactor_linear", "decompose-reshardings", rowParallelLinear});
  v.push_back({"decompose_rfactor_reduce_scatter", "decompose-reshardings", [](Fusion& f) {
                 TensorView* a = meshedInput(f, {8, 4});
                 TensorView* b = meshedInput(f, {4, 3});
                 a->outerSplit(1, 2)->parallelize(1, ParallelType::kDIDx);
                 b->outerSplit(0, 2)->parallelize(0, ParallelType::kDIDx);
                 TensorView* c = matmul(a, b);
                 c->setDeviceMesh(kMesh2);
                 f.addOutput(c);
                 c->outerSplit(0, 2)->parallelize(0, ParallelType::kStream);
                 c->outerSplit(1, 2)->parallelize(1, ParallelType::kDIDx);
                 c->outerSplit(4, 2)->parallelize(4, ParallelType::kDIDx);
               }});
  v.push_back({"decompose_allgather_is_one_communication", "decompose-reshardings",
               [](Fusion& f) {
                 TensorView* x = meshedInput(f, {8, 4});
                 x->outerSplit(0, 2)->parallelize(0, ParallelType::kDIDx);
                 TensorView* y = set(x);
                 y->setDeviceMesh(kMesh2);
                 f.addOutput(y);
               },
               2, LoweringOptions{}, true});
  // ---- finalize-allocation ----
  auto twoMatmuls = [](int64_t m) {
    return [m](Fusion& f) {
      TensorView* in = meshedInput(f, {m, 3});
      TensorView* w1 = meshedInput(f, {3, 5});
      TensorView* w2 = meshedInput(f, {5, 3});
      in->outerSplit(0, 4)->parallelize(0, ParallelType::kStream);
      f.addOutput(matmul(matmul(in, w1), w2));
    };
  };
  v.push_back({"finalize_chunked_intermediate_per_iteration", "finalize-allocation", twoMatmuls(8)});
  v.push_back({"finalize_unequal_chunks_in_full", "finalize-allocation", twoMatmuls(10), 2, LoweringOptions{}, true});
  // ---- stream-lowering ----
  v.push_back({"stream_shard_by_stream_chunks", "stream-lowering", twoMatmuls(8), 2, protocolB(4)});
  v.push_back({"stream_shorter_last_chunk", "stream-lowering", twoMatmuls(10), 2, protocolB(4)});
  v.push_back({"stream_reduce_rooted_at_chunk_owner", "stream-lowering",
               [](Fusion& f) {
                 TensorView* a = meshedInput(f, {8, 4});
                 TensorView* b = meshedInput(f, {4, 3});
                 a->outerSplit(0, 2)->parallelize(0, ParallelType::kStream);
                 a->outerSplit(2, 2)->parallelize(2, ParallelType::kDIDx);
                 b->outerSplit(0, 2)->parallelize(0, ParallelType::kDIDx);
                 TensorView* c = matmul(a, b);
                 c->setDeviceMesh(kMesh2);
                 f.addOutput(c);
                 c->outerSplit(0, 2)->parallelize(0, ParallelType::kDIDx);
                 c->outerSplit(3, 2)->parallelize(3, ParallelType::kDIDx);
               },
               2, protocolB(2)});
  v.push_back({"stream_without_stream_axis", "stream-lowering",
               [](Fusion& f) {
                 TensorView* x = meshedInput(f, {8, 4});
                 x->outerSplit(0, 2)->parallelize(0, ParallelType::kDIDx);
                 f.addOutput(relu(x));
               },
               2, protocolB(2), true});
  // ---- forward-own-shard ----
  // ag_matmul's P2P pipeline, small: A [DIDx(2), 4, 3] gathered chunk by chunk (a2 = set(A),
  // Stream where A has DIDx), C = matmul(a2, B).
  auto p2pAgMatmul = [](bool keep_gathered) {
    return [keep_gathered](Fusion& f) {
      TensorView* a = meshedInput(f, {8, 3});
      TensorView* b = meshedInput(f, {3, 5});
      a->outerSplit(0, 2)->parallelize(0, ParallelType::kDIDx);
      TensorView* a2 = set(a);
      a2->setDeviceMesh(kMesh2);
      a2->outerSplit(0, 2)->parallelize(0, ParallelType::kStream);
      TensorView* c = matmul(a2, b);
      c->setDeviceMesh(kMesh2);
      c->outerSplit(0, 2)->parallelize(0, ParallelType::kStream);
      f.addOutput(c);
      if (keep_gathered) f.addOutput(a2);
    };
  };
  LoweringOptions p2p = protocolB(2);
  p2p.pipeline = PipelineKind::kP2P;
  p2p.ownShardInPlace = true;  // --own-shard in-place
  v.push_back({"forward_own_shard_reads_in_place", "forward-own-shard", p2pAgMatmul(false), 2, p2p});
  // The gathered tensor is an output: its buffer must hold our shard too, so the copy stays.
  v.push_back({"forward_own_shard_gathered_output_keeps_copy", "forward-own-shard", p2pAgMatmul(true), 2, p2p, true});
  // ---- lower-communications ----
  // An Allreduce along DIDx on a [2, 2] mesh: within each row, one IF per team.
  v.push_back({"communications_row_teams", "lower-communications",
               [](Fusion& f) {
                 TensorView* x = meshedInput(f, {4, 4}, kMesh2x2);
                 TensorView* w = meshedInput(f, {3, 4}, kMesh2x2);
                 x->outerSplit(0, 2)->parallelize(0, ParallelType::kDIDy);
                 x->outerSplit(2, 2)->parallelize(2, ParallelType::kDIDx);
                 w->outerSplit(1, 2)->parallelize(1, ParallelType::kDIDx);
                 f.addOutput(linear(x, w));
               },
               4, protocolB(2)});
  // An Allgather along DIDy: within each column.
  v.push_back({"communications_column_teams", "lower-communications",
               [](Fusion& f) {
                 TensorView* x = meshedInput(f, {4, 4}, kMesh2x2);
                 x->outerSplit(0, 2)->parallelize(0, ParallelType::kDIDy);
                 TensorView* y = set(x);
                 y->setDeviceMesh(kMesh2x2);
                 f.addOutput(y);
               },
               4, protocolB(2)});
  // ---- select-comm-backend ----
  // --comm-backend cuda: every communication of the P2P pipeline (sends and receives inside the
  // coalesced group) says backend=CUDA; the rest of the program is untouched.
  LoweringOptions cuda = protocolB(2);
  cuda.pipeline = PipelineKind::kP2P;
  cuda.commBackend = CommBackend::kCuda;
  v.push_back({"select_comm_backend_p2p_on_copy_engines", "select-comm-backend", p2pAgMatmul(false), 2, cuda});
  // The default (NCCL) leaves the program as the earlier passes wrote it.
  LoweringOptions nccl = cuda;
  nccl.commBackend = CommBackend::kNccl;
  v.push_back({"select_comm_backend_nccl_changes_nothing", "select-comm-backend", p2pAgMatmul(false), 2, nccl, true});
  v.push_back({"communications_none_for_local_ops", "lower-communications",
               [](Fusion& f) {
                 TensorView* x = meshedInput(f, {8, 4});
                 TensorView* w = meshedInput(f, {6, 4});
                 x->outerSplit(0, 2)->parallelize(0, ParallelType::kStream);
                 w->outerSplit(0, 2)->parallelize(0, ParallelType::kDIDx);
                 f.addOutput(linear(x, w));  // column-parallel: no communication
               },
               2, protocolB(2), true});
  return v;
}

class PassGoldenTest : public ::testing::TestWithParam<PassCase> {};

TEST_P(PassGoldenTest, OnePassAtATime) {
  const PassCase& c = GetParam();
  Fusion f;
  c.build(f);
  PassRun r = runUpTo(c, f);
  if (c.mustNotFire) {
    EXPECT_FALSE(r.changed) << c.pass << " reported a change";
    EXPECT_EQ(r.before, r.after) << c.pass << " changed what it had no business with";
    return;
  }
  EXPECT_TRUE(r.changed) << c.pass << " reported no change";
  const std::string text = "// after pass " + c.pass + "\n" + r.notes + r.after;
  BRAID_EXPECT_GOLDEN(std::string(BRAID_TEST_DATA_DIR) + "/passes/golden/passes/" + c.name + ".txt", text,
                      c.pass + " on " + c.name);
}

INSTANTIATE_TEST_SUITE_P(, PassGoldenTest, ::testing::ValuesIn(cases()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace braid
