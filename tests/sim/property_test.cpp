// Invariants of the simulator on random host programs (rapidcheck): a schedule is never shorter
// than its busiest stream nor longer than running everything one after the other once the host
// is done; identical ranks get identical timelines; more synchronization never finishes earlier.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <map>
#include <sstream>

#include "tests/sim/sim_test_util.h"

namespace braid {
namespace {

// One statement of a random program.
struct Step {
  enum Kind { kSetStream, kSync, kMatmul, kAdd, kAllgather } kind = kSetStream;
  int arg = 0;  // stream, or size class
};

constexpr int kStreams = 3;  // worker streams 1..3 besides the caller's stream 0

std::vector<Step> randomSteps(bool communications) {
  int n = *rc::gen::inRange(1, 24);
  std::vector<Step> steps;
  for (int i = 0; i < n; ++i) {
    int kind = *rc::gen::inRange(0, communications ? 5 : 4);
    int arg = kind <= Step::kSync ? *rc::gen::inRange(0, kStreams + 1) : *rc::gen::inRange(0, 2);
    steps.push_back({static_cast<Step::Kind>(kind), arg});
  }
  return steps;
}

// The host program text of `steps` on `ranks` ranks (communications span all of them).
std::string programText(const std::vector<Step>& steps, int ranks) {
  std::string team;
  for (int r = 0; r < ranks; ++r) team += (r ? " " : "") + std::to_string(r);
  std::string mesh = " (DeviceMesh{" + team + "})";
  int id = 100;
  auto dom = [&](const std::string& kind, const std::string& extent) {
    return kind + std::to_string(id++) + "{" + extent + "}";
  };
  const char* sizes[2][3] = {{"512", "1024", "512"}, {"2048", "4096", "2048"}};  // m, k, n
  std::ostringstream in;
  in << "(T0_g___bfloat[iS0{512}, iS1{1024}]" << mesh << ", T1_g___bfloat[iS2{1024}, iS3{512}]" << mesh
     << ", T2_g___bfloat[iS4{2048}, iS5{4096}]" << mesh << ", T3_g___bfloat[iS6{4096}, iS7{2048}]" << mesh
     << ", T4_g_float[iS8{1024}, iS9{1024}]" << mesh << ", T5_g_float[iS10{4096}, iS11{1024}]" << mesh
     << ", T6_g___bfloat[ideviceIdx.x12{" << ranks << "}, iS13{1048576}]" << mesh << ")";
  std::ostringstream body;
  body << "  GetCurrentStream into Stream 0\n";
  int t = 7, comm = 1;
  for (const Step& s : steps) {
    switch (s.kind) {
      case Step::kSetStream:
        body << "  SetCurrentStream to Stream " << s.arg << "\n";
        break;
      case Step::kSync:
        body << "  Synchronize Stream " << s.arg << "\n";
        break;
      case Step::kMatmul: {
        const char* const* z = sizes[s.arg];
        std::string a = s.arg ? "T2_g___bfloat[iS4{2048}, iS5{4096}]" : "T0_g___bfloat[iS0{512}, iS1{1024}]";
        std::string b = s.arg ? "T3_g___bfloat[iS6{4096}, iS7{2048}]" : "T1_g___bfloat[iS2{1024}, iS3{512}]";
        body << "  T" << t++ << "_g___bfloat[" << dom("iS", z[0]) << ", " << dom("iS", z[2]) << "]" << mesh
             << "\n     = matmul(" << a << mesh << ",\n              " << b << mesh << ")\n";
        break;
      }
      case Step::kAdd: {
        std::string x = s.arg ? "T5_g_float[iS10{4096}, iS11{1024}]" : "T4_g_float[iS8{1024}, iS9{1024}]";
        const char* rows = s.arg ? "4096" : "1024";
        body << "  T" << t++ << "_g_float[" << dom("iS", rows) << ", " << dom("iS", "1024") << "]" << mesh
             << "\n     = " << x << mesh << "\n     + " << x << mesh << ";\n";
        break;
      }
      case Step::kAllgather: {
        std::string out = "T" + std::to_string(t++) + "_g___bfloat[" + dom("iS", std::to_string(ranks)) + ", " +
                          dom("iS", "1048576") + "]" + mesh;
        body << "  " << out << " = ALLOCATE(mem_type=global, zero_init=false)\n"
             << "  Communication " << comm << " (type=Allgather, team=(" << team
             << "), input=T6_g___bfloat[ideviceIdx.x12{" << ranks << "}, iS13{1048576}]" << mesh
             << ", output=" << out << ", backend=NCCL)\n"
             << "  Wait Communication " << comm << "\n";
        ++comm;
        break;
      }
    }
  }
  body << "  SetCurrentStream to Stream 0\n";
  for (int k = 1; k <= kStreams; ++k) body << "  Synchronize Stream " << k << "\n";
  return "%HostIrContainer { " + in.str() + " -> () :\n" + body.str() + "} // %HostIrContainer\n";
}

// What each operation of `r` costs alone on its GPU.
double isolatedCost(const sim::SimResult& r, size_t e) {
  const sim::SimGraph& g = r.sim;
  if (g.kind[e] == sim::NodeKind::kKernel) return g.kernels[static_cast<size_t>(g.kernel[e])].totalUs();
  if (g.kind[e] == sim::NodeKind::kComm) return g.rendezvousSets[static_cast<size_t>(g.rendezvous[e])].cost.us;
  return 0;
}

TEST(SimProperties, MakespanLiesBetweenTheBusiestStreamAndTheSerialSum) {
  const sim::Machine m = sim::loadMachine("h200");
  const bool ok = rc::check("busiest stream <= makespan <= host + serial sum", [&] {
    int ranks = *rc::gen::inRange(1, 3);
    std::string text = programText(randomSteps(ranks > 1), ranks);
    auto run = testing::simulateText(text, m, {}, ranks);
    const sim::SimResult& r = run.result;
    if (r.engine.deadlocked) RC_FAIL(text + sim::describeDeadlock(r));
    std::map<int32_t, double> per_stream;
    double serial = 0;
    for (size_t e = 0; e < r.sim.numEvents(); ++e) {
      if (r.sim.gpu[e] != 0) continue;
      double c = isolatedCost(r, e);
      per_stream[r.sim.stream[e]] += c;
      if (r.sim.kind[e] != sim::NodeKind::kMarker) serial += m.gpu.launchLatencyUs + c;
    }
    double busiest = 0;
    for (const auto& [s, c] : per_stream) busiest = std::max(busiest, c);
    RC_ASSERT(r.makespanUs >= busiest - 1e-6);
    RC_ASSERT(r.makespanUs <= r.sim.hostEnd[0] + serial + 1e-6);
  });
  EXPECT_TRUE(ok);
}

TEST(SimProperties, IdenticalRanksGetIdenticalTimelines) {
  const sim::Machine m = sim::loadMachine("h200");
  const bool ok = rc::check("identical ranks, identical timelines; folding changes nothing", [&] {
    int ranks = *rc::gen::inRange(2, 5);
    std::string text = programText(randomSteps(true), ranks);
    auto all = testing::simulateText(text, m, {}, ranks, 4, /*fold=*/false);
    auto folded = testing::simulateText(text, m, {}, ranks, 4, /*fold=*/true);
    RC_ASSERT(folded.result.classes.folded());
    std::vector<std::vector<std::tuple<std::string, double, double>>> per_rank(static_cast<size_t>(ranks));
    for (const auto& op : all.timeline.ops) per_rank[static_cast<size_t>(op.rank)].emplace_back(op.name, op.startUs, op.endUs);
    for (int r = 1; r < ranks; ++r) RC_ASSERT(per_rank[static_cast<size_t>(r)] == per_rank[0]);
    RC_ASSERT(std::abs(all.result.makespanUs - folded.result.makespanUs) < 1e-9);
    RC_ASSERT(std::abs(all.result.overlapFraction - folded.result.overlapFraction) < 1e-9);
  });
  EXPECT_TRUE(ok);
}

// Without contention the schedule is a max-plus system: an extra ordering can only delay. (With
// contention it can finish earlier, by keeping two operations from slowing each other: Graham's
// scheduling anomalies; the property is stated for the model without it.)
TEST(SimProperties, MoreSynchronizationNeverFinishesEarlier) {
  sim::Machine m = testing::bareMachine();
  m.host = sim::loadMachine("h200").host;
  m.gpu.launchLatencyUs = 4;
  m.nccl.callOverheadUs = 25;
  const bool ok = rc::check("adding a Synchronize never shortens the makespan", [&] {
    int ranks = *rc::gen::inRange(1, 3);
    std::vector<Step> steps = randomSteps(ranks > 1);
    std::vector<Step> more = steps;
    size_t at = static_cast<size_t>(*rc::gen::inRange<int>(0, static_cast<int>(steps.size()) + 1));
    more.insert(more.begin() + static_cast<std::ptrdiff_t>(at), Step{Step::kSync, *rc::gen::inRange(0, kStreams + 1)});
    auto base = testing::simulateText(programText(steps, ranks), m, {}, ranks);
    auto synced = testing::simulateText(programText(more, ranks), m, {}, ranks);
    RC_ASSERT(synced.result.makespanUs >= base.result.makespanUs - 1e-9);
  });
  EXPECT_TRUE(ok);
}

}  // namespace
}  // namespace braid
