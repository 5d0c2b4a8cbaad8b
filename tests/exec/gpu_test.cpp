// The CUDA backend on real GPUs (docs/EXEC.md, "CUDA"): every catalog workload's numbers on one
// GPU (interpreted and replayed from a CUDA graph) and on two, stream semantics (a program that
// misses a Synchronize races on the GPU, the synchronized one never does), measured timelines,
// both communicator backends (NCCL and the copy engines over CUDA IPC, by `backend=` or
// --backend-override), and faults (a member that never joins, a dead rank, a peer that never
// posts). Every test skips when the build has no
// CUDA or no GPU is visible, so CI (no GPU) stays green; the CPU-side refusals run everywhere.
#include <gtest/gtest.h>

#ifdef BRAID_WITH_TORCH

#include <algorithm>
#include <fstream>
#include <sstream>

#include "catalog/workload.h"
#include "exec/check.h"
#include "exec/communicator.h"
#include "exec/device.h"
#include "exec/evaluator.h"
#include "exec/microbench.h"
#include "ir/host_ir_text.h"
#include "ir/timeline.h"
#include "passes/lower.h"
#include "tests/support/shell_run.h"
#include "tests/support/temp_dir.h"

namespace braid::exec {
namespace {

#define NEED_GPUS(n)                                                                          \
  do {                                                                                        \
    if (!haveCuda()) GTEST_SKIP() << "built without CUDA";                                    \
    if (cudaDeviceCount() < (n)) GTEST_SKIP() << "needs " << (n) << " GPU(s), " << cudaDeviceCount() << " visible"; \
  } while (0)

using Cli = testing::ShellResult;

Cli runCli(const std::string& args, const std::string& env = "") {
  return testing::runBraidMerged(args, env + " NCCL_NVLS_ENABLE=0");
}

bool contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

// ---- refusals that hold in every build ----

TEST(GpuCli, GraphAndTimelineNeedTheCudaBackend) {
  Cli r = runCli("run ag_matmul --ranks 1 --devices 1 --m 8 --k 4 --n 4 --graph");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "--graph needs --backend cuda")) << r.out;
  for (const char* o : {"nccl", "cuda"}) {
    r = runCli(std::string("run ag_matmul --ranks 1 --devices 1 --m 8 --k 4 --n 4 --backend-override ") + o);
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_TRUE(contains(r.out, std::string("--backend-override ") + o + " needs --backend cuda")) << r.out;
  }
}

TEST(GpuCli, SmCarveoutAndCommPriorityNeedTheCudaBackend) {
  Cli r = runCli("run ag_matmul --ranks 1 --devices 1 --m 8 --k 4 --n 4 --sm-carveout 16");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "--sm-carveout needs --backend cuda")) << r.out;
  r = runCli("run ag_matmul --ranks 1 --devices 1 --m 8 --k 4 --n 4 --comm-priority high");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "--comm-priority high needs --backend cuda")) << r.out;
  r = runCli("run ag_matmul --ranks 1 --devices 1 --m 8 --k 4 --n 4 --sm-carveout -1");
  EXPECT_NE(r.code, 0) << r.out;
}

TEST(GpuCli, TimelineRunMustNameATimedRunOfARecordedTimeline) {
  const std::string run = "run ag_matmul --ranks 1 --devices 1 --m 8 --k 4 --n 4 --repeat 2 --timeline-run ";
  const std::pair<std::string, std::string> refused[] = {
      {"1", "--timeline-run needs --timeline or --trace"},
      {"3 --timeline t.json", "--timeline-run 3 names a timed run, but --repeat is 2"},
      {"1 --trace t.json --graph", "nothing is timed inside a --graph replay"}};
  for (const auto& [flags, message] : refused) {
    Cli r = runCli(run + flags);
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_TRUE(contains(r.out, message)) << r.out;
  }
}

#ifndef BRAID_WITH_CUDA
TEST(GpuCli, CudaBackendSaysTheBuildHasNoCuda) {
  Cli r = runCli("run ag_matmul --ranks 1 --devices 1 --m 8 --k 4 --n 4 --backend cuda");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "built without CUDA")) << r.out;
}
#endif

