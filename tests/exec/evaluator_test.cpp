// The evaluator on one rank: HOSTIR.md's view/copy and ALLOCATE rules, host ops, HostUnits,
// loops, aliases, and every example file that runs on one rank.
#ifdef BRAID_WITH_TORCH  // exec has no evaluator without libtorch (see cli_run_test.cpp)

#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "exec/communicator.h"
#include "exec/evaluator.h"
#include "exec/host_profile.h"
#include "exec/reference.h"
#include "exec/tensor_ops.h"
#include "ir/error.h"
#include "ir/host_ir_text.h"
#include "ir/semantics/buffer_rules.h"

namespace braid::exec {
namespace {

std::string dataPath(const std::string& name) { return std::string(BRAID_TEST_DATA_DIR) + "/exec/data/" + name; }
std::string examplePath(const std::string& name) { return std::string(BRAID_SOURCE_DIR) + "/examples/" + name; }

at::Tensor iota(std::vector<int64_t> shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return at::arange(n, at::TensorOptions().dtype(at::kFloat)).reshape(shape);
}

std::vector<at::Tensor> runOne(const HostProgram& p, const std::vector<at::Tensor>& inputs, Bindings b = {}) {
  auto comm = makeSelfCommunicator();
  EvalOptions o;
  o.bindings = std::move(b);
  Evaluator ev(p, *comm, o);
  return ev.run(inputs);
}

TEST(Evaluator, SetToUnboundOutputIsAViewToAllocatedOutputACopy) {
  HostProgram p = parseHostProgramFile(dataPath("view_vs_copy.hir"));
  at::Tensor in = iota({3, 4});
  auto outs = runOne(p, {in});
  ASSERT_EQ(outs.size(), 4u);
  // T1 = Set(T0), T1 unbound: a view of the input.
  EXPECT_TRUE(outs[0].is_alias_of(in));
  // T2 allocated first: a copy.
  EXPECT_FALSE(outs[1].is_alias_of(in));
  EXPECT_TRUE(at::equal(outs[1], in));
  // Set.Permute to an unbound output: a permuted (non-contiguous) view.
  EXPECT_TRUE(outs[2].is_alias_of(in));
  EXPECT_FALSE(outs[2].is_contiguous());
  EXPECT_TRUE(at::equal(outs[2], in.t()));
  // Set.Permute into an allocated output: a contiguous copy.
  EXPECT_FALSE(outs[3].is_alias_of(in));
  EXPECT_TRUE(outs[3].is_contiguous());
  EXPECT_TRUE(at::equal(outs[3], in.t()));
}

TEST(Evaluator, LegacyAllocateAfterAliasSelectWritesIntoTheSlice) {
  HostProgram p = parseHostProgramFile(dataPath("legacy_allocate_reuses_slice.hir"));
  at::Tensor in = iota({4, 3});
  auto outs = runOne(p, {in});
  EXPECT_TRUE(at::equal(outs[0], in + in));
}

TEST(Evaluator, NewAllocateAlwaysRebinds) {
  // The newer ALLOCATE rebinds T3 to a fresh buffer, so the adds never reach T1 (zero_init).
  HostProgram p = parseHostProgramFile(dataPath("new_allocate_rebinds.hir"));
  at::Tensor in = iota({4, 3}) + 1;
  auto outs = runOne(p, {in});
  EXPECT_TRUE(at::equal(outs[0], at::zeros({4, 3})));
}

TEST(Evaluator, ExtentsAreInferredFromInputs) {
  HostProgram p = parseHostProgramFile(examplePath("stream_set_serialized.hir"));
  auto comm = makeSelfCommunicator();
  Evaluator ev(p, *comm);
  at::Tensor in = iota({5, 7});
  auto outs = ev.run({in});
  EXPECT_TRUE(at::equal(outs[0], in));
  EXPECT_EQ(ev.scalars().at("i0"), 5);
  EXPECT_EQ(ev.scalars().at("i2"), 7);
}

TEST(Evaluator, SeparateSyncLoopGivesTheSameResult) {
  HostProgram p = parseHostProgramFile(examplePath("stream_set_sync_loop.hir"));
  at::Tensor in = iota({6, 2});
  EXPECT_TRUE(at::equal(runOne(p, {in})[0], in));
}

TEST(Evaluator, PostOnStreamRunsTheHostUnitOpByOp) {
  HostProgram p = parseHostProgramFile(examplePath("hostunit_broadcast_relu.hir"));
  at::Tensor in = iota({4, 5}) - 9;
  auto outs = runOne(p, {in});
  EXPECT_TRUE(at::equal(outs[0], at::relu(in).unsqueeze(1)));
}

TEST(Evaluator, AliasedOutputIsWrittenInPlace) {
  HostProgram p = parseHostProgramFile(examplePath("stream_inplace_square_alias.hir"));
  at::Tensor in = iota({3, 4});
  at::Tensor expect = in * in;
  auto outs = runOne(p, {in});
  EXPECT_TRUE(at::equal(outs[0], expect));
  EXPECT_TRUE(outs[0].is_alias_of(in));
}

TEST(Evaluator, ModernDialectWithShardByStream) {
  HostProgram p = parseHostProgramFile(examplePath("stream_add_gelu_modern.hir"));
  std::vector<at::Tensor> inputs;
  for (const TensorView* tv : p.inputs()) {
    Bindings b{{"i0", 8}, {"i2", 3}};
    inputs.push_back(randomInput(sem::bufferShape(*tv, b), 1, tv->name()).to(at::kFloat));
  }
  auto outs = runOne(p, inputs, {{"i0", 8}, {"i2", 3}});
  ASSERT_EQ(outs.size(), 1u);
  EXPECT_FALSE(outs[0].isnan().any().item<bool>()) << "some chunk of the output was never written";
}

// The host profile (exec/host_profile.h): one sample per executed statement, by kind, for the
// runs made while it is set; its total is part of the runs' issue time.
TEST(Evaluator, HostProfileCountsEveryExecutedStatementByKind) {
  HostProgram p = parseHostProgramFile(examplePath("stream_add_gelu_modern.hir"));
  Bindings b{{"i0", 8}, {"i2", 3}};
  std::vector<at::Tensor> inputs;
  for (const TensorView* tv : p.inputs())
    inputs.push_back(randomInput(sem::bufferShape(*tv, b), 1, tv->name()).to(at::kFloat));
  auto comm = makeSelfCommunicator();
  std::map<std::string, int64_t> seen;  // what onStatement saw, by the profile's kind
  EvalOptions o;
  o.bindings = b;
  o.onStatement = [&](const Stmt& s, int64_t) { ++seen[std::string(hostProfileKind(s))]; };
  Evaluator ev(p, *comm, o);
  ev.run(inputs);  // not profiled
  seen.clear();
  HostProfile profile;
  ev.setHostProfile(&profile);
  constexpr int64_t kRuns = 3;
  double issueNs = 0;
  for (int64_t i = 0; i < kRuns; ++i) {
    ev.run(inputs);
    issueNs += ev.lastIssueUs() * 1e3;
  }
  ev.setHostProfile(nullptr);
  const HostProfile before = profile;
  const std::map<std::string, int64_t> profiled = seen;
  ev.run(inputs);  // not profiled either
  EXPECT_EQ(profile.totalCount(), before.totalCount());
  EXPECT_EQ(profile.totalNs(), before.totalNs());
  seen = profiled;
  int64_t loops = 0;
  forEachStmt(p.body(), [&](const Stmt& s, int) { loops += s.is<ForLoop>(); });
  ASSERT_EQ(loops, 2);
  int64_t statements = 0;
  for (const HostProfileEntry& e : profile.entries()) {
    EXPECT_GE(e.totalNs, 0) << e.kind;
    if (e.kind == "ForLoop") {
      EXPECT_EQ(e.count, loops * kRuns);
    } else if (e.kind == kHostProfileRunEntry || e.kind == kHostProfileRunExit) {
      EXPECT_EQ(e.count, kRuns) << e.kind;
    } else {
      EXPECT_EQ(e.count, seen[e.kind]) << e.kind;
      statements += e.count;
    }
  }
  for (const auto& [kind, n] : seen) EXPECT_NE(profile.find(kind), nullptr) << kind;
  EXPECT_EQ(statements, ev.executedStatements() * kRuns);
  EXPECT_EQ(profile.find(kHostProfileSkipped), nullptr);
  ASSERT_NE(profile.find("binary"), nullptr);
  EXPECT_EQ(profile.find("binary")->count, 4 * kRuns);  // FOR i17 from 0 to 4: one add each
  // Disjoint slices of the runs' issue time (a nested statement's time is not its loop's).
  EXPECT_LE(static_cast<double>(profile.totalNs()), issueNs + kRuns);
}

TEST(Evaluator, TransposeAndSumExample) {
  HostProgram p = parseHostProgramFile(examplePath("stream_transpose_sum.hir"));
  std::vector<at::Tensor> inputs;
  Bindings b{{"i0", 4}, {"i2", 8}, {"i3", 3}};
  for (const TensorView* tv : p.inputs())
    inputs.push_back(randomInput(sem::bufferShape(*tv, b), 2, tv->name()).to(at::kFloat));
  auto outs = runOne(p, inputs, b);
  ASSERT_EQ(outs.size(), 2u);
  EXPECT_TRUE(at::equal(outs[0], inputs[0].transpose(1, 2)));
  EXPECT_TRUE(at::allclose(outs[1], outs[0].sum(2)));
}

TEST(Evaluator, UnboundTensorIsAnErrorWithTheLocation) {
  HostProgram p = parseHostProgram(R"(%HostIrContainer { (T0_g_float[iS0{4}]) -> (T1_g_float[iS1{4}]) :
  T1_g_float[iS1{4}]
     = T2_g_float[iS2{4}]
     + T0_g_float[iS0{4}];
} // %HostIrContainer
)",
                                   "bad.hir");
  try {
    runOne(p, {iota({4})});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    std::string msg = e.what();
    EXPECT_NE(msg.find("bad.hir:2"), std::string::npos) << msg;
    EXPECT_NE(msg.find("T2"), std::string::npos) << msg;
  }
}

