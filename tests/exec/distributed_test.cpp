// Multi-process tests. A parent test re-executes this binary as N rank processes (through the
// launcher, like `braid run`), each running one ExecWorker test over a Gloo communicator on
// loopback; ExecWorker tests skip when run directly.
#ifdef BRAID_WITH_TORCH  // exec has no evaluator without libtorch (see cli_run_test.cpp)

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <thread>
#include <iostream>
#include <random>
#include <sstream>

#include "catalog/workload.h"
#include "exec/check.h"
#include "exec/communicator.h"
#include "exec/launcher.h"
#include "exec/reference.h"
#include "ir/error.h"
#include "ir/host_ir_text.h"
#include "ir/ops.h"
#include "passes/lower.h"
#include "tests/support/random_schedules.h"

namespace braid::exec {
namespace {

bool isWorker() {
  const char* v = std::getenv(kChildEnv);
  return v && std::string(v) == "1";
}

#define NEED_GLOO() \
  if (!haveGloo()) GTEST_SKIP() << "built without Gloo"

#define WORKER_ONLY() \
  if (!isWorker()) GTEST_SKIP() << "runs as a rank process of a Distributed test"

std::unique_ptr<Communicator> workerComm(double timeout_sec = 30) {
  auto env = detectRankEnv();
  if (!env) throw Error("no rank environment");
  Rendezvous rv;
  rv.rank = env->rank;
  rv.worldSize = env->worldSize;
  rv.masterAddr = env->masterAddr;
  rv.port = env->port;
  rv.prefix = "test/" + env->runId;
  rv.timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_sec * 1000));
  if (rv.worldSize == 1) return makeSelfCommunicator();
  return makeGlooCommunicator(rv);
}

// Runs ExecWorker.<test> on `ranks` processes; returns the launcher's exit code.
int spawnWorkers(int64_t ranks, const std::string& test, double timeout_sec = 60, bool quiet = false) {
  if (!haveGloo()) return 0;  // the parent test skips (see NEED_GLOO)
  SpawnOptions o;
  o.quiet = quiet;
  o.ranks = ranks;
  o.timeoutSec = timeout_sec;
  o.argv = {"braid_exec_tests", "--gtest_filter=ExecWorker." + test, "--gtest_brief=1"};
  return spawnRanks(o);
}

std::string dataPath(const std::string& name) { return std::string(BRAID_TEST_DATA_DIR) + "/exec/data/" + name; }

at::Tensor rankValues(int64_t rank, int64_t n, at::ScalarType t = at::kFloat) {
  return (at::arange(n, at::TensorOptions().dtype(at::kDouble)) + 10 * rank).to(t);
}

// ---------------------------------------------------------------------------------------------
// Every collective of the interface, on the world and on a sub-team, with contiguous and strided
// buffers and a type Gloo lacks (bfloat16).

