// `braid verify`: exit codes (0 correct, 1 bug found, 2 bad input) and both output formats.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "tests/verify/verify_test_util.h"

namespace braid {
namespace {

struct CliRun {
  int code = -1;
  std::string out;
};

CliRun braidVerify(const std::string& args) {
  CliRun r;
  std::string cmd = std::string(BRAID_CLI_PATH) + " verify " + args + " 2>&1";
  FILE* pipe = popen(cmd.c_str(), "r");
  if (!pipe) return r;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) r.out.append(buf.data(), n);
  int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

class VerifyCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(BRAID_CLI_PATH)) GTEST_SKIP() << "braid is not built";
  }
};

TEST_F(VerifyCli, CorrectProgramExitsZero) {
  CliRun r = braidVerify(braid::testing::verifyDataPath("copy_sync_loop.hir") + " --bind i0=4 --bind i2=3 --streams 2");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("verified"), std::string::npos) << r.out;
}

TEST_F(VerifyCli, BugExitsOneAndExplains) {
  CliRun r = braidVerify(braid::testing::verifyDataPath("missing_join.hir") + " --bind i0=4 --bind i2=3");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("error[missing-join]"), std::string::npos) << r.out;
}

// Unbound sizes make bounded mode bad input (without --mode, parametric mode proves them).
TEST_F(VerifyCli, UnboundSymbolsExitTwo) {
  CliRun r = braidVerify(braid::testing::verifyDataPath("copy_sync_loop.hir") + " --mode bounded");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("i0, i2"), std::string::npos) << r.out;
}

TEST_F(VerifyCli, WorkloadIsLoweredAndVerified) {
  CliRun r = braidVerify("ag_matmul --ranks 2 --streams 2 --m 8 --k 4 --n 4");
  EXPECT_EQ(r.code, 0) << r.out;
}

TEST_F(VerifyCli, UnknownTargetExitsTwo) {
  CliRun bad = braidVerify("no_such_thing");
  EXPECT_EQ(bad.code, 2) << bad.out;
  EXPECT_NE(bad.out.find("known workloads"), std::string::npos) << bad.out;
}

}  // namespace
}  // namespace braid