TEST(Evaluator, WrongInputShapeIsAnError) {
  HostProgram p = parseHostProgram(R"(%HostIrContainer { (T0_g_float[iS0{4}, iS1{3}]) -> (T0_g_float[iS0{4}, iS1{3}]) :
} // %HostIrContainer
)");
  EXPECT_THROW(runOne(p, {iota({4, 5})}), Error);
}

TEST(Evaluator, UnboundSymbolNamesTheBindFlag) {
  HostProgram p = parseHostProgram(R"(%HostIrContainer { (T0_g_float[iS0{4}]) -> (T1_g_float[iS1{i5}]) :
  T1_g_float[iS1{i5}] = ALLOCATE(buffer=T1_g_float[iS1{i5}], mem_type=global, size=i5, zero_init=false, resets_to_zero=false)
} // %HostIrContainer
)");
  try {
    runOne(p, {iota({4})});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("unbound symbol(s) i5"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--bind"), std::string::npos) << e.what();
  }
}

TEST(Evaluator, CommunicationOnOneRankNeedsMoreRanks) {
  HostProgram p = parseHostProgramFile(dataPath("collectives_4ranks.hir"));
  at::Tensor in = iota({1, 8});
  try {
    runOne(p, {in});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--ranks 4"), std::string::npos) << e.what();
  }
}