TEST(ExecWorker, Collectives) {
  WORKER_ONLY();
  auto comm = workerComm();
  const int64_t me = comm->rank(), n = comm->size();
  std::vector<int64_t> world;
  for (int64_t r = 0; r < n; ++r) world.push_back(r);
  const int64_t c = 6;
  for (at::ScalarType t : {at::kFloat, at::kBFloat16, at::kLong}) {
    SCOPED_TRACE(std::string("dtype ") + c10::toString(t));
    // allgather into a strided (transposed) output
    {
      at::Tensor in = rankValues(me, c, t);
      at::Tensor out_t = at::zeros({c, n}, at::TensorOptions().dtype(t));
      at::Tensor out = out_t.t();  // [n, c], not contiguous
      comm->allgather(world, in, out)->wait();
      for (int64_t r = 0; r < n; ++r) EXPECT_TRUE(at::equal(out[r], rankValues(r, c, t)));
    }
    // allreduce sum / max
    {
      at::Tensor buf = rankValues(me, c, t);
      comm->allreduce(world, buf, ReduceOp::kSum)->wait();
      at::Tensor want = at::zeros({c}, at::kDouble);
      for (int64_t r = 0; r < n; ++r) want += rankValues(r, c, at::kDouble);
      EXPECT_TRUE(at::equal(buf.to(at::kDouble), want));
      at::Tensor mx = rankValues(me, c, t);
      comm->allreduce(world, mx, ReduceOp::kMax)->wait();
      EXPECT_TRUE(at::equal(mx, rankValues(n - 1, c, t)));
    }
    // reduce-scatter (Gloo has none: all-to-all + local reduction)
    {
      at::Tensor in = rankValues(me, n * c, t);
      at::Tensor out = at::zeros({c}, at::TensorOptions().dtype(t));
      comm->reduceScatter(world, in, out, ReduceOp::kSum)->wait();
      at::Tensor want = at::zeros({c}, at::kDouble);
      for (int64_t r = 0; r < n; ++r) want += rankValues(r, n * c, at::kDouble).narrow(0, me * c, c);
      EXPECT_TRUE(at::equal(out.to(at::kDouble), want));
    }
    // broadcast from the last rank
    {
      at::Tensor buf = rankValues(me, c, t);
      comm->broadcast(world, buf, n - 1)->wait();
      EXPECT_TRUE(at::equal(buf, rankValues(n - 1, c, t)));
    }
    // reduce to rank 0, scatter from rank 0, gather to the last rank
    {
      at::Tensor in = rankValues(me, c, t);
      at::Tensor out = me == 0 ? at::zeros({c}, at::TensorOptions().dtype(t)) : at::Tensor();
      comm->reduce(world, in, out, 0, ReduceOp::kSum)->wait();
      if (me == 0) {
        at::Tensor want = at::zeros({c}, at::kDouble);
        for (int64_t r = 0; r < n; ++r) want += rankValues(r, c, at::kDouble);
        EXPECT_TRUE(at::equal(out.to(at::kDouble), want));
      }
      at::Tensor big = rankValues(0, n * c, t);
      at::Tensor piece = at::zeros({c}, at::TensorOptions().dtype(t));
      comm->scatter(world, big, piece, 0)->wait();
      EXPECT_TRUE(at::equal(piece, big.narrow(0, me * c, c)));
      at::Tensor all = me == n - 1 ? at::zeros({n, c}, at::TensorOptions().dtype(t)) : at::Tensor();
      comm->gather(world, rankValues(me, c, t), all, n - 1)->wait();
      if (me == n - 1)
        for (int64_t r = 0; r < n; ++r) EXPECT_TRUE(at::equal(all[r], rankValues(r, c, t)));
    }
    // all-to-all
    {
      at::Tensor in = rankValues(me, n * c, t);
      at::Tensor out = at::zeros({n * c}, at::TensorOptions().dtype(t));
      comm->allToAll(world, in, out)->wait();
      for (int64_t r = 0; r < n; ++r)
        EXPECT_TRUE(at::equal(out.narrow(0, r * c, c), rankValues(r, n * c, t).narrow(0, me * c, c)));
    }
    // a coalesced ring: send to the next rank, receive from the previous one, into a strided slice
    {
      at::Tensor host = at::zeros({c, 2}, at::TensorOptions().dtype(t));
      at::Tensor slot = host.select(1, 1);  // stride 2
      comm->startCoalescing();
      comm->recv(slot, (me + n - 1) % n);
      comm->send(rankValues(me, c, t), (me + 1) % n);
      comm->endCoalescing()->wait();
      EXPECT_TRUE(at::equal(slot, rankValues((me + n - 1) % n, c, t)));
    }
  }
  // A sub-team (ranks 0 and the last): its own process group; the others skip it.
  if (n >= 2 && (me == 0 || me == n - 1)) {
    std::vector<int64_t> team{0, n - 1};
    at::Tensor buf = rankValues(me, c);
    comm->allreduce(team, buf, ReduceOp::kSum)->wait();
    EXPECT_TRUE(at::equal(buf, rankValues(0, c) + rankValues(n - 1, c)));
  }
  comm->barrier();
}

TEST(Distributed, GlooCollectivesOn2Ranks) { NEED_GLOO(); EXPECT_EQ(spawnWorkers(2, "Collectives"), 0); }
TEST(Distributed, GlooCollectivesOn3Ranks) { NEED_GLOO(); EXPECT_EQ(spawnWorkers(3, "Collectives"), 0); }

// ---------------------------------------------------------------------------------------------
// A hand-written host program with every kind of communication statement, on 4 ranks.

