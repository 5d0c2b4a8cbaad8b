// The host-program verifier (ir/verifier.h): every rule has a program that breaks it, reported at
// the statement's line and column with its rule, and a correct twin that passes; every example,
// every test program that parses (the checker's bug corpus included: its bugs are not structural)
// passes; files that parse but are ill formed (tests/ir/data/ill_formed) fail where they say.
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/host_ir_text.h"
#include "ir/verifier.h"

namespace braid {
namespace {

using ::testing::HasSubstr;

const std::string H = "%HostIrContainer { (T0_g_float[iS0{i0}, iS1{i2}]) -> () :\n";
const std::string F = "} // %HostIrContainer\n";

struct Rule {
  const char* name;
  std::string bad;
  std::string good;  // the correct twin
  int line;          // of the statement reported in `bad`
  int col;
  const char* rule;
  const char* message;  // a substring
  WellFormednessOptions options = {};
};

WellFormednessOptions placed(bool deallocations = true) {
  WellFormednessOptions o;
  o.allocationsPlaced = true;
  o.deallocationsPlaced = deallocations;
  return o;
}

const std::string kComm = "(type=Allreduce, team=(0 1), input=T0_g_float[iS0{i0}, iS1{i2}], "
                          "output=T1_g_float[iS2{i0}, iS3{i2}], backend=NCCL)";
const std::string kCommOther = "(type=Allreduce, team=(0 1), input=T1_g_float[iS2{i0}, iS3{i2}], "
                               "output=T0_g_float[iS0{i0}, iS1{i2}], backend=NCCL)";
const std::string kAlloc1 = "  T1_g_float[iS2{i0}, iS3{i2}] = ALLOCATE(mem_type=global, zero_init=false)\n";

std::vector<Rule> rules() {
  return {
      {"loop_index_outside_loop",
       H + "  FOR i5 from 0 to 4:\n    SetCurrentStream to Stream i5\n  SetCurrentStream to Stream i5\n" + F,
       H + "  FOR i5 from 0 to 4:\n    SetCurrentStream to Stream i5\n    SetCurrentStream to Stream i5\n" + F, 4, 3,
       "scope", "uses loop index i5 outside its loop (FOR i5 at line 2)"},
      {"loop_bound_uses_its_own_index", H + "  FOR i5 from 0 to i5:\n    StartCoalescing\n    EndCoalescing 3\n" + F,
       H + "  FOR i5 from 0 to i0:\n    StartCoalescing\n    EndCoalescing 3\n" + F, 2, 3, "scope",
       "the loop's stop uses loop index i5 outside its loop"},
      {"scalar_before_assignment", H + "  SetCurrentStream to Stream i7\n  i7 = 3;\n" + F,
       H + "  i7 = 3;\n  SetCurrentStream to Stream i7\n" + F, 2, 3, "scope",
       "uses i7 before the ScalarAssign at line 3 defines it"},
      {"assigns_the_rank", H + "  rank = 3;\n" + F, H + "  i9 = 3;\n" + F, 2, 3, "scope",
       "assigns rank, which the host thread defines"},
      {"stream_before_capture", H + "  SetCurrentStream to Stream 0\n  GetCurrentStream into Stream 0\n" + F,
       H + "  GetCurrentStream into Stream 0\n  SetCurrentStream to Stream 0\n" + F, 2, 3, "stream",
       "names Stream 0 before the GetCurrentStream at line 3 captures it"},
      {"wait_unknown", H + kAlloc1 + "  Communication 41 " + kComm + "\n  Wait Communication 42\n" + F,
       H + kAlloc1 + "  Communication 41 " + kComm + "\n  Wait Communication 41\n" + F, 4, 3, "communication",
       "Wait for communication 42, which no Communication"},
      {"wait_before_communication", H + kAlloc1 + "  Wait Communication 41\n  Communication 41 " + kComm + "\n" + F,
       H + kAlloc1 + "  FOR i5 from 0 to 4:\n    IF Manual ( i5 > 0 ):\n      Wait Communication 41\n    Communication 41 " +
           kComm + "\n" + F,
       3, 3, "communication", "which the Communication at line 4 posts only later"},
      {"duplicate_id",
       H + kAlloc1 + "  Communication 41 " + kComm + "\n  Communication 41 " + kCommOther + "\n  Wait Communication 41\n" + F,
       H + kAlloc1 + "  IF Manual ( deviceIdx.x == 0 ):\n    Communication 41 " + kComm + "\n  ELSE:\n" +
           "    Communication 41 " + kComm + "\n  Wait Communication 41\n" + F,
       4, 3, "communication", "reuses id 41 of the different Communication at line 3"},
      {"rooted_without_root",
       H + kAlloc1 + "  Communication 4 (type=Broadcast, team=(0 1), input=T0_g_float[iS0{i0}, iS1{i2}], " +
           "output=T1_g_float[iS2{i0}, iS3{i2}], backend=NCCL)\n" + F,
       H + kAlloc1 + "  Communication 4 (type=Broadcast, team=(0 1), root=0, input=T0_g_float[iS0{i0}, iS1{i2}], " +
           "output=T1_g_float[iS2{i0}, iS3{i2}], backend=NCCL)\n" + F,
       3, 3, "communication", "a Broadcast needs a root"},
      {"team_outside_meshes",
       "%HostIrContainer { (T0_g_float[iS0{i0}] (DeviceMesh{0 1})) -> () :\n"
       "  Communication 4 (type=Allreduce, team=(0 3), input=T0_g_float[iS0{i0}] (DeviceMesh{0 1}), "
       "output=T1_g_float[iS1{i0}] (DeviceMesh{0 1}), backend=NCCL)\n" + F,
       "%HostIrContainer { (T0_g_float[iS0{i0}] (DeviceMesh{0 1})) -> () :\n"
       "  Communication 4 (type=Allreduce, team=(0 1), input=T0_g_float[iS0{i0}] (DeviceMesh{0 1}), "
       "output=T1_g_float[iS1{i0}] (DeviceMesh{0 1}), backend=NCCL)\n" + F,
       2, 3, "team", "names device 3, which is in the mesh of neither T0_g_float"},
      {"shard_without_stream_axis",
       H + "  FOR i5 from 0 to 4:\n    T2_l_float[iS4{i0}, iS5{i2}] = ShardByStream(T0_g_float[iS0{i0}, iS1{i2}], "
           "stream_index = i5)\n" + F,
       H + "  FOR i5 from 0 to 4:\n    T2_l_float[iStreamIdx4{4}, iS5{i2}] = ShardByStream(T0_g_float[iS0{i0}, iS1{i2}], "
           "stream_index = i5)\n" + F,
       3, 5, "view", "neither has a Stream axis"},
      {"slice_ranges", H + "  T2_l_float[iS4{4}]\n     = slice( T0_g_float[iS0{i0}, iS1{i2}], { {0, 4, 1} } )\n" + F,
       H + "  T2_l_float[iS4{4}, iS5{i2}]\n     = slice( T0_g_float[iS0{i0}, iS1{i2}], { {0, 4, 1} {0, i2, 1} } )\n" + F, 2,
       3, "view", "gives 1 ranges for its 2 buffer dimensions"},
      {"slice_step",
       H + "  T2_l_float[iS4{4}, iS5{i2}]\n     = slice( T0_g_float[iS0{i0}, iS1{i2}], { {0, 4, 2} {0, i2, 1} } )\n" + F,
       H + "  T2_l_float[iS4{4}, iS5{i2}]\n     = slice( T0_g_float[iS0{i0}, iS1{i2}], { {0, 4, 1} {0, i2, 1} } )\n" + F, 2,
       3, "view", "with step 2 along dimension 0"},
      {"read_before_definition",
       H + "  T2_l_float[iS4{i0}, iS5{i2}]\n     = Set( T3_l_float[iS6{i0}, iS7{i2}], cache_op=Streaming )\n" +
           "  T3_l_float[iS6{i0}, iS7{i2}]\n     = Set( T0_g_float[iS0{i0}, iS1{i2}], cache_op=Streaming )\n" + F,
       H + "  T3_l_float[iS6{i0}, iS7{i2}]\n     = Set( T0_g_float[iS0{i0}, iS1{i2}], cache_op=Streaming )\n" +
           "  T2_l_float[iS4{i0}, iS5{i2}]\n     = Set( T3_l_float[iS6{i0}, iS7{i2}], cache_op=Streaming )\n" +
           "  Deallocate T3_l_float\n  Deallocate T2_l_float\n" + F,
       2, 3, "allocation", "reads T3_l_float, which nothing defines before it", placed(false)},
      {"communication_output_not_allocated", H + "  Communication 41 " + kComm + "\n  Wait Communication 41\n" + F,
       H + kAlloc1 + "  Communication 41 " + kComm + "\n  Wait Communication 41\n  Deallocate T1_g_float\n" + F, 2, 3,
       "allocation", "writes into T1_g_float, which nothing allocates before it", placed()},
      {"double_deallocate",
       H + kAlloc1 + "  Communication 41 " + kComm + "\n  Wait Communication 41\n  Deallocate T1_g_float\n" +
           "  Deallocate T1_g_float\n" + F,
       H + kAlloc1 + "  Communication 41 " + kComm + "\n  Wait Communication 41\n  Deallocate T1_g_float\n" + kAlloc1 +
           "  Deallocate T1_g_float\n" + F,
       6, 3, "allocation", "deallocates T1_g_float a second time: the Deallocate at line 5", placed()},
      {"allocate_without_deallocate", H + kAlloc1 + "  Communication 41 " + kComm + "\n  Wait Communication 41\n" + F,
       H + kAlloc1 + "  Communication 41 " + kComm + "\n  Wait Communication 41\n  Deallocate T1_g_float\n" + F, 2, 3,
       "allocation", "allocates T1_g_float, an intermediate, but no Deallocate follows in the same scope", placed()},
  };
}

class Rules : public ::testing::TestWithParam<Rule> {};

TEST_P(Rules, BadIsReportedAtItsStatementAndTheTwinPasses) {
  const Rule& r = GetParam();
  HostProgram bad = parseHostProgram(r.bad, "bad.hir");
  std::vector<WellFormednessProblem> problems = findWellFormednessProblems(bad, r.options);
  ASSERT_EQ(problems.size(), 1u) << r.bad;
  EXPECT_EQ(problems[0].rule, r.rule);
  EXPECT_EQ(problems[0].loc, (SourceLoc{"bad.hir", r.line, r.col})) << problems[0].str();
  EXPECT_THAT(problems[0].message, HasSubstr(r.message));
  EXPECT_THAT(problems[0].str(), HasSubstr("bad.hir:" + std::to_string(r.line) + ":" + std::to_string(r.col) +
                                           ": error: [" + r.rule + "]"));
  try {
    verifyWellFormed(bad, r.options);
    ADD_FAILURE() << "no error";
  } catch (const WellFormednessError& e) {
    EXPECT_THAT(e.what(), HasSubstr(problems[0].str()));
    EXPECT_EQ(e.problems().size(), 1u);
  }

  HostProgram good = parseHostProgram(r.good, "good.hir");
  std::vector<WellFormednessProblem> none = findWellFormednessProblems(good, r.options);
  EXPECT_TRUE(none.empty()) << none.front().str();
}

INSTANTIATE_TEST_SUITE_P(Verifier, Rules, ::testing::ValuesIn(rules()),
                         [](const ::testing::TestParamInfo<Rule>& i) { return std::string(i.param.name); });

// A statement built by a pass has no location: the message quotes its text instead.
TEST(Verifier, BuiltStatementsAreNamedByTheirText) {
  HostProgram p = parseHostProgram(H + "  FOR i5 from 0 to 4:\n    StartCoalescing\n  Synchronize Stream i5\n" + F);
  forEachStmt(p.body(), [](const Stmt& s, int) { const_cast<Stmt&>(s).loc = SourceLoc{}; });
  std::vector<WellFormednessProblem> problems = findWellFormednessProblems(p);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_THAT(problems[0].message, HasSubstr("[statement: Synchronize Stream i5]"));
  EXPECT_THAT(problems[0].message, HasSubstr("(FOR i5 at ForLoop (no location))"));
}

// A tensor from another program (a pass that forgot to clone it) is no tensor of this one.
TEST(Verifier, TensorsBelongToTheProgram) {
  HostProgram p = parseHostProgram(H + "  Deallocate T0_g_float\n" + F);
  HostProgram other = parseHostProgram(H + F);
  p.body()[0]->as<Deallocate>()->tv = other.inputs()[0];
  std::vector<WellFormednessProblem> problems = findWellFormednessProblems(p);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].rule, "tensor");
  EXPECT_THAT(problems[0].message, HasSubstr("which is not a tensor of the program"));
}