// The size rule of ir/semantics (the one verify and sim apply) is checked by the evaluator before
// any communicator sees the buffers: the same words on every backend, with the statement's place.
TEST(Evaluator, ACommunicationOfTheWrongSizeIsRefusedWithTheSemanticsRule) {
  HostProgram p = parseHostProgram(
      "%HostIrContainer { (T0_g_float[iS0{8}] (DeviceMesh{0})) -> (T1_g_float[iS1{16}] (DeviceMesh{0})) :\n"
      "  T1_g_float[iS1{16}] (DeviceMesh{0}) = ALLOCATE(buffer=T1_g_float[iS1{16}] (DeviceMesh{0}), mem_type=global, "
      "size=16, zero_init=false, resets_to_zero=false)\n"
      "  Communication 7 (type=Allgather, team=(0), input=T0_g_float[iS0{8}] (DeviceMesh{0}), "
      "output=T1_g_float[iS1{16}] (DeviceMesh{0}), backend=CUDA)\n"
      "  Wait Communication 7\n"
      "} // %HostIrContainer\n",
      "size.hir");
  try {
    runOne(p, {iota({8})});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("size.hir:3:3: Communication: Allgather 7: an Allgather over 1 ranks needs an "
                                         "output of 1 x 8 elements, got 16"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace braid::exec

#endif  // BRAID_WITH_TORCH
