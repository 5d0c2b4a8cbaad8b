// nvFuser's three printer generations: a corpus of dumps written for braid in each of them
// (tests/ir/data/dialects/<generation>/*.hir) parses, round-trips through every generation, and
// means what the format says (statement by statement checks of what each dump exercises).
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/host_ir_text.h"

namespace braid {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

const HostIrDialect kAll[] = {HostIrDialect::kModern, HostIrDialect::kLegacy, HostIrDialect::kOldest};

fs::path corpusDir() { return fs::path(BRAID_TEST_DATA_DIR) / "ir" / "data" / "dialects"; }

std::vector<fs::path> corpus() {
  std::vector<fs::path> out;
  for (const auto& gen : fs::directory_iterator(corpusDir()))
    for (const auto& e : fs::directory_iterator(gen.path()))
      if (e.path().extension() == ".hir") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

HostProgram load(const std::string& rel) { return parseHostProgramFile((corpusDir() / rel).string()); }

std::string printIn(const HostProgram& p, HostIrDialect d) {
  PrintOptions o;
  o.dialect = d;
  return print(p, o);
}

std::vector<StmtKind> kinds(const Scope& s) {
  std::vector<StmtKind> out;
  for (const auto& st : s) out.push_back(st->kind());
  return out;
}

TEST(HostIrDialects, CorpusCoversEveryGeneration) {
  std::map<std::string, int> per_generation;
  for (const fs::path& f : corpus()) ++per_generation[f.parent_path().filename().string()];
  EXPECT_GE(per_generation["oldest"], 6);
  EXPECT_GE(per_generation["to_stream"], 8);
  EXPECT_GE(per_generation["today"], 5);
}

// Every dump, printed in every generation, reads back to the same program, and printing what was
// read back gives the same text again.
TEST(HostIrDialects, EveryDumpRoundTripsThroughEveryGeneration) {
  for (const fs::path& f : corpus()) {
    SCOPED_TRACE(f.string());
    HostProgram p = parseHostProgramFile(f.string());
    for (HostIrDialect d : kAll) {
      SCOPED_TRACE(dialectName(d));
      std::string text = printIn(p, d);
      HostProgram q = parseHostProgram(text, "printed.hir");
      std::string why;
      EXPECT_TRUE(structurallyEqual(p, q, &why)) << why << "\n" << text;
      EXPECT_EQ(printIn(q, d), text);
      // And from that generation into every other.
      for (HostIrDialect e : kAll) {
        HostProgram r = parseHostProgram(printIn(q, e), "again.hir");
        EXPECT_TRUE(structurallyEqual(p, r, &why)) << dialectName(e) << ": " << why;
      }
    }
  }
}

TEST(HostIrDialects, OldestTensorsHaveNoDtypeAndKeepNone) {
  HostProgram p = load("oldest/pipeline_rank0.hir");
  ASSERT_EQ(p.inputs().size(), 1u);
  const TensorView* t0 = p.inputs()[0];
  EXPECT_TRUE(p.isUntyped(t0));
  EXPECT_EQ(t0->loop().size(), 2u);
  ASSERT_TRUE(t0->hasDeviceMesh());
  EXPECT_EQ(t0->deviceMesh()->devices(), (std::vector<int64_t>{0}));
  // `Input=` / `Output=` of July 2024 are the communication's operands.
  const auto* c = p.body()[1]->as<Communication>();
  EXPECT_EQ(c->type, CommunicationType::kBroadcast);
  EXPECT_EQ(c->team, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(c->input->name(), 1);
  EXPECT_EQ(c->output->name(), 2);
  EXPECT_EQ(c->backend, CommBackend::kNccl);
  // No printer invents a dtype for them.
  for (HostIrDialect d : kAll) EXPECT_THAT(printIn(p, d), Not(HasSubstr("_float"))) << dialectName(d);
  EXPECT_THAT(printIn(p, HostIrDialect::kModern), HasSubstr("T0_g[iS0{64}, iS1{32}] (DeviceMesh{0})"));
  EXPECT_THAT(printIn(p, HostIrDialect::kOldest), HasSubstr("T0_g[ iS0{64}, iS1{32} ] (DeviceMesh{0})"));
  EXPECT_THAT(printIn(p, HostIrDialect::kOldest), HasSubstr("Input=T1_l[ iS2{64}, iS3{32} ]"));
}

TEST(HostIrDialects, WaitOnTheLineOfItsCommunicationBelongsToTheLoop) {
  HostProgram p = load("oldest/select_matmul_reducescatter.hir");
  ASSERT_EQ(p.body().size(), 1u);
  const auto* loop = p.body()[0]->as<ForLoop>();
  EXPECT_EQ(kinds(loop->body), (std::vector<StmtKind>{StmtKind::kSelect, StmtKind::kSelect, StmtKind::kHostOp,
                                                      StmtKind::kCommunication, StmtKind::kWait}));
  EXPECT_EQ(loop->body[4]->as<Wait>()->id, 7);
  EXPECT_EQ(loop->body[4]->loc.line, loop->body[3]->loc.line);
  const auto* sel = loop->body[0]->as<Select>();
  EXPECT_EQ(sel->axis, sel->in->loop()[0]);
  EXPECT_EQ(sel->index.str(), "i11");
  // The oldest printer runs them together again; the others do not.
  EXPECT_THAT(printIn(p, HostIrDialect::kOldest), HasSubstr("(DeviceMesh{0 1 2 3}))    Wait Communication 7\n"));
  EXPECT_THAT(printIn(p, HostIrDialect::kModern), HasSubstr("backend=NCCL)\n    Wait(Communication 7)\n"));
}

TEST(HostIrDialects, SliceWithSymbolicExtents) {
  HostProgram p = load("oldest/slice_symbolic_extent.hir");
  const auto* loop = p.body()[0]->as<ForLoop>();
  const auto* sl = loop->body[0]->as<Slice>();
  ASSERT_EQ(sl->ranges.size(), 2u);
  EXPECT_EQ(sl->ranges[0].start.str(), "i6");
  EXPECT_EQ(sl->ranges[0].stop.str(), "( i6 + 1 )");
  EXPECT_EQ(sl->ranges[1].stop.str(), "i2");
  const IterDomain* sliced = sl->out->loop()[0];
  EXPECT_EQ(sliced->iterType(), IterType::kSymbolic);
  EXPECT_TRUE(sliced->isRFactor());
  // nvFuser's extent: the length of [i6, i6 + 1) clamped to [0, i0): 1 inside, 0 past the end.
  for (int64_t i6 : {0, 3, 7}) EXPECT_EQ(sliced->extent().evaluate({{"i6", i6}, {"i0", 8}}), 1) << i6;
  EXPECT_EQ(sliced->extent().evaluate({{"i6", 8}, {"i0", 8}}), 0);
  EXPECT_EQ(loop->body[2]->kind(), StmtKind::kWait);
}

TEST(HostIrDialects, KernelsBraidDoesNotModelAreKeptAsText) {
  HostProgram p = load("oldest/streams_round_robin.hir");
  const HostUnit& unit = p.hostUnits().at(0);
  EXPECT_EQ(unit.body, HostUnit::Body::kOpaque);
  EXPECT_THAT(unit.bodyText, HasSubstr("= iota(8, 0, 1, int64_t);\nb9 = i7 < 4;\n"));
  ASSERT_EQ(unit.scalarInputs.size(), 1u);
  EXPECT_EQ(unit.scalarInputs[0].position, 0u);
  EXPECT_EQ(unit.scalarInputs[0].value.str(), "i7");
  ASSERT_EQ(unit.fusion->inputs().size(), 1u);
  ASSERT_EQ(unit.fusion->outputs().size(), 1u);
  const auto* loop = p.body()[0]->as<ForLoop>();
  EXPECT_EQ(kinds(loop->body), (std::vector<StmtKind>{StmtKind::kSetCurrentStream, StmtKind::kPostOnStream}));
  const auto* post = loop->body[1]->as<PostOnStream>();
  ASSERT_EQ(post->scalarInputs.size(), 1u);
  EXPECT_EQ(post->scalarInputs[0].value.str(), "i3");
  EXPECT_EQ(post->inputs.size(), 1u);
  EXPECT_THAT(printIn(p, HostIrDialect::kModern), HasSubstr("Inputs:{i3, T0_g[iS0{8}, iS1{16}], }"));
  EXPECT_TRUE(missingHostUnits(p).empty());
}

TEST(HostIrDialects, PullRequestFormOfJuly2024) {
  HostProgram p = load("oldest/pull_request_host_irs.hir");
  EXPECT_EQ(kinds(p.body()), (std::vector<StmtKind>{StmtKind::kSetCurrentStream, StmtKind::kPostOnStream}));
  EXPECT_EQ(p.hostUnits().at(0).body, HostUnit::Body::kModelled);
  EXPECT_EQ(p.hostUnits().at(0).fusion->exprs().size(), 1u);
}

TEST(HostIrDialects, StreamParallelTypeHasThreeSpellings) {
  HostProgram oldest = load("oldest/typed_autumn2024.hir");
  HostProgram middle = load("to_stream/allgather_matmul_alias_select.hir");
  HostProgram today = load("today/row_parallel_linear.hir");
  EXPECT_EQ(oldest.outputs()[0]->loop()[0]->parallelType(), ParallelType::kStream);
  EXPECT_EQ(middle.outputs()[0]->loop()[0]->parallelType(), ParallelType::kStream);
  EXPECT_EQ(today.outputs()[0]->loop()[0]->parallelType(), ParallelType::kStream);
  EXPECT_FALSE(oldest.isUntyped(oldest.inputs()[0]));
  for (const HostProgram* p : {&oldest, &middle, &today}) {
    EXPECT_THAT(printIn(*p, HostIrDialect::kOldest), HasSubstr("[ iStream"));
    EXPECT_THAT(printIn(*p, HostIrDialect::kLegacy), HasSubstr("[iStreamIdx"));
    EXPECT_THAT(printIn(*p, HostIrDialect::kModern), HasSubstr("[istreamIdx"));
  }
}

TEST(HostIrDialects, ShareMemHandlesAndIndexDefinitions) {
  HostProgram p = load("to_stream/p2p_cuda_index_definitions.hir");
  const auto* work = p.body()[4]->as<ForLoop>();
  const auto* branch = work->body[2]->as<IfThenElse>();
  EXPECT_EQ(kinds(branch->elseBody),
            (std::vector<StmtKind>{StmtKind::kShareMemHandles, StmtKind::kP2PCommunication,
                                   StmtKind::kP2PCommunication, StmtKind::kWait, StmtKind::kWait}));
  const auto* share = branch->elseBody[0]->as<ShareMemHandles>();
  ASSERT_EQ(share->communications.size(), 2u);
  EXPECT_EQ(share->communications[0].id, 51);
  EXPECT_EQ(share->communications[0].type, P2PType::kRecv);
  EXPECT_EQ(share->communications[1].peer.str(), "i47");
  EXPECT_EQ(share->communications[1].backend, CommBackend::kCuda);
  // Printed as nvFuser prints it: the parenthesis stays open.
  EXPECT_THAT(printIn(p, HostIrDialect::kModern), HasSubstr("peer=i47, backend=CUDA),\n"));

  ASSERT_EQ(p.indexDefinitions().size(), 5u);
  EXPECT_EQ(p.indexDefinitions()[0].first, "i47");
  Scalar recv_peer = p.expandIndexDefinitions(Scalar::symbol("i41"));
  Scalar send_peer = p.expandIndexDefinitions(Scalar::symbol("i47"));
  EXPECT_EQ(recv_peer.freeSymbols(), (std::set<std::string>{"rank", "streamIdx"}));
  // rank 1, iteration 2 of 4: receive from (1 + 2) % 4, send to (4 + 1 - 2) % 4.
  EXPECT_EQ(recv_peer.evaluate({{"rank", 1}, {"streamIdx", 2}}), 3);
  EXPECT_EQ(send_peer.evaluate({{"rank", 1}, {"streamIdx", 2}}), 3);
  EXPECT_EQ(send_peer.evaluate({{"rank", 0}, {"streamIdx", 1}}), 3);
  EXPECT_THAT(printIn(p, HostIrDialect::kModern), HasSubstr("} // %HostIrContainer\n\nIndex definitions:\n  i47 = i45 % 4;\n"));
}

TEST(HostIrDialects, LaunchKernelInItsThreeForms) {
  HostProgram early = load("to_stream/launch_kernel_early_2025.hir");
  HostProgram index = load("to_stream/launch_kernel_index.hir");
  HostProgram group = load("today/launch_kernel_group_id.hir");
  const auto* a = early.body()[1]->as<LaunchKernel>();
  EXPECT_FALSE(a->groupId.has_value());
  EXPECT_EQ(a->inputs.size(), 1u);
  EXPECT_EQ(a->outputs.size(), 1u);
  const auto* b = index.body()[1]->as<LaunchKernel>();
  EXPECT_EQ(b->groupId, 0);
  ASSERT_EQ(b->scalarInputs.size(), 1u);
  EXPECT_EQ(b->scalarInputs[0].position, 1u);
  EXPECT_EQ(b->scalarInputs[0].value.str(), "i3");
  const auto* c = group.body()[3]->as<LaunchKernel>();
  EXPECT_EQ(c->groupId, 1);
  // The scalar program input of the header.
  ASSERT_EQ(group.scalarInputs().size(), 1u);
  EXPECT_EQ(group.scalarInputs()[0].value.str(), "i5");
  // April 2025 printed the tensor's ALLOCATE inside `Deallocate {`.
  EXPECT_EQ(early.body()[4]->as<Deallocate>()->tv->name(), 1);
  EXPECT_THAT(printIn(early, HostIrDialect::kModern),
              HasSubstr("LaunchKernel(Inputs: {T0_g_float[iS0{i0}, iS1{i1}], }, Outputs: {T1_g_float[iS2{i0}, iS3{i1}], })\n"));
  EXPECT_THAT(printIn(index, HostIrDialect::kModern),
              HasSubstr("  LaunchKernel(\n    Group ID: 0,\n    Inputs: {T0_g_float[iS0{i0}], i3},\n"
                        "    Outputs: {T1_g_float[iS1{i0}]},\n  )\n"));
}

TEST(HostIrDialects, SegmenterSetAndSetWithoutCacheOp) {
  HostProgram p = load("to_stream/segmenter_set_expr_eval.hir");
  const Expr* seg = p.body()[0]->as<HostOp>()->op;
  EXPECT_EQ(seg->type(), OpType::kSet);
  EXPECT_TRUE(seg->segmenterSet);
  EXPECT_EQ(seg->cacheOp, "");
  const Expr* set = p.body()[2]->as<HostOp>()->op;
  EXPECT_FALSE(set->segmenterSet);
  std::string text = printIn(p, HostIrDialect::kModern);
  EXPECT_THAT(text, HasSubstr("= SegmenterSet( T0_g_float[iS0{i0}, iS1{i2}] )\n"));
  EXPECT_THAT(text, HasSubstr("= Set( T1_g_float[iS2{i0}, iS3{i2}] )\n"));
}

TEST(HostIrDialects, ElidedAndAbsentHostUnits) {
  HostProgram elided = load("to_stream/hostunit_elided.hir");
  ASSERT_EQ(elided.hostUnits().count(0), 1u);
  EXPECT_EQ(elided.hostUnits().at(0).body, HostUnit::Body::kElided);
  EXPECT_EQ(elided.hostUnits().at(0).fusion->inputs().size(), 1u);
  EXPECT_TRUE(missingHostUnits(elided).empty());
  EXPECT_THAT(printIn(elided, HostIrDialect::kModern), HasSubstr("%kernel {\n[...]\n} // %kernel\n"));

  HostProgram absent = load("to_stream/hostunit_not_printed.hir");
  EXPECT_TRUE(absent.hostUnits().empty());
  EXPECT_EQ(missingHostUnits(absent), (std::set<int>{0}));
}

TEST(HostIrDialects, TodaysStatements) {
  HostProgram ring = load("today/collective_permute_ring.hir");
  const auto* loop = ring.body()[2]->as<ForLoop>();
  EXPECT_EQ(kinds(loop->body),
            (std::vector<StmtKind>{StmtKind::kSetCurrentStream, StmtKind::kSynchronize, StmtKind::kShardByStream,
                                   StmtKind::kScalarAssign, StmtKind::kScalarAssign, StmtKind::kScalarAssign,
                                   StmtKind::kScalarAssign, StmtKind::kScalarAssign, StmtKind::kCollectivePermute,
                                   StmtKind::kWait}));
  const auto* cp = loop->body[8]->as<CollectivePermute>();
  EXPECT_EQ(cp->id, 17);
  EXPECT_EQ(cp->sendPeer.str(), "i15");
  EXPECT_EQ(cp->recvPeer.str(), "i12");
  EXPECT_EQ(cp->team, (std::vector<int64_t>{0, 1, 2, 3}));
  const auto* assign = loop->body[3]->as<ScalarAssign>();
  EXPECT_EQ(assign->name, "i11");
  EXPECT_EQ(assign->value.str(), "( i9 + 3 )");
  EXPECT_THAT(printIn(ring, HostIrDialect::kModern), HasSubstr("    i11 = i9 + 3;\n"));

  HostProgram sym = load("today/symmetric_contiguous_view.hir");
  const auto* alloc = sym.body()[0]->as<Allocate>();
  EXPECT_EQ(alloc->memType, MemoryType::kSymmetric);
  EXPECT_EQ(alloc->tv->memoryType(), MemoryType::kSymmetric);
  const auto* view = sym.body()[2]->as<SymmetricContiguousView>();
  EXPECT_EQ(view->in->name(), 1);
  EXPECT_EQ(view->out->name(), 2);
  EXPECT_THAT(printIn(sym, HostIrDialect::kModern), HasSubstr("T1_sym_float[ideviceIdx.x2{4}"));

  HostProgram rp = load("today/row_parallel_linear.hir");
  EXPECT_EQ(kinds(rp.body()), (std::vector<StmtKind>{StmtKind::kAllocate, StmtKind::kGetCurrentStream,
                                                     StmtKind::kForLoop, StmtKind::kSetCurrentStream,
                                                     StmtKind::kForLoop}));
  EXPECT_EQ(rp.body()[1]->as<GetCurrentStream>()->stream.name, "0x7f2c40a13e20");
  EXPECT_FALSE(rp.body()[0]->as<Allocate>()->legacy);
}

TEST(HostIrDialects, OpaqueKernelWithScalarInputsAndIndexDefinitions) {
  HostProgram p = load("today/opaque_kernel_index_definitions.hir");
  const HostUnit& unit = p.hostUnits().at(1);
  EXPECT_EQ(unit.body, HostUnit::Body::kOpaque);
  EXPECT_THAT(unit.bodyText, HasSubstr("i31 = i30 * 8;\n"));
  ASSERT_EQ(unit.scalarInputs.size(), 1u);
  EXPECT_EQ(unit.scalarInputs[0].position, 1u);
  const auto* loop = p.body()[2]->as<ForLoop>();
  const auto* post = loop->body[3]->as<PostOnStream>();
  ASSERT_EQ(post->scalarInputs.size(), 1u);
  EXPECT_EQ(post->scalarInputs[0].position, 1u);
  EXPECT_EQ(p.expandIndexDefinitions(Scalar::symbol("i21")).evaluate({{"streamIdx", 3}}), 1);
}

// The same program read from each generation's dump is one program.
TEST(HostIrDialects, OneProgramWhateverTheGeneration) {
  HostProgram today = load("today/row_parallel_linear.hir");
  for (HostIrDialect d : {HostIrDialect::kLegacy, HostIrDialect::kOldest}) {
    HostProgram other = parseHostProgram(printIn(today, d), dialectName(d));
    std::string why;
    EXPECT_TRUE(structurallyEqual(today, other, &why)) << why;
    EXPECT_EQ(printIn(other, HostIrDialect::kModern), printIn(today, HostIrDialect::kModern));
  }
}

}  // namespace
}  // namespace braid