// ---- one GPU ----

std::unique_ptr<Communicator> ncclOfOne() {
  Rendezvous rv;  // a world of one rank: no store
  return makeNcclCommunicator(rv, 0);
}

// Every catalog workload on one GPU, with NCCL (a world of one), 1 and 3 streams, interpreted
// and replayed from a CUDA graph: the same numbers as the float64 reference.
TEST(Gpu, EveryWorkloadOnOneGpuInterpretedAndAsAGraph) {
  NEED_GPUS(1);
  auto device = makeCudaDevice(0);
  for (bool copyEngines : {false, true}) {
    // A world of one: NCCL, or the copy engines (local copies, no store).
    std::unique_ptr<Communicator> comm = copyEngines ? makeCudaIpcCommunicator(Rendezvous(), 0) : ncclOfOne();
    for (const auto& info : workloadCatalog()) {
      for (int64_t s : {1, 3}) {
        for (bool graph : {false, true}) {
          WorkloadParams p;
          p.devices = 1;
          p.streams = s;
          p.m = 12 * s;
          p.k = 8;
          p.n = 10 * s;
          Workload w = makeWorkload(info.name, p);
          Workload to_lower = makeWorkload(info.name, p);
          HostProgram prog = lower(*to_lower.fusion, to_lower.params.lowering, 1);
          CheckOptions o;
          o.numberOfStreams = s;
          o.device = device.get();
          o.graph = graph;
          o.repeat = graph ? 2 : 0;
          CheckResult r = runAndCheck(prog, w.fusion.get(), *comm, o);
          EXPECT_TRUE(r.ok && r.checked) << info.name << " S=" << s << (graph ? " graph" : "")
                                         << (copyEngines ? " copy engines" : " NCCL") << "\n" << r.report;
        }
      }
    }
  }
}

// A matmul on stream 1 into a poisoned buffer, then a copy of it on the default stream, with or
// without the Synchronize that orders the copy after the matmul.
std::string raceProgram(bool synchronized) {
  return std::string(
             "%HostIrContainer { (T0_g_float[iS0{i0}, iS1{i1}], T1_g_float[iS2{i1}, iS3{i2}]) -> "
             "(T3_g_float[iS6{i0}, iS7{i2}]) :\n"
             "  T2_g_float[iS4{i0}, iS5{i2}] = ALLOCATE(buffer=T2_g_float[iS4{i0}, iS5{i2}], mem_type=global, "
             "size=( i0 * i2 ), zero_init=false, resets_to_zero=false)\n"
             "  T3_g_float[iS6{i0}, iS7{i2}] = ALLOCATE(buffer=T3_g_float[iS6{i0}, iS7{i2}], mem_type=global, "
             "size=( i0 * i2 ), zero_init=false, resets_to_zero=false)\n"
             "  GetCurrentStream into Stream 0\n"
             "  SetCurrentStream to Stream 1\n"
             "  Synchronize Stream 0\n"
             "  T2_g_float[iS4{i0}, iS5{i2}]\n"
             "     = matmul(T0_g_float[iS0{i0}, iS1{i1}],\n"
             "              T1_g_float[iS2{i1}, iS3{i2}])\n"
             "  SetCurrentStream to Stream 0\n") +
         (synchronized ? "  Synchronize Stream 1\n" : "") +
         "  T3_g_float[iS6{i0}, iS7{i2}]\n"
         "     = Set( T2_g_float[iS4{i0}, iS5{i2}], cache_op=Streaming )\n"
         "} // %HostIrContainer\n";
}

