// `braid run` end to end: the CLI launches its own rank processes, checks the numbers, reports a
// broken program, and stops when a rank fails or hangs.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <vector>

#ifdef BRAID_WITH_TORCH
#include "exec/communicator.h"  // haveGloo(); it needs ATen, absent from a build without libtorch
#endif
#include "exec/host_profile.h"
#include "ir/host_ir_text.h"
#include "ir/semantics/mesh_rule.h"
#include "tests/support/shell_run.h"
#include "tests/support/temp_dir.h"

namespace {

using Result = braid::testing::ShellResult;

Result braid(const std::string& args, const std::string& env = "") { return braid::testing::runBraidMerged(args, env); }

std::string tempFile(const std::string& name, const std::string& text) {
  static braid::testing::TempDir dir("braid_cli_run_");
  std::string path = dir.file(name);
  std::ofstream(path) << text;
  return path;
}

const char* kSmall = "--m 16 --k 8 --n 8 --streams 2";

#ifndef BRAID_WITH_TORCH
TEST(CliRun, SaysItWasBuiltWithoutLibtorch) {
  Result r = braid("run allgather --ranks 1");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("braid was built without libtorch"), std::string::npos) << r.out;
}
}  // namespace
#else
// Multi-rank tests need Gloo (absent from PyTorch wheels: the GPU machines use NCCL instead).
#define NEED_GLOO() \
  if (!braid::exec::haveGloo()) GTEST_SKIP() << "built without Gloo"

