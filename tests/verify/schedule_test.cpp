// The schedules of docs/LOWERING.md ("Schedules"): a worker pool apart from the chunk count,
// deferred waits and prefetched communications. Every catalog workload lowered with them
// verifies race-free; and the two synchronizations the schedules add are each necessary: without the deferred Wait in the join
// the program is reported (unwaited communication, or the read of its output), and without the
// compute loop's Synchronize on the prefetch stream the matmul races with the allgather.
//
// The catalog's generic mutation suite (catalog_test.cpp) is not run over these schedules: with
// one worker stream, or with the deferred Wait on the main stream, several of its mutations leave
// a correct program (one stream orders its iterations by itself; the main stream's Wait for a
// reduce-scatter posted after the worker's GEMM orders that GEMM before the join, so dropping
// the join's Synchronize changes nothing), which the verifier rightly accepts.
#include <gtest/gtest.h>

#include "catalog/workload.h"
#include "ir/host_ir_text.h"
#include "passes/lower.h"
#include "tests/verify/catalog_mutations.h"
#include "tests/verify/verify_test_util.h"

namespace braid::verify {
namespace {

using braid::testing::kinds;
using namespace braid::testing;

VerifyResult check(const HostProgram& p, const Config& c) { return verifyForErrors(p, c.devices, c.numberOfStreams()); }

constexpr StreamProtocol kProtocols[] = {StreamProtocol::kSeparateSyncLoop, StreamProtocol::kInLoopSync,
                                         StreamProtocol::kPerIterationJoin};

// `name` lowered for `c` verifies; false when the workload does not lower for `c`.
bool expectVerified(const std::string& name, const Config& c) {
  std::optional<HostProgram> p = lowerWorkload(name, c);
  if (!p) return false;
  VerifyResult r = check(*p, c);
  EXPECT_TRUE(r.ok()) << configStr(name, c) << ": " << kinds(r) << "\n" << formatReport(r);
  return true;
}

class Schedules : public ::testing::TestWithParam<std::string> {};

TEST_P(Schedules, VerifyUnderEveryProtocolPoolAndPipeline) {
  const std::string name = GetParam();
  int verified = 0;
  for (StreamProtocol protocol : kProtocols)
    for (auto pipeline : {PipelineKind::kCollective, PipelineKind::kP2P})
      for (int64_t pool : {0, 1, 2})
        for (bool defer : {false, true})
          for (bool prefetch : {false, true})
            for (auto [d, s] : {std::pair<int64_t, int64_t>{1, 1}, {2, 2}, {2, 4}, {3, 3}, {4, 2}}) {
              verified += expectVerified(
                  name, Config{d, s, protocol, StreamIndexing::kModulo, pipeline, false, pool, defer, prefetch});
            }
  EXPECT_GT(verified, 0) << name;
}

// Raw indexing: the prefetch streams sit past the loop's extent instead of numberOfStreams.
TEST_P(Schedules, PrefetchVerifiesWithRawIndexing) {
  const std::string name = GetParam();
  for (StreamProtocol protocol : kProtocols)
    for (auto pipeline : {PipelineKind::kCollective, PipelineKind::kP2P})
      for (auto [d, s] : {std::pair<int64_t, int64_t>{2, 2}, {2, 3}, {4, 4}})
        expectVerified(name, Config{d, s, protocol, StreamIndexing::kRaw, pipeline, false, 0, false, true});
}

INSTANTIATE_TEST_SUITE_P(Workloads, Schedules, ::testing::ValuesIn(catalogNames()),
                         [](const ::testing::TestParamInfo<std::string>& i) { return i.param; });

// The first statement of `scope` (depth first) for which `pick(stmt, scope, index)` holds,
// removed; its location in `loc`.
template <class F>
bool removeFirst(Scope& scope, F&& pick, SourceLoc* loc) {
  for (size_t i = 0; i < scope.size(); ++i) {
    Stmt* s = scope[i].get();
    if (pick(*s, scope, i)) {
      *loc = s->loc;
      scope.erase(scope.begin() + static_cast<long>(i));
      return true;
    }
    if (s->is<ForLoop>() && removeFirst(s->as<ForLoop>()->body, pick, loc)) return true;
  }
  return false;
}

bool namesLine(const VerifyResult& r, sem::FindingKind kind, int line) {
  for (const Finding& f : r.findings)
    if (f.severity == Severity::kError && f.kind == kind)
      for (const Site& s : f.sites)
        if (s.loc.line == line) return true;
  return false;
}

// Under deferred waits the Wait of GEMM + RS / AR sits in the join, right after the iteration's
// SetCurrentStream(Stream 0). Without it the communication is never waited: reported at the
// communication's line.
TEST(DeferredWaits, TheJoinsWaitIsNecessary) {
  for (const char* name : {"matmul_rs", "matmul_ar", "row_parallel_linear", "mlp"})
    for (int64_t pool : {0, 1}) {
      Config c{2, 3, StreamProtocol::kSeparateSyncLoop, StreamIndexing::kModulo, PipelineKind::kCollective, false,
               pool, true, false};
      auto p = lowerWorkload(name, c);
      ASSERT_TRUE(p) << name;
      ASSERT_TRUE(check(*p, c).ok()) << configStr(name, c);
      // The communication's line, and the Wait right after the join's SetCurrentStream.
      int comm_line = 0;
      forEachStmt(p->body(), [&](const Stmt& s, int) {
        if (s.is<Communication>() && comm_line == 0) comm_line = s.loc.line;
      });
      SourceLoc removed;
      bool found = removeFirst(
          p->body(),
          [](const Stmt& s, const Scope& sc, size_t i) {
            return s.is<Wait>() && i > 0 && sc[i - 1]->is<SetCurrentStream>() &&
                   sc[i - 1]->as<SetCurrentStream>()->stream.kind == StreamRef::Kind::kNamed;
          },
          &removed);
      ASSERT_TRUE(found) << configStr(name, c) << ": no Wait in the join\n" << print(*p);
      VerifyResult r = check(*p, c);
      EXPECT_FALSE(r.ok()) << configStr(name, c);
      EXPECT_TRUE(namesLine(r, sem::FindingKind::kUnwaitedCommunication, comm_line) ||
                  namesLine(r, sem::FindingKind::kMissingWait, comm_line))
          << configStr(name, c) << ": " << kinds(r) << "\n" << formatReport(r);
    }
}

// Under prefetch the compute loop's iteration i waits for the prefetch stream of chunk i before
// its matmul. Without that Synchronize the matmul reads the allgather's output unordered: the
// Wait is on a stream that does not order the read (or a race), naming the matmul's line.
TEST(Prefetch, TheComputeLoopsSynchronizeIsNecessary) {
  for (auto pipeline : {PipelineKind::kCollective, PipelineKind::kP2P})
    for (int64_t pool : {0, 1}) {
      Config c{2, 2, StreamProtocol::kSeparateSyncLoop, StreamIndexing::kModulo, pipeline, false, pool, false, true};
      auto p = lowerWorkload("ag_matmul", c);
      ASSERT_TRUE(p);
      ASSERT_TRUE(check(*p, c).ok()) << configStr("ag_matmul", c);
      int matmul_line = 0;
      forEachStmt(p->body(), [&](const Stmt& s, int) {
        if (s.is<HostOp>() && s.as<HostOp>()->op->type() == OpType::kMatmul) matmul_line = s.loc.line;
      });
      // The Synchronize on the prefetch stream: an indexed stream that mentions numberOfStreams
      // added to the loop index, right after the worker's SetCurrentStream.
      SourceLoc removed;
      bool found = removeFirst(
          p->body(),
          [](const Stmt& s, const Scope& sc, size_t i) {
            return s.is<Synchronize>() && i > 0 && sc[i - 1]->is<SetCurrentStream>() &&
                   s.as<Synchronize>()->stream.kind == StreamRef::Kind::kIndexed &&
                   s.as<Synchronize>()->stream.index.op() == ScalarOp::kAdd;
          },
          &removed);
      ASSERT_TRUE(found) << print(*p);
      VerifyResult r = check(*p, c);
      EXPECT_FALSE(r.ok()) << configStr("ag_matmul", c);
      EXPECT_TRUE(namesLine(r, sem::FindingKind::kWaitOnWrongStream, matmul_line) ||
                  namesLine(r, sem::FindingKind::kMissingWait, matmul_line) ||
                  namesLine(r, sem::FindingKind::kRace, matmul_line))
          << configStr("ag_matmul", c) << ": " << kinds(r) << "\n" << formatReport(r);
    }
}

// Protocol B has no per-iteration join on the main stream: deferred waits are refused there
// with a message that says why.
TEST(DeferredWaits, ProtocolBIsRefused) {
  WorkloadParams p;
  p.lowering.protocol = StreamProtocol::kInLoopSync;
  p.lowering.deferWaits = true;
  Workload w = makeWorkload("matmul_rs", p);
  try {
    lower(*w.fusion, w.params.lowering, w.params.devices);
    FAIL() << "protocol B with deferred waits lowered";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("protocol A or C"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace braid::verify