TEST(Gpu, AMissingSynchronizeRacesAndTheSynchronizedProgramNever) {
  NEED_GPUS(1);
  auto device = makeCudaDevice(0);
  auto comm = makeSelfCommunicator();
  auto opts = at::TensorOptions().dtype(at::kFloat).device(device->device());
  at::Tensor a = at::randn({4096, 4096}, opts), b = at::randn({4096, 4096}, opts);
  at::Tensor want = at::matmul(a, b);
  HostProgram racy = parseHostProgram(raceProgram(false), "racy.hir");
  HostProgram good = parseHostProgram(raceProgram(true), "synchronized.hir");
  EvalOptions eo;
  eo.device = device.get();
  int racesSeen = 0;
  for (int i = 0; i < 5; ++i) {
    Evaluator ev(good, *comm, eo);
    at::Tensor got = ev.run({a, b})[0];
    EXPECT_TRUE(at::allclose(got, want, 1e-3, 1e-3)) << "the synchronized program differs (run " << i << ")";
    Evaluator bad(racy, *comm, eo);
    at::Tensor raced = bad.run({a, b})[0];
    racesSeen += at::allclose(raced, want, 1e-3, 1e-3) ? 0 : 1;
  }
  // A 4096^3 float matmul takes milliseconds; the unordered copy starts at once and reads the
  // NaN-poisoned buffer.
  EXPECT_GT(racesSeen, 0) << "the program without Synchronize never showed its race";
}

TEST(Gpu, MeasuredTimelineHasEveryStreamAndRoundTrips) {
  NEED_GPUS(1);
  auto device = makeCudaDevice(0);
  auto comm = ncclOfOne();
  WorkloadParams p;
  p.devices = 1;
  p.streams = 2;
  p.m = 256;
  p.k = 128;
  p.n = 64;
  Workload w = makeWorkload("ag_matmul", p);
  Workload to_lower = makeWorkload("ag_matmul", p);
  HostProgram prog = lower(*to_lower.fusion, to_lower.params.lowering, 1);
  CheckOptions o;
  o.numberOfStreams = 2;
  o.device = device.get();
  o.timeline = true;
  CheckResult r = runAndCheck(prog, w.fusion.get(), *comm, o);
  ASSERT_TRUE(r.ok) << r.report;
  ASSERT_FALSE(r.timeline.ops.empty());
  bool worker = false, communicator = false, compute = false;
  for (const auto& s : r.timeline.streams) {
    worker |= s.kind == TimelineStreamKind::kWorker;
    communicator |= s.kind == TimelineStreamKind::kCommunicator;
  }
  for (const auto& op : r.timeline.ops) {
    EXPECT_GE(op.startUs, 0) << op.name;
    EXPECT_GE(op.endUs, op.startUs) << op.name;
    compute |= op.kind == TimelineOpKind::kCompute && op.endUs > op.startUs;
  }
  EXPECT_TRUE(worker && communicator && compute) << timelineToJson(r.timeline);
  Timeline back = timelineFromJson(timelineToJson(r.timeline));
  EXPECT_EQ(back.ops.size(), r.timeline.ops.size());
}

// calibrate's after-idle benchmark on a GPU: launched entries time the host's 100 operations,
// graph entries the replay call of the same operations captured once (one call for all of them,
// so far shorter: about 6 us against 800 on an H200), after idle and back to back.
TEST(Gpu, AfterIdleBenchmarkTimesLaunchesAndReplayCalls) {
  NEED_GPUS(1);
  auto device = makeCudaDevice(0);
  auto comm = makeSelfCommunicator();
  MicrobenchPlan p;
  p.reps = 3;
  p.host = false;
  p.afterIdle = {{0, 100, false}, {5, 100, false}, {0, 100, true}, {5, 100, true}};
  std::vector<std::string> lines;
  MicrobenchTimes t = runMicrobench(p, *device, *comm, [&](const std::string& l) { lines.push_back(l); });
  ASSERT_EQ(t.afterIdleUs.size(), 4u);
  for (const auto& reps : t.afterIdleUs) {
    ASSERT_EQ(reps.size(), 3u);
    for (double us : reps) EXPECT_GT(us, 0);
  }
  auto fastest = [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); };
  EXPECT_LT(fastest(t.afterIdleUs[2]), fastest(t.afterIdleUs[0])) << "a replay call should issue faster than 100 launches";
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_NE(lines[3].find("(graph) after 5 ms idle"), std::string::npos) << lines[3];
}