TEST(CliRun, WorkloadOnTwoRanksMatchesTheReference) {
  NEED_GLOO();
  Result r = braid(std::string("run allreduce --backend cpu --ranks 2 ") + kSmall);
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("on 2 ranks [gloo]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("all 1 of 1 outputs match the float64 reference"), std::string::npos) << r.out;
}

// The schedules of docs/LOWERING.md on CPU ranks: one worker stream with the allgathers
// prefetched (collective and p2p), and with the reduce-scatter's wait deferred to the join.
TEST(CliRun, SchedulesMatchTheReference) {
  NEED_GLOO();
  for (const char* args : {"ag_matmul --ranks 2 --streams 2 --pool 1 --prefetch",
                           "ag_matmul --ranks 3 --pipeline p2p --streams 1 --prefetch",
                           "matmul_rs --ranks 2 --streams 2 --pool 1 --defer-waits",
                           "mlp --ranks 2 --streams 2 --pool 1 --defer-waits --prefetch"}) {
    Result r = braid(std::string("run ") + args + " --backend cpu --m 48 --k 24 --n 36");
    EXPECT_EQ(r.code, 0) << args << "\n" << r.out;
    EXPECT_NE(r.out.find("all 1 of 1 outputs match the float64 reference"), std::string::npos) << args << "\n" << r.out;
  }
  Result r = braid("run matmul_rs --ranks 2 --streams 2 --pool 1 --defer-waits --backend cpu --m 48 --k 24 --n 36");
  EXPECT_NE(r.out.find("P=1"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("numberOfStreams=1"), std::string::npos) << r.out;
}

TEST(CliRun, OneRankRunsInProcess) {
  Result r = braid(std::string("run mlp --ranks 1 ") + kSmall + " --seed 3");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("[self]"), std::string::npos) << r.out;
}

// --run-times: one line per configuration with every timed run's wall and issue time; refused
// without timed runs.
TEST(CliRun, RunTimesListEveryTimedRunOfEveryConfiguration) {
  const std::string file = tempFile("times.jsonl", "stale line\n");
  Result r = braid("run mlp --ranks 1 --m 16 --k 8 --n 8 --repeat 3 --warmup 1 --sweep streams=1,2 --run-times " + file);
  ASSERT_EQ(r.code, 0) << r.out;
  std::ifstream in(file);
  std::string line;
  std::vector<nlohmann::json> lines;
  while (std::getline(in, line)) lines.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(lines.size(), 2u);  // the stale line is gone: the file starts empty
  EXPECT_EQ(lines[0]["settings"], "streams=1");
  EXPECT_EQ(lines[1]["settings"], "streams=2");
  for (const auto& l : lines) {
    EXPECT_EQ(l["warmup_runs"], 1);
    EXPECT_EQ(l["graph"], false);
    ASSERT_EQ(l["ranks"].size(), 1u);
    EXPECT_EQ(l["ranks"][0]["wall_us"].size(), 3u);
    EXPECT_EQ(l["ranks"][0]["issue_us"].size(), 3u);
    for (const auto& w : l["ranks"][0]["wall_us"]) EXPECT_GT(w.get<double>(), 0);
  }
  Result bad = braid("run mlp --ranks 1 --m 16 --k 8 --n 8 --run-times " + file);
  EXPECT_EQ(bad.code, 2) << bad.out;
  EXPECT_NE(bad.out.find("--run-times records the timed runs: give --repeat N"), std::string::npos) << bad.out;
}

TEST(CliRun, LoweredFileCheckedAgainstItsWorkloadAndABrokenOneIsCaught) {
  NEED_GLOO();
  Result lowered = braid(std::string("lower allreduce --devices 2 ") + kSmall);
  ASSERT_EQ(lowered.code, 0) << lowered.out;
  std::string good = tempFile("allreduce.hir", lowered.out);
  Result ok = braid("run " + good + " --ranks 2 --reference allreduce " + kSmall);
  EXPECT_EQ(ok.code, 0) << ok.out;
  EXPECT_NE(ok.out.find("outputs match"), std::string::npos) << ok.out;

  // Every chunk's result lands in chunk 0: chunk 1 is never written.
  std::string text = lowered.out;
  const std::string from = "stream_index = StreamIdx)\n    Communication";
  size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos) << text;
  // The output chunk is the second ShardByStream of the loop body, just before the Communication.
  text.replace(at, std::string("stream_index = StreamIdx").size(), "stream_index = 0");
  std::string bad = tempFile("allreduce_bad.hir", text);
  // The verifier sees it first: braid run refuses it...
  Result refused = braid("run " + bad + " --ranks 2 --reference allreduce " + kSmall);
  EXPECT_EQ(refused.code, 1) << refused.out;
  EXPECT_NE(refused.out.find("refusing to run a program that `braid verify` rejects"), std::string::npos)
      << refused.out;
  EXPECT_NE(refused.out.find("error[output-not-written]"), std::string::npos) << refused.out;
  // ... and with --unsafe the numbers show it.
  Result r = braid("run " + bad + " --ranks 2 --unsafe --reference allreduce " + kSmall);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("MISMATCH"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("worst at ["), std::string::npos) << r.out;
}

TEST(CliRun, NvFuserDumpCheckedAgainstTheMatchingWorkload) {
  NEED_GLOO();
  // nvFuser's P2P allgather + matmul pipeline has the layout of ag_matmul --pipeline p2p; its
  // symbols (i0, i2, i3) follow from the workload's sizes.
  std::string file = std::string(BRAID_SOURCE_DIR) + "/examples/ag_p2p_matmul_4ranks.hir";
  Result r = braid("run " + file + " --reference ag_matmul --pipeline p2p --m 16 --k 8 --n 4");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("on 4 ranks [gloo]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("all 1 of 1 outputs match"), std::string::npos) << r.out;
}

TEST(CliRun, FileWithoutReferencePrintsChecksums) {
  std::string file = std::string(BRAID_SOURCE_DIR) + "/examples/stream_set_serialized.hir";
  Result r = braid("run " + file + " --bind i0=4 --bind i2=8");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("abs sum"), std::string::npos) << r.out;
  // Outputs saved as .npy feed a later run as inputs (whose shapes bind i0 and i2).
  braid::testing::TempDir dir("braid_cli_npy_");
  Result saved = braid("run " + file + " --bind i0=4 --bind i2=8 --seed 9 --save-outputs " + dir.file("a"));
  ASSERT_EQ(saved.code, 0) << saved.out;
  Result again = braid("run " + file + " --input T0=" + dir.file("a/T1.npy") + " --save-outputs " + dir.file("b"));
  ASSERT_EQ(again.code, 0) << again.out;
  std::ifstream fa(dir.file("a/T1.npy"), std::ios::binary), fb(dir.file("b/T1.npy"), std::ios::binary);
  std::string a((std::istreambuf_iterator<char>(fa)), {}), b((std::istreambuf_iterator<char>(fb)), {});
  EXPECT_FALSE(a.empty());
  EXPECT_EQ(a, b);
  Result unbound = braid("run " + std::string(BRAID_TEST_DATA_DIR) + "/exec/data/legacy_allocate_reuses_slice.hir");
  EXPECT_EQ(unbound.code, 2) << unbound.out;
  EXPECT_NE(unbound.out.find("--bind"), std::string::npos) << unbound.out;
}

