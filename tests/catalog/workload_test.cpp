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

// One axis per loop IterDomain: the extent, prefixed `r` (reduction) or `b` (broadcast) and
// suffixed `s` (Stream) or `d` (DIDx): "4s, r2, 8d, 630".
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

// Every size divides for D, S in 1..8: m by any S*D (lcm of all such products), k and n by D.
constexpr int64_t kM = 705600;  // 2^6 * 3^2 * 5^2 * 7^2
constexpr int64_t kK = 840;
constexpr int64_t kN = 840;

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

struct Expected {
  std::vector<std::string> tensors;  // desc() of every tensor, in creation order
  size_t inputs;                     // the first `inputs` tensors are the fusion inputs
};

// The table of docs/WORKLOADS.md, for D devices and S streams.
Expected expected(const std::string& name, int64_t D, int64_t S, PipelineKind pipeline) {
  const std::string s = n(S), d = n(D), m = n(kM), k = n(kK), nn = n(kN);
  const std::string mS = n(kM / S), mSD = n(kM / (S * D)), kD = n(kK / D), nD = n(kN / D), mD = n(kM / D);
  if (name == "allgather")
    return {{s + ", " + d + "d, " + mSD + ", " + nn, s + "s, " + d + ", " + mSD + ", " + nn}, 1};
  if (name == "allreduce") return {{s + ", " + d + "d, " + mS + ", " + nn, s + "s, r" + d + ", " + mS + ", " + nn}, 1};
  if (name == "reduce_scatter")
    return {{s + ", " + d + "d, " + d + ", " + mSD + ", " + nn, s + "s, r" + d + ", " + d + "d, " + mSD + ", " + nn}, 1};
  if (name == "ag_matmul" && pipeline == PipelineKind::kP2P)
    return {{d + "d, " + mD + ", " + k, k + ", " + nn, d + "s, " + mD + ", " + k, d + "s, " + mD + ", " + nn + ", r" + k},
            2};
  if (name == "ag_matmul")
    return {{s + ", " + d + "d, " + mSD + ", " + k, k + ", " + nn, s + "s, " + d + ", " + mSD + ", " + k,
             s + "s, " + d + ", " + mSD + ", " + nn + ", r" + k},
            2};
  if (name == "matmul_ar")
    return {{s + ", " + d + "d, " + mS + ", " + kD, d + "d, " + kD + ", " + nn,
             s + ", " + d + ", " + mS + ", " + nn + ", r" + kD, s + "s, r" + d + ", " + mS + ", " + nn},
            2};
  if (name == "matmul_rs")
    return {{s + ", " + d + "d, " + d + ", " + mSD + ", " + kD, d + "d, " + kD + ", " + nn,
             d + ", b1, " + kD + ", " + nn, s + ", " + d + ", " + d + ", " + mSD + ", " + nn + ", r" + kD,
             s + "s, r" + d + ", " + d + "d, " + mSD + ", " + nn},
            2};
  if (name == "row_parallel_linear")
    return {{s + ", " + d + "d, " + mS + ", " + kD, d + "d, " + nn + ", " + kD,
             s + ", " + d + ", " + mS + ", " + nn + ", r" + kD, s + "s, r" + d + ", " + mS + ", " + nn},
            2};
  if (name == "column_parallel_linear")
    return {{s + ", " + mS + ", " + k, d + "d, " + nD + ", " + k, s + ", b1, " + mS + ", " + k,
             s + "s, " + d + "d, " + mS + ", " + nD + ", r" + k},
            2};
  if (name == "mlp")
    return {{s + ", " + mS + ", " + k, d + "d, " + nD + ", " + k, d + "d, " + k + ", " + nD, s + ", b1, " + mS + ", " + k,
             s + ", " + d + ", " + mS + ", " + nD + ", r" + k, s + ", " + d + ", " + mS + ", " + nD,
             s + ", " + d + ", " + mS + ", " + k + ", r" + nD, s + "s, r" + d + ", " + mS + ", " + k},
            3};
  ADD_FAILURE() << "no expectation for " << name;
  return {};
}

using testing::errorOf;

TEST(WorkloadCatalog, NamesInAStableOrder) {
  std::vector<std::string> names;
  for (const WorkloadInfo& w : workloadCatalog()) {
    names.push_back(w.name);
    EXPECT_FALSE(w.description.empty()) << w.name;
    EXPECT_TRUE(static_cast<bool>(w.build)) << w.name;
  }
  EXPECT_THAT(names, ::testing::ElementsAre("allgather", "allreduce", "reduce_scatter", "ag_matmul", "matmul_ar",
                                            "matmul_rs", "row_parallel_linear", "column_parallel_linear", "mlp"));
}

