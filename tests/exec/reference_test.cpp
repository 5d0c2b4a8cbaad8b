// Reference pieces: slicing and gathering of full tensors, comparison messages, .npy files, and
// every catalog workload on one rank (in process).
#ifdef BRAID_WITH_TORCH  // exec has no evaluator without libtorch (see cli_run_test.cpp)

#include <gtest/gtest.h>

#include <map>


#include "catalog/workload.h"
#include "exec/check.h"
#include "tests/support/temp_dir.h"
#include "exec/reference.h"
#include "exec/tensor_ops.h"
#include "ir/error.h"
#include "ir/ops.h"
#include "passes/lower.h"

namespace braid::exec {
namespace {

TEST(Reference, SliceAndAssembleRoundTrip) {
  Fusion f;
  TensorView* tv = f.makeTensor({3, 4, 5});
  tv->setDeviceMesh(DeviceMesh::range(4));
  tv->parallelize(1, ParallelType::kDIDx);
  at::Tensor full = randomInput({3, 4, 5}, 7, 0);
  std::vector<at::Tensor> locals;
  for (int64_t r = 0; r < 4; ++r) {
    at::Tensor l = sliceForRank(full, *tv, r, at::kDouble);
    EXPECT_EQ(l.sizes().vec(), (std::vector<int64_t>{3, 1, 5}));
    EXPECT_TRUE(at::equal(l, full.narrow(1, r, 1)));
    locals.push_back(l);
  }
  std::string mismatch;
  at::Tensor back = assembleFull(locals, *tv, {3, 4, 5}, &mismatch);
  EXPECT_TRUE(mismatch.empty());
  EXPECT_TRUE(at::equal(back, full));
}

TEST(Reference, ReplicatedOutputsMustAgree) {
  Fusion f;
  TensorView* tv = f.makeTensor({2, 2});
  at::Tensor a = at::ones({2, 2}, at::kDouble);
  std::string mismatch;
  assembleFull({a, a.clone()}, *tv, {2, 2}, &mismatch);
  EXPECT_TRUE(mismatch.empty());
  assembleFull({a, a * 2}, *tv, {2, 2}, &mismatch);
  EXPECT_NE(mismatch.find("rank 1"), std::string::npos) << mismatch;
}

TEST(Reference, InputsAreSmallIntegersAndDeterministic) {
  at::Tensor a = randomInput({64}, 3, 1);
  EXPECT_TRUE(at::equal(a, randomInput({64}, 3, 1)));
  EXPECT_FALSE(at::equal(a, randomInput({64}, 4, 1)));
  EXPECT_TRUE(at::equal(a, a.round()));
  EXPECT_LE(a.abs().max().item<double>(), 2);
}

// --inputs normal: standard normal values, deterministic in (seed, index), not integers; the
// microbenchmarks' draw gives the same two kinds in the dtype asked for.
TEST(Reference, NormalInputsAreDeterministicAndNotIntegers) {
  at::Tensor a = randomInput({4096}, 3, 1, InputValues::kNormal);
  EXPECT_TRUE(at::equal(a, randomInput({4096}, 3, 1, InputValues::kNormal)));
  EXPECT_FALSE(at::equal(a, randomInput({4096}, 3, 1)));
  EXPECT_FALSE(at::equal(a, a.round()));
  EXPECT_NEAR(a.mean().item<double>(), 0, 0.1);
  EXPECT_NEAR(a.std().item<double>(), 1, 0.1);
  at::Tensor i = drawValues({64, 64}, InputValues::kIntegers, at::TensorOptions().dtype(at::kBFloat16));
  EXPECT_EQ(i.scalar_type(), at::kBFloat16);
  at::Tensor id = i.to(at::kDouble);
  EXPECT_TRUE(at::equal(id, id.round()));
  EXPECT_LE(id.abs().max().item<double>(), 2);
  EXPECT_GT(id.abs().max().item<double>(), 0);
  at::Tensor n = drawValues({64, 64}, InputValues::kNormal, at::TensorOptions().dtype(at::kFloat)).to(at::kDouble);
  EXPECT_FALSE(at::equal(n, n.round()));
  EXPECT_EQ(inputValuesNamed("normal"), InputValues::kNormal);
  EXPECT_THROW(inputValuesNamed("ones"), Error);
}

TEST(Reference, CompareSaysWhereAndByHowMuch) {
  at::Tensor want = at::zeros({2, 3}, at::kDouble);
  at::Tensor got = want.clone();
  got[1][2] = 0.5;
  Comparison c = compare(got, want, 1e-5);
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.bad, 1);
  EXPECT_EQ(c.worst, (std::vector<int64_t>{1, 2}));
  std::string d = describe(c);
  EXPECT_NE(d.find("[1, 2]"), std::string::npos) << d;
  EXPECT_NE(d.find("got 0.5"), std::string::npos) << d;
  // A never-written (NaN) element is a mismatch too.
  got[1][2] = std::nan("");
  EXPECT_FALSE(compare(got, want, 1e-5).ok);
  EXPECT_TRUE(compare(want, want, 0).ok);
  EXPECT_FALSE(compare(at::zeros({3}), want, 1).ok);
}

TEST(Reference, NpyRoundTrip) {
  testing::TempDir dir("braid_npy_");
  at::Tensor t = randomInput({2, 3, 4}, 1, 0).to(at::kFloat);
  saveNpy(dir.file("t.npy"), t);
  at::Tensor back = loadNpy(dir.file("t.npy"));
  EXPECT_TRUE(at::equal(back, t));
  EXPECT_THROW(loadNpy("/nonexistent/x.npy"), Error);
}

TEST(TensorOps, LinearSqueezesAShardedWeightAxis) {
  // W printed as [n, DIDx{D}, k/D] (nvFuser's row-parallel dump): locally [n, 1, k/D].
  Fusion f;
  TensorView* x = f.makeTensor({2, 3});
  TensorView* w = f.makeTensor({5, 4, 3});
  w->parallelize(1, ParallelType::kDIDx);
  TensorView* y = f.makeTensor({2, 5});
  Expr* e = f.newExpr(OpType::kLinear, {x, w}, {y});
  at::Tensor xt = randomInput({2, 3}, 1, 0).to(at::kFloat);
  at::Tensor wt = randomInput({5, 1, 3}, 1, 1).to(at::kFloat);
  Bindings b;
  at::Tensor r = evalOp(*e, {xt, wt}, at::Tensor(), OpContext{&b, false, std::nullopt});
  EXPECT_TRUE(at::allclose(r, at::matmul(xt, wt.squeeze(1).t())));
}

// A sharded operand's unit axis: [m, 1, k] @ [k, n] is one GEMM written straight into the
// program's [m, n, 1] buffer, and so is a linear's transposed weight; a buffer of another size,
// type or layout is left alone.
TEST(TensorOps, MatmulWithUnitAxesWritesStraightIntoItsBuffer) {
  at::Tensor a = randomInput({4, 1, 3}, 1, 0).to(at::kFloat), b = randomInput({3, 5}, 1, 1).to(at::kFloat);
  at::Tensor out = at::full({4, 5, 1}, 7.0, at::kFloat);
  const void* where = out.data_ptr();
  ASSERT_TRUE(mmIntoRows(out, a, b));
  EXPECT_EQ(out.data_ptr(), where);
  EXPECT_TRUE(at::equal(out.reshape({4, 5}), at::matmul(a.reshape({4, 3}), b)));
  at::Tensor w = randomInput({5, 3}, 1, 2).to(at::kFloat);
  ASSERT_TRUE(mmIntoRows(out, a, w.t()));
  EXPECT_TRUE(at::equal(out.reshape({4, 5}), at::matmul(a.reshape({4, 3}), w.t())));
  EXPECT_FALSE(mmIntoRows(at::empty({4, 4}, at::kFloat), a, b));
  EXPECT_FALSE(mmIntoRows(at::empty({4, 5, 1}, at::kDouble), a, b));
  EXPECT_FALSE(mmIntoRows(at::empty({5, 4}, at::kFloat).t(), a, b));
  EXPECT_FALSE(mmIntoRows(at::Tensor(), a, b));
}

TEST(TensorOps, MatmulWritesIntoAPreallocatedOutput) {
  Fusion f;
  TensorView* a = f.makeTensor({2, 3});
  TensorView* bb = f.makeTensor({3, 4});
  TensorView* c = matmul(a, bb);
  at::Tensor at_a = randomInput({2, 3}, 1, 0).to(at::kFloat), at_b = randomInput({3, 4}, 1, 1).to(at::kFloat);
  at::Tensor out = at::full({2, 4}, 7.0, at::kFloat);
  Bindings b;
  at::Tensor r = evalOp(*c->definition(), {at_a, at_b}, out, OpContext{&b, false, std::nullopt});
  EXPECT_TRUE(r.is_same(out));
  EXPECT_TRUE(at::allclose(out, at::matmul(at_a, at_b)));
}

// Every catalog workload, lowered for one device, matches its reference in process.
TEST(Reference, EveryWorkloadOnOneRank) {
  auto comm = makeSelfCommunicator();
  for (const auto& info : workloadCatalog()) {
    for (int64_t s : {1, 3}) {
      WorkloadParams p;
      p.devices = 1;
      p.streams = s;
      p.m = 6 * s;
      p.k = 4;
      p.n = 5 * s;  // cut into S chunks by matmul_n_chunks
      Workload w = makeWorkload(info.name, p);  // the reference (lowering rewrites its input)
      Workload to_lower = makeWorkload(info.name, p);
      HostProgram prog = lower(*to_lower.fusion, to_lower.params.lowering, 1);
      CheckOptions o;
      o.numberOfStreams = s;
      CheckResult r = runAndCheck(prog, w.fusion.get(), *comm, o);
      EXPECT_TRUE(r.ok && r.checked) << info.name << " S=" << s << "\n" << r.report;
    }
  }
}

// A workload at m=8, k=4, n=4 on one device, lowered, with its reference.
struct SmallWorkload {
  Workload reference;
  HostProgram program;
};

SmallWorkload smallWorkload(const std::string& name, int64_t streams, DataType dtype = DataType::kFloat) {
  WorkloadParams p;
  p.devices = 1;
  p.streams = streams;
  p.m = 8;
  p.k = 4;
  p.n = 4;
  p.dtype = dtype;
  Workload to_lower = makeWorkload(name, p);  // lowering rewrites its fusion: the reference is another
  HostProgram program = lower(*to_lower.fusion, to_lower.params.lowering, 1);
  return {makeWorkload(name, p), std::move(program)};
}

// Normal inputs round in every dtype, and every workload's outputs still agree with the float64
// reference within the dtype's tolerance (bf16 and float32).
TEST(Reference, EveryWorkloadChecksOnNormalInputs) {
  auto comm = makeSelfCommunicator();
  for (const auto& info : workloadCatalog()) {
    for (DataType dt : {DataType::kFloat, DataType::kBFloat16}) {
      SmallWorkload sw = smallWorkload(info.name, 2, dt);
      CheckOptions o;
      o.numberOfStreams = 2;
      o.inputValues = InputValues::kNormal;
      CheckResult r = runAndCheck(sw.program, sw.reference.fusion.get(), *comm, o);
      EXPECT_TRUE(r.ok && r.checked) << info.name << " " << dataTypeName(dt) << "\n" << r.report;
    }
  }
}

// Warm-up runs happen between the checked run and the timed ones, and are not timed.
TEST(Reference, WarmupRunsAreRunButNotTimed) {
  auto comm = makeSelfCommunicator();
  SmallWorkload sw = smallWorkload("matmul_rs", 2);
  const HostProgram& prog = sw.program;
  const Workload& w = sw.reference;
  for (int64_t warmup : {0, 3}) {
    CheckOptions o;
    o.numberOfStreams = 2;
    o.repeat = 2;
    o.warmup = warmup;
    int64_t runs = 0;  // the program's first statement starts every run
    o.onStatement = [&](const Stmt&, int64_t n) { runs += n == 0; };
    CheckResult r = runAndCheck(prog, w.fusion.get(), *comm, o);
    EXPECT_TRUE(r.ok) << r.report;
    EXPECT_EQ(runs, 1 + warmup + 2) << "warmup " << warmup;
    EXPECT_EQ(r.timings.warmupRuns, warmup);
    EXPECT_EQ(r.timings.wallUs.size(), 2u) << "warmup " << warmup;
  }
}

// A sweep's programs share their seeded inputs through the cache, and check as without it; the
// cache keeps the last call's inputs only.
TEST(Reference, InputCacheIsReusedAndChecksTheSame) {
  auto comm = makeSelfCommunicator();
  std::map<std::string, at::Tensor> cache;
  for (int64_t s : {1, 2, 2}) {
    // float64: slices may alias the cached tensors, and the program must not write into them.
    SmallWorkload sw = smallWorkload("matmul_ar", s, DataType::kDouble);
    const HostProgram& prog = sw.program;
    const Workload& w = sw.reference;
    CheckOptions o;
    o.numberOfStreams = s;
    o.inputCache = &cache;
    const at::Tensor before = cache.empty() ? at::Tensor() : cache.begin()->second.clone();
    CheckResult r = runAndCheck(prog, w.fusion.get(), *comm, o);
    EXPECT_TRUE(r.ok && r.checked) << r.report;
    EXPECT_EQ(cache.size(), prog.inputs().size());
    if (before.defined()) EXPECT_TRUE(at::equal(before, cache.begin()->second));
  }
  // Other values are other inputs: not the cached integers.
  SmallWorkload sw = smallWorkload("matmul_ar", 2, DataType::kDouble);
  const at::Tensor integers = cache.begin()->second.clone();
  CheckOptions o;
  o.numberOfStreams = 2;
  o.inputCache = &cache;
  o.inputValues = InputValues::kNormal;
  CheckResult r = runAndCheck(sw.program, sw.reference.fusion.get(), *comm, o);
  EXPECT_TRUE(r.ok && r.checked) << r.report;
  EXPECT_FALSE(at::equal(integers, cache.begin()->second));
}

}  // namespace
}  // namespace braid::exec

#endif  // BRAID_WITH_TORCH