TEST(CliRun, FailingRankStopsEveryone) {
  NEED_GLOO();
  Result r = braid(std::string("run allreduce --ranks 3 --timeout 30 ") + "--m 24 --k 8 --n 8 --streams 2",
                   "BRAID_EXEC_FAULT=1:throw:2");
  EXPECT_NE(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("rank 1 failed first"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("injected fault"), std::string::npos) << r.out;
  EXPECT_LT(r.seconds, 20) << r.out;
}

TEST(CliRun, DeadRankStopsEveryone) {
  NEED_GLOO();
  Result r = braid(std::string("run ag_matmul --pipeline p2p --ranks 3 --timeout 30 ") + "--m 24 --k 8 --n 8 --streams 2",
                   "BRAID_EXEC_FAULT=2:exit:3");
  EXPECT_NE(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("rank 2 failed first (exit code 17)"), std::string::npos) << r.out;
  EXPECT_LT(r.seconds, 20) << r.out;
}

TEST(CliRun, HangingRankIsStoppedByTheTimeout) {
  NEED_GLOO();
  Result r = braid(std::string("run allgather --ranks 2 --timeout 3 ") + kSmall, "BRAID_EXEC_FAULT=1:hang:2");
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_NE(r.out.find("timed out after 3 s"), std::string::npos) << r.out;
  EXPECT_LT(r.seconds, 15) << r.out;
}

// A sweep runs every (streams, protocol) in the same processes, each checked and timed on its own.
TEST(CliRun, SweepRunsEachConfigurationInTheSameProcesses) {
  Result r = braid("run matmul_rs --ranks 1 --devices 1 --m 16 --k 8 --n 8 --sweep-streams 1,2 --sweep-protocols A,C "
                   "--repeat 1");
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* tag : {"[streams=1 protocol=A]", "[streams=1 protocol=C]", "[streams=2 protocol=A]",
                          "[streams=2 protocol=C]"})
    EXPECT_NE(r.out.find(std::string("rank 0 timing ") + tag + " (interpreted, 1 runs"), std::string::npos)
        << tag << "\n" << r.out;
  EXPECT_NE(r.out.find("S=2, m=16, k=8, n=8, protocol C"), std::string::npos) << r.out;
  size_t matches = 0;
  for (size_t at = 0; (at = r.out.find("all 1 of 1 outputs match", at)) != std::string::npos; ++at) ++matches;
  EXPECT_EQ(matches, 4u) << r.out;
}

TEST(CliRun, SweepOnTwoRanksSharesTheCommunicators) {
  NEED_GLOO();
  Result r = braid("run matmul_ar --backend cpu --ranks 2 --m 16 --k 8 --n 8 --sweep-streams 1,2 --repeat 1");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("[rank 1] braid run: rank 1 timing [streams=2] "), std::string::npos) << r.out;
}