TEST(GpuCli, RunsOnOneGpuWithTimelineTraceGraphAndRepeat) {
  NEED_GPUS(1);
  testing::TempDir dir("braid_gpu_cli_");
  std::string tl = dir.path() + "/t.json", tr = dir.path() + "/t.trace.json";
  Cli r = runCli("run ag_matmul --backend cuda --ranks 1 --devices 1 --m 256 --k 64 --n 32 --streams 2 --timeline " +
                 tl + " --trace " + tr + " --repeat 3");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "[nccl, cuda:0")) << r.out;
  EXPECT_TRUE(contains(r.out, "timing (interpreted, 3 runs")) << r.out;
  Timeline t = readTimelineFile(tl);
  EXPECT_EQ(t.source, "measured");
  EXPECT_FALSE(t.ops.empty());
  std::ifstream trace(tr);
  EXPECT_TRUE(trace.good());
  r = runCli("run ag_matmul --backend cuda --ranks 1 --devices 1 --m 256 --k 64 --n 32 --streams 2 --graph --repeat 3");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "timing (CUDA graph replay, 3 runs")) << r.out;
}

// The timeline of a warm timed run: a run of its own (the checked run's ops are not kept), whose
// ops start after that run's start event.
TEST(GpuCli, TimelineOfATimedRun) {
  NEED_GPUS(1);
  testing::TempDir dir("braid_gpu_cli_");
  std::string cold = dir.path() + "/cold.json", warm = dir.path() + "/warm.json";
  const std::string base = "run ag_matmul --backend cuda --ranks 1 --devices 1 --m 256 --k 64 --n 32 --streams 2 --repeat 3";
  Cli r = runCli(base + " --timeline " + cold);
  ASSERT_EQ(r.code, 0) << r.out;
  r = runCli(base + " --timeline-run 3 --timeline " + warm);
  ASSERT_EQ(r.code, 0) << r.out;
  Timeline c = readTimelineFile(cold), w = readTimelineFile(warm);
  EXPECT_EQ(w.ops.size(), c.ops.size());
  for (const auto& op : w.ops) EXPECT_GE(op.startUs, 0) << op.name;
}

// A sweep on the GPU: one device and NCCL set-up for all, a timeline per configuration.
TEST(GpuCli, SweepWritesATimelinePerConfiguration) {
  NEED_GPUS(1);
  testing::TempDir dir("braid_gpu_cli_");
  std::string tl = dir.path() + "/t.json";
  Cli r = runCli("run matmul_ar --backend cuda --ranks 1 --devices 1 --m 256 --k 64 --n 32 --dtype bf16 "
                 "--sweep-streams 1,2 --sweep-protocols A,B --repeat 2 --timeline-run 2 --timeline " + tl);
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* c : {"streams1.protocolA", "streams1.protocolB", "streams2.protocolA", "streams2.protocolB"}) {
    Timeline t = readTimelineFile(dir.path() + "/t." + c + ".json");
    EXPECT_FALSE(t.ops.empty()) << c;
  }
  EXPECT_TRUE(contains(r.out, "timing [streams=2 protocol=B] (interpreted, 2 runs")) << r.out;
}

// `braid lower NAME` with every backend=NCCL replaced (all, or only the first statement's).
std::string loweredWithBackend(const testing::TempDir& dir, const std::string& workload, int64_t devices,
                               const std::string& backend, bool firstOnly) {
  std::string f = dir.path() + "/" + workload + "_" + backend + (firstOnly ? "_first" : "") + ".hir";
  Cli low = runCli("lower " + workload + " --devices " + std::to_string(devices) + " --m 16 --k 8 --n 8 > " + f);
  EXPECT_EQ(low.code, 0) << low.out;
  std::string sed = "sed -i '" + std::string(firstOnly ? "0,/backend=NCCL/" : "") + "s/backend=NCCL/backend=" + backend +
                    "/" + (firstOnly ? "" : "g") + "' " + f;
  EXPECT_EQ(std::system(sed.c_str()), 0);
  return f;
}