void checkWorkload(const std::string& name, int64_t D, int64_t S, PipelineKind pipeline) {
  SCOPED_TRACE(name + " D=" + n(D) + " S=" + n(S) + " pipeline=" + pipelineKindName(pipeline));
  Workload w = makeWorkload(name, paramsFor(D, S, pipeline));
  EXPECT_EQ(w.name, name);
  EXPECT_EQ(w.params.devices, D);
  EXPECT_EQ(w.params.streams, S);
  EXPECT_EQ(w.params.lowering.streams, S);  // S is also numberOfStreams
  EXPECT_EQ(w.params.lowering.pipeline, pipeline);
  ASSERT_NE(w.fusion, nullptr);
  Expected want = expected(name, D, S, pipeline);
  std::vector<TensorView*> tvs = w.fusion->tensors();
  std::vector<std::string> got;
  for (const TensorView* tv : tvs) got.push_back(desc(tv));
  EXPECT_EQ(got, want.tensors);
  // Inputs are the first tensors, the output is the last one.
  ASSERT_EQ(w.fusion->inputs().size(), want.inputs);
  for (size_t i = 0; i < want.inputs; ++i) EXPECT_EQ(w.fusion->inputs()[i], tvs[i]);
  ASSERT_EQ(w.fusion->outputs().size(), 1u);
  EXPECT_EQ(w.fusion->outputs()[0], tvs.back());
  for (const TensorView* tv : tvs) {
    ASSERT_TRUE(tv->hasDeviceMesh()) << tv->nameStr();
    EXPECT_EQ(*tv->deviceMesh(), DeviceMesh::range(D)) << tv->nameStr();
    EXPECT_EQ(tv->dtype(), DataType::kFloat);
    EXPECT_EQ(tv->loop(), tv->logical()) << "workloads parallelize logical axes only";
  }
  // Every non-input is defined by an Expr; the output carries the Stream axis.
  for (size_t i = want.inputs; i < tvs.size(); ++i) EXPECT_NE(tvs[i]->definition(), nullptr);
  EXPECT_EQ(tvs.back()->loopAxisOf(ParallelType::kStream), 0);
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

TEST(WorkloadCatalog, OpsAndAttributes) {
  Workload rs = makeWorkload("matmul_rs", paramsFor(4, 2));
  std::vector<Expr*> exprs = rs.fusion->exprs();
  ASSERT_EQ(exprs.size(), 3u);
  EXPECT_EQ(exprs[0]->type(), OpType::kBroadcast);
  EXPECT_EQ(exprs[0]->broadcastFlags, (std::vector<bool>{false, true, false, false}));
  EXPECT_EQ(exprs[1]->type(), OpType::kMatmul);
  EXPECT_EQ(exprs[2]->type(), OpType::kReduction);
  EXPECT_EQ(exprs[2]->reductionOp, ReductionOpType::kAdd);

  Workload mlp = makeWorkload("mlp", paramsFor(2, 2));
  std::vector<OpType> types;
  for (Expr* e : mlp.fusion->exprs()) types.push_back(e->type());
  EXPECT_THAT(types, ::testing::ElementsAre(OpType::kBroadcast, OpType::kLinear, OpType::kUnary, OpType::kLinear,
                                            OpType::kReduction));
  EXPECT_EQ(mlp.fusion->exprs()[2]->unaryOp, UnaryOpType::kGelu);

  Workload ag = makeWorkload("allgather", paramsFor(2, 2));
  EXPECT_EQ(ag.fusion->exprs().at(0)->type(), OpType::kSet);
  EXPECT_EQ(ag.fusion->outputs()[0]->str(),
            "T1_g_float[iStreamIdx4{2}, iS5{2}, iS6{176400}, iS7{840}] (DeviceMesh{0 1})");
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
  p = paramsFor(8, 3);
  p.m = 20;
  EXPECT_EQ(errorOf([&] { makeWorkload("allreduce", p); }), "allreduce needs m divisible by streams (m=20, S=3, D=8)");
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
}

TEST(WorkloadErrors, CountsAndSizesOutOfRange) {
  for (const WorkloadInfo& info : workloadCatalog()) {
    SCOPED_TRACE(info.name);
    WorkloadParams p = paramsFor(2, 2);
    p.streams = 0;
    EXPECT_THAT(errorOf([&] { makeWorkload(info.name, p); }), HasSubstr("needs 1 <= streams <= 8192, got 0"));
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
