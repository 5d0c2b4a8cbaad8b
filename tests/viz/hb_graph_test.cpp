// Happens-before graphs and findings drawn over them: golden DOT for small programs (one per kind
// of mark: a race's missing ordering, a missing join, an unsafe free, a deadlock's cycle, a
// serializing chain), the cut of large graphs, and the rendered SVG. Regenerate the goldens after
// an intended change with BRAID_UPDATE_GOLDEN=1 and read the diff.
#include <gtest/gtest.h>

#include <cstdlib>
#include <algorithm>
#include <fstream>
#include <memory>
#include <regex>
#include <set>
#include <sstream>

#include "ir/host_ir_text.h"
#include "ir/semantics/interpreter.h"
#include "tests/support/temp_dir.h"
#include "tests/viz/picture_check.h"
#include "verify/checker.h"
#include "viz/hb_graph.h"
#include "viz/render.h"

namespace braid::viz {
namespace {

struct Program {
  std::unique_ptr<HostProgram> program;  // the event graph points into it
  sem::EventGraph graph;
  verify::VerifyResult result;
};

// A test program (tests/verify/data or examples/), verified for `bindings`.
Program verified(const std::string& path, Bindings bindings, int64_t ranks, int64_t streams) {
  auto program = std::make_unique<HostProgram>(parseHostProgramFile(std::string(BRAID_SOURCE_DIR) + "/" + path));
  const HostProgram& p = *program;
  verify::VerifyOptions o;
  o.bindings = bindings;
  o.ranks = ranks;
  o.streams = streams;
  sem::SemanticsOptions so;
  so.bindings = bindings;
  so.numRanks = ranks;
  so.numberOfStreams = streams;
  sem::EventGraph graph = sem::buildEventGraph(p, so);
  verify::VerifyResult result = verify::verifyProgram(p, o);
  return {std::move(program), std::move(graph), std::move(result)};
}

const Bindings kRows = {{"i0", 4}, {"i2", 8}};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

void expectGolden(const std::string& name, const std::string& dot) {
  std::string path = std::string(BRAID_TEST_DATA_DIR) + "/viz/golden/" + name + ".dot";
  if (const char* u = std::getenv("BRAID_UPDATE_GOLDEN"); u && std::string(u) == "1") {
    std::ofstream(path) << dot;
    return;
  }
  std::string expected = slurp(path);
  ASSERT_FALSE(expected.empty()) << "missing golden " << path << " (run with BRAID_UPDATE_GOLDEN=1)";
  if (dot == expected) return;
  // Name the first differing line rather than printing both graphs.
  std::istringstream a(dot), b(expected);
  std::string la, lb;
  int line = 1;
  while (std::getline(a, la) && std::getline(b, lb) && la == lb) ++line;
  ADD_FAILURE() << "golden " << path << " differs at line " << line << ":\n  got:      " << la
                << "\n  expected: " << lb << "\nif intended, regenerate with BRAID_UPDATE_GOLDEN=1 and read the diff";
}

// The finding edges of a DOT text: "from -> to" pairs of event ids, by class.
std::vector<std::pair<int, int>> findingEdges(const std::string& dot, const std::string& cls) {
  std::vector<std::pair<int, int>> out;
  std::regex edge("  e(\\d+) -> e(\\d+) \\[[^\\n]*class=\"finding " + cls + "\"");
  for (auto it = std::sregex_iterator(dot.begin(), dot.end(), edge); it != std::sregex_iterator(); ++it)
    out.emplace_back(std::stoi((*it)[1]), std::stoi((*it)[2]));
  return out;
}

GraphDrawOptions titled(const std::string& title) {
  GraphDrawOptions o;
  o.title = title;  // the default names the file, whose path depends on the checkout
  return o;
}

TEST(HappensBeforeGraph, RaceDrawsTheMissingOrderingBetweenItsAccesses) {
  Program p = verified("tests/verify/data/race_no_initial_sync.hir", kRows, 1, 2);
  ASSERT_TRUE(p.result.has(verify::FindingKind::kRace));
  std::string dot = happensBeforeDot(p.graph, &p.result, titled("race_no_initial_sync"));
  const verify::Finding& race = p.result.findings[0];
  ASSERT_EQ(race.kind, verify::FindingKind::kRace);
  auto missing = findingEdges(dot, "missing");
  EXPECT_NE(std::find(missing.begin(), missing.end(), std::make_pair(race.sites[0].event, race.sites[1].event)),
            missing.end());
  EXPECT_NE(dot.find("#1 write"), std::string::npos);
  EXPECT_NE(dot.find("#1 read"), std::string::npos);
  expectGolden("race_no_initial_sync", dot);
}

TEST(HappensBeforeGraph, MissingJoinPointsAtTheExit) {
  Program p = verified("tests/verify/data/missing_join.hir", kRows, 1, 2);
  ASSERT_TRUE(p.result.has(verify::FindingKind::kMissingJoin));
  std::string dot = happensBeforeDot(p.graph, &p.result, titled("missing_join"));
  auto missing = findingEdges(dot, "missing");
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(p.graph.events[size_t(missing[0].second)].kind, sem::EventKind::kExit);
  EXPECT_NE(dot.find("missing join"), std::string::npos);
  expectGolden("missing_join", dot);
}

TEST(HappensBeforeGraph, UnsafeReuseLinksTheUseToTheFree) {
  Program p = verified("tests/verify/data/free_before_join.hir", kRows, 1, 2);
  ASSERT_TRUE(p.result.has(verify::FindingKind::kUnsafeReuse));
  std::string dot = happensBeforeDot(p.graph, &p.result, titled("free_before_join"));
  auto missing = findingEdges(dot, "missing");
  ASSERT_FALSE(missing.empty());
  for (auto [use, free] : missing) {
    EXPECT_FALSE(p.graph.events[size_t(use)].isMarker());
    EXPECT_EQ(p.graph.events[size_t(free)].kind, sem::EventKind::kFree);
  }
  EXPECT_NE(dot.find("#1 free"), std::string::npos);
  EXPECT_NE(dot.find("must finish before the free"), std::string::npos);
  expectGolden("free_before_join", dot);
}

TEST(HappensBeforeGraph, DeadlockDrawsItsWaitForCycle) {
  Program p = verified("tests/verify/data/collective_order_deadlock.hir", {}, 2, 2);
  ASSERT_TRUE(p.result.has(verify::FindingKind::kDeadlock));
  std::string dot = happensBeforeDot(p.graph, &p.result, titled("collective_order_deadlock"));
  auto cycle = findingEdges(dot, "path");
  // A closed cycle through both ranks' two collectives (and the Waits that post the next one).
  ASSERT_GE(cycle.size(), 4u);
  std::set<int> nodes;
  int collectives = 0;
  for (size_t i = 0; i < cycle.size(); ++i) {
    EXPECT_EQ(cycle[i].second, cycle[(i + 1) % cycle.size()].first);
    nodes.insert(cycle[i].first);
    collectives += p.graph.events[size_t(cycle[i].first)].kind == sem::EventKind::kCollective;
  }
  EXPECT_EQ(nodes.size(), cycle.size());
  EXPECT_EQ(collectives, 4);
  EXPECT_NE(dot.find("all members start first"), std::string::npos);  // the rendezvous steps say so
  expectGolden("collective_order_deadlock", dot);
}

TEST(HappensBeforeGraph, LostParallelismDrawsTheSerializingChain) {
  Program p = verified("examples/stream_set_serialized.hir", {{"i0", 4}, {"i2", 4}}, 1, 4);
  ASSERT_TRUE(p.result.has(verify::FindingKind::kLostParallelism));
  std::string dot = happensBeforeDot(p.graph, &p.result, titled("stream_set_serialized"));
  auto chain = findingEdges(dot, "path");
  ASSERT_GE(chain.size(), 2u);
  for (size_t i = 0; i + 1 < chain.size(); ++i) EXPECT_EQ(chain[i].second, chain[i + 1].first);
  EXPECT_NE(dot.find("#d98400"), std::string::npos);  // a warning: amber, not red
  expectGolden("stream_set_serialized", dot);
}

// ag_matmul lowered for 2 ranks and 2 streams, with its Wait deleted: the matmul reads the
// allgather's output (and the Deallocate frees it) while it may still run.
TEST(HappensBeforeGraph, MissingWaitLinksTheCommunicationToItsUse) {
  Program p = verified("tests/viz/data/ag_matmul_no_wait.hir", {}, 2, 2);
  ASSERT_TRUE(p.result.has(verify::FindingKind::kMissingWait));
  ASSERT_TRUE(p.result.has(verify::FindingKind::kUnwaitedCommunication));
  std::string dot = happensBeforeDot(p.graph, &p.result, titled("ag_matmul_no_wait"));
  int needsWait = 0, atExit = 0;
  for (auto [from, to] : findingEdges(dot, "missing")) {
    EXPECT_EQ(p.graph.events[size_t(from)].kind, sem::EventKind::kCollective);
    const sem::Event& use = p.graph.events[size_t(to)];
    needsWait += use.kind == sem::EventKind::kCompute || use.kind == sem::EventKind::kFree;
    atExit += use.kind == sem::EventKind::kExit;
  }
  EXPECT_EQ(needsWait, 2);  // the matmul's read and the Deallocate
  EXPECT_EQ(atExit, 1);
  EXPECT_NE(dot.find("needs a Wait before this"), std::string::npos);
  EXPECT_NE(dot.find("still running at exit"), std::string::npos);
  // The communicator's stream is a cluster of its own.
  EXPECT_NE(dot.find("label=\"NCCL team (0 1)\""), std::string::npos);
}

TEST(HappensBeforeGraph, LargeGraphsAreCutToTheFindingsNeighbourhood) {
  Program p = verified("tests/verify/data/race_no_initial_sync.hir", {{"i0", 64}, {"i2", 4}}, 1, 2);
  GraphDrawOptions o = titled("cut");
  o.maxEvents = 20;
  o.neighbourhood = 2;
  GraphSummary s;
  std::string dot = happensBeforeDot(p.graph, &p.result, o, &s);
  EXPECT_EQ(s.events, static_cast<int64_t>(p.graph.events.size()));
  EXPECT_LE(s.drawnEvents, 20);
  EXPECT_GT(s.drawnEvents, 1);
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_NE(s.notes[0].find("neighbours within"), std::string::npos);
  EXPECT_NE(dot.find(s.notes[0].substr(0, 20)), std::string::npos);  // said on the picture
  EXPECT_NE(dot.find("label=\"... "), std::string::npos);            // left-out stretches
  // The race's two accesses are kept.
  for (const verify::Site& site : p.result.findings[0].sites)
    EXPECT_NE(dot.find("  e" + std::to_string(site.event) + " ["), std::string::npos);
}

TEST(HappensBeforeGraph, WithoutFindingsALargeGraphShowsTheFirstEventsOfOneRank) {
  Program p = verified("tests/verify/data/collective_order_deadlock.hir", {}, 2, 2);
  GraphDrawOptions o;
  o.maxEvents = 4;
  GraphSummary s;
  std::string dot = happensBeforeDot(p.graph, nullptr, o, &s);
  EXPECT_EQ(s.drawnEvents, 4);
  EXPECT_NE(s.notes[0].find("first 4 of " + std::to_string(p.graph.events.size()) + " events, on rank 0"),
            std::string::npos)
      << s.notes[0];
  EXPECT_EQ(dot.find("cluster_rank1"), std::string::npos);
  EXPECT_NE(dot.find("Happens-before graph"), std::string::npos);
  o.ranks = {1};
  o.maxEvents = 100;
  dot = happensBeforeDot(p.graph, nullptr, o, &s);
  EXPECT_EQ(dot.find("cluster_rank0"), std::string::npos);
  EXPECT_NE(dot.find("cluster_rank1"), std::string::npos);
}

TEST(HappensBeforeGraph, RendersToSvgWithTheFindingsHighlighted) {
  if (!graphvizAvailable()) GTEST_SKIP() << "braid was built without Graphviz";
  if (!testing::canParseSvg()) GTEST_SKIP() << "the tests were built without Expat";
  Program p = verified("tests/verify/data/collective_order_deadlock.hir", {}, 2, 2);
  testing::TempDir dir("braid_hb_");
  const char* keep = std::getenv("BRAID_VIZ_KEEP");
  std::string path = (keep && *keep ? std::string(keep) : dir.path()) + "/deadlock.svg";
  GraphSummary s = drawVerification(p.graph, p.result, {}, path);
  EXPECT_EQ(s.findings, 1);
  testing::SvgDoc svg = testing::parseSvg(slurp(path));
  ASSERT_TRUE(svg.wellFormed) << svg.error;
  EXPECT_EQ(svg.withClass("event").size(), p.graph.events.size());
  // The cycle's events and its edges, one each per step.
  EXPECT_EQ(svg.withClass("finding").size(), 2 * p.result.findings[0].sites.size());
}

}  // namespace
}  // namespace braid::viz
