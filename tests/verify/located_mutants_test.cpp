// Issue 9's mutations (located_mutations.h) on catalog workloads under protocols A, B and C: the
// checker must report the expected finding class naming the statements involved (their lines),
// with a rank and a stream at each; and the mutant stays well formed (ir/verifier.h), so the
// finding is the checker's, exit 1, not bad input.
#include <gtest/gtest.h>

#include <cstdio>
#include <map>

#include "ir/verifier.h"
#include "tests/verify/located_mutations.h"
#include "tests/verify/verify_test_util.h"

namespace braid::verify {
namespace {

using namespace braid::testing;

VerifyResult check(const HostProgram& p, int64_t ranks, int64_t streams) {
  VerifyOptions o;
  o.ranks = ranks;
  o.streams = streams;
  o.parallelismWarnings = false;
  return verifyProgram(p, o);
}

std::string siteStr(const Site& s) {
  return "line " + std::to_string(s.loc.line) + " rank " + std::to_string(s.rank) + " stream '" + s.stream + "'";
}

// Whether `f` names a statement at each of `lines`, each with a rank in 0..ranks-1 and a stream.
bool namesLines(const Finding& f, const std::vector<int>& lines, int64_t ranks) {
  for (int line : lines) {
    bool found = std::any_of(f.sites.begin(), f.sites.end(), [&](const Site& s) {
      return s.loc.line == line && s.rank >= 0 && s.rank < ranks && !s.stream.empty();
    });
    if (!found) return false;
  }
  return true;
}

std::string describe(const VerifyResult& r) {
  std::string out;
  for (const Finding& f : r.findings) {
    out += std::string(findingKindName(f.kind)) + ":";
    for (const Site& s : f.sites) out += " [" + s.role + " " + siteStr(s) + "]";
    out += "\n";
  }
  return out;
}

// A finding of one of `want.kinds` names every line of `want.lines`.
::testing::AssertionResult reports(const VerifyResult& r, const Located& want, int64_t ranks) {
  for (const Finding& f : r.findings)
    if (f.severity == Severity::kError &&
        std::find(want.kinds.begin(), want.kinds.end(), f.kind) != want.kinds.end() && namesLines(f, want.lines, ranks))
      return ::testing::AssertionSuccess();
  std::string kinds, lines;
  for (auto k : want.kinds) kinds += std::string(kinds.empty() ? "" : "|") + findingKindName(k);
  for (int l : want.lines) lines += " " + std::to_string(l);
  return ::testing::AssertionFailure() << "no " << kinds << " naming lines" << lines << "; found:\n" << describe(r);
}

constexpr StreamProtocol kProtocols[] = {StreamProtocol::kSeparateSyncLoop, StreamProtocol::kInLoopSync,
                                         StreamProtocol::kPerIterationJoin};

TEST(LocatedMutants, EachIsReportedWithItsClassAndStatements) {
  std::map<std::string, int> applied;
  for (const std::string& name : catalogNames()) {
    for (StreamProtocol protocol : kProtocols) {
      Config c{2, 2, protocol, StreamIndexing::kModulo, PipelineKind::kCollective, false};
      auto original = lowerWorkload(name, c);
      if (!original) continue;
      std::string text = print(*original);
      for (const auto& [what, mutate] : locatedMutations()) {
        for (size_t k = 0; k < 2; ++k) {
          HostProgram mutant = parseHostProgram(text, name + ".hir");
          std::optional<Located> want = mutate(mutant, k, c);
          if (!want) break;
          SCOPED_TRACE(configStr(name, c) + ": mutant '" + what + "' #" + std::to_string(k));
          std::vector<WellFormednessProblem> problems = findWellFormednessProblems(mutant);
          EXPECT_TRUE(problems.empty()) << problems.front().str();
          VerifyResult r = check(mutant, c.devices, c.streams);
          EXPECT_FALSE(r.ok());
          EXPECT_TRUE(reports(r, *want, c.devices)) << print(mutant);
          ++applied[what];
        }
      }
    }
  }
  // Every mutation applies to some workload under every protocol (not a vacuous pass).
  for (const auto& [what, mutate] : locatedMutations()) EXPECT_GE(applied[what], 3) << what;
  for (const auto& [what, n] : applied) std::fprintf(stderr, "%s: %d mutants\n", what.c_str(), n);
}

// Two same-sized Allreduces swapped on half of four ranks: each rank's first Allreduce matches
// another rank's second, which silently mixes the tensors: mismatched statements, naming both.
TEST(LocatedMutants, SwappedSameSizedCollectivesOnHalfTheRanks) {
  std::string text = print(loadVerifyProgram("two_allreduces.hir"));
  ASSERT_TRUE(check(parseHostProgram(text, "two_allreduces.hir"), 4, 1).ok());
  std::vector<int> lines;
  std::optional<std::string> swapped = swapCollectivesOnHalfTheRanks(text, 4, &lines);
  ASSERT_TRUE(swapped);
  HostProgram mutant = parseHostProgram(*swapped, "swapped.hir");
  EXPECT_TRUE(findWellFormednessProblems(mutant).empty());
  VerifyResult r = check(mutant, 4, 1);
  EXPECT_TRUE(reports(r, Located{{FindingKind::kMismatchedStatements}, lines}, 4)) << *swapped;
  EXPECT_FALSE(r.has(FindingKind::kCollectiveMismatch)) << describe(r);
}

}  // namespace
}  // namespace braid::verify
