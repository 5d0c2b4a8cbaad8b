// Each violation class: a minimal failing program is caught with the expected finding, and its
// corrected twin verifies clean.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/verify/verify_test_util.h"

namespace braid::verify {
namespace {

using braid::testing::kinds;
using braid::testing::verifyFile;

struct Case {
  const char* bad;
  const char* good;
  FindingKind kind;
  Bindings bindings;
  int64_t ranks;
};

// Names the case in ctest's listing (gtest would otherwise print the struct's bytes).
void PrintTo(const Case& c, std::ostream* os) { *os << c.bad << " vs " << c.good; }

const Bindings kRows{{"i0", 4}, {"i2", 3}};

class Violation : public ::testing::TestWithParam<Case> {};

TEST_P(Violation, CaughtAndTwinIsClean) {
  const Case& c = GetParam();
  VerifyResult bad = verifyFile(c.bad, c.bindings, c.ranks);
  EXPECT_TRUE(bad.has(c.kind)) << c.bad << ": " << kinds(bad) << "\n" << formatReport(bad);
  EXPECT_FALSE(bad.ok());
  VerifyResult good = verifyFile(c.good, c.bindings, c.ranks);
  EXPECT_TRUE(good.ok()) << c.good << ": " << kinds(good) << "\n" << formatReport(good);
}

INSTANTIATE_TEST_SUITE_P(
    Classes, Violation,
    ::testing::Values(
        Case{"race_no_initial_sync.hir", "copy_sync_loop.hir", FindingKind::kRace, kRows, 1},
        Case{"missing_join.hir", "copy_sync_loop.hir", FindingKind::kMissingJoin, kRows, 1},
        Case{"join_wrong_order.hir", "copy_sync_loop.hir", FindingKind::kMissingJoin, kRows, 1},
        Case{"protocol_b_partial_join.hir", "protocol_b.hir", FindingKind::kMissingJoin, kRows, 1},
        Case{"output_partial.hir", "copy_sync_loop.hir", FindingKind::kOutputNotWritten, kRows, 1},
        Case{"view_out_of_bounds.hir", "copy_sync_loop.hir", FindingKind::kViewOutOfBounds, kRows, 1},
        Case{"uninitialized_read.hir", "uninitialized_read_fixed.hir", FindingKind::kUninitializedRead, {{"i0", 5}}, 1},
        Case{"noncontiguous_comm.hir", "noncontiguous_comm_fixed.hir", FindingKind::kNonContiguousComm, {}, 2},
        Case{"use_after_deallocate.hir",
             "use_after_deallocate_fixed.hir",
             FindingKind::kUseAfterDeallocate,
             {{"i0", 5}},
             1},
        Case{"free_before_join.hir", "free_before_join_fixed.hir", FindingKind::kUnsafeReuse, kRows, 1},
        Case{"collective_rank_dependent_root.hir",
             "collective_rank_dependent_root_fixed.hir",
             FindingKind::kCollectiveMismatch,
             {},
             2},
        Case{"p2p_unpaired.hir", "p2p_unpaired_fixed.hir", FindingKind::kP2PUnpaired, {}, 2},
        Case{"p2p_deadlock.hir", "p2p_deadlock_fixed.hir", FindingKind::kDeadlock, {}, 2},
        Case{"collective_order_deadlock.hir", "collective_order_deadlock_fixed.hir", FindingKind::kDeadlock, {}, 2}),
    [](const ::testing::TestParamInfo<Case>& info) {
      std::string n = info.param.bad;
      n = n.substr(0, n.find('.'));
      return n;
    });

TEST(LostParallelism, SerializedLoopWarnsWithTheChain) {
  VerifyResult r = verifyFile("copy_serialized.hir", kRows, 1, 4);
  EXPECT_TRUE(r.ok()) << formatReport(r);
  ASSERT_TRUE(r.has(FindingKind::kLostParallelism)) << formatReport(r);
  for (const auto& f : r.findings) {
    if (f.kind != FindingKind::kLostParallelism) continue;
    EXPECT_EQ(f.severity, Severity::kWarning);
    EXPECT_GE(f.chain.size(), 3u);
    std::string all;
    for (const auto& c : f.chain) all += c + "\n";
    EXPECT_NE(all.find("Synchronize"), std::string::npos) << all;
  }
}

TEST(LostParallelism, SeparateSyncLoopDoesNotWarn) {
  VerifyResult r = verifyFile("copy_sync_loop.hir", kRows, 1, 4);
  EXPECT_TRUE(r.findings.empty()) << formatReport(r);
  VerifyResult b = verifyFile("protocol_b.hir", kRows, 1, 4);
  EXPECT_TRUE(b.findings.empty()) << formatReport(b);
}

TEST(Findings, RaceNamesBothStatements) {
  VerifyResult r = verifyFile("race_no_initial_sync.hir", kRows, 1, 2);
  ASSERT_FALSE(r.findings.empty());
  const Finding& f = r.findings.front();
  EXPECT_EQ(f.kind, FindingKind::kRace);
  ASSERT_EQ(f.sites.size(), 2u);
  EXPECT_EQ(f.sites[0].role, "write");  // the input, written at entry
  EXPECT_EQ(f.sites[1].role, "read");
  EXPECT_TRUE(f.sites[1].loc.known());
  EXPECT_EQ(f.sites[1].rank, 0);
  EXPECT_FALSE(f.sites[1].loops.empty());
  std::string text = formatReport(r);
  EXPECT_NE(text.find("error[race]"), std::string::npos) << text;
  std::string json = formatJson(r);
  EXPECT_NE(json.find("\"kind\": \"race\""), std::string::npos) << json;
}

TEST(Findings, UnboundSymbolsAreBadInput) {
  HostProgram p = braid::testing::loadVerifyProgram("copy_sync_loop.hir");
  VerifyOptions o;
  try {
    verifyProgram(p, o);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("i0"), std::string::npos) << m;
    EXPECT_NE(m.find("i2"), std::string::npos) << m;
  }
}

TEST(Examples, EveryExampleVerifies) {
  // The repository's examples (braid's printer output and nvFuser dumps) are correct programs.
  namespace fs = std::filesystem;
  int n = 0;
  for (const auto& e : fs::directory_iterator(fs::path(BRAID_SOURCE_DIR) / "examples")) {
    if (e.path().extension() != ".hir") continue;
    HostProgram p = parseHostProgramFile(e.path().string());
    VerifyOptions o;
    o.bindings = {{"i0", 64}, {"i2", 8}, {"i3", 8}};
    VerifyResult r = verifyProgram(p, o);
    EXPECT_TRUE(r.ok()) << e.path() << "\n" << formatReport(r);
    ++n;
  }
  EXPECT_GT(n, 0);
}

}  // namespace
}  // namespace braid::verify
