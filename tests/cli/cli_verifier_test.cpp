// End to end: a file that parses but is not well formed (ir/verifier.h) is bad input (exit 2,
// located) for every consumer — verify, sim, run — while `braid print` still prints it.
#include <filesystem>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/support/cli_runner.h"

namespace braid {
namespace {

using ::testing::HasSubstr;

std::string illFormed(const char* name) { return std::string(BRAID_TEST_DATA_DIR) + "/ir/data/ill_formed/" + name; }

TEST(CliVerifier, ConsumersRefuseAnIllFormedProgramPrintPrintsIt) {
  const std::string file = illFormed("wait_unknown.hir");
  const std::string where = file + ":4:3: error: [communication] Wait for communication 42";
  testing::CliResult printed = testing::runBraid("print '" + file + "'");
  EXPECT_EQ(printed.rc, 0) << printed.err;
  EXPECT_THAT(printed.out, HasSubstr("Wait(Communication 42)"));
  for (const char* command : {"verify", "sim", "run"}) {
    SCOPED_TRACE(command);
    std::string extra = std::string(command) == "sim" ? " --machine h100" : "";
    if (std::string(command) == "run") extra = " --backend cpu --ranks 1";
    testing::CliResult r = testing::runBraid(std::string(command) + " '" + file + "'" + extra);
    EXPECT_EQ(r.rc, 2) << r.out << r.err;
    // A build without libtorch (the sanitized clang build) has no `braid run`; it says so, exit 2.
    if (std::string(command) == "run" && r.err.find("built without libtorch") != std::string::npos) continue;
    EXPECT_THAT(r.err, HasSubstr(where));
  }
}

TEST(CliVerifier, LoopIndexOutsideItsLoopIsLocated) {
  const std::string file = illFormed("loop_index_outside_loop.hir");
  testing::CliResult r = testing::runBraid("verify '" + file + "' --bind i0=4 --bind i2=3");
  EXPECT_EQ(r.rc, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr(file + ":8:3: error: [scope] the stream key uses loop index StreamIdx outside its loop "
                                      "(FOR StreamIdx at line 4)"));
}

}  // namespace
}  // namespace braid