// `--sweep KEY=V1,V2 ...` takes any key `braid sim --sweep` takes for a workload: the pipeline
// kind too. Tags name every swept key; the warm-up pass and runs are announced.
TEST(CliRun, SweepAnyLoweringKnob) {
  NEED_GLOO();
  Result r = braid("run ag_matmul --backend cpu --ranks 2 --m 16 --k 8 --n 8 --repeat 1 --warmup 2 "
                   "--sweep streams=1,2 pipeline=collective,p2p");
  ASSERT_EQ(r.code, 0) << r.out;
  for (const char* tag : {"[streams=1 pipeline=collective]", "[streams=1 pipeline=p2p]",
                          "[streams=2 pipeline=collective]", "[streams=2 pipeline=p2p]"})
    EXPECT_NE(r.out.find(std::string("rank 0 timing ") + tag + " (interpreted, 1 runs"), std::string::npos)
        << tag << "\n" << r.out;
  EXPECT_NE(r.out.find("S=2, m=16, k=8, n=8, protocol A, modulo, p2p)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("warm-up: every one of the 4 configurations runs 2 times untimed first"), std::string::npos)
      << r.out;
  // The warm-up pass neither checks nor prints: one report per configuration.
  size_t matches = 0;
  for (size_t at = 0; (at = r.out.find("outputs match", at)) != std::string::npos; ++at) ++matches;
  EXPECT_EQ(matches, 4u) << r.out;
}

// --cool-down idles before every warm-up and timed run (5 runs here: at least 0.5 s in all), says
// so, and refuses a negative time.
TEST(CliRun, CoolDownIdlesBeforeEveryRun) {
  auto t0 = std::chrono::steady_clock::now();
  Result r = braid("run matmul_rs --ranks 1 --devices 1 --m 16 --k 8 --n 8 --repeat 3 --warmup 2 --cool-down 100");
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("cool-down: 100 ms idle before every warm-up and timed run"), std::string::npos) << r.out;
  EXPECT_GE(s, 0.5);
  r = braid("run matmul_rs --ranks 1 --devices 1 --m 16 --k 8 --n 8 --repeat 1 --cool-down -1");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("--cool-down"), std::string::npos) << r.out;
}

// --inputs normal: the check passes on normal values (within the tolerance) and the run says which
// values it seeded; another kind is refused.
TEST(CliRun, NormalInputsCheckAndAreAnnounced) {
  NEED_GLOO();
  Result r = braid("run matmul_ar --ranks 2 --devices 2 --m 16 --k 32 --n 8 --dtype bf16 --inputs normal");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("seed 0 (normal inputs)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("all 1 of 1 outputs match"), std::string::npos) << r.out;
  r = braid("run matmul_ar --ranks 1 --devices 1 --m 16 --k 8 --n 8 --inputs ones");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("--inputs"), std::string::npos) << r.out;
}

TEST(CliRun, WarmupIsAnnounced) {
  Result r = braid("run matmul_rs --ranks 1 --devices 1 --m 16 --k 8 --n 8 --repeat 2 --warmup 3");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("warm-up: 3 untimed runs after the checked run, before the 2 timed ones"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("timing (interpreted, 2 runs"), std::string::npos) << r.out;
  r = braid("run matmul_rs --ranks 1 --devices 1 --m 16 --k 8 --n 8 --repeat 2 --warmup 0 --sweep streams=1,2");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("warm-up: none (--warmup 0)"), std::string::npos) << r.out;
  EXPECT_EQ(braid("run matmul_rs --ranks 1 --devices 1 --m 16 --k 8 --n 8 --warmup -1").code, 2);
}

// Statements a run of `scope` executes on rank 0, by the host profile's kind (loops unrolled,
// branches taken): what the evaluator meets, worked out from the program text alone.
void countExecuted(const braid::Scope& scope, braid::Bindings& b, std::map<std::string, int64_t>& n) {
  for (const auto& s : scope) {
    if (s->is<braid::ForLoop>()) {
      const auto* f = s->as<braid::ForLoop>();
      ++n["ForLoop"];
      for (int64_t i = *f->begin().tryEvaluate(b), end = *f->end().tryEvaluate(b); i < end; ++i) {
        b[f->index] = i;
        countExecuted(f->body, b, n);
      }
      b.erase(f->index);
    } else if (s->is<braid::IfThenElse>()) {
      const auto* c = s->as<braid::IfThenElse>();
      ++n["IfThenElse"];
      countExecuted(*c->predicate.tryEvaluate(b) ? c->thenBody : c->elseBody, b, n);
    } else if (braid::sem::runsOnRank(*s, 0)) {
      ++n[std::string(braid::exec::hostProfileKind(*s))];
    }
  }
}

