// Tuning (sim/tune.h): the candidates, the ranking against serial, and a real search of
// allgather + matmul on toy machines where pipelining must win, and where it must not.
#include "sim/tune.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

#include "catalog/workload.h"
#include "ir/error.h"
#include "passes/lower.h"
#include "tests/sim/sim_test_util.h"

namespace braid::sim {
namespace {

SweepOutcome outcome(int64_t streams, const std::string& protocol, double us, const std::string& error = "") {
  SweepOutcome o;
  o.config = {{"streams", std::to_string(streams)}, {"protocol", protocol}, {"pipeline", "collective"}};
  o.makespanUs = us;
  o.error = error;
  return o;
}

TEST(TuneCandidates, EveryCombinationAndAlwaysSerial) {
  TuneSpace s;
  s.streams = {4, 2};
  s.protocols = {"A", "B"};
  s.pipelines = {"collective"};
  auto c = tuneCandidates(s);
  ASSERT_EQ(c.size(), 6u);  // streams 1 (added), 2, 4 x protocols A, B
  EXPECT_EQ(configStr(c.front()), "streams=1 protocol=A pipeline=collective");
  EXPECT_EQ(configStr(c.back()), "streams=4 protocol=B pipeline=collective");
}

TEST(TuneCandidates, AP2PSearchStillHasTheOneChunkBaseline) {
  TuneSpace s;
  s.streams = {1, 2};
  s.protocols = {"A"};
  s.pipelines = {"p2p"};
  auto c = tuneCandidates(s);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(configStr(c[0]), "streams=1 protocol=A pipeline=collective");
  EXPECT_TRUE(isSerial(c[0]));
  // A p2p pipeline has a chunk per rank, whatever the number of streams.
  EXPECT_EQ(configStr(c[1]), "streams=1 protocol=A pipeline=p2p");
  EXPECT_FALSE(isSerial(c[1]));
  EXPECT_FALSE(isSerial(c[2]));
}

// Schedules: pools below the chunk count only, no pool with p2p, no deferred waits under protocol
// B, and the serial program kept plain.
TEST(TuneCandidates, SchedulesAreSearchedWhereTheyMeanSomething) {
  TuneSpace s;
  s.streams = {1, 4};
  s.protocols = {"A", "B"};
  s.pipelines = {"collective", "p2p"};
  s.pools = {0, 1, 4};
  s.deferWaits = {false, true};
  s.prefetch = {false, true};
  auto c = tuneCandidates(s);
  size_t serial = 0;
  for (const SweepConfig& k : c) {
    const std::string str = configStr(k);
    std::map<std::string, std::string> m(k.begin(), k.end());
    if (isSerial(k)) {
      ++serial;
      EXPECT_EQ(k.size(), 3u) << str;  // streams, protocol, pipeline: no schedule
    }
    if (m.count("pool")) {
      EXPECT_EQ(m["pool"], "1") << str;  // 4 is not below 4 chunks
      EXPECT_EQ(m["pipeline"], "collective") << str;
    }
    if (m.count("defer-waits")) EXPECT_EQ(m["protocol"], "A") << str;
  }
  EXPECT_EQ(serial, 2u);  // protocols A and B
  // streams 4, protocol A, collective: pools {chunks, 1} x defer {off, on} x prefetch {off, on}.
  size_t a4 = 0;
  for (const SweepConfig& k : c)
    if (configStr(k).rfind("streams=4 protocol=A pipeline=collective", 0) == 0) ++a4;
  EXPECT_EQ(a4, 8u);
  EXPECT_NE(std::find_if(c.begin(), c.end(),
                         [](const SweepConfig& k) {
                           return configStr(k) == "streams=4 protocol=A pipeline=collective pool=1 defer-waits=on prefetch=on";
                         }),
            c.end());
}

// Transports: every candidate once per transport, the serial baseline too; nccl adds no key.
TEST(TuneCandidates, EveryCandidateOnEveryTransport) {
  TuneSpace s;
  s.streams = {1, 2};
  s.protocols = {"A"};
  s.pipelines = {"p2p"};
  s.commBackends = {"nccl", "cuda"};
  auto c = tuneCandidates(s);
  std::vector<std::string> got;
  for (const SweepConfig& k : c) got.push_back(configStr(k));
  EXPECT_EQ(got, (std::vector<std::string>{"streams=1 protocol=A pipeline=collective",
                                           "streams=1 protocol=A pipeline=collective comm-backend=cuda",
                                           "streams=1 protocol=A pipeline=p2p",
                                           "streams=1 protocol=A pipeline=p2p comm-backend=cuda",
                                           "streams=2 protocol=A pipeline=p2p",
                                           "streams=2 protocol=A pipeline=p2p comm-backend=cuda"}));
  EXPECT_TRUE(isSerial(c[1]));  // the copy engines' serial program is a serial baseline too
  s.commBackends = {"cuda", "cuda"};
  EXPECT_THROW(tuneCandidates(s), Error);
  s.commBackends = {"ucc"};
  EXPECT_THROW(tuneCandidates(s), Error);
  s.commBackends = {};
  EXPECT_THROW(tuneCandidates(s), Error);
}

TEST(TuneCandidates, RejectsBadAxes) {
  TuneSpace s;
  s.streams = {2, 0};
  EXPECT_THROW(tuneCandidates(s), Error);
  s.streams = {2, 2};
  EXPECT_THROW(tuneCandidates(s), Error);
  s.streams = {2};
  s.protocols = {};
  EXPECT_THROW(tuneCandidates(s), Error);
  s.protocols = {"A"};
  s.pools = {1, 1};
  EXPECT_THROW(tuneCandidates(s), Error);
  s.pools = {-1};
  EXPECT_THROW(tuneCandidates(s), Error);
}

TEST(RankTune, OrdersByTimeAndMeasuresSpeedupAgainstTheBestSerial) {
  TuneResult r = rankTune({outcome(1, "A", 100), outcome(4, "A", 60), outcome(1, "B", 90), outcome(2, "B", 80),
                           outcome(8, "C", 0, "sizes do not divide")});
  ASSERT_EQ(r.ranked.size(), 5u);
  EXPECT_EQ(r.ranked[0].makespanUs, 60);
  EXPECT_EQ(r.ranked[1].makespanUs, 80);
  EXPECT_EQ(r.ranked[2].makespanUs, 90);
  EXPECT_FALSE(r.ranked[4].ok());
  ASSERT_TRUE(r.serial);
  EXPECT_EQ(r.ranked[*r.serial].makespanUs, 90);  // the fastest one-chunk configuration
  EXPECT_TRUE(r.pipelinedWins);
  EXPECT_DOUBLE_EQ(r.speedup(r.ranked[0]), 1.5);
  std::string table = tuneTable(r, 10);
  EXPECT_NE(table.find("best: streams=4 protocol=A pipeline=collective (60.0 us, 1.50x faster than serial)"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("failed (1): sizes do not divide"), std::string::npos) << table;
}

TEST(RankTune, TiesGoToFewerStreams) {
  TuneResult r = rankTune({outcome(4, "A", 50), outcome(2, "A", 50), outcome(1, "A", 70)});
  EXPECT_EQ(streamsOf(r.ranked[0].config), 2);
}

TEST(RankTune, SaysWhenNoPipelinedConfigurationBeatsSerial) {
  TuneResult r = rankTune({outcome(2, "A", 120), outcome(1, "A", 100), outcome(4, "A", 130)});
  EXPECT_FALSE(r.pipelinedWins);
  EXPECT_EQ(*r.serial, 0u);
  EXPECT_NE(tuneTable(r, 10).find("no pipelined configuration beats serial"), std::string::npos);
  auto j = nlohmann::json::parse(tuneJson(r, 2));
  EXPECT_FALSE(j["pipelined_beats_serial"].get<bool>());
  EXPECT_EQ(j["configurations"].size(), 2u);
  EXPECT_EQ(j["serial"]["speedup_vs_serial"].get<double>(), 1.0);
}

TEST(RankTune, TopKeepsTheSerialBaselineInTheTable) {
  TuneResult r = rankTune({outcome(2, "A", 10), outcome(4, "A", 20), outcome(8, "A", 30), outcome(1, "A", 40)});
  std::string table = tuneTable(r, 1);
  EXPECT_NE(table.find("streams=2"), std::string::npos);
  EXPECT_EQ(table.find("streams=4"), std::string::npos);
  EXPECT_NE(table.find("(serial)"), std::string::npos);
  EXPECT_NE(table.find("2 more"), std::string::npos);
}

// Searches allgather + matmul the way `braid tune` does: lower each candidate, simulate it.
TuneResult searchAgMatmul(const Machine& m, std::vector<std::string> transports = {"nccl"}) {
  TuneSpace space;
  space.streams = {1, 2, 4};
  space.protocols = {"A", "B", "C"};
  space.pipelines = {"collective"};
  space.commBackends = std::move(transports);
  auto one = [&](const SweepConfig& c) {
    WorkloadParams p;
    p.devices = 2;
    p.m = 8192;
    p.k = 8192;
    p.n = 3584;
    p.dtype = DataType::kBFloat16;
    p.streams = streamsOf(c);
    p.lowering.streams = p.streams;
    std::string protocol = c[1].second;
    p.lowering.protocol = protocol == "A"   ? StreamProtocol::kSeparateSyncLoop
                          : protocol == "B" ? StreamProtocol::kInLoopSync
                                            : StreamProtocol::kPerIterationJoin;
    if (c.back().first == "comm-backend") p.lowering.commBackend = CommBackend::kCuda;
    Workload w = makeWorkload("ag_matmul", p);
    HostProgram prog = lower(*w.fusion, w.params.lowering, w.params.devices);
    SimOptions o;
    o.semantics.numRanks = p.devices;
    o.semantics.numberOfStreams = p.streams;
    return summarize(simulate(prog, m, o), c);
  };
  return rankTune(runSweep(tuneCandidates(space), one, 2, nullptr));
}

TEST(TuneSearch, PipeliningWinsWhenCommunicationAndComputeAreComparable) {
  TuneResult r = searchAgMatmul(testing::bareMachine());
  ASSERT_TRUE(r.ranked.front().ok());
  EXPECT_TRUE(r.pipelinedWins);
  EXPECT_GT(streamsOf(r.ranked.front().config), 1);
  EXPECT_GT(r.speedup(r.ranked.front()), 1.1);
  // Protocol C joins every iteration before forking the next: it never overlaps, so it is never
  // the fastest pipelined choice.
  EXPECT_NE(r.ranked.front().config[1].second, "C");
  for (size_t i = 1; i < r.ranked.size(); ++i) EXPECT_LE(r.ranked[i - 1].makespanUs, r.ranked[i].makespanUs);
}

TEST(TuneSearch, SerialWinsWhenEveryChunkCostsALotOfHostTime) {
  Machine m = testing::bareMachine();
  m.host.atenOpUs = 20000;  // each chunk's matmul costs more host time than all the work
  m.host.communicationCallUs = 20000;
  TuneResult r = searchAgMatmul(m);
  EXPECT_FALSE(r.pipelinedWins);
  EXPECT_EQ(streamsOf(r.ranked.front().config), 1);
  EXPECT_NE(tuneTable(r, 10).find("no pipelined configuration beats serial"), std::string::npos);
}

// The transport is chosen by the model: when kernels beside NCCL's slow it down the copy engines
// win the search; when the copy engines are slow, NCCL does.
TEST(TuneSearch, TheTransportFollowsTheModel) {
  auto bestTransport = [](const TuneResult& r) {
    return configStr(r.ranked.front().config).find("comm-backend=cuda") != std::string::npos ? "cuda" : "nccl";
  };
  Machine m = testing::bareMachine();
  m.contention.commRateUnderCompute = 0.25;
  TuneResult r = searchAgMatmul(m, {"nccl", "cuda"});
  ASSERT_TRUE(r.ranked.front().ok());
  EXPECT_TRUE(r.pipelinedWins);
  EXPECT_STREQ(bestTransport(r), "cuda") << tuneTable(r, 20);
  m.contention.commRateUnderCompute = 1.0;
  m.copyEngines.bandwidthGBps = 10;
  TuneResult slow = searchAgMatmul(m, {"nccl", "cuda"});
  EXPECT_STREQ(bestTransport(slow), "nccl") << tuneTable(slow, 20);
}

}  // namespace
}  // namespace braid::sim
