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
}

}  // namespace
}  // namespace braid
