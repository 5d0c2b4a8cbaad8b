// End-to-end tests of `braid sim`: JSON fields, timeline and trace files, sweeps, errors.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "ir/timeline.h"
#include "tests/sim/sim_test_util.h"
#include "tests/support/cli_runner.h"
#include "tests/support/temp_dir.h"

namespace braid {
namespace {

using json = nlohmann::json;
using testing::runBraid;

TEST(SimCli, JsonHasTheDocumentedFields) {
  auto r = runBraid("sim ag_matmul --machine h200 --devices 4 --streams 2 --m 4096 --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_GT(j["makespan_us"].get<double>(), 0);
  ASSERT_EQ(j["ranks"].size(), 4u);
  for (const auto& rank : j["ranks"])
    for (const char* f : {"rank", "makespan_us", "compute_us", "comm_us", "exposed_comm_us"})
      EXPECT_TRUE(rank.contains(f)) << f;
  EXPECT_GE(j["overlap_fraction"].get<double>(), 0);
  EXPECT_LE(j["overlap_fraction"].get<double>(), 1);
  EXPECT_GE(j["peak_concurrency"].get<int>(), 1);
  EXPECT_FALSE(j["critical_path"]["steps"].empty());
  EXPECT_NEAR(j["critical_path"]["length_us"].get<double>(), j["makespan_us"].get<double>(), 1e-3);
  EXPECT_TRUE(j["folding"]["folded"].get<bool>());
  EXPECT_TRUE(j["deadlock"].is_null());
}

// --graph predicts a CUDA-graph replay: no rank spends host time, the notes say so, and with the
// host's issue off the critical path the program ends sooner than interpreted.
TEST(SimCli, GraphPredictsAReplayWithoutHostIssue) {
  const std::string cmd = "sim ag_matmul --machine h200 --devices 2 --streams 4 --m 4096 --json";
  auto graph = runBraid(cmd + " --graph");
  ASSERT_EQ(graph.rc, 0) << graph.err;
  json g = json::parse(graph.out);
  for (const auto& rank : g["ranks"]) EXPECT_EQ(rank["host_us"].get<double>(), 0);
  EXPECT_NE(g["notes"].dump().find("CUDA-graph replay"), std::string::npos) << g["notes"].dump();
  auto interpreted = runBraid(cmd);
  ASSERT_EQ(interpreted.rc, 0) << interpreted.err;
  json i = json::parse(interpreted.out);
  EXPECT_GT(i["ranks"][0]["host_us"].get<double>(), 0);
  EXPECT_LT(g["makespan_us"].get<double>(), i["makespan_us"].get<double>());
}

// Interpreted, each copy-engine communication also costs its store rendezvous on the host
// (copy_engines.host_call_us): the same program's host time grows by that much per communication
// over NCCL's; a replayed graph spends none on either.
TEST(SimCli, CopyEnginePostsCostTheirRendezvousOnTheHost) {
  const std::string cmd = "sim matmul_rs --machine h200 --devices 2 --streams 4 --m 4096 --json";
  json nccl = json::parse(runBraid(cmd).out), cuda = json::parse(runBraid(cmd + " --comm-backend cuda").out);
  double extra = cuda["ranks"][0]["host_us"].get<double>() - nccl["ranks"][0]["host_us"].get<double>();
  EXPECT_NEAR(extra, 4 * sim::loadMachine("h200").copyEngines.hostCallUs, 1e-6);  // four reduce-scatters
  json graph = json::parse(runBraid(cmd + " --comm-backend cuda --graph").out);
  EXPECT_EQ(graph["ranks"][0]["host_us"].get<double>(), 0);
  // A coalescing group pays it once at its end, not per transfer: the p2p pipeline on two ranks
  // in two chunks runs one group (a receive and a send; the other chunk is the own shard).
  const std::string p2p = "sim ag_matmul --machine h200 --devices 2 --streams 2 --pipeline p2p --m 4096 --json";
  json p2pNccl = json::parse(runBraid(p2p).out), p2pCuda = json::parse(runBraid(p2p + " --comm-backend cuda").out);
  EXPECT_NEAR(p2pCuda["ranks"][0]["host_us"].get<double>() - p2pNccl["ranks"][0]["host_us"].get<double>(),
              sim::loadMachine("h200").copyEngines.hostCallUs, 1e-6);
}

// A CollectivePermute is a communication post like any other: interpreted, it costs the host a
// communication call (and on the copy engines its store rendezvous), four per rank in this ring.
TEST(SimCli, CollectivePermutePostsCostHostTime) {
  const std::string cmd = "sim " + std::string(BRAID_SOURCE_DIR) +
                          "/tests/verify/data/interop/collective_permute_ring.hir --machine h200 --json";
  auto nccl = runBraid(cmd), cuda = runBraid(cmd + " --comm-backend cuda");
  ASSERT_EQ(nccl.rc, 0) << nccl.err;
  ASSERT_EQ(cuda.rc, 0) << cuda.err;
  const sim::Machine h200 = sim::loadMachine("h200");
  double host = json::parse(nccl.out)["ranks"][0]["host_us"].get<double>();
  EXPECT_GE(host, 4 * h200.host.communicationCallUs);
  EXPECT_NEAR(json::parse(cuda.out)["ranks"][0]["host_us"].get<double>() - host, 4 * h200.copyEngines.hostCallUs, 1e-6);
}

// A host IR file fixes what the lowering flags choose: sim and verify refuse them by name rather
// than ignore them; --streams / --pool (numberOfStreams) and sim's --comm-backend apply to files.
TEST(SimCli, LoweringFlagsAreRefusedForAHostIrFile) {
  const std::string file = std::string(BRAID_SOURCE_DIR) + "/tests/verify/data/interop/collective_permute_ring.hir";
  auto sim = runBraid("sim " + file + " --machine h200 --protocol B");
  EXPECT_NE(sim.rc, 0);
  EXPECT_NE(sim.err.find("--protocol chooses how a workload is lowered; " + file + " is a host IR file"), std::string::npos)
      << sim.err;
  auto devices = runBraid("sim " + file + " --machine h200 --devices 4");
  EXPECT_NE(devices.err.find("--ranks gives the number of ranks of a file"), std::string::npos) << devices.err;
  auto verify = runBraid("verify " + file + " --m 8");
  EXPECT_NE(verify.rc, 0);
  EXPECT_NE(verify.err.find("--m chooses how a workload is lowered"), std::string::npos) << verify.err;
  EXPECT_EQ(runBraid("sim " + file + " --machine h200 --streams 4 --comm-backend nccl").rc, 0);
  auto bad = runBraid("sim " + file + " --machine h200 --comm-backend ucc");
  EXPECT_NE(bad.err.find("--comm-backend must be nccl or cuda"), std::string::npos) << bad.err;
}

// --comm-backend cuda: communications on the copy engines hold no SMs and are not slowed by the
// GEMMs beside them, so on the h200 preset (which slows NCCL kernels beside compute) the p2p
// pipeline predicts faster; the copy engines do not cross hosts, which sim refuses by name.
TEST(SimCli, CopyEngineCommunicationsHoldNoSmsAndStayOnOneHost) {
  const std::string cmd = "sim ag_matmul --machine h200 --devices 2 --streams 2 --pipeline p2p --m 8192 --k 8192 --n 3584 "
                          "--dtype bf16 --graph --json";
  auto nccl = runBraid(cmd);
  auto cuda = runBraid(cmd + " --comm-backend cuda");
  ASSERT_EQ(nccl.rc, 0) << nccl.err;
  ASSERT_EQ(cuda.rc, 0) << cuda.err;
  EXPECT_LT(json::parse(cuda.out)["makespan_us"].get<double>(), json::parse(nccl.out)["makespan_us"].get<double>());
  auto split = runBraid(cmd + " --comm-backend cuda --gpus-per-node 1");
  EXPECT_EQ(split.rc, 2) << split.out;
  EXPECT_NE(split.err.find("CUDA IPC does not cross hosts"), std::string::npos) << split.err;
  EXPECT_EQ(runBraid(cmd + " --gpus-per-node 1").rc, 0);
}

TEST(SimCli, SummaryTableExplainsTheResult) {
  auto r = runBraid("sim ag_matmul --machine h100 --devices 2 --streams 2 --m 2048");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("makespan"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("critical path"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("exposed_comm"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("note: folded"), std::string::npos) << r.out;
}

TEST(SimCli, WritesATimelineAndAPerfettoTrace) {
  testing::TempDir dir("braid_sim_cli_");
  std::string tl = dir.file("t.json"), tr = dir.file("trace.json");
  auto r = runBraid("sim " + testing::examplePath("ag_matmul_8ranks.hir") +
                    " --machine h200 --bind i0=8192 --bind i2=1024 --bind i3=1024 --timeline " + tl + " --trace " + tr);
  ASSERT_EQ(r.rc, 0) << r.err;
  Timeline t = readTimelineFile(tl);
  EXPECT_EQ(t.source, "predicted");
  EXPECT_EQ(t.ranks, 8);
  EXPECT_FALSE(t.ops.empty());
  EXPECT_FALSE(t.edges.empty());
  json trace = json::parse(testing::slurpFile(tr));
  int slices = 0, flows = 0, counters = 0;
  for (const auto& e : trace["traceEvents"]) {
    slices += e["ph"] == "X";
    flows += e["ph"] == "s";
    counters += e["ph"] == "C";
  }
  EXPECT_GT(slices, 0);
  EXPECT_GT(flows, 0);
  EXPECT_GT(counters, 0);
}

TEST(SimCli, SweepRanksTheConfigurations) {
  auto r = runBraid("sim ag_matmul --machine h200 --devices 2 --m 4096 --sweep streams=1,2,4 protocol=A,B --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  json j = json::parse(r.out);
  ASSERT_EQ(j["configurations"].size(), 6u);
  double last = 0;
  for (const auto& c : j["configurations"]) {
    EXPECT_TRUE(c["error"].is_null());
    EXPECT_GE(c["makespan_us"].get<double>(), last);
    last = c["makespan_us"].get<double>();
  }
  EXPECT_EQ(j["best"], j["configurations"][0]);
  auto table = runBraid("sim ag_matmul --machine h200 --devices 2 --m 4096 --sweep streams=1,2");
  ASSERT_EQ(table.rc, 0) << table.err;
  EXPECT_NE(table.out.find("best: streams="), std::string::npos) << table.out;
}

TEST(SimCli, SweepOverFileBindingsAndMachines) {
  auto r = runBraid("sim " + testing::examplePath("stream_set_sync_loop.hir") +
                    " --bind i0=8 --sweep i2=1024,1048576 machine=h100,h200 --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["configurations"].size(), 4u);
}

TEST(SimCli, SweepAcceptsExactlyTheProtocolsTheLoweringAccepts) {
  auto r = runBraid("sim ag_matmul --machine h200 --sweep protocol=A,Z");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--protocol"), std::string::npos) << r.err;
  auto k = runBraid("sim ag_matmul --machine h200 --sweep colour=red");
  EXPECT_EQ(k.rc, 2);
  EXPECT_NE(k.err.find("not a setting of a workload"), std::string::npos) << k.err;
}

TEST(SimCli, BadInputIsExitCodeTwoWithTheReason) {
  auto no_machine = runBraid("sim ag_matmul");
  EXPECT_EQ(no_machine.rc, 2);
  EXPECT_NE(no_machine.err.find("--machine is required"), std::string::npos) << no_machine.err;
  auto unbound = runBraid("sim " + testing::examplePath("stream_set_sync_loop.hir") + " --machine h200");
  EXPECT_EQ(unbound.rc, 2);
  EXPECT_NE(unbound.err.find("unbound"), std::string::npos) << unbound.err;
  testing::TempDir dir("braid_sim_cli_");
  std::string bad = dir.file("m.json");
  {
    json m = json::parse(sim::machinePresetJson("h200"));
    m["nvlink"].erase("latency_us");
    std::ofstream(bad) << m.dump();
  }
  auto missing = runBraid("sim ag_matmul --machine " + bad);
  EXPECT_EQ(missing.rc, 2);
  EXPECT_NE(missing.err.find("nvlink.latency_us: missing"), std::string::npos) << missing.err;
}

TEST(SimCli, ADeadlockIsExitCodeOne) {
  auto r = runBraid("sim " + testing::simDataPath("unmatched_allreduce.hir") + " --machine h200");
  EXPECT_EQ(r.rc, 1) << r.err;
  EXPECT_NE(r.out.find("DEADLOCK"), std::string::npos) << r.out;
}

TEST(SimCli, PrintMachineWritesALoadableFile) {
  testing::TempDir dir("braid_sim_cli_");
  auto r = runBraid("sim --machine h200 --nodes 2 --print-machine");
  ASSERT_EQ(r.rc, 0) << r.err;
  std::string file = dir.file("m.json");
  std::ofstream(file) << r.out;
  sim::Machine m = sim::loadMachine(file);
  EXPECT_EQ(m.topology.nodes, 2);
  EXPECT_EQ(m.gpu.hbmGBps, 4800);
}

TEST(SimCli, FoldsEightThousandRanks) {
  auto r = runBraid("sim ag_matmul --machine h200 --devices 8192 --m 65536 --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["ranks"].size(), 8192u);
  EXPECT_TRUE(j["folding"]["folded"].get<bool>());
  EXPECT_EQ(j["folding"]["simulated_ranks"].size(), 1u);
  EXPECT_EQ(j["events"]["represented"].get<int64_t>(), 8192 * j["events"]["simulated"].get<int64_t>());
}

}  // namespace
}  // namespace braid

namespace braid {
namespace {

// --power: the h200 preset has a power cap. A long program run back to back reaches it (slower
// than from idle); a short one does not; a bad value and a negative gap are refused.
TEST(SimCli, PowerStartsARunWhereBackToBackRunsLeaveThePower) {
  const std::string cmd = "sim mlp --machine h200 --devices 1 --m 8192 --k 8192 --n 16384 --graph --json";
  auto idle = runBraid(cmd);
  auto steady = runBraid(cmd + " --power steady");
  auto after = runBraid(cmd + " --power 20 --power-gap 0.5");
  ASSERT_EQ(idle.rc, 0) << idle.err;
  ASSERT_EQ(steady.rc, 0) << steady.err;
  ASSERT_EQ(after.rc, 0) << after.err;
  json i = json::parse(idle.out), s = json::parse(steady.out), a = json::parse(after.out);
  EXPECT_GT(s["makespan_us"].get<double>(), 1.05 * i["makespan_us"].get<double>());
  EXPECT_GT(a["makespan_us"].get<double>(), i["makespan_us"].get<double>());
  EXPECT_EQ(s["power"]["start"], "in the steady state of back-to-back runs 0 us apart");
  EXPECT_GT(s["power"]["capped_fraction"].get<double>(), 0.5);
  EXPECT_EQ(a["power"]["start"], "after 20 back-to-back runs 500 us apart");
  EXPECT_EQ(i["power"]["start"], "idle");
  auto text = runBraid("sim mlp --machine h200 --devices 1 --m 8192 --k 8192 --n 16384 --graph --power steady");
  EXPECT_NE(text.out.find("note: power: the run starts in the steady state"), std::string::npos) << text.out;
  auto bad = runBraid(cmd + " --power often");
  EXPECT_EQ(bad.rc, 2);
  EXPECT_NE(bad.err.find("--power: 'often' is not idle, steady or a number of runs"), std::string::npos) << bad.err;
  auto gap = runBraid(cmd + " --power 3 --power-gap -1");
  EXPECT_EQ(gap.rc, 2);
  EXPECT_NE(gap.err.find("--power-gap"), std::string::npos) << gap.err;
  auto none = runBraid("sim mlp --machine h200-datasheet --devices 1 --power steady");
  EXPECT_EQ(none.rc, 0) << none.err;
  EXPECT_NE(none.out.find("models no power cap"), std::string::npos) << none.out;
}

// --power-gap: on h200 (host.after_idle) a launched run after 20 ms idle is issued later, a graph
// replay is not (and says why); a gap without runs before it is refused, naming the way to say it.
TEST(SimCli, AGapBeforeALaunchedRunDelaysItsHost) {
  const std::string cmd = "sim matmul_rs --machine h200 --devices 1 --m 8192 --k 8192 --n 2048 --json";
  auto awake = runBraid(cmd + " --power 0");
  auto after = runBraid(cmd + " --power 0 --power-gap 20");
  ASSERT_EQ(awake.rc, 0) << awake.err;
  ASSERT_EQ(after.rc, 0) << after.err;
  json a = json::parse(awake.out), b = json::parse(after.out);
  EXPECT_EQ(a["host_after_idle_us"].get<double>(), 0);
  EXPECT_NEAR(b["host_after_idle_us"].get<double>(), 239.1, 0.05);  // h200's host.after_idle at 20 ms
  EXPECT_NEAR(b["makespan_us"].get<double>() - a["makespan_us"].get<double>(), 239.1, 1);
  // A graph replay takes the replay curve (host.after_idle_graph: 13.8 us at 20 ms).
  auto graph = runBraid(cmd + " --graph --power 0 --power-gap 20");
  ASSERT_EQ(graph.rc, 0) << graph.err;
  json g = json::parse(graph.out);
  EXPECT_NEAR(g["host_after_idle_us"].get<double>(), 13.8, 0.05);
  bool said = false;
  for (const auto& n : g["notes"]) said = said || n.get<std::string>().find("(host.after_idle_graph)") != std::string::npos;
  EXPECT_TRUE(said) << graph.out;
  auto idle = runBraid(cmd + " --power idle --power-gap 5");
  EXPECT_EQ(idle.rc, 2);
  EXPECT_NE(idle.err.find("--power 0 --power-gap MS"), std::string::npos) << idle.err;
}

}  // namespace
}  // namespace braid
