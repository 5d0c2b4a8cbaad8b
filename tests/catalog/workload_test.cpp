// The workload catalog (docs/WORKLOADS.md): every workload builds for D, S in 1..8 with the
// documented shapes, parallel types, meshes and I/O, and bad sizes or names are reported.
#include "catalog/workload.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "ir/error.h"
#include "tests/support/error_of.h"

namespace braid {
namespace {

using ::testing::HasSubstr;

// Every size divides for D, S in 1..8: m by any S*D (lcm of all such products), k and n by D
// and n by S.
constexpr int64_t kM = 705600;  // 2^6 * 3^2 * 5^2 * 7^2
constexpr int64_t kK = 840;
constexpr int64_t kN = 705600;

WorkloadParams paramsFor(int64_t d, int64_t s, PipelineKind pipeline = PipelineKind::kCollective) {
  WorkloadParams p;
  p.devices = d;
  p.streams = s;
  p.m = kM;
  p.k = kK;
  p.n = kN;
  p.lowering.pipeline = pipeline;
  return p;
}

std::string n(int64_t v) { return std::to_string(v); }

using testing::errorOf;

const std::vector<std::string> kNames = {
    "single_set", "allgather", "allreduce", "reduce_scatter", "allgather_2d", "matmul_n_chunks", "two_matmuls_inlinable",
    "two_matmuls_not_inlinable", "ag_matmul", "ag_linear_bias", "matmul_ar", "matmul_rs", "matmul_rs_reduce",
    "row_parallel_linear", "column_parallel_linear", "mlp", "tp_dp_mlp"};

TEST(WorkloadCatalog, NamesInAStableOrder) {
  std::vector<std::string> names;
  for (const WorkloadInfo& w : workloadCatalog()) {
    names.push_back(w.name);
    EXPECT_FALSE(w.description.empty()) << w.name;
    EXPECT_TRUE(static_cast<bool>(w.build)) << w.name;
  }
  EXPECT_EQ(names, kNames);
}

// What every workload is: inputs on the mesh given by the user, one output, every op's result in
// the fusion, and every Stream or device axis the outer output of an outer split of a logical axis
// or a logical axis itself (the forms the lowering supports).
void checkWorkload(const std::string& name, int64_t D, int64_t S, PipelineKind pipeline) {
  SCOPED_TRACE(name + " D=" + n(D) + " S=" + n(S) + " pipeline=" + pipelineKindName(pipeline));
  Workload w = makeWorkload(name, paramsFor(D, S, pipeline));
  EXPECT_EQ(w.name, name);
  EXPECT_EQ(w.params.devices, D);
  EXPECT_EQ(w.params.streams, S);
  EXPECT_EQ(w.params.lowering.streams, S);  // S is also numberOfStreams
  EXPECT_EQ(w.params.lowering.pipeline, pipeline);
  ASSERT_NE(w.fusion, nullptr);
  ASSERT_EQ(w.fusion->outputs().size(), 1u);
  for (const TensorView* in : w.fusion->inputs()) {
    EXPECT_TRUE(in->hasUserMesh()) << in->nameStr();
    EXPECT_EQ(in->deviceMesh()->size(), D) << in->nameStr();
    EXPECT_EQ(in->definition(), nullptr);
  }
  int parallel_axes = 0;
  for (const TensorView* tv : w.fusion->tensors()) {
    EXPECT_EQ(tv->dtype(), DataType::kFloat);
    if (!w.fusion->isInput(tv)) EXPECT_NE(tv->definition(), nullptr) << tv->nameStr();
    for (const IterDomain* id : tv->loop()) {
      if (id->parallelType() == ParallelType::kSerial) continue;
      ++parallel_axes;
      const IdTransform* def = id->definition();
      if (def == nullptr) continue;  // a logical axis
      EXPECT_EQ(def->kind, IdTransform::Kind::kSplit) << id->str();
      EXPECT_FALSE(def->inner_split) << id->str();
      EXPECT_EQ(def->outer, id) << id->str();
    }
  }
  EXPECT_GT(parallel_axes, 0);
}

TEST(WorkloadCatalog, EveryWorkloadBuildsForOneToEightDevicesAndStreams) {
  for (const WorkloadInfo& info : workloadCatalog())
    for (int64_t D = 1; D <= 8; ++D)
      for (int64_t S = 1; S <= 8; ++S) {
        checkWorkload(info.name, D, S, PipelineKind::kCollective);
        if (info.name == "ag_matmul") checkWorkload(info.name, D, S, PipelineKind::kP2P);
        if (::testing::Test::HasFailure()) return;  // one readable failure, not hundreds
      }
}

// One axis per loop IterDomain: the extent, prefixed `r` (reduction) or `b` (broadcast) and
// suffixed `s` (Stream), `d` (DIDx) or `y` (DIDy): "4s, r2, 8d, 630".
std::string desc(const TensorView* tv) {
  std::string s;
  for (const IterDomain* id : tv->loop()) {
    if (!s.empty()) s += ", ";
    if (id->isReduction()) s += "r";
    if (id->isBroadcast()) s += "b";
    s += id->extent().str();
    if (id->isStream()) s += "s";
    if (id->parallelType() == ParallelType::kDIDx) s += "d";
    if (id->parallelType() == ParallelType::kDIDy) s += "y";
  }
  return s;
}

std::vector<std::string> descs(const Workload& w) {
  std::vector<std::string> v;
  for (const TensorView* tv : w.fusion->tensors()) v.push_back(desc(tv));
  return v;
}

// The schedules as the user writes them (docs/WORKLOADS.md), for D = 2, S = 4 and small sizes.
TEST(WorkloadCatalog, SchedulesAsNvFuserUsersWriteThem) {
  WorkloadParams p = paramsFor(2, 4);
  p.m = 64;
  p.k = 32;
  p.n = 16;
  using V = std::vector<std::string>;
  // [S, DIDx(D), m/(S*D)] by two outer splits; the output Stream-chunked.
  EXPECT_EQ(descs(makeWorkload("allgather", p)), (V{"4, 2d, 8, 16", "4s, 16, 16"}));
  EXPECT_EQ(descs(makeWorkload("allreduce", p)), (V{"2d, 64, 16", "r2, 4s, 16, 16"}));
  EXPECT_EQ(descs(makeWorkload("reduce_scatter", p)), (V{"2d, 64, 16", "r2, 4s, 2d, 8, 16"}));
  // nvFuser's row_parallel_linear_forward: X [s*, m/s, DIDx(d), k/d], W [n, DIDx(d), k/d], Y left
  // to propagation.
  EXPECT_EQ(descs(makeWorkload("row_parallel_linear", p)), (V{"4s, 16, 2d, 16", "16, 2d, 16", "64, 16, r32"}));
  EXPECT_EQ(descs(makeWorkload("matmul_rs", p)),
            (V{"64, 2d, 16", "2d, 16, 16", "4s, 2d, 8, 16, r2d, r16"}));
  WorkloadParams q = p;
  q.lowering.pipeline = PipelineKind::kP2P;
  EXPECT_EQ(descs(makeWorkload("ag_matmul", q)), (V{"2d, 32, 32", "32, 16", "2s, 32, 16, r32"}));
  // tp_dp_mlp: a [D/tp, tp] mesh, rows data-parallel (DIDy), weights tensor-parallel (DIDx).
  p.devices = 4;
  Workload tpdp = makeWorkload("tp_dp_mlp", p);
  EXPECT_EQ(tpdp.fusion->inputs()[0]->deviceMesh()->shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(tpdp.params.tp, 2);
  EXPECT_EQ(descs(tpdp)[0], "2y, 4s, 8, 32");
  EXPECT_EQ(descs(tpdp)[1], "2d, 8, 32");
  EXPECT_EQ(descs(tpdp)[2], "32, 2d, 8");
}

TEST(WorkloadCatalog, OpsAndAttributes) {
  Workload mlp = makeWorkload("mlp", paramsFor(2, 2));
  std::vector<OpType> types;
  for (Expr* e : mlp.fusion->exprs()) types.push_back(e->type());
  EXPECT_THAT(types, ::testing::ElementsAre(OpType::kLinear, OpType::kUnary, OpType::kLinear));
  EXPECT_EQ(mlp.fusion->exprs()[1]->unaryOp, UnaryOpType::kGelu);
  Workload ar = makeWorkload("allreduce", paramsFor(2, 2));
  EXPECT_EQ(ar.fusion->exprs().at(0)->type(), OpType::kReduction);
  EXPECT_EQ(ar.fusion->exprs().at(0)->reductionOp, ReductionOpType::kAdd);
  Workload bias = makeWorkload("ag_linear_bias", paramsFor(2, 2));
  EXPECT_EQ(bias.fusion->exprs().at(0)->inputs().size(), 3u);
}

TEST(WorkloadCatalog, DtypeAndCatalogBuildValidate) {
  WorkloadParams p = paramsFor(2, 4);
  p.dtype = DataType::kBFloat16;
  Workload w = makeWorkload("row_parallel_linear", p);
  for (const TensorView* tv : w.fusion->tensors()) EXPECT_EQ(tv->dtype(), DataType::kBFloat16);
  // The catalog's own build functions validate like makeWorkload.
  p.streams = 0;
  EXPECT_THAT(errorOf([&] { workloadCatalog().front().build(p); }), HasSubstr("streams"));
}

TEST(WorkloadErrors, SizesThatDoNotDivide) {
  WorkloadParams p = paramsFor(8, 4);
  p.m = 1000;
  EXPECT_EQ(errorOf([&] { makeWorkload("matmul_rs", p); }),
            "matmul_rs needs m divisible by streams*devices (m=1000, S=4, D=8)");
  EXPECT_EQ(errorOf([&] { makeWorkload("allgather", p); }),
            "allgather needs m divisible by streams*devices (m=1000, S=4, D=8)");
  // A Stream split may leave a shorter last chunk, but not an empty one.
  p = paramsFor(8, 4);
  p.m = 10;
  EXPECT_NO_THROW(makeWorkload("allreduce", p));  // chunks of 3, 3, 3, 1
  p.m = 6;
  EXPECT_EQ(errorOf([&] { makeWorkload("allreduce", p); }),
            "allreduce needs m=6 to give 4 non-empty chunks of ceilDiv(6, 4) = 2 (S=4, D=8)");
  p = paramsFor(8, 4);
  p.k = 100;
  EXPECT_EQ(errorOf([&] { makeWorkload("matmul_ar", p); }), "matmul_ar needs k divisible by devices (k=100, S=4, D=8)");
  EXPECT_THAT(errorOf([&] { makeWorkload("row_parallel_linear", p); }), HasSubstr("k divisible by devices"));
  p = paramsFor(8, 4);
  p.n = 12;
  EXPECT_THAT(errorOf([&] { makeWorkload("column_parallel_linear", p); }), HasSubstr("n divisible by devices (n=12"));
  EXPECT_THAT(errorOf([&] { makeWorkload("mlp", p); }), HasSubstr("n divisible by devices"));
  // The p2p pipeline has D chunks: m must divide by D only.
  p = paramsFor(3, 4, PipelineKind::kP2P);
  p.m = 6;
  EXPECT_NO_THROW(makeWorkload("ag_matmul", p));
  p.lowering.pipeline = PipelineKind::kCollective;
  EXPECT_THAT(errorOf([&] { makeWorkload("ag_matmul", p); }), HasSubstr("m divisible by streams*devices"));
  p = paramsFor(4, 4, PipelineKind::kP2P);
  p.m = 6;
  EXPECT_EQ(errorOf([&] { makeWorkload("ag_matmul", p); }), "ag_matmul needs m divisible by devices (m=6, S=4, D=4)");
  // The 2D mesh needs tp to divide D.
  p = paramsFor(6, 2);
  p.tp = 4;
  EXPECT_EQ(errorOf([&] { makeWorkload("tp_dp_mlp", p); }), "tp_dp_mlp needs devices divisible by tp (devices=6, S=2, D=6)");
}

TEST(WorkloadErrors, CountsAndSizesOutOfRange) {
  for (const WorkloadInfo& info : workloadCatalog()) {
    SCOPED_TRACE(info.name);
    WorkloadParams p = paramsFor(2, 2);
    p.streams = 0;
    EXPECT_THAT(errorOf([&] { makeWorkload(info.name, p); }), HasSubstr("needs 1 <= streams <= 4096, got 0"));
    p = paramsFor(2, 2);
    p.streams = -3;
    EXPECT_THAT(errorOf([&] { makeWorkload(info.name, p); }), HasSubstr("got -3"));
    p = paramsFor(2, 2);
    p.devices = 0;
    EXPECT_THAT(errorOf([&] { makeWorkload(info.name, p); }), HasSubstr("needs 1 <= devices <= 8192, got 0"));
    p.devices = 8193;
    EXPECT_THAT(errorOf([&] { makeWorkload(info.name, p); }), HasSubstr("got 8193"));
    p = paramsFor(2, 2);
    p.m = 0;
    EXPECT_THAT(errorOf([&] { makeWorkload(info.name, p); }), HasSubstr("got m=0"));
    p = paramsFor(2, 2);
    p.k = -8;
    EXPECT_THAT(errorOf([&] { makeWorkload(info.name, p); }), HasSubstr("got k=-8"));
    p = paramsFor(2, 2);
    p.n = int64_t{1} << 40;
    EXPECT_THAT(errorOf([&] { makeWorkload(info.name, p); }), HasSubstr("n <= 2147483648"));
  }
  // The largest mesh builds.
  WorkloadParams big = paramsFor(8192, 1);
  big.m = 8192;
  big.k = 8192;
  Workload w = makeWorkload("allreduce", big);
  EXPECT_EQ(w.fusion->inputs()[0]->deviceMesh()->size(), 8192);
}

TEST(WorkloadErrors, UnknownNameListsTheKnownOnes) {
  std::string msg = errorOf([] { makeWorkload("all_gather", WorkloadParams{}); });
  EXPECT_THAT(msg, HasSubstr("unknown workload 'all_gather'"));
  for (const WorkloadInfo& info : workloadCatalog()) EXPECT_THAT(msg, HasSubstr(info.name));
}

TEST(WorkloadCatalog, DefaultParamsBuildEverything) {
  for (const WorkloadInfo& info : workloadCatalog()) EXPECT_NO_THROW(makeWorkload(info.name, WorkloadParams{})) << info.name;
}

}  // namespace
}  // namespace braid