TEST(ExecWorker, CollectivesFile) {
  WORKER_ONLY();
  auto comm = workerComm();
  HostProgram p = parseHostProgramFile(dataPath("collectives_4ranks.hir"));
  const int64_t me = comm->rank();
  ASSERT_EQ(comm->size(), 4);
  EvalOptions o;
  Evaluator ev(p, *comm, o);
  auto outs = ev.run({rankValues(me, 8).reshape({1, 8})});
  ASSERT_EQ(outs.size(), 5u);
  at::Tensor sum = at::zeros({8});
  for (int64_t r = 0; r < 4; ++r) {
    EXPECT_TRUE(at::equal(outs[0][r], rankValues(r, 8)));  // Allgather
    sum += rankValues(r, 8);
  }
  EXPECT_TRUE(at::equal(outs[1].reshape({8}), sum));                         // Allreduce
  EXPECT_TRUE(at::equal(outs[2].reshape({2}), sum.narrow(0, 2 * me, 2)));    // ReduceScatter
  EXPECT_TRUE(at::equal(outs[3].reshape({8}), rankValues(2, 8)));            // Broadcast from 2
  EXPECT_TRUE(at::equal(outs[4].reshape({8}), rankValues((me + 3) % 4, 8)));  // coalesced ring
}

TEST(Distributed, HostProgramWithEveryCommunicationOn4Ranks) { NEED_GLOO(); EXPECT_EQ(spawnWorkers(4, "CollectivesFile"), 0); }

// ---------------------------------------------------------------------------------------------
// Every catalog workload x 1..4 streams x both stream protocols (x both pipelines for ag_matmul),
// lowered for the world size, against the float64 reference.

std::string runCatalog(Communicator& comm) {
  const int64_t d = comm.size();
  std::ostringstream failures;
  int ran = 0;
  for (const auto& info : workloadCatalog()) {
    for (int64_t s = 1; s <= 4; ++s) {
      for (StreamProtocol proto : {StreamProtocol::kSeparateSyncLoop, StreamProtocol::kInLoopSync}) {
        std::vector<PipelineKind> pipes{PipelineKind::kCollective};
        if (info.name == "ag_matmul") pipes.push_back(PipelineKind::kP2P);
        for (PipelineKind pipe : pipes) {
          WorkloadParams p;
          p.devices = d;
          p.streams = s;
          p.m = 2 * s * d;
          p.k = 2 * d;
          p.n = 3 * s * d;  // n is cut into S chunks too (matmul_n_chunks)
          p.lowering.protocol = proto;
          p.lowering.pipeline = pipe;
          p.lowering.streams = s;
          std::string label = info.name + " D=" + std::to_string(d) + " S=" + std::to_string(s) + " protocol " +
                              streamProtocolName(proto) + " " + pipelineKindName(pipe);
          try {
            Workload w = makeWorkload(info.name, p);  // the reference (lowering annotates its input)
            Workload to_lower = makeWorkload(info.name, p);
            HostProgram prog = lower(*to_lower.fusion, to_lower.params.lowering, d);
            CheckOptions o;
            o.seed = static_cast<uint64_t>(ran);
            o.numberOfStreams = w.params.lowering.streams;
            CheckResult r = runAndCheck(prog, w.fusion.get(), comm, o);
            if (!r.ok || !r.checked) failures << label << ":\n" << r.report;
          } catch (const std::exception& e) {
            failures << label << ": " << e.what() << "\n";
          }
          ++ran;
        }
      }
    }
  }
  return failures.str();
}

TEST(ExecWorker, Catalog) {
  WORKER_ONLY();
  auto comm = workerComm();
  std::string f = runCatalog(*comm);
  EXPECT_TRUE(f.empty()) << f;
}

TEST(Distributed, CatalogOn1Rank) {
  auto comm = makeSelfCommunicator();
  std::string f = runCatalog(*comm);
  EXPECT_TRUE(f.empty()) << f;
}
TEST(Distributed, CatalogOn2Ranks) { NEED_GLOO(); EXPECT_EQ(spawnWorkers(2, "Catalog", 120), 0); }
TEST(Distributed, CatalogOn4Ranks) { NEED_GLOO(); EXPECT_EQ(spawnWorkers(4, "Catalog", 120), 0); }

// ---------------------------------------------------------------------------------------------
// Property test: random workloads, sizes, dtypes and lowering options, random elementwise /
// reduction fusions with random shardings, and random fusions scheduled with splits and merges
// (tests/support/random_schedules.h), lowered and run on fresh random inputs. Every rank draws the
// same cases from the same seed.

struct RandomCase {
  std::string label;
  std::unique_ptr<Fusion> fusion;
  LoweringOptions lowering;
};

