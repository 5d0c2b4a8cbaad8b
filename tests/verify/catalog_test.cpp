// Every catalog workload, lowered by braid, verifies for 1-8 ranks and 1-8 streams (small
// sizes); and a mutation suite breaks lowered programs in every known way (drop or move one
// Synchronize, swap SetCurrentStream and Synchronize, join only some workers, index the wrong
// slice, shrink a ring buffer, free before the join, make a collective rank-dependent): every
// mutant must be caught as one of its mutation's finding classes, every site located, and where
// the mutation edits an access, at that statement. Issue 9's mutations: located_mutants_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <functional>

#include "ir/host_ir_text.h"
#include "catalog/workload.h"
#include "passes/lower.h"
#include "tests/verify/catalog_mutations.h"
#include "tests/verify/verify_test_util.h"

namespace braid::verify {
namespace {

using braid::testing::kinds;
using namespace braid::testing;  // the catalog configurations and mutations

VerifyResult check(const HostProgram& p, const Config& c) { return verifyForErrors(p, c.devices, c.numberOfStreams()); }

class Catalog : public ::testing::TestWithParam<std::string> {};

constexpr StreamProtocol kProtocols[] = {StreamProtocol::kSeparateSyncLoop, StreamProtocol::kInLoopSync,
                                         StreamProtocol::kPerIterationJoin};

// The pipelines, and whether the P2P one reads its own shard in place (--own-shard in-place).
constexpr std::pair<PipelineKind, bool> kPipelines[] = {
    {PipelineKind::kCollective, false}, {PipelineKind::kP2P, false}, {PipelineKind::kP2P, true}};

// Whether `in_place` (lowered with --own-shard in-place) is the program the copying lowering
// gives: then it adds nothing to check (every workload but ag_matmul has no P2P pipeline).
bool sameAsCopied(const std::string& name, Config c, const HostProgram& in_place) {
  c.ownShardInPlace = false;
  auto copied = lowerWorkload(name, c);
  return copied && print(*copied) == print(in_place);
}

TEST_P(Catalog, VerifiesFor1To8RanksAnd1To8StreamsUnderEveryProtocol) {
  const std::string name = GetParam();
  for (StreamProtocol protocol : kProtocols) {
    int verified = 0;
    for (int64_t d = 1; d <= 8; ++d) {
      for (int64_t s = 1; s <= 8; ++s) {
        Config c;
        c.devices = d;
        c.streams = s;
        c.protocol = protocol;
        auto p = lowerWorkload(name, c);
        if (!p) continue;
        VerifyResult r = check(*p, c);
        EXPECT_TRUE(r.ok()) << configStr(name, c) << ": " << kinds(r) << "\n" << formatReport(r);
        ++verified;
      }
    }
    // Sizes are chosen so that every combination lowers.
    EXPECT_EQ(verified, 64) << name << " protocol " << streamProtocolName(protocol);
  }
}

TEST_P(Catalog, VerifiesUnderEveryLoweringOption) {
  const std::string name = GetParam();
  for (StreamProtocol protocol : kProtocols)
    for (auto indexing : {StreamIndexing::kModulo, StreamIndexing::kRaw})
      for (auto [pipeline, in_place] : kPipelines)
        for (bool ring : {false, true})
          for (auto [d, s] : {std::pair<int64_t, int64_t>{1, 1}, {2, 3}, {3, 2}, {4, 4}, {8, 3}}) {
            Config c{d, s, protocol, indexing, pipeline, ring};
            c.ownShardInPlace = in_place;
            auto p = lowerWorkload(name, c);
            if (!p || (in_place && sameAsCopied(name, c, *p))) continue;
            VerifyResult r = check(*p, c);
            EXPECT_TRUE(r.ok()) << configStr(name, c) << ": " << kinds(r) << "\n" << formatReport(r);
          }
}

INSTANTIATE_TEST_SUITE_P(Workloads, Catalog, ::testing::ValuesIn(catalogNames()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

// Stream chunks that do not divide (the last one shorter: ShardByStream's ceilDiv rule) verify
// for every workload whose schedule allows them, under every protocol.
TEST(CatalogShorterChunks, VerifyUnderEveryProtocol) {
  int verified = 0;
  for (const char* name : {"single_set", "allreduce", "matmul_ar", "row_parallel_linear", "column_parallel_linear",
                           "mlp", "two_matmuls_inlinable", "tp_dp_mlp"})
    for (StreamProtocol protocol : kProtocols)
      for (int64_t d : {1, 2, 4})
        for (int64_t s : {2, 3, 4}) {
          WorkloadParams p;
          p.devices = d;
          p.streams = s;
          p.m = d * (s * s + 1);  // s*s+1 rows per rank: chunks of s+1, the last one shorter
          p.k = 2 * d;
          p.n = 2 * d;
          p.lowering.protocol = protocol;
          p.lowering.streams = s;
          Workload w = makeWorkload(name, p);
          HostProgram h = lower(*w.fusion, w.params.lowering, d);
          Config c;
          c.devices = d;
          c.streams = s;
          c.protocol = protocol;
          VerifyResult r = check(h, c);
          EXPECT_TRUE(r.ok()) << configStr(name, c) << " m=" << p.m << ": " << kinds(r) << "\n" << formatReport(r);
          ++verified;
        }
  EXPECT_EQ(verified, 8 * 3 * 3 * 3);
}

// Protocol C is race-free but joins every iteration on the main stream, which the next
// iteration's fork waits on: the verifier must say that its iterations cannot overlap, and must
// not say it of protocols A and B.
TEST(CatalogProtocols, OnlyProtocolCSerializesItsIterations) {
  for (StreamProtocol protocol : kProtocols) {
    Config c;
    c.devices = 2;
    c.streams = 3;
    c.protocol = protocol;
    auto p = lowerWorkload("ag_matmul", c);
    ASSERT_TRUE(p.has_value());
    VerifyOptions o;
    o.ranks = c.devices;
    o.streams = c.streams;
    VerifyResult r = verifyProgram(*p, o);
    EXPECT_TRUE(r.ok()) << configStr("ag_matmul", c) << ": " << kinds(r);
    EXPECT_EQ(r.has(FindingKind::kLostParallelism), protocol == StreamProtocol::kPerIterationJoin)
        << configStr("ag_matmul", c) << ": " << kinds(r);
  }
}

// An error of one of the mutation's classes, every site of it located (a statement's line, or
// the program's entry or exit; a rank; a stream), naming the mutated statement where it should.
::testing::AssertionResult caughtAsExpected(const VerifyResult& r, const MutationInfo& m, const SourceLoc& touched,
                                            int64_t ranks) {
  for (const Finding& f : r.findings) {
    if (f.severity != Severity::kError) continue;
    for (const Site& s : f.sites) {
      bool program_edge = s.statement == "program entry" || s.statement == "program exit";
      if ((!program_edge && s.loc.line <= 0) || s.rank < 0 || s.rank >= ranks || s.stream.empty())
        return ::testing::AssertionFailure() << findingKindName(f.kind) << " has an unlocated site: " << s.role
                                             << " line " << s.loc.line << " rank " << s.rank << " stream '"
                                             << s.stream << "'";
    }
  }
  for (const Finding& f : r.findings) {
    if (f.severity != Severity::kError || std::find(m.kinds.begin(), m.kinds.end(), f.kind) == m.kinds.end())
      continue;
    if (!m.namesTouched) return ::testing::AssertionSuccess();
    for (const Site& s : f.sites)
      if (s.loc.line == touched.line) return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "no finding of the mutation's classes"
                                       << (m.namesTouched ? " naming line " + std::to_string(touched.line) : "")
                                       << "; found " << kinds(r);
}

// Every mutant of `name` lowered for `c` caught as its mutation's class; how many there were.
int mutateAndCheck(const std::string& name, const Config& c) {
  auto original = lowerWorkload(name, c);
  if (!original) return 0;
  std::string text = print(*original);
  EXPECT_TRUE(check(*original, c).ok()) << configStr(name, c);
  int caught = 0;
  for (const auto& m : mutations()) {
    for (size_t k = 0;; ++k) {
      HostProgram mutant = parseHostProgram(text, name + ".hir");
      SourceLoc touched;
      if (!m.apply(mutant, k, c, &touched)) break;
      VerifyResult r = check(mutant, c);
      EXPECT_FALSE(r.ok()) << configStr(name, c) << ": mutant '" << m.name << "' #" << k << " is not caught\n"
                           << print(mutant);
      EXPECT_TRUE(caughtAsExpected(r, m, touched, c.devices))
          << configStr(name, c) << ": mutant '" << m.name << "' #" << k << "\n" << formatReport(r);
      ++caught;
    }
  }
  return caught;
}

class Mutants : public ::testing::TestWithParam<std::string> {};

TEST_P(Mutants, EveryMutantIsCaught) {
  const std::string name = GetParam();
  int caught = 0;
  for (StreamProtocol protocol : kProtocols)
    for (bool ring : {false, true})
      for (auto [pipeline, in_place] : kPipelines) {
        Config c{2, 2, protocol, StreamIndexing::kModulo, pipeline, ring};
        c.ownShardInPlace = in_place;
        auto p = in_place ? lowerWorkload(name, c) : std::nullopt;
        if (in_place && (!p || sameAsCopied(name, c, *p))) continue;
        caught += mutateAndCheck(name, c);
      }
  EXPECT_GE(caught, 10) << name;
  ::testing::Test::RecordProperty("mutants", caught);
  std::fprintf(stderr, "%s: %d mutants, all caught\n", name.c_str(), caught);
}

INSTANTIATE_TEST_SUITE_P(Workloads, Mutants, ::testing::ValuesIn(catalogNames()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

// ag_matmul lowered for `c` and read back from its text, with its ring shrunk by one slot;
// `judged_as` is the configuration shrinkRing decides by (it leaves alone what is no mutant there).
void agMatmulWithASmallerRing(const Config& c, const Config& judged_as, HostProgram& out) {
  auto p = lowerWorkload("ag_matmul", c);
  ASSERT_TRUE(p);
  out = parseHostProgram(print(*p), "ag_matmul.hir");
  ASSERT_TRUE(shrinkRing(out, 0, judged_as)) << print(*p);
}

// The catalog lowers ring buffers only for some workloads: make sure the ring mutation is
// exercised at least once.
// The other side of ringSlotsAreSerialized: under protocol C a smaller ring is still correct
// (every iteration joins before the next forks), and the verifier must not call it a race.
TEST(Mutants, ProtocolCToleratesASmallerRing) {
  Config c{2, 3, StreamProtocol::kPerIterationJoin, StreamIndexing::kModulo, PipelineKind::kCollective, true};
  Config asA = c;
  asA.protocol = StreamProtocol::kSeparateSyncLoop;
  HostProgram mutant;
  ASSERT_NO_FATAL_FAILURE(agMatmulWithASmallerRing(c, asA, mutant));
  VerifyResult r = check(mutant, c);
  EXPECT_TRUE(r.ok()) << formatReport(r);
}

TEST(Mutants, RingShrinkIsExercised) {
  Config c{2, 3, StreamProtocol::kSeparateSyncLoop, StreamIndexing::kModulo, PipelineKind::kCollective, true};
  HostProgram mutant;
  ASSERT_NO_FATAL_FAILURE(agMatmulWithASmallerRing(c, c, mutant));
  VerifyResult r = check(mutant, c);
  EXPECT_TRUE(r.has(FindingKind::kRace)) << formatReport(r);
}

// With --own-shard in-place the P2P pipeline reads its own shard in place, so on D ranks only
// D - 1 iterations receive into the ring: with D <= numberOfStreams a ring one slot smaller is
// still correct, and the verifier must not call it a race; with more ranks than streams two
// receiving iterations on different streams share a slot of the smaller ring, a race.
TEST(Mutants, P2PRingNeedsASlotPerReceivingIteration) {
  Config spare{2, 2, StreamProtocol::kSeparateSyncLoop, StreamIndexing::kModulo, PipelineKind::kP2P, true};
  spare.ownShardInPlace = true;
  ASSERT_TRUE(p2pRingHasASpareSlot(spare));
  Config asCollective = spare;
  asCollective.pipeline = PipelineKind::kCollective;  // shrinkRing skips what is no mutant
  HostProgram smaller;
  ASSERT_NO_FATAL_FAILURE(agMatmulWithASmallerRing(spare, asCollective, smaller));
  VerifyResult ok = check(smaller, spare);
  EXPECT_TRUE(ok.ok()) << formatReport(ok);

  Config tight{3, 2, StreamProtocol::kSeparateSyncLoop, StreamIndexing::kModulo, PipelineKind::kP2P, true};
  tight.ownShardInPlace = true;
  ASSERT_FALSE(p2pRingHasASpareSlot(tight));
  HostProgram mutant;
  ASSERT_NO_FATAL_FAILURE(agMatmulWithASmallerRing(tight, tight, mutant));
  VerifyResult r = check(mutant, tight);
  EXPECT_TRUE(r.has(FindingKind::kRace)) << formatReport(r);
}

}  // namespace
}  // namespace braid::verify