// Every problem is reported, in program order, not just the first.
TEST(Verifier, ReportsEveryProblemInProgramOrder) {
  HostProgram p = parseHostProgram(H + "  Wait Communication 9\n  Synchronize Stream i4\n  Wait Communication 8\n" + F);
  std::vector<WellFormednessProblem> problems = findWellFormednessProblems(p);
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_EQ(problems[0].loc.line, 2);
  EXPECT_EQ(problems[1].loc.line, 4);
}

namespace fs = std::filesystem;

std::vector<fs::path> hirFiles(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.path().extension() == ".hir") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

// The examples and every test program that parses are well formed: the checker's corpus of bugs
// (tests/verify/data) holds races, missing Waits, bad roots and out-of-bounds views, none of them
// structural. Per-device dumps are checked program by program.
TEST(Verifier, ExamplesAndTestProgramsAreWellFormed) {
  int n = 0;
  std::vector<fs::path> files = hirFiles(fs::path(BRAID_SOURCE_DIR) / "examples");
  for (const char* dir : {"ir/data/hostir_md", "ir/data/dialects", "verify/data", "exec/data", "passes/golden"})
    for (const fs::path& f : hirFiles(fs::path(BRAID_TEST_DATA_DIR) / dir)) files.push_back(f);
  for (const fs::path& f : files) {
    SCOPED_TRACE(f.string());
    std::ifstream in(f);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::pair<int64_t, HostProgram>> devices;
    try {
      devices = parseDeviceDumps(text, f.string());
      if (devices.empty()) devices.emplace_back(0, parseHostProgram(text, f.string()));
    } catch (const ParseError&) {
      continue;  // not a host program (golden fusions) or a dump braid refuses to read
    }
    for (const auto& [device, p] : devices) {
      std::vector<WellFormednessProblem> problems = findWellFormednessProblems(p);
      EXPECT_TRUE(problems.empty()) << "device " << device << ": " << problems.front().str();
      ++n;
    }
  }
  EXPECT_GE(n, 60);
}

