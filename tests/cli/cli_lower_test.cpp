// End-to-end tests of `braid lower` (each runs the binary, whose start-up dominates): the catalog listing, a lowered workload equal to its golden
// file, the pass dump, and the exit codes and messages for bad options.
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/host_ir_text.h"

namespace braid {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

struct Result {
  int rc = -1;
  std::string out;
  std::string err;
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Result braid(const std::string& args) {
  static int counter = 0;
  fs::path dir = fs::temp_directory_path() / ("braid_cli_lower_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::path out = dir / ("out" + std::to_string(counter));
  fs::path err = dir / ("err" + std::to_string(counter++));
  std::string cmd = std::string("'") + BRAID_CLI_PATH + "' " + args + " >'" + out.string() + "' 2>'" + err.string() + "'";
  int status = std::system(cmd.c_str());
  Result r;
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

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
  EXPECT_EQ(r.out, slurp(std::string(BRAID_TEST_DATA_DIR) + "/passes/golden/ag_matmul_A.hir"));
}

TEST(CliLower, DumpsEveryPassOnStderr) {
  Result r = braid("lower ag_matmul --pipeline p2p --protocol B --indexing raw --devices 2 --m 64 --k 32 --n 16 "
                   "--dump-passes");
  EXPECT_EQ(r.out, slurp(std::string(BRAID_TEST_DATA_DIR) + "/passes/golden/ag_matmul_p2p_B.hir"));
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("after pass stream-lowering"));
  EXPECT_THAT(r.err, HasSubstr("after pass assign-streams"));
  EXPECT_THAT(r.out, HasSubstr("%HostIrContainer"));
}

TEST(CliLower, BadOptionsExitWithTwo) {
  Result r = braid("lower ag_matmul --protocol C");
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("--protocol"));
  r = braid("lower ag_matmul --ring --indexing raw");
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("modulo"));
}

}  // namespace
}  // namespace braid
