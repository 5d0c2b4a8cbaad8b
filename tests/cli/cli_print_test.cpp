// End-to-end tests of `braid print`: today's form by default, --dialect, --json, and the exit
// codes and messages for malformed and missing files.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ir/host_ir_text.h"
#include "tests/support/cli_runner.h"

namespace braid {
namespace {

using ::testing::HasSubstr;
namespace fs = std::filesystem;

using Result = testing::CliResult;
using testing::slurpFile;

Result braid(const std::string& args) { return testing::runBraid(args); }

std::string example(const char* name) { return std::string(BRAID_SOURCE_DIR) + "/examples/" + name; }

TEST(CliPrint, CanonicalOutput) {
  // This example is written in braid's "to Stream" form, so printing in that dialect gives it back
  // byte for byte.
  Result r = braid("print --dialect to-stream " + example("stream_set_serialized.hir"));
  EXPECT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(r.out, slurpFile(example("stream_set_serialized.hir")));
  EXPECT_EQ(r.err, "");
}

TEST(CliPrint, OutputIsAFixedPoint) {
  for (const char* f : {"stream_add_gelu_modern.hir", "ag_p2p_matmul_4ranks.hir", "hostunit_broadcast_relu.hir"}) {
    SCOPED_TRACE(f);
    Result r = braid("print " + example(f));
    ASSERT_EQ(r.rc, 0) << r.err;
    PrintOptions today;
    today.dialect = HostIrDialect::kModern;
    EXPECT_EQ(r.out, print(parseHostProgramFile(example(f)), today));
    fs::path tmp = fs::temp_directory_path() / ("braid_cli_print_fixed_" + std::to_string(::getpid()) + ".hir");
    std::ofstream(tmp) << r.out;
    Result again = braid("print " + tmp.string());
    EXPECT_EQ(again.out, r.out);
    fs::remove(tmp);
  }
}

TEST(CliPrint, TodaysDialectByDefault) {
  for (const char* flags : {"", "--modern ", "--dialect today "}) {
    SCOPED_TRACE(flags);
    Result r = braid(std::string("print ") + flags + example("stream_set_sync_loop.hir"));
    ASSERT_EQ(r.rc, 0) << r.err;
    EXPECT_THAT(r.out, HasSubstr("Stream 0 = GetCurrentStream()"));
    EXPECT_THAT(r.out, HasSubstr("SetCurrentStream(Stream ( StreamIdx % numberOfStreams ))"));
    EXPECT_THAT(r.out, HasSubstr("Synchronize(Stream 0)"));
    EXPECT_THAT(r.out, HasSubstr("istreamIdx"));
  }
}

TEST(CliPrint, EveryDialectReadsBack) {
  std::string src = example("ag_p2p_matmul_4ranks.hir");
  HostProgram original = parseHostProgramFile(src);
  for (const char* d : {"today", "to-stream", "oldest"}) {
    SCOPED_TRACE(d);
    Result r = braid(std::string("print --dialect ") + d + " " + src);
    ASSERT_EQ(r.rc, 0) << r.err;
    std::string why;
    EXPECT_TRUE(structurallyEqual(original, parseHostProgram(r.out, d), &why)) << why;
  }
  Result oldest = braid("print --dialect oldest " + src);
  EXPECT_THAT(oldest.out, HasSubstr("SetCurrentStream to Stream"));
  EXPECT_THAT(oldest.out, HasSubstr("[ iStream"));
  Result bad = braid("print --dialect 2023 " + src);
  EXPECT_EQ(bad.rc, 2);
}

TEST(CliPrint, JsonParses) {
  Result r = braid("print --json " + example("ag_matmul_8ranks.hir"));
  ASSERT_EQ(r.rc, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["outputs"], (nlohmann::json{"T3"}));
  EXPECT_EQ(j["tensors"][0]["mesh"]["devices"].size(), 8u);
  EXPECT_EQ(j["statements"][4]["body"][4]["type"], "Allgather");
}

TEST(CliPrint, MalformedFileExits2WithLocation) {
  std::string bad = std::string(BRAID_TEST_DATA_DIR) + "/ir/data/malformed/unbalanced_indentation.hir";
  Result r = braid("print " + bad);
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr(bad + ":6:7: error: inconsistent indentation"));
  EXPECT_EQ(r.out, "");
}

TEST(CliPrint, MissingFileExits2) {
  Result r = braid("print /nonexistent/braid/missing.hir");
  EXPECT_EQ(r.rc, 2);
  EXPECT_THAT(r.err, HasSubstr("/nonexistent/braid/missing.hir"));
}

TEST(CliPrint, HelpAndVersion) {
  Result help = braid("--help");
  EXPECT_EQ(help.rc, 0);
  EXPECT_THAT(help.out, HasSubstr("print"));
  Result sub_help = braid("print --help");
  EXPECT_EQ(sub_help.rc, 0);
  EXPECT_THAT(sub_help.out, HasSubstr("--json"));
  Result version = braid("--version");
  EXPECT_EQ(version.rc, 0);
  EXPECT_THAT(version.out, HasSubstr("braid "));
}

TEST(CliPrint, MissingArgumentExits2) {
  Result r = braid("print");
  EXPECT_EQ(r.rc, 2);
}

}  // namespace
}  // namespace braid