TEST(Verifier, IllFormedFilesFailWhereTheySay) {
  // tests/ir/data/ill_formed/<name>.hir: the first line is `// expect: LINE:COL [rule] message`.
  int n = 0;
  for (const fs::path& f : hirFiles(fs::path(BRAID_TEST_DATA_DIR) / "ir" / "data" / "ill_formed")) {
    SCOPED_TRACE(f.string());
    std::ifstream in(f);
    std::string first;
    std::getline(in, first);
    int line = 0, col = 0;
    char rule[64] = {0};
    char msg[256] = {0};
    ASSERT_EQ(std::sscanf(first.c_str(), "// expect: %d:%d [%63[^]]] %255[^\n]", &line, &col, rule, msg), 4) << first;
    HostProgram p = parseHostProgramFile(f.string());  // it parses: `braid print` prints it
    try {
      verifyWellFormed(p);
      ADD_FAILURE() << "no error";
    } catch (const WellFormednessError& e) {
      ASSERT_FALSE(e.problems().empty());
      const WellFormednessProblem& first_problem = e.problems().front();
      EXPECT_EQ(first_problem.loc, (SourceLoc{f.string(), line, col})) << e.what();
      EXPECT_EQ(first_problem.rule, rule);
      EXPECT_THAT(first_problem.message, HasSubstr(msg));
    }
    ++n;
  }
  EXPECT_GE(n, 3);
}

}  // namespace
}  // namespace braid