TEST(GpuCli, ACopyEngineProgramRunsOnOneGpuAndUccIsRefused) {
  NEED_GPUS(1);
  testing::TempDir dir("braid_gpu_cli_");
  std::string ce = loweredWithBackend(dir, "allreduce", 1, "CUDA", false);
  Cli r = runCli("run " + ce + " --backend cuda --ranks 1 --reference allreduce --devices 1 --m 16 --k 8 --n 8");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "[cuda-ipc, cuda:0")) << r.out;
  r = runCli("run " + ce + " --backend cuda --backend-override nccl --ranks 1 --reference allreduce --devices 1 "
             "--m 16 --k 8 --n 8");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "[nccl, cuda:0")) << r.out;
  std::string ucc = loweredWithBackend(dir, "allreduce", 1, "UCC", false);
  r = runCli("run " + ucc + " --backend cuda --ranks 1 --reference allreduce --devices 1 --m 16 --k 8 --n 8");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "backend=UCC")) << r.out;
  EXPECT_TRUE(contains(r.out, "--backend-override nccl")) << r.out;
}

int freePort() { return testing::freeLoopbackPort(); }

// Rank 0 of a world of two whose rank 1 never starts: NCCL's communicator creation cannot
// complete; the rank says so, naming itself and the team, and exits non-zero instead of hanging.
TEST(GpuCli, AMemberThatNeverJoinsEndsInAnErrorNotAHang) {
  NEED_GPUS(1);
  std::string env = "RANK=0 LOCAL_RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=" +
                    std::to_string(freePort()) + " TORCHELASTIC_RUN_ID=gpu_never_joins";
  Cli r = runCli("run allreduce --backend cuda --devices 2 --m 16 --k 8 --n 8 --timeout 3", env);
  EXPECT_NE(r.code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "rank 0")) << r.out;
  EXPECT_TRUE(contains(r.out, "did not complete within")) << r.out;
}

// ---- two GPUs ----

// Every workload on two GPUs, protocols A and C (B: the NCCL run below), over one backend.
void everyWorkloadOnTwoGpus(const std::string& backend) {
  for (const auto& info : workloadCatalog()) {
    for (const char* protocol : {"A", "C"}) {
      Cli r = runCli("run " + info.name + " --backend cuda --backend-override " + backend +
                     " --ranks 2 --m 32 --k 16 --n 16 --streams 2 --protocol " + protocol + " --timeout 60");
      EXPECT_EQ(r.code, 0) << info.name << " protocol " << protocol << " over " << backend << "\n" << r.out;
      EXPECT_TRUE(contains(r.out, backend == "cuda" ? "[cuda-ipc" : "[nccl")) << r.out;
    }
  }
}

TEST(GpuCli, EveryWorkloadOnTwoGpusOverNccl) {
  NEED_GPUS(2);
  everyWorkloadOnTwoGpus("nccl");
  Cli r = runCli("run ag_matmul --backend cuda --ranks 2 --m 32 --k 16 --n 16 --streams 2 --protocol B --timeout 60");
  EXPECT_EQ(r.code, 0) << r.out;
}

TEST(GpuCli, EveryWorkloadOnTwoGpusOverTheCopyEngines) {
  NEED_GPUS(2);
  everyWorkloadOnTwoGpus("cuda");
  Cli r = runCli("run ag_matmul --backend cuda --backend-override cuda --ranks 2 --m 32 --k 16 --n 16 --streams 2 "
                 "--pipeline p2p --timeout 60");
  EXPECT_EQ(r.code, 0) << "P2P pipeline\n" << r.out;
}

// The copy engines' allreduce splits the buffer into its members' parts at element boundaries:
// with m = 5 rows in 2 chunks (3 and 2 rows of 7) the parts are uneven (21 elements: 11 and 10),
// interpreted and replayed; reduce-scatter's rows with the own row read in place.
TEST(GpuCli, CopyEngineReductionsOfUnevenPartsOnTwoGpus) {
  NEED_GPUS(2);
  for (const char* w : {"allreduce --m 5", "matmul_ar --m 5", "reduce_scatter --m 8", "matmul_rs --m 8"}) {
    for (const char* mode : {"", " --graph --repeat 2"}) {
      Cli r = runCli(std::string("run ") + w + " --backend cuda --backend-override cuda --ranks 2 --k 4 --n 7 "
                     "--streams 2 --timeout 60" + mode);
      EXPECT_EQ(r.code, 0) << w << mode << "\n" << r.out;
      EXPECT_TRUE(contains(r.out, "match the float64 reference")) << r.out;  // a wrong sum exits non-zero
    }
  }
}