// The rows of rank 0's host profile table: kind -> count (the kind may have spaces; the last
// four columns are numbers).
std::map<std::string, int64_t> profileCounts(const std::string& out) {
  std::map<std::string, int64_t> rows;
  size_t at = out.find("rank 0 host profile");
  if (at == std::string::npos) return rows;
  std::istringstream in(out.substr(out.find('\n', at) + 1));
  std::string line;
  std::getline(in, line);  // the header
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::vector<std::string> w;
    for (std::string x; ls >> x;) w.push_back(x);
    if (w.size() < 5) break;
    std::string kind;
    for (size_t i = 0; i + 4 < w.size(); ++i) kind += (kind.empty() ? "" : " ") + w[i];
    rows[kind] = std::stoll(w[w.size() - 4]);
    if (kind == "total") break;
  }
  return rows;
}

// --host-profile: one row per statement kind the program executes, counted over the timed runs
// only, with the counts the program's own text gives (--verbose prints the program that runs).
TEST(CliRun, HostProfileCountsTheTimedRunsStatementsByKind) {
  const int64_t repeat = 3, streams = 4;
  Result r = braid("run ag_matmul --ranks 1 --devices 1 --m 32 --k 8 --n 8 --streams " + std::to_string(streams) +
                   " --repeat " + std::to_string(repeat) + " --warmup 2 --no-check --verbose --host-profile");
  ASSERT_EQ(r.code, 0) << r.out;
  size_t begin = r.out.find("%HostIrContainer"), end = r.out.find("} // %HostIrContainer");
  ASSERT_TRUE(begin != std::string::npos && end != std::string::npos) << r.out;
  braid::HostProgram program = braid::parseHostProgram(r.out.substr(begin, end - begin + 21));
  braid::Bindings b{{braid::kNumberOfStreams, streams}, {braid::kRank, 0}, {braid::kDeviceIdxX, 0}};
  std::map<std::string, int64_t> perRun;
  countExecuted(program.body(), b, perRun);
  int64_t instructions = 0;
  for (const auto& [kind, n] : perRun)
    if (kind != "ForLoop" && kind != "IfThenElse") instructions += n;
  // The program is ag_matmul's: a stream loop with the allgather, its wait and the matmul.
  EXPECT_EQ(perRun["Communication Allgather"], streams);
  EXPECT_EQ(perRun["matmul"], streams);
  EXPECT_NE(r.out.find("(" + std::to_string(instructions) + " instructions)"), std::string::npos) << r.out;

  std::map<std::string, int64_t> rows = profileCounts(r.out);
  ASSERT_FALSE(rows.empty()) << r.out;
  int64_t total = 0;
  for (const auto& [kind, n] : perRun) {
    EXPECT_EQ(rows[kind], n * repeat) << kind << "\n" << r.out;
    total += n * repeat;
  }
  EXPECT_EQ(rows["(run entry)"], repeat) << r.out;
  EXPECT_EQ(rows["(run exit)"], repeat) << r.out;
  total += 2 * repeat;
  EXPECT_EQ(rows["total"], total) << r.out;
  EXPECT_EQ(rows.size(), perRun.size() + 3) << r.out;  // nothing else: no skipped statement either
}

