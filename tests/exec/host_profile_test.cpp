// The host profile's data (exec/host_profile.h): accumulate, merge, sort, format, and the kind
// names it gives statements. The evaluator's use of it is in evaluator_test.cpp, the CLI's in
// cli_run_test.cpp.
#include "exec/host_profile.h"

#include <gtest/gtest.h>

#include <sstream>

#include "ir/host_ir.h"
#include "ir/host_ir_text.h"

namespace braid::exec {
namespace {

TEST(HostProfile, AddsSamplesPerKindInOrderOfFirstAppearance) {
  HostProfile p;
  EXPECT_TRUE(p.empty());
  p.add("Wait", 100);
  p.add("matmul", 5000);
  p.add("Wait", 300);
  ASSERT_EQ(p.entries().size(), 2u);
  EXPECT_EQ(p.entries()[0].kind, "Wait");
  EXPECT_EQ(p.entries()[0].count, 2);
  EXPECT_EQ(p.entries()[0].totalNs, 400);
  EXPECT_EQ(p.entries()[1].kind, "matmul");
  EXPECT_EQ(p.totalNs(), 5400);
  EXPECT_EQ(p.totalCount(), 3);
  ASSERT_NE(p.find("matmul"), nullptr);
  EXPECT_EQ(p.find("matmul")->count, 1);
  EXPECT_EQ(p.find("Allocate"), nullptr);
  p.clear();
  EXPECT_TRUE(p.empty());
  EXPECT_EQ(p.totalNs(), 0);
}

TEST(HostProfile, MergeAddsCountsAndTimesAndKeepsNewKinds) {
  HostProfile a, b;
  a.add("Wait", 100);
  a.add("Allocate", 50);
  b.add("Allocate", 70);
  b.add("Allocate", 30);
  b.add("ForLoop", 9);
  a.merge(b);
  ASSERT_EQ(a.entries().size(), 3u);
  EXPECT_EQ(a.find("Wait")->count, 1);
  EXPECT_EQ(a.find("Allocate")->count, 3);
  EXPECT_EQ(a.find("Allocate")->totalNs, 150);
  EXPECT_EQ(a.find("ForLoop")->totalNs, 9);
  EXPECT_EQ(a.entries()[2].kind, "ForLoop");
  EXPECT_EQ(b.totalCount(), 3) << "the merged-in profile is unchanged";
}

TEST(HostProfile, SortedByTotalThenKind) {
  HostProfile p;
  p.add("b", 10);
  p.add("c", 30);
  p.add("a", 10);
  p.add("d", 5);
  p.add("d", 5);
  std::vector<std::string> kinds;
  for (const HostProfileEntry& e : p.sorted()) kinds.push_back(e.kind);
  EXPECT_EQ(kinds, (std::vector<std::string>{"c", "a", "b", "d"}));
}

TEST(HostProfile, TableHasOneRowPerKindSortedThenTheTotal) {
  HostProfile p;
  p.add("SetCurrentStream", 1000);
  p.add("SetCurrentStream", 2000);
  p.add("matmul", 9000);
  const std::string t = formatHostProfile(p, "> ");
  std::istringstream in(t);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 4u) << t;
  auto fields = [](const std::string& l) {
    std::istringstream s(l.substr(2));
    std::vector<std::string> f;
    for (std::string w; s >> w;) f.push_back(w);
    return f;
  };
  for (const std::string& l : lines) EXPECT_EQ(l.rfind("> ", 0), 0u) << l;
  EXPECT_EQ(fields(lines[0]), (std::vector<std::string>{"kind", "count", "total", "us", "us/stmt", "share"}));
  // matmul: 9 us of 12 us in one statement; SetCurrentStream: 3 us in two.
  EXPECT_EQ(fields(lines[1]), (std::vector<std::string>{"matmul", "1", "9.0", "9.000", "75.0%"}));
  EXPECT_EQ(fields(lines[2]), (std::vector<std::string>{"SetCurrentStream", "2", "3.0", "1.500", "25.0%"}));
  EXPECT_EQ(fields(lines[3]), (std::vector<std::string>{"total", "3", "12.0", "4.000", "100.0%"}));
  // The columns line up: every row as wide as the header.
  for (const std::string& l : lines) EXPECT_EQ(l.size(), lines[0].size()) << t;
}

TEST(HostProfile, EmptyTableHasOnlyAZeroTotal) {
  const std::string t = formatHostProfile(HostProfile());
  EXPECT_NE(t.find("total"), std::string::npos) << t;
  EXPECT_NE(t.find("0.0%"), std::string::npos) << t;
}

TEST(HostProfile, KindsAreTheHostIrNamesWithOpsAndCommunicationTypes) {
  HostProgram p = parseHostProgram(
      "%HostIrContainer { (T0_g_float[iS0{4}, iS1{4}], T1_g_float[iS2{4}, iS3{4}]) -> (T3_g_float[iS6{4}, "
      "iS7{4}]) :\n"
      "  T2_g_float[iS4{4}, iS5{4}] = ALLOCATE(mem_type=global, zero_init=false)\n"
      "  Communication 0 (type=Allreduce, team=(0), input=T0_g_float[iS0{4}, iS1{4}], "
      "output=T2_g_float[iS4{4}, iS5{4}], backend=NCCL)\n"
      "  Wait Communication 0\n"
      "  T3_g_float[iS6{4}, iS7{4}]\n"
      "     = matmul(T2_g_float[iS4{4}, iS5{4}],\n"
      "              T1_g_float[iS2{4}, iS3{4}])\n"
      "  Deallocate T2_g_float[iS4{4}, iS5{4}]\n"
      "} // %HostIrContainer\n");
  std::vector<std::string> kinds;
  for (const auto& s : p.body()) kinds.emplace_back(hostProfileKind(*s));
  EXPECT_EQ(kinds, (std::vector<std::string>{"Allocate", "Communication Allreduce", "Wait", "matmul", "Deallocate"}));
}

}  // namespace
}  // namespace braid::exec
