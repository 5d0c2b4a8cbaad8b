// The microbenchmark runner (exec/microbench.h) on the CPU device with the self communicator:
// every planned entry gets a positive host-clock time, what needs streams is refused, and plans
// the world cannot run are rejected with the entry at fault.
#ifdef BRAID_WITH_TORCH

#include "exec/microbench.h"

#include <gtest/gtest.h>

#include "tests/support/error_of.h"

namespace braid::exec {
namespace {

using testing::errorOf;

TEST(Microbench, TimesEveryEntryOnTheHostClock) {
  MicrobenchPlan p;
  p.reps = 3;
  p.warmup = 1;
  p.gemms = {{32, 16, 8, 1, DataType::kFloat}, {8, 8, 8, 2, DataType::kFloat}};
  p.copies = {1024, 65536};
  std::unique_ptr<Device> dev = makeCpuDevice();
  std::unique_ptr<Communicator> comm = makeSelfCommunicator();
  std::vector<std::string> lines;
  MicrobenchTimes t = runMicrobench(p, *dev, *comm, [&](const std::string& s) { lines.push_back(s); });
  EXPECT_FALSE(t.deviceClock);
  ASSERT_EQ(t.gemmUs.size(), 2u);
  ASSERT_EQ(t.copyUs.size(), 2u);
  for (double us : t.gemmUs) EXPECT_GT(us, 0);
  for (double us : t.copyUs) EXPECT_GT(us, 0);
  // The host clock has no device side: launch latency and the smallest kernel are not measured.
  std::vector<std::string> calls;
  for (const auto& [call, us] : t.hostUs) {
    calls.push_back(call);
    EXPECT_GT(us, 0) << call;
  }
  EXPECT_EQ(calls, (std::vector<std::string>{"aten_op", "kernel_launch", "communication_call", "stream_call",
                                             "allocation", "view", "control"}));
  ASSERT_EQ(lines.size(), 5u);  // 2 GEMMs, 2 copies, the host costs
  EXPECT_NE(lines[0].find("[1/5] gemm 32x16x8 fp32"), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("gemm 2x8x8x8 fp32"), std::string::npos) << lines[1];
}

// The after-idle benchmark needs no device clock: each entry gets its reps of the host's issue time.
TEST(Microbench, TimesTheHostsIssueAfterEachIdleRepByRep) {
  MicrobenchPlan p;
  p.reps = 3;
  p.warmup = 1;
  p.host = false;
  p.afterIdle = {{0, 10}, {2, 10}};
  std::unique_ptr<Device> dev = makeCpuDevice();
  std::unique_ptr<Communicator> comm = makeSelfCommunicator();
  std::vector<std::string> lines;
  MicrobenchTimes t = runMicrobench(p, *dev, *comm, [&](const std::string& s) { lines.push_back(s); });
  ASSERT_EQ(t.afterIdleUs.size(), 2u);
  for (const auto& reps : t.afterIdleUs) {
    ASSERT_EQ(reps.size(), 3u);
    for (double us : reps) EXPECT_GT(us, 0);
  }
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[1].find("after idle: 10 host operations after 2 ms idle"), std::string::npos) << lines[1];
  p.afterIdle[1].graph = true;  // a CUDA graph on the CPU device
  EXPECT_NE(errorOf([&] { runMicrobench(p, *dev, *comm, nullptr); }).find("graph replays need CUDA"), std::string::npos);
  p.afterIdle[1].idleMs = -1;
  EXPECT_NE(errorOf([&] { runMicrobench(p, *dev, *comm, nullptr); }).find("expected an idle time of 0-10000 ms"),
            std::string::npos);
}

// A CPU device that claims a device clock and records what the runner asks of it, to check how
// timed repetitions are issued (the CUDA device does the real work on the GPU machines).
class RecordingClockDevice : public Device {
 public:
  std::vector<std::string> calls;
  at::Device device() const override { return at::Device(at::kCPU); }
  std::string description() const override { return "recording"; }
  bool hostOrdered() const override { return false; }
  void beginRun() override { calls.push_back("beginRun"); }
  void setCurrentStream(int32_t) override {}
  int32_t currentStream() const override { return 0; }
  void synchronize(int32_t) override {}
  void recordUse(const at::Tensor&) override {}
  void finishRun() override { calls.push_back("finishRun"); }
  void setTiming(bool on) override { timing_ = on; }
  bool timing() const override { return timing_; }
  int32_t beginOp() override {
    calls.push_back("beginOp");
    return next_++;
  }
  void endOp(int32_t) override {}
  std::vector<DeviceSpan> spans() override {
    std::vector<DeviceSpan> s;
    for (int32_t i = 0; i < next_; ++i) s.push_back({0, 10.0 * i, 10.0 * i + 4});
    return s;
  }
  void holdCurrentStream(double us) override {
    calls.push_back("hold");
    heldUs = us;
  }
  double heldUs = 0;

