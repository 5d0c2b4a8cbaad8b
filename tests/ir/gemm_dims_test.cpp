// The GEMM a matmul or linear runs (ir/semantics/shape_inference.h, GemmDims), as torch.matmul
// folds it: the simulator costs GEMMs by it (tile waves, measured shapes), so sharded programs'
// size-1 axes must not turn one GEMM into a batch of vector products.
#include <gtest/gtest.h>

#include "ir/fusion.h"
#include "ir/ops.h"
#include "ir/semantics/shape_inference.h"

namespace braid {
namespace {

sem::GemmDims gemmOf(TensorView* out, const std::vector<std::vector<int64_t>>& ins) {
  return sem::inferOpResult(*out->definition(), ins, {}).gemm;
}

TEST(GemmDims, FoldsBatchesIntoRowsWhenBIsAMatrix) {
  Fusion f;
  TensorView* a = f.makeTensor({8, 64, 16});
  TensorView* b = f.makeTensor({16, 32});
  EXPECT_EQ(gemmOf(matmul(a, b), {{8, 64, 16}, {16, 32}}), (sem::GemmDims{1, 512, 32, 16}));
  // A sharded B's local device axis (extent 1) and a trailing extent-1 axis of A: still one GEMM.
  TensorView* a3 = f.makeTensor({8192, 1, 4096});
  TensorView* b3 = f.makeTensor({1, 4096, 4096});
  EXPECT_EQ(gemmOf(matmul(a3, b3), {{8192, 1, 4096}, {1, 4096, 4096}}), (sem::GemmDims{1, 8192, 4096, 4096}));
}

TEST(GemmDims, BatchedBKeepsTheBatch) {
  Fusion f;
  TensorView* a = f.makeTensor({5, 8, 16});
  TensorView* b = f.makeTensor({5, 16, 2});
  EXPECT_EQ(gemmOf(matmul(a, b), {{5, 8, 16}, {5, 16, 2}}), (sem::GemmDims{5, 8, 2, 16}));
}

TEST(GemmDims, VectorsAndLinear) {
  Fusion f;
  TensorView* a = f.makeTensor({8, 16});
  TensorView* v = f.makeTensor({16});
  EXPECT_EQ(gemmOf(matmul(a, v), {{8, 16}, {16}}), (sem::GemmDims{1, 8, 1, 16}));
  TensorView* b = f.makeTensor({16, 4});
  EXPECT_EQ(gemmOf(matmul(v, b), {{16}, {16, 4}}), (sem::GemmDims{1, 1, 4, 16}));
  // linear(x [m, k], w [n, k]): n from the weight's rows.
  TensorView* x = f.makeTensor({64, 16});
  TensorView* w = f.makeTensor({32, 16});
  EXPECT_EQ(gemmOf(linear(x, w), {{64, 16}, {32, 16}}), (sem::GemmDims{1, 64, 32, 16}));
  // Not a GEMM: all zero.
  EXPECT_EQ(sem::inferOpResult(*add(a, a)->definition(), {{8, 16}, {8, 16}}, {}).gemm, sem::GemmDims{});
}

}  // namespace
}  // namespace braid