// A random fusion: X [S, D, a, b] (DIDx on axis 1) or replicated X [S, a, b], a chain of unary /
// binary ops, then optionally a sum over the device axis (an Allreduce); Stream on the output's
// axis 0.
RandomCase randomFusion(std::mt19937_64& rng, int64_t d) {
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  RandomCase c;
  c.fusion = std::make_unique<Fusion>();
  Fusion& f = *c.fusion;
  int64_t s = pick(1, 4), a = pick(1, 3), b = pick(1, 4);
  bool sharded = d > 1 && pick(0, 1) == 1;
  DeviceMesh mesh = DeviceMesh::range(d);
  std::vector<Scalar> shape = sharded ? std::vector<Scalar>{s, d, a, b} : std::vector<Scalar>{s, a, b};
  auto input = [&] {
    TensorView* tv = f.makeTensor(shape);
    tv->setDeviceMesh(mesh);
    if (sharded) tv->parallelize(1, ParallelType::kDIDx);
    f.addInput(tv);
    return tv;
  };
  TensorView* x = input();
  std::string label = "random fusion S=" + std::to_string(s) + (sharded ? " sharded" : " replicated") + ":";
  int64_t n_ops = pick(1, 3);
  for (int64_t i = 0; i < n_ops; ++i) {
    switch (pick(0, 4)) {
      case 0: x = neg(x); label += " neg"; break;
      case 1: x = relu(x); label += " relu"; break;
      case 2: x = add(x, input()); label += " add"; break;
      case 3: x = mul(x, input()); label += " mul"; break;
      default: x = sub(x, input()); label += " sub"; break;
    }
    x->setDeviceMesh(mesh);
  }
  if (sharded && pick(0, 1) == 1) {
    x = sum(x, {1});
    x->setDeviceMesh(mesh);
    label += " sum(DIDx)";
  }
  f.addOutput(x);
  x->parallelize(0, ParallelType::kStream);
  c.label = label;
  c.lowering.streams = s;
  return c;
}

std::string runRandomCases(Communicator& comm, int cases, uint64_t seed) {
  const int64_t d = comm.size();
  std::mt19937_64 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  std::ostringstream failures;
  const auto& catalog = workloadCatalog();
  int skipped = 0;
  for (int i = 0; i < cases; ++i) {
    std::unique_ptr<Fusion> fusion, to_lower;
    LoweringOptions lo;
    std::string label;
    const int64_t family = pick(0, 2);
    if (family == 2) {
      // A fusion scheduled with splits and merges (tests/support/random_schedules.h).
      std::mt19937_64 twin = rng;  // the same fusion again, for lowering
      random_schedules::ScheduledCase c = random_schedules::randomScheduledFusion(rng, d);
      to_lower = random_schedules::randomScheduledFusion(twin, d).fusion;
      fusion = std::move(c.fusion);
      lo = c.lowering;
      label = c.label;
    } else if (family == 0) {
      const auto& info = catalog[static_cast<size_t>(pick(0, static_cast<int64_t>(catalog.size()) - 1))];
      WorkloadParams p;
      p.devices = d;
      p.streams = pick(1, 4);
      p.m = p.streams * d * pick(1, 3);
      p.k = d * pick(1, 3);
      p.n = p.streams * d * pick(1, 3);
      DataType dtypes[] = {DataType::kFloat, DataType::kBFloat16, DataType::kDouble};
      p.dtype = dtypes[pick(0, 2)];
      p.lowering.protocol = pick(0, 1) ? StreamProtocol::kInLoopSync : StreamProtocol::kSeparateSyncLoop;
      p.lowering.indexing = pick(0, 1) ? StreamIndexing::kRaw : StreamIndexing::kModulo;
      p.lowering.pipeline = pick(0, 1) ? PipelineKind::kP2P : PipelineKind::kCollective;
      p.lowering.ringBuffers = pick(0, 1) == 1;
      if (p.lowering.ringBuffers) p.lowering.indexing = StreamIndexing::kModulo;  // ring needs modulo keys
      p.lowering.streams = p.streams;
      Workload w = makeWorkload(info.name, p);
      fusion = std::move(w.fusion);
      to_lower = makeWorkload(info.name, p).fusion;
      lo = w.params.lowering;
      label = info.name + " D=" + std::to_string(d) + " S=" + std::to_string(p.streams) + " m=" + std::to_string(p.m) +
              " k=" + std::to_string(p.k) + " n=" + std::to_string(p.n) + " " + std::string(dataTypeName(p.dtype)) +
              " protocol " + streamProtocolName(lo.protocol) + (lo.ringBuffers ? " ring" : "") +
              (lo.indexing == StreamIndexing::kRaw ? " raw" : "") + " " + pipelineKindName(lo.pipeline);
    } else {
      std::mt19937_64 twin = rng;  // the same fusion again, for lowering
      RandomCase c = randomFusion(rng, d);
      to_lower = randomFusion(twin, d).fusion;
      fusion = std::move(c.fusion);
      lo = c.lowering;
      lo.protocol = pick(0, 1) ? StreamProtocol::kInLoopSync : StreamProtocol::kSeparateSyncLoop;
      label = c.label;
    }
    uint64_t input_seed = static_cast<uint64_t>(pick(0, 1 << 20));
    try {
      HostProgram prog = lower(*to_lower, lo, d);
      CheckOptions o;
      o.seed = input_seed;
      o.numberOfStreams = lo.streams;
      CheckResult r = runAndCheck(prog, fusion.get(), comm, o);
      if (!r.ok) failures << "case " << i << " (" << label << ", input seed " << input_seed << "):\n" << r.report;
    } catch (const NotLowerableError& e) {
      ++skipped;  // a schedule the lowering refuses (same on every rank)
    } catch (const std::exception& e) {
      failures << "case " << i << " (" << label << "): " << e.what() << "\n";
    }
  }
  if (comm.rank() == 0)
    std::cout << "random programs on " << d << " rank(s): " << cases - skipped << " of " << cases
              << " cases lowered and run, " << skipped << " not lowerable\n";
  if (skipped > cases / 2) failures << skipped << " of " << cases << " random cases were not lowerable\n";
  return failures.str();
}