 private:
  bool timing_ = false;
  int32_t next_ = 0;
};

// With a device clock, the stream is held before the timed repetitions are issued, for longer than
// issuing them takes, so short operations are timed back to back on the device instead of at the
// host's issue rate (seen on two H100s: every small GEMM and collective timed at about 15 us).
TEST(Microbench, DeviceClockTimingHoldsTheStreamBeforeTheRepetitions) {
  MicrobenchPlan p;
  p.reps = 12;
  p.warmup = 1;
  p.host = false;
  p.gemms = {{16, 16, 16, 1, DataType::kFloat}};
  RecordingClockDevice dev;
  std::unique_ptr<Communicator> comm = makeSelfCommunicator();
  MicrobenchTimes t = runMicrobench(p, dev, *comm, nullptr);
  ASSERT_TRUE(t.deviceClock);
  ASSERT_EQ(t.gemmUs.size(), 1u);
  EXPECT_DOUBLE_EQ(t.gemmUs[0], 4.0);  // the median of the recorded spans
  std::vector<std::string> want = {"beginRun", "hold"};
  for (int i = 0; i < p.reps; ++i) want.push_back("beginOp");
  want.push_back("finishRun");
  EXPECT_EQ(dev.calls, want);
  EXPECT_GE(dev.heldUs, 50.0 * static_cast<double>(p.reps));  // tens of microseconds of issue per repetition
}

TEST(Microbench, OverlapNeedsATeamToOverlapWith) {
  MicrobenchPlan p;
  p.host = false;
  p.overlaps = {{{64, 64, 64, 1, DataType::kFloat}, {CommunicationType::kAllreduce, 1, 64}}};
  std::unique_ptr<Device> dev = makeCpuDevice();
  std::unique_ptr<Communicator> comm = makeSelfCommunicator();
  // A team of one has nothing to overlap with (on a world of 2, the CPU's clock is refused next).
  EXPECT_NE(errorOf([&] { runMicrobench(p, *dev, *comm, nullptr); }).find("the team must have 2 to 1 ranks"),
            std::string::npos);
}

TEST(Microbench, PlansTheWorldCannotRunAreRejected) {
  MicrobenchPlan p;
  p.collectives = {{CommunicationType::kAllgather, 4, 1 << 16}};
  EXPECT_NE(errorOf([&] { checkMicrobenchPlan(p, 2); }).find("Allgather team 4 64 KiB: the team must have 2 to 2"),
            std::string::npos);
  p.collectives = {{CommunicationType::kReduceScatter, 3, 1 << 16}};
  EXPECT_NE(errorOf([&] { checkMicrobenchPlan(p, 4); }).find("do not split into float32 parts"), std::string::npos);
  p.collectives = {{CommunicationType::kSendRecv, 2, 1 << 16}};
  EXPECT_NE(errorOf([&] { checkMicrobenchPlan(p, 2); }).find("SendRecv is measured as p2p"), std::string::npos);
  p.collectives.clear();
  p.p2p = {{4096, 1}};
  EXPECT_NE(errorOf([&] { checkMicrobenchPlan(p, 1); }).find("no such peer in a world of 1"), std::string::npos);
  EXPECT_EQ(errorOf([&] { checkMicrobenchPlan(p, 2); }), "");
  p.reps = 0;
  EXPECT_NE(errorOf([&] { checkMicrobenchPlan(p, 2); }).find("reps must be at least 1"), std::string::npos);
  p.reps = 10;
  p.copies = {12};
  EXPECT_NE(errorOf([&] { checkMicrobenchPlan(p, 2); }).find("copy of 12 bytes"), std::string::npos);
}

}  // namespace
}  // namespace braid::exec

#endif  // BRAID_WITH_TORCH
