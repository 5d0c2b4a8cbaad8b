// The statements of nvFuser's host programs that braid learned from real dumps (LaunchKernel,
// CollectivePermute, ShareMemHandles, select, slice, SegmenterSet, kernels that are not printed)
// and per-rank programs: each failing program is caught with the expected finding, and its twin
// verifies clean. Programs are in tests/verify/data/interop/.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/host_ir_text.h"
#include "tests/support/cli_runner.h"
#include "tests/verify/verify_test_util.h"

namespace braid::verify {
namespace {

using braid::testing::kinds;
using braid::testing::verifyDataPath;
using braid::testing::verifyFile;
using ::testing::HasSubstr;

struct Twin {
  const char* bad;
  const char* good;
  FindingKind kind;
  int64_t ranks;
};

void PrintTo(const Twin& t, std::ostream* os) { *os << t.bad << " vs " << t.good; }

class InteropTwin : public ::testing::TestWithParam<Twin> {};

TEST_P(InteropTwin, CaughtAndTwinIsClean) {
  const Twin& t = GetParam();
  VerifyResult bad = verifyFile(std::string("interop/") + t.bad, {}, t.ranks);
  EXPECT_TRUE(bad.has(t.kind)) << t.bad << ": " << kinds(bad) << "\n" << formatReport(bad);
  EXPECT_FALSE(bad.ok());
  VerifyResult good = verifyFile(std::string("interop/") + t.good, {}, t.ranks);
  EXPECT_TRUE(good.ok()) << t.good << ": " << kinds(good) << "\n" << formatReport(good);
  EXPECT_EQ(good.warnings(), 0) << formatReport(good);
}

INSTANTIATE_TEST_SUITE_P(
    Statements, InteropTwin,
    ::testing::Values(
        // A LaunchKernel is a kernel on the current stream...
        Twin{"launch_kernel_race.hir", "launch_kernel_synchronized.hir", FindingKind::kRace, 1},
        // ... whose outputs must be allocated beforehand.
        Twin{"launch_kernel_unallocated.hir", "launch_kernel_synchronized.hir", FindingKind::kUnboundTensor, 1},
        // CollectivePermute: a coalesced send and receive to be waited for,
        Twin{"collective_permute_no_wait.hir", "collective_permute_ring.hir", FindingKind::kUnwaitedCommunication, 4},
        // with peers that are positions in its team,
        Twin{"collective_permute_peer_outside_team.hir", "collective_permute_ring.hir", FindingKind::kBadPeer, 4},
        // that pair across ranks (every rank sends "up" and receives "up": nobody receives first).
        Twin{"collective_permute_same_direction.hir", "collective_permute_ring.hir", FindingKind::kDeadlock, 4},
        // ShareMemHandles: both sides exchange their handles, never with themselves.
        Twin{"share_mem_handles_one_side.hir", "share_mem_handles.hir", FindingKind::kHostRendezvousMismatch, 2},
        Twin{"share_mem_handles_self.hir", "share_mem_handles.hir", FindingKind::kBadPeer, 2},
        // select and slice are views of their input (a SegmenterSet copies like a Set).
        Twin{"select_out_of_bounds.hir", "select_in_bounds.hir", FindingKind::kViewOutOfBounds, 1},
        Twin{"slices_overlapping.hir", "slices_disjoint.hir", FindingKind::kRace, 1}),
    [](const ::testing::TestParamInfo<Twin>& info) {
      std::string n = info.param.bad;
      return n.substr(0, n.find('.'));
    });

// A kernel whose HostUnit the dump does not print reads its inputs and writes its outputs whole,
// and the report says so in a note, which does not fail the check.
TEST(InteropNotes, KernelNotPrintedIsANote) {
  VerifyResult r = verifyFile("interop/kernel_not_printed.hir", {}, 2);
  EXPECT_TRUE(r.ok()) << formatReport(r);
  ASSERT_TRUE(r.has(FindingKind::kOpaqueKernel)) << formatReport(r);
  EXPECT_EQ(r.notes(), 1);
  EXPECT_EQ(r.errors(), 0);
  const Finding& f = r.findings.front();
  EXPECT_EQ(f.severity, Severity::kNote);
  ASSERT_FALSE(f.sites.empty());
  EXPECT_EQ(f.sites[0].loc.line, 2);
  EXPECT_THAT(f.explanation[0],
              HasSubstr("HostUnit3 is not printed: the kernel is treated as reading its inputs and writing its "
                        "outputs whole"));
  std::string text = formatReport(r);
  EXPECT_THAT(text, HasSubstr("note[opaque-kernel]"));
  EXPECT_THAT(text, HasSubstr("verified: no errors for these bindings; 1 note(s) on what braid assumed"));
}

std::map<int64_t, const HostProgram*> byRank(const std::vector<std::pair<int64_t, HostProgram>>& dumps) {
  std::map<int64_t, const HostProgram*> m;
  for (const auto& [rank, p] : dumps) m[rank] = &p;
  return m;
}

// nvFuser prints one program per device; each rank runs its own, and their communications match
// by communicator and order although their statements (and ids) differ.
TEST(InteropRankPrograms, PerDeviceProgramsMatchAcrossRanks) {
  auto dumps = parseDeviceDumpsFile(verifyDataPath("interop/pipeline_two_devices.hir"));
  ASSERT_EQ(dumps.size(), 2u);
  EXPECT_EQ(dumps[0].first, 0);
  EXPECT_EQ(dumps[1].first, 1);
  // Locations are the file's own lines.
  EXPECT_EQ(dumps[1].second.body()[0]->loc.line, 20);
  VerifyOptions o;
  o.rankPrograms = byRank(dumps);
  VerifyResult r = verifyProgram(dumps[0].second, o);
  EXPECT_EQ(r.ranks, 2);
  EXPECT_TRUE(r.ok()) << formatReport(r);
  // The 2024 executor allocated the receive buffer; braid says it did the same.
  EXPECT_TRUE(r.has(FindingKind::kExecutorAllocated)) << formatReport(r);

  auto short_receive = parseDeviceDumpsFile(verifyDataPath("interop/pipeline_two_devices_short_receive.hir"));
  o.rankPrograms = byRank(short_receive);
  VerifyResult bad = verifyProgram(short_receive[0].second, o);
  EXPECT_TRUE(bad.has(FindingKind::kCollectiveMismatch)) << formatReport(bad);
}

// Device 0's program alone, run on both ranks, is not the program: rank 1 lacks the buffer it
// receives into. The per-rank programs are what nvFuser runs.
TEST(InteropRankPrograms, OneDevicesProgramOnEveryRankIsNotTheSame) {
  auto dumps = parseDeviceDumpsFile(verifyDataPath("interop/pipeline_two_devices.hir"));
  VerifyOptions o;
  o.ranks = 2;
  VerifyResult r = verifyProgram(dumps[1].second, o);
  EXPECT_FALSE(r.ok()) << formatReport(r);
}

using braid::testing::runBraid;

TEST(InteropCli, RankProgramFlag) {
  std::string file = verifyDataPath("interop/pipeline_two_devices.hir");
  auto ok = runBraid("verify --rank-program " + file);
  EXPECT_EQ(ok.rc, 0) << ok.out << ok.err;
  EXPECT_THAT(ok.out, HasSubstr("(rank 0)"));
  EXPECT_THAT(ok.out, HasSubstr("(rank 1)"));
  auto bad = runBraid("verify --rank-program " + verifyDataPath("interop/pipeline_two_devices_short_receive.hir"));
  EXPECT_EQ(bad.rc, 1) << bad.out << bad.err;
  EXPECT_THAT(bad.out, HasSubstr("error[collective-mismatch]"));
  // RANK=FILE, and a rank without a program.
  std::string d = std::string(BRAID_TEST_DATA_DIR) + "/ir/data/dialects/oldest/";
  auto pair = runBraid("verify --rank-program 0=" + d + "pipeline_rank0.hir --rank-program 1=" + d +
                       "pipeline_rank1.hir");
  EXPECT_EQ(pair.rc, 0) << pair.out << pair.err;
  auto missing = runBraid("verify --rank-program 0=" + d + "pipeline_rank0.hir");
  EXPECT_EQ(missing.rc, 2);
  EXPECT_THAT(missing.err, HasSubstr("no program for rank(s) 1 of 2"));
  auto twice = runBraid("verify --rank-program 0=" + d + "pipeline_rank0.hir --rank-program 0=" + d +
                        "pipeline_rank1.hir");
  EXPECT_EQ(twice.rc, 2);
  EXPECT_THAT(twice.err, HasSubstr("rank 0 is given twice"));
  auto whole = runBraid("verify " + file);
  EXPECT_EQ(whole.rc, 2);
  EXPECT_THAT(whole.err, HasSubstr("read it as per-rank programs"));
}

}  // namespace
}  // namespace braid::verify
