// Every example program (examples/*.hir) and every example of the format description
// (tests/ir/data/hostir_md/*.hir) parses, and printing is a fixed point:
// parse(print(p)) == p and print(parse(print(p))) == print(p), in both dialects.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "ir/host_ir_text.h"

namespace braid {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> hirFiles(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".hir") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

void checkRoundTrip(const std::string& path) {
  SCOPED_TRACE(path);
  HostProgram p = parseHostProgramFile(path);
  for (HostIrDialect d : {HostIrDialect::kLegacy, HostIrDialect::kModern}) {
    PrintOptions o;
    o.dialect = d;
    std::string once = print(p, o);
    HostProgram q = parseHostProgram(once, "printed.hir");
    std::string why;
    EXPECT_TRUE(structurallyEqual(p, q, &why)) << why << "\n" << once;
    EXPECT_EQ(print(q, o), once);
  }
}

TEST(HostIrFiles, ExamplesRoundTrip) {
  auto files = hirFiles(fs::path(BRAID_SOURCE_DIR) / "examples");
  EXPECT_GE(files.size(), 8u);
  for (const auto& f : files) checkRoundTrip(f);
}

TEST(HostIrFiles, FormatDescriptionExamplesParse) {
  auto files = hirFiles(fs::path(BRAID_TEST_DATA_DIR) / "ir" / "data" / "hostir_md");
  EXPECT_GE(files.size(), 9u);
  for (const auto& f : files) checkRoundTrip(f);
}

// The format description's stream-parallel copy, read statement by statement.
TEST(HostIrFiles, StreamParallelCopyStructure) {
  HostProgram p = parseHostProgramFile(std::string(BRAID_TEST_DATA_DIR) + "/ir/data/hostir_md/stream_parallel_copy.hir");
  ASSERT_EQ(p.inputs().size(), 1u);
  ASSERT_EQ(p.outputs().size(), 1u);
  ASSERT_EQ(p.body().size(), 2u);
  EXPECT_TRUE(p.body()[0]->is<Allocate>());
  const auto* loop = p.body()[1]->as<ForLoop>();
  EXPECT_EQ(loop->index, "StreamIdx");
  std::vector<StmtKind> kinds;
  for (const auto& s : loop->body) kinds.push_back(s->kind());
  EXPECT_EQ(kinds, (std::vector<StmtKind>{StmtKind::kGetCurrentStream, StmtKind::kSetCurrentStream,
                                          StmtKind::kSynchronize, StmtKind::kAliasSelect, StmtKind::kAliasSelect,
                                          StmtKind::kHostOp, StmtKind::kSetCurrentStream, StmtKind::kSynchronize}));
  EXPECT_EQ(loop->body[1]->as<SetCurrentStream>()->stream.str(), "Stream ( StreamIdx % numberOfStreams )");
  EXPECT_EQ(loop->body[7]->loc.line, 14);
  EXPECT_EQ(loop->body[7]->loc.col, 5);
}

TEST(HostIrFiles, MissingFileIsAnError) {
  EXPECT_THROW(parseHostProgramFile("/nonexistent/braid/file.hir"), Error);
}

}  // namespace
}  // namespace braid