TEST(ExecWorker, RandomPrograms) {
  WORKER_ONLY();
  auto comm = workerComm();
  std::string f = runRandomCases(*comm, 40, 20261122 + static_cast<uint64_t>(comm->size()));
  EXPECT_TRUE(f.empty()) << f;
}

TEST(Distributed, RandomLoweredProgramsOn1Rank) {
  auto comm = makeSelfCommunicator();
  std::string f = runRandomCases(*comm, 60, 7);
  EXPECT_TRUE(f.empty()) << f;
}
TEST(Distributed, RandomLoweredProgramsOn2Ranks) { NEED_GLOO(); EXPECT_EQ(spawnWorkers(2, "RandomPrograms", 120), 0); }
TEST(Distributed, RandomLoweredProgramsOn4Ranks) { NEED_GLOO(); EXPECT_EQ(spawnWorkers(4, "RandomPrograms", 120), 0); }

// ---------------------------------------------------------------------------------------------
// Faults: a rank that dies makes the others stop (Gloo reports the lost peer) well before the
// timeout, and the launcher reports it.

TEST(ExecWorker, RankOneDies) {
  WORKER_ONLY();
  auto comm = workerComm(/*timeout_sec=*/30);
  if (comm->rank() == 1) std::_Exit(17);
  at::Tensor buf = at::ones({4});
  std::vector<int64_t> world;
  for (int64_t r = 0; r < comm->size(); ++r) world.push_back(r);
  comm->allreduce(world, buf, ReduceOp::kSum)->wait();  // must throw, not hang
  FAIL() << "the allreduce completed without rank 1";
}

TEST(Distributed, DeadRankStopsTheOthers) {
  NEED_GLOO();
  auto start = std::chrono::steady_clock::now();
  testing::internal::CaptureStderr();
  int code = spawnWorkers(3, "RankOneDies", 30, /*quiet=*/true);
  std::string err = testing::internal::GetCapturedStderr();
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(code, 0);
  EXPECT_LT(secs, 20) << "the others waited for the timeout";
  EXPECT_NE(err.find("rank 1 failed first (exit code 17)"), std::string::npos) << err;
}

// A rank killed by SIGPIPE lost a peer: rank 0 "dies" of it first, rank 1 exits with its own
// fault a moment later, and the launcher still names rank 1 as the cause.
TEST(ExecWorker, RankZeroDiesOfABrokenPipe) {
  WORKER_ONLY();
  if (getenv("RANK") && std::string(getenv("RANK")) == "0") {
    std::signal(SIGPIPE, SIG_DFL);
    std::raise(SIGPIPE);
  }
  if (getenv("RANK") && std::string(getenv("RANK")) == "1") {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    std::_Exit(17);
  }
}

TEST(Distributed, ARankKilledByABrokenPipeIsNotTheCause) {
  NEED_GLOO();
  testing::internal::CaptureStderr();
  int code = spawnWorkers(2, "RankZeroDiesOfABrokenPipe", 30, /*quiet=*/true);
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(code, 17) << err;
  EXPECT_NE(err.find("rank 1 failed first (exit code 17)"), std::string::npos) << err;
}

}  // namespace
}  // namespace braid::exec

#endif  // BRAID_WITH_TORCH
