// End-to-end tests of `braid lower` (each runs the binary, whose start-up dominates): the catalog listing, a lowered workload equal to its golden
// file, the pass dump, and the exit codes and messages for bad options.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/host_ir_text.h"
#include "tests/support/cli_runner.h"

namespace braid {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

using Result = testing::CliResult;
using testing::slurpFile;

Result braid(const std::string& args) { return testing::runBraid(args); }

TEST(CliLower, ListsTheCatalog) {
  Result r = braid("lower --list");
  EXPECT_EQ(r.rc, 0) << r.err;
  for (const char* name : {"allgather", "allreduce", "reduce_scatter", "ag_matmul", "matmul_ar", "matmul_rs",
                           "row_parallel_linear", "column_parallel_linear", "mlp"})
    EXPECT_THAT(r.out, HasSubstr(name));
}

TEST(CliLower, PrintsTheGoldenProgram) {
  Result r = braid("lower ag_matmul --devices 2 --streams 4 --m 64 --k 32 --n 16");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, slurpFile(std::string(BRAID_TEST_DATA_DIR) + "/passes/golden/ag_matmul_A.hir"));
}

TEST(CliLower, DumpsEveryPassOnStderr) {
  Result r = braid("lower ag_matmul --pipeline p2p --protocol B --indexing raw --devices 2 --m 64 --k 32 --n 16 "
                   "--dump-passes");
  EXPECT_EQ(r.out, slurpFile(std::string(BRAID_TEST_DATA_DIR) + "/passes/golden/ag_matmul_p2p_B.hir"));
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("after pass stream-lowering"));
  EXPECT_THAT(r.err, HasSubstr("after pass assign-streams"));
  EXPECT_THAT(r.out, HasSubstr("%HostIrContainer"));
}

TEST(CliLower, ProtocolCJoinsEveryIteration) {
  Result r = braid("lower mlp --protocol C --devices 2 --streams 4 --m 64 --k 32 --n 16");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, slurpFile(std::string(BRAID_TEST_DATA_DIR) + "/passes/golden/mlp_C.hir"));
}

TEST(CliLower, BadOptionsExitWithTwo) {
  Result r = braid("lower ag_matmul --protocol D");
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("--protocol"));
  r = braid("lower ag_matmul --ring --indexing raw");
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("modulo"));
  r = braid("lower matmul_rs --defer-waits --protocol B");
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("protocol A or C"));
  r = braid("lower matmul_rs --pool 0");
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("--pool"));
}

// The schedules of docs/LOWERING.md from the command line: the golden programs, and each one
// verified for the pool it runs with (numberOfStreams 1: every chunk's compute on one stream).
TEST(CliLower, SchedulesPrintTheirGoldenPrograms) {
  const std::string golden = std::string(BRAID_TEST_DATA_DIR) + "/passes/golden/";
  Result r = braid("lower matmul_rs --devices 2 --streams 4 --m 64 --k 32 --n 16 --defer-waits");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, slurpFile(golden + "matmul_rs_defer_A.hir"));
  r = braid("lower ag_matmul --devices 2 --streams 4 --m 64 --k 32 --n 16 --prefetch");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, slurpFile(golden + "ag_matmul_prefetch_A.hir"));
  // --pool binds numberOfStreams only: the text is the same as without it.
  r = braid("lower ag_matmul --devices 2 --streams 4 --m 64 --k 32 --n 16 --prefetch --pool 1");
  EXPECT_EQ(r.out, slurpFile(golden + "ag_matmul_prefetch_A.hir"));
  // The p2p pipeline copies its own shard; --own-shard in-place reads it where it lies.
  r = braid("lower ag_matmul --devices 2 --streams 4 --m 64 --k 32 --n 16 --pipeline p2p --own-shard copy");
  EXPECT_EQ(r.out, slurpFile(golden + "ag_matmul_p2p_A.hir"));
  r = braid("lower ag_matmul --devices 2 --streams 4 --m 64 --k 32 --n 16 --pipeline p2p --own-shard in-place");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, slurpFile(golden + "ag_matmul_p2p_inplace_A.hir"));
  r = braid("lower ag_matmul --pipeline p2p --own-shard inplace");
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("--own-shard must be copy or in-place"));
  // --comm-backend cuda: the same program with every communication on backend=CUDA.
  r = braid("lower ag_matmul --devices 2 --streams 4 --m 64 --k 32 --n 16 --pipeline p2p --comm-backend cuda");
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, slurpFile(golden + "ag_matmul_p2p_cuda_A.hir"));
  r = braid("lower ag_matmul --devices 2 --streams 4 --m 64 --k 32 --n 16 --pipeline p2p --comm-backend nccl");
  EXPECT_EQ(r.out, slurpFile(golden + "ag_matmul_p2p_A.hir"));
  r = braid("lower ag_matmul --comm-backend ucc");
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("--comm-backend must be nccl or cuda"));
  for (const char* args : {"ag_matmul --pool 1 --prefetch", "ag_matmul --pool 1 --prefetch --pipeline p2p",
                           "matmul_rs --comm-backend cuda", "ag_matmul --pipeline p2p --comm-backend cuda",
                           "matmul_rs --pool 1 --defer-waits", "matmul_ar --pool 2 --defer-waits --protocol C",
                           "mlp --pool 1 --defer-waits --prefetch", "ag_matmul --pipeline p2p --own-shard in-place --pool 1"}) {
    r = braid(std::string("verify ") + args + " --devices 2 --streams 4");
    EXPECT_EQ(r.rc, 0) << args << "\n" << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr("no errors")) << args;
  }
}

}  // namespace
}  // namespace braid