TEST(CliRun, HostProfileOnEveryRankAndItsRefusals) {
  NEED_GLOO();
  Result r = braid("run ag_matmul --backend cpu --ranks 2 --m 16 --k 8 --n 8 --streams 2 --repeat 2 --warmup 1 "
                   "--host-profile");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("rank 0 host profile (2 timed runs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[rank 1] braid run: rank 1 host profile (2 timed runs"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("Communication Allgather"), std::string::npos) << r.out;
  r = braid("run ag_matmul --ranks 1 --devices 1 --m 16 --k 8 --n 8 --host-profile");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("--host-profile profiles the timed runs: give --repeat N"), std::string::npos) << r.out;
  r = braid("run ag_matmul --ranks 1 --devices 1 --m 16 --k 8 --n 8 --repeat 2 --host-profile --graph");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("a --graph replay executes none"), std::string::npos) << r.out;
  // Without the flag, no table.
  r = braid("run ag_matmul --ranks 1 --devices 1 --m 16 --k 8 --n 8 --repeat 2");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(r.out.find("host profile"), std::string::npos) << r.out;
}

TEST(CliRun, SweepRefusals) {
  Result r = braid("run matmul_rs --ranks 1 --devices 1 --m 16 --k 8 --n 8 --streams 2 --sweep-streams 1,2");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("--streams and --sweep streams=... contradict"), std::string::npos) << r.out;
  r = braid("run matmul_rs --ranks 1 --devices 1 --m 16 --k 8 --n 8 --pipeline p2p --sweep pipeline=collective");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("--pipeline and --sweep pipeline=... contradict"), std::string::npos) << r.out;
  r = braid("run matmul_rs --ranks 1 --devices 1 --m 16 --k 8 --n 8 --sweep ranks=1,2");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("--sweep ranks: braid run cannot sweep it"), std::string::npos) << r.out;
  r = braid("run matmul_rs --ranks 1 --devices 1 --m 16 --k 8 --n 8 --sweep bogus=1,2");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("--sweep bogus: not a setting of a workload"), std::string::npos) << r.out;
  r = braid("run matmul_rs --ranks 1 --devices 1 --m 16 --k 8 --n 8 --sweep pipeline=sideways");
  EXPECT_EQ(r.code, 2) << r.out;
  r = braid("run matmul_rs --ranks 1 --devices 1 --m 16 --k 8 --n 8 --sweep streams=1 --sweep-streams 2");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("given twice"), std::string::npos) << r.out;
  r = braid("run matmul_rs --ranks 1 --devices 1 --m 16 --k 8 --n 8 --protocol A --sweep-protocols B");
  EXPECT_EQ(r.code, 2) << r.out;
  r = braid("run matmul_rs --ranks 1 --devices 1 --m 16 --k 8 --n 8 --sweep-protocols D");
  EXPECT_EQ(r.code, 2) << r.out;
  // One configuration that does not divide fails the launch before anything runs.
  r = braid("run matmul_rs --ranks 1 --devices 1 --m 6 --k 8 --n 8 --sweep-streams 2,4");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_EQ(r.out.find("timing"), std::string::npos) << r.out;
  std::string f = tempFile("sweep.hir", braid("lower allreduce --devices 1 --m 8").out);
  r = braid("run " + f + " --ranks 1 --sweep-streams 1,2");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("is a file"), std::string::npos) << r.out;
}

TEST(CliRun, BadInputIsExitCode2) {
  EXPECT_EQ(braid("run no_such_workload --ranks 1").code, 2);
  EXPECT_EQ(braid("run allgather --ranks 2 --devices 4").code, 2);
  EXPECT_EQ(braid("run allgather --backend cuda").code, 2);
  EXPECT_EQ(braid("run allgather --ranks 2 --m 7").code, 2);
}

TEST(CliRun, ImpossibleSizeIsRefusedBeforeAllocating) {
  // 2e6 x 1e6 floats (under the 2^50-element cap of one buffer, far over any machine's memory):
  // refused with the memory it would need, not an allocator crash.
  auto r = braid("run ag_matmul --ranks 1 --m 2000000 --k 1000000 --n 100000");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("GiB of memory"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("frame #"), std::string::npos) << r.out;
}

TEST(CliRun, BufferOverTheElementCapIsRefused) {
  auto r = braid("run ag_matmul --ranks 1 --m 2000000000 --k 1000000 --n 100000");
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("more than 2^50 elements"), std::string::npos) << r.out;
}

}  // namespace

