// The bounded checker's mutation suite (catalog_mutations.h) in parametric mode: every mutant of
// every catalog workload is caught, with a counterexample that the bounded checker confirms
// when it replays it.
#include <gtest/gtest.h>

#if BRAID_HAVE_Z3

#include "tests/verify/catalog_mutations.h"
#include "tests/verify/parametric_test_util.h"

namespace braid::verify {
namespace {

using namespace braid::testing;

// One lowering configuration of one workload per test (each runs every mutation of it).
struct MutantCase {
  std::string workload;
  Config config;
};

void PrintTo(const MutantCase& c, std::ostream* os) { *os << configStr(c.workload, c.config); }

std::vector<MutantCase> mutantCases() {
  std::vector<MutantCase> out;
  for (const auto& name : catalogNames())
    for (auto protocol : {StreamProtocol::kSeparateSyncLoop, StreamProtocol::kInLoopSync, StreamProtocol::kPerIterationJoin})
      for (auto pipeline : {PipelineKind::kCollective, PipelineKind::kP2P})
        for (bool ring : {false, true})
          out.push_back({name, Config{2, 2, protocol, StreamIndexing::kModulo, pipeline, ring}});
  return out;
}

class ParametricMutants : public ::testing::TestWithParam<MutantCase> {};

TEST_P(ParametricMutants, EveryMutantIsCaughtWithAReplayedCounterexample) {
  const std::string& name = GetParam().workload;
  const Config& c = GetParam().config;
  auto original = lowerWorkload(name, c);
  if (!original) GTEST_SKIP() << configStr(name, c) << " does not lower";
  std::string text = print(*original);
  ParametricOptions o;
  o.ranks = c.devices;
  ASSERT_TRUE(proveProgram(*original, o).proven()) << configStr(name, c);
  int caught = 0, unsupported = 0;
  for (const auto& m : mutations()) {
    for (size_t k = 0;; ++k) {
      HostProgram mutant = parseHostProgram(text, name + ".hir");
      if (!m.apply(mutant, k, c, nullptr)) break;
      ParametricResult r = proveProgram(mutant, o);
      EXPECT_FALSE(r.proven()) << configStr(name, c) << ": mutant '" << m.name << "' #" << k << " is proven\n"
                               << print(mutant);
      // A mutant may leave what the encoding summarizes (a ring slot's binding that depends on
      // more than the previous iteration once a free moves): inconclusive is allowed, a proof is not.
      if (!r.unsupported.empty()) {
        ++unsupported;
        continue;
      }
      EXPECT_TRUE(r.bugFound()) << configStr(name, c) << ": mutant '" << m.name << "' #" << k
                                << " has no confirmed counterexample\n"
                                << formatParametricReport(r) << print(mutant);
      ++caught;
    }
  }
  EXPECT_GE(caught, 3) << configStr(name, c);
  EXPECT_LE(unsupported, 1) << configStr(name, c);
}

INSTANTIATE_TEST_SUITE_P(Lowerings, ParametricMutants, ::testing::ValuesIn(mutantCases()),
                         [](const ::testing::TestParamInfo<MutantCase>& i) {
                           const Config& c = i.param.config;
                           return i.param.workload + "_" + streamProtocolName(c.protocol) + "_" +
                                  pipelineKindName(c.pipeline) + (c.ring ? "_ring" : "");
                         });

}  // namespace
}  // namespace braid::verify

#endif  // BRAID_HAVE_Z3