// --comm-backend cuda lowers every communication onto the copy engines (backend=CUDA); a sweep over
// both transports creates both communicators before its first program, and each program's output
// matches the reference.
TEST(GpuCli, SweepOverBothTransportsOnTwoGpus) {
  NEED_GPUS(2);
  for (const char* w : {"ag_matmul --pipeline p2p", "matmul_rs"}) {
    Cli r = runCli(std::string("run ") + w + " --backend cuda --ranks 2 --m 64 --k 32 --n 32 --streams 2 --repeat 2 --graph "
                   "--timeout 60 --sweep comm-backend=nccl,cuda protocol=A,B");
    EXPECT_EQ(r.code, 0) << w << "\n" << r.out;
    EXPECT_TRUE(contains(r.out, "[nccl+cuda-ipc, cuda:0")) << r.out;
    EXPECT_TRUE(contains(r.out, "timing [comm-backend=cuda protocol=B] (CUDA graph replay, 2 runs")) << r.out;
    EXPECT_TRUE(contains(r.out, ", copy engines) on 2 ranks")) << r.out;
  }
}

// --comm-priority high: both transports create their streams at the highest priority and the
// results still match the reference; a wrong value is refused by the flag's check.
TEST(GpuCli, HighPriorityCommunicatorStreamsOnTwoGpus) {
  NEED_GPUS(2);
  for (const char* t : {"nccl", "cuda"}) {
    Cli r = runCli(std::string("run matmul_rs --backend cuda --backend-override ") + t +
                   " --comm-priority high --ranks 2 --m 64 --k 32 --n 32 --streams 2 --timeout 60");
    EXPECT_EQ(r.code, 0) << t << "\n" << r.out;
  }
  Cli bad = runCli("run matmul_rs --backend cuda --comm-priority urgent --ranks 2");
  EXPECT_NE(bad.code, 0);
  EXPECT_TRUE(contains(bad.out, "--comm-priority")) << bad.out;
}

// --sm-carveout: GEMMs on fewer SMs still compute the reference's numbers; a carve-out as large as
// the GPU is refused with the GPU's SM count.
TEST(GpuCli, SmCarveoutKeepsResultsAndRefusesTheWholeGpu) {
  NEED_GPUS(2);
  Cli r = runCli("run matmul_rs --backend cuda --sm-carveout 32 --comm-priority high --ranks 2 --m 256 --k 128 --n 64 "
                 "--streams 2 --pool 1 --defer-waits --timeout 60");
  EXPECT_EQ(r.code, 0) << r.out;
  r = runCli("run matmul_rs --backend cuda --sm-carveout 1000 --ranks 2 --m 64 --k 32 --n 32 --timeout 60");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(contains(r.out, "SMs; leave between 0 and")) << r.out;
}

// backend=CUDA in the program runs on the copy engines without any override, also next to NCCL
// statements in the same program (the two communicators share the rendezvous store).
TEST(GpuCli, BackendCudaStatementsRunOnTheCopyEnginesOnTwoGpus) {
  NEED_GPUS(2);
  testing::TempDir dir("braid_gpu_cli_");
  for (const char* w : {"allreduce", "reduce_scatter", "ag_matmul"}) {
    std::string all = loweredWithBackend(dir, w, 2, "CUDA", false);
    Cli r = runCli("run " + all + " --backend cuda --ranks 2 --reference " + w + " --devices 2 --m 16 --k 8 --n 8");
    EXPECT_EQ(r.code, 0) << w << "\n" << r.out;
    EXPECT_TRUE(contains(r.out, "[cuda-ipc, cuda:0")) << r.out;
    std::string mixed = loweredWithBackend(dir, w, 2, "CUDA", true);
    r = runCli("run " + mixed + " --backend cuda --ranks 2 --reference " + w + " --devices 2 --m 16 --k 8 --n 8");
    EXPECT_EQ(r.code, 0) << w << " (first statement on the copy engines)\n" << r.out;
  }
}