namespace {

int freePort() { return braid::testing::freeLoopbackPort(); }

// The same binary as one rank of a job started by another launcher: two processes started by
// hand with torchrun's (or OpenMPI's) environment, rank 0 serving the store.
Result launchByHand(const std::string& rank_env0, const std::string& rank_env1, const std::string& args) {
  std::string cli = BRAID_CLI_PATH;
  std::string cmd = "( " + rank_env0 + " " + cli + " " + args + " > /tmp/braid_hand_0_" + std::to_string(::getpid()) +
                    ".txt 2>&1 & " + rank_env1 + " " + cli + " " + args + " > /tmp/braid_hand_1_" +
                    std::to_string(::getpid()) + ".txt 2>&1; r1=$?; wait $!; r0=$?; cat /tmp/braid_hand_0_" +
                    std::to_string(::getpid()) + ".txt /tmp/braid_hand_1_" + std::to_string(::getpid()) +
                    ".txt; exit $((r0 + r1)) )";
  return braid::testing::runShell(cmd);
}

TEST(CliRun, RunsAsARankUnderTorchrunEnvironment) {
  NEED_GLOO();
  std::string port = std::to_string(freePort());
  std::string common = "WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=" + port +
                       " TORCHELASTIC_RUN_ID=test" + port;
  Result r = launchByHand("RANK=0 LOCAL_RANK=0 " + common, "RANK=1 LOCAL_RANK=1 " + common,
                          "run allreduce --timeout 30 --m 16 --k 8 --n 8 --streams 2");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("on 2 ranks [gloo]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("outputs match"), std::string::npos) << r.out;
}

TEST(CliRun, RunsAsARankUnderOpenMpiEnvironment) {
  NEED_GLOO();
  std::string port = std::to_string(freePort());
  std::string common = "OMPI_COMM_WORLD_SIZE=2 MASTER_PORT=" + port;
  Result r = launchByHand("OMPI_COMM_WORLD_RANK=0 OMPI_COMM_WORLD_LOCAL_RANK=0 " + common,
                          "OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_LOCAL_RANK=1 " + common,
                          "run reduce_scatter --timeout 30 --m 16 --k 8 --n 8 --streams 2");
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("outputs match"), std::string::npos) << r.out;
}

// A socket listening on a port the OS picks, held for the test's life: a port someone else took.
class HeldPort {
 public:
  HeldPort() {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && ::listen(fd_, 16) == 0 &&
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) == 0)
      port_ = ntohs(a.sin_port);
  }
  ~HeldPort() { ::close(fd_); }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

// The launcher's port was taken before rank 0 could listen on it (the GPU run's EADDRINUSE):
// it starts the ranks again on another port and the run succeeds.
TEST(CliRun, TakenRendezvousPortIsReplacedByAFreshOne) {
  NEED_GLOO();
  HeldPort held;
  ASSERT_GT(held.port(), 0);
  Result r = braid("run allreduce --backend cpu --ranks 2 --timeout 20 " + std::string(kSmall),
                   "BRAID_RUN_PORT=" + std::to_string(held.port()));
  EXPECT_EQ(r.code, 0) << r.out;
  EXPECT_NE(r.out.find("port " + std::to_string(held.port()) + " on 127.0.0.1 was taken"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("all 1 of 1 outputs match"), std::string::npos) << r.out;
  EXPECT_LT(r.seconds, 15) << r.out;
}

// Under another launcher the port is the user's: a taken one is an error, not a retry.
TEST(CliRun, TakenPortUnderTorchrunIsAnError) {
  NEED_GLOO();
  HeldPort held;
  ASSERT_GT(held.port(), 0);
  Result r = braid("run allreduce --backend cpu --timeout 10 --devices 2 " + std::string(kSmall),
                   "RANK=0 LOCAL_RANK=0 WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=" +
                       std::to_string(held.port()));
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_NE(r.out.find("cannot serve the rendezvous store on port " + std::to_string(held.port())),
            std::string::npos)
      << r.out;
}

}  // namespace

#endif  // BRAID_WITH_TORCH
