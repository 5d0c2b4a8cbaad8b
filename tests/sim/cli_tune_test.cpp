// End-to-end tests of `braid tune` and `braid calibrate`: rankings, written machine files, and
// bad input (exit 2 with the reason and where).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <nlohmann/json.hpp>

#include "sim/calibrate.h"
#include "tests/support/bad_input.h"
#include "tests/support/cli_runner.h"
#include "tests/support/temp_dir.h"

namespace braid {
namespace {

using json = nlohmann::json;
using testing::runBraid;

void writeFile(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

TEST(TuneCli, RanksTheCandidatesAgainstSerial) {
  auto r = runBraid("tune ag_matmul --machine h200 --devices 2 --m 4096 --streams 2,4 --protocols A,B --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  json j = json::parse(r.out);
  // streams 1 (always), 2, 4 x protocols A, B x pipelines collective, p2p.
  ASSERT_FALSE(j["configurations"].empty());
  double last = 0;
  for (const auto& c : j["configurations"]) {
    EXPECT_GE(c["predicted_us"].get<double>(), last);
    last = c["predicted_us"].get<double>();
    EXPECT_GT(c["speedup_vs_serial"].get<double>(), 0);
  }
  ASSERT_FALSE(j["serial"].is_null());
  EXPECT_EQ(j["serial"]["config"]["streams"], "1");
  EXPECT_DOUBLE_EQ(j["serial"]["speedup_vs_serial"].get<double>(), 1.0);
  EXPECT_EQ(j["best"], j["configurations"][0]);
  EXPECT_EQ(j["pipelined_beats_serial"].get<bool>(), j["best"]["config"]["streams"] != "1");
}

// --power steady ranks every candidate as a loop of back-to-back steps runs it: on h200 (a power
// cap) a long program's serial step is slower than from idle, and the table's head says so.
TEST(TuneCli, PowerSteadyPredictsEveryCandidateAsALoopRunsIt) {
  const std::string cmd = "tune mlp --machine h200 --devices 1 --m 8192 --k 8192 --n 16384 --streams 2 --protocols A";
  auto idle = runBraid(cmd + " --json");
  auto steady = runBraid(cmd + " --json --power steady");
  ASSERT_EQ(idle.rc, 0) << idle.err;
  ASSERT_EQ(steady.rc, 0) << steady.err;
  const double a = json::parse(idle.out)["serial"]["predicted_us"].get<double>();
  const double b = json::parse(steady.out)["serial"]["predicted_us"].get<double>();
  EXPECT_GT(b, 1.05 * a);
  auto text = runBraid(cmd + " --power steady");
  EXPECT_NE(text.out.find("each candidate predicted in the steady state of back-to-back runs of itself"),
            std::string::npos)
      << text.out;
}

// Transports: both where the ranks fit on one node of the machine, NCCL only (and said) where they
// span nodes; --comm-backends chooses. The copy engines do not cross hosts: asked for across
// nodes, those candidates are listed as failed, with the reason.
TEST(TuneCli, SearchesTheTransportsItIsGiven) {
  auto transports = [](const std::string& out) {
    std::set<std::string> seen;
    json j = json::parse(out);
    for (const auto& c : j["configurations"]) seen.insert(c["config"].value("comm-backend", "nccl"));
    return seen;
  };
  const std::string cmd = "tune ag_matmul --machine h200 --devices 2 --m 4096 --streams 2 --protocols A --top 50 --json";
  auto dflt = runBraid(cmd);
  ASSERT_EQ(dflt.rc, 0) << dflt.err;
  EXPECT_EQ(transports(dflt.out), (std::set<std::string>{"nccl", "cuda"}));
  auto nccl = runBraid(cmd + " --comm-backends nccl");
  ASSERT_EQ(nccl.rc, 0) << nccl.err;
  EXPECT_EQ(transports(nccl.out), (std::set<std::string>{"nccl"}));
  // Two nodes of one GPU: NCCL only by default, and the table says why.
  const std::string plain = "tune ag_matmul --machine h200 --devices 2 --m 4096 --streams 2 --protocols A";
  auto spanning = runBraid(plain + " --gpus-per-node 1");
  ASSERT_EQ(spanning.rc, 0) << spanning.err;
  EXPECT_NE(spanning.out.find("transports: NCCL only (the copy engines do not cross hosts and the ranks span 2 nodes)"),
            std::string::npos)
      << spanning.out;
  EXPECT_EQ(spanning.out.find("comm-backend=cuda"), std::string::npos) << spanning.out;
  auto oneHost = runBraid(plain);
  EXPECT_EQ(oneHost.out.find("transports: NCCL only"), std::string::npos) << oneHost.out;
  auto split = runBraid(cmd + " --gpus-per-node 1 --comm-backends nccl,cuda");
  ASSERT_EQ(split.rc, 0) << split.err;
  EXPECT_EQ(transports(split.out), (std::set<std::string>{"nccl"}));
  EXPECT_NE(json::parse(split.out)["failed"].dump().find("CUDA IPC does not cross hosts"), std::string::npos)
      << split.out;
}

// The schedules are searched and named in the ranking and in --json.
TEST(TuneCli, SearchesPoolsDeferredWaitsAndPrefetch) {
  auto r = runBraid("tune matmul_rs --machine h100 --devices 2 --m 4096 --streams 1,4 --protocols A --pipelines collective "
                    "--pools chunks,1 --defer-waits off,on --prefetch off --top 20 --json");
  ASSERT_EQ(r.rc, 0) << r.err;
  json j = json::parse(r.out);
  bool deferred_one_stream = false;
  for (const auto& c : j["configurations"])
    deferred_one_stream = deferred_one_stream || (c["config"].value("pool", "") == "1" &&
                                                  c["config"].value("defer-waits", "") == "on");
  EXPECT_TRUE(deferred_one_stream) << r.out;
  auto t = runBraid("tune ag_matmul --machine h100 --devices 2 --m 4096 --streams 2 --protocols A --pipelines collective "
                    "--pools 1 --defer-waits off --prefetch on --top 20");
  ASSERT_EQ(t.rc, 0) << t.err;
  EXPECT_NE(t.out.find("streams=2 protocol=A pipeline=collective pool=1 prefetch=on"), std::string::npos) << t.out;
}

TEST(TuneCli, TableNamesTheBestAndTheDuplicates) {
  // matmul_ar has no DID -> Stream resharding: p2p lowers to the same program as collective.
  auto r = runBraid("tune matmul_ar --machine h100 --devices 2 --m 4096 --streams 1,2 --protocols A");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("predicted_us"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(serial)"), std::string::npos) << r.out;
  EXPECT_TRUE(r.out.find("best: ") != std::string::npos ||
              r.out.find("no pipelined configuration beats serial") != std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("streams=1 protocol=A pipeline=p2p  =  streams=1 protocol=A pipeline=collective"), std::string::npos) << r.out;
}

TEST(TuneCli, SaysWhenSerialWins) {
  testing::TempDir dir("braid_tune_cli_");
  auto m = runBraid("sim --machine h200 --print-machine");
  ASSERT_EQ(m.rc, 0) << m.err;
  json machine = json::parse(m.out);
  machine["host"]["aten_op_us"] = 50000.0;  // every chunk's matmul costs more host time than the work
  machine["host"]["communication_call_us"] = 50000.0;
  std::string path = dir.file("slow_host.json");
  writeFile(path, machine.dump());
  auto r = runBraid("tune ag_matmul --machine " + path + " --m 4096 --streams 1,2,4 --protocols A,B --pipelines collective");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("no pipelined configuration beats serial"), std::string::npos) << r.out;
}

TEST(TuneCli, BadInputIsExitCodeTwo) {
  testing::expectBadInput({
      {"tune ag_matmul --machine h200 --streams 0,2", "--streams: 0 is not a positive number of streams"},
      {"tune ag_matmul --machine h200 --streams 2,x", "--streams: 'x' is not an integer"},
      {"tune ag_matmul --machine h200 --streams 2,100000", "--streams: 100000 is more than the 4096 streams a rank may have"},
      {"tune ag_matmul --machine h200 --protocols A,Z", "--protocol must be A, B or C, got 'Z'"},
      {"tune ag_matmul --machine h200 --pipelines ring", "--pipeline must be collective or p2p"},
      {"tune ag_matmul --machine h200 --top 0", "--top must be positive"},
      {"tune ag_matmul --machine h200 --power hot", "--power: 'hot'"},
      {"tune ag_matmul --machine h200 --power-gap 3", "--power-gap needs --power N or steady"},
      {"tune ag_matmul --machine h200 --nodes 0", "--nodes"},
      {"tune ag_matmul --machine h200 --m 1125899906842624", "(in every configuration tune would try)"},
      {"tune ag_matmul --machine h200 --pools 0", "--pools: '0' is neither 'chunks' nor a positive number"},
      {"tune ag_matmul --machine h200 --prefetch maybe", "--prefetch: 'maybe' must be on or off"},
      {"tune ag_matmul --machine h200 --comm-backends nccl,ucc", "--comm-backends: 'ucc' is neither nccl nor cuda"},
      {"tune ag_matmul --machine h200 --comm-backend cuda", "--comm-backend"},
      {"tune ag_matmul", "--machine is required"},
      {"tune no_such_workload --machine h200", "neither a file nor a workload"},
      {"tune " + std::string(BRAID_SOURCE_DIR) + "/examples/stream_set_serialized.hir --machine h200",
       "tune searches the lowerings of a catalog workload"},
  });
}

// Measurements the h100 preset itself would give, with some host costs changed: calibrating the
// h100 preset on them must find those costs and leave the rest.
// --graph ranks predicted CUDA-graph replays: no configuration spends host time, and here each
// is predicted faster than interpreted; confirming graph replays needs the GPU backend.
TEST(TuneCli, GraphRanksPredictedReplays) {
  const std::string cmd = "tune ag_matmul --machine h200 --devices 2 --m 4096 --streams 2,4 --protocols A --pipelines collective --top 100 --json";
  auto graph = runBraid(cmd + " --graph");
  ASSERT_EQ(graph.rc, 0) << graph.err;
  auto interpreted = runBraid(cmd);
  ASSERT_EQ(interpreted.rc, 0) << interpreted.err;
  json g = json::parse(graph.out), i = json::parse(interpreted.out);
  ASSERT_EQ(g["configurations"].size(), i["configurations"].size());
  std::map<std::string, double> host;
  for (const auto& c : i["configurations"]) host[c["config"].dump()] = c["predicted_us"].get<double>();
  for (const auto& c : g["configurations"]) {
    ASSERT_TRUE(host.count(c["config"].dump())) << c["config"].dump();
    EXPECT_LT(c["predicted_us"].get<double>(), host[c["config"].dump()]) << c["config"].dump();
  }
  auto cpu = runBraid("tune ag_matmul --machine h200 --devices 2 --graph --confirm 1 --backend cpu");
  EXPECT_EQ(cpu.rc, 2);
  EXPECT_NE(cpu.err.find("--graph with --confirm needs --backend cuda"), std::string::npos) << cpu.err;
}

TEST(CalibrateCli, WritesAMachineFileSimAccepts) {
  testing::TempDir dir("braid_calibrate_cli_");
  sim::Machine truth = sim::loadMachine("h100");
  truth.host.kernelLaunchUs = 9.5;
  truth.nccl.callOverheadUs = 14;
  sim::Measurements shapes;
  shapes.gpu = "synthetic H100";
  shapes.meta["date"] = "2026-11-25";
  shapes.host = {{sim::HostCall::kKernelLaunch, 0}, {sim::HostCall::kKernelLaunch, 0}};
  for (int64_t team : {2, 4, 8})
    for (double b : {1e4, 1e6, 1e8}) shapes.collectives.push_back({CommunicationType::kAllreduce, team, 1, b, 0});
  std::string from = dir.file("m.json"), out = dir.file("calibrated.json");
  writeFile(from, sim::measurementsToJson(sim::predictMeasurements(truth, shapes)));
  auto r = runBraid("calibrate --from " + from + " --machine h100 -o " + out + " --name h100-lab");
  ASSERT_EQ(r.rc, 0) << r.err;
  EXPECT_NE(r.out.find("host.kernel_launch_us"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Allreduce team 8, 1 node(s), 100000000 B"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("wrote " + out), std::string::npos) << r.out;
  sim::Machine m = sim::loadMachine(out);
  EXPECT_EQ(m.name, "h100-lab");
  EXPECT_NE(m.description.find("synthetic H100 (date 2026-11-25)"), std::string::npos) << m.description;
  EXPECT_NEAR(m.host.kernelLaunchUs, 9.5, 0.01);
  EXPECT_NEAR(m.nccl.callOverheadUs, 14, 0.5);
  auto sim = runBraid("sim ag_matmul --machine " + out + " --m 4096 --json");
  ASSERT_EQ(sim.rc, 0) << sim.err;
  auto j = runBraid("calibrate --from " + from + " --machine h100 -o " + out + " --json");
  ASSERT_EQ(j.rc, 0) << j.err;
  json report = json::parse(j.out);
  EXPECT_LT(report["max_abs_residual"].get<double>(), 0.01);
  EXPECT_EQ(report["measurements"].size(), 11u);
}

TEST(CalibrateCli, BadInputIsExitCodeTwo) {
  testing::TempDir dir("braid_calibrate_cli_");
  std::string bad = dir.file("bad.json"), out = dir.file("out.json");
  writeFile(bad, R"({"schema": "braid-measurements/1", "gpu": "H200", "gemm": [{"m": 1, "n": 2, "k": 3, "dtype": "bf16"}]})");
  testing::expectBadInput({
      {"calibrate --from " + bad + " --machine h200 -o " + out, bad + ": gemm[0].us: missing"},
      {"calibrate --from " + dir.file("none.json") + " --machine h200 -o " + out, "none.json: cannot open the measurement file"},
      {"calibrate --from " + bad + " -o " + out, "--machine is required"},
      {"calibrate --from " + bad + " --machine h200", "-o OUT.json is required"},
      {"calibrate --machine h200 -o " + out, "--from MEASUREMENTS.json is required"},
      {"calibrate --from " + bad + " --machine nosuch -o " + out, "neither a preset"},
  });
}

}  // namespace
}  // namespace braid