// Repeated runs and CUDA-graph replays on the copy engines: the handles opened by the first run
// are reused, and the signal pads are clear after each run so a replay orders its copies again.
TEST(GpuCli, CopyEnginesRepeatAndReplayAGraphOnTwoGpus) {
  NEED_GPUS(2);
  for (const char* extra : {"", " --pipeline p2p"}) {
    std::string base = std::string("run ag_matmul --backend cuda --backend-override cuda --ranks 2 --m 64 --k 32 "
                                   "--n 16 --streams 2 --timeout 60") + extra;
    Cli r = runCli(base + " --repeat 3");
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_TRUE(contains(r.out, "timing (interpreted, 3 runs")) << r.out;
    r = runCli(base + " --graph --repeat 3");
    EXPECT_EQ(r.code, 0) << r.out;
    EXPECT_TRUE(contains(r.out, "timing (CUDA graph replay, 3 runs")) << r.out;
  }
  Cli r = runCli("run allreduce --backend cuda --backend-override cuda --ranks 2 --m 64 --k 32 --n 16 --graph "
                 "--repeat 5 --timeout 60");
  EXPECT_EQ(r.code, 0) << r.out;
}

// Rank 1 hangs before its first statement, so its peer's communication never completes (NCCL) or
// never finds rank 1's part (copy engines): rank 0 ends in an error naming itself and the
// statement within the timeout, not a hang. Rank 1 (started here) is killed afterwards.
TEST(GpuCli, APeerThatNeverPostsEndsInANamedError) {
  NEED_GPUS(2);
  for (const char* backend : {"nccl", "cuda"}) {
    std::string port = std::to_string(freePort());
    std::string common = "WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=" + port + " TORCHELASTIC_RUN_ID=hang" + port +
                         " NCCL_NVLS_ENABLE=0 ";
    std::string args = std::string(" run allreduce --backend cuda --backend-override ") + backend +
                       " --devices 2 --m 16 --k 8 --n 8 --timeout 4";
    std::string cmd = "( RANK=1 LOCAL_RANK=1 BRAID_EXEC_FAULT=1:hang:0 " + common + BRAID_CLI_PATH + args +
                      " > /dev/null 2>&1 & p=$!; RANK=0 LOCAL_RANK=0 " + common + BRAID_CLI_PATH + args +
                      " 2>&1; r=$?; kill $p; wait $p 2>/dev/null; exit $r )";
    Cli r = testing::runShell(cmd);
    EXPECT_NE(r.code, 0) << backend << "\n" << r.out;
    EXPECT_TRUE(contains(r.out, "rank 0")) << r.out;
    EXPECT_TRUE(contains(r.out, "Communication")) << r.out;  // the statement
    if (std::string(backend) == "cuda") {
      // The copy engines' host rendezvous notices the missing part within the timeout.
      EXPECT_EQ(r.code, 2) << r.out;
      EXPECT_TRUE(contains(r.out, "CUDA copy engine: ")) << r.out;
      EXPECT_TRUE(contains(r.out, "within 4 s")) << r.out;
    } else {
      // NCCL (seen on two H100s, 2026-11-25): the operation blocks inside NCCL, so the rank's
      // watchdog ends it at --timeout + 10 s, naming the statement (exit 1), as docs/EXEC.md says.
      EXPECT_TRUE(contains(r.out, "timed out after")) << r.out;
    }
  }
}

TEST(GpuCli, ADeadRankStopsTheOtherWithinTheTimeout) {
  NEED_GPUS(2);
  Cli r = runCli("run allreduce --backend cuda --ranks 2 --m 16 --k 8 --n 8 --timeout 10", "BRAID_EXEC_FAULT=1:exit:2");
  EXPECT_NE(r.code, 0) << r.out;
  EXPECT_TRUE(contains(r.out, "rank 1 failed first")) << r.out;
}

}  // namespace
}  // namespace braid::exec

#endif  // BRAID_WITH_TORCH
