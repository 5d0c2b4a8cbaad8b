// The event graph of the statements braid learned from nvFuser's dumps, statement by statement:
// the mesh rule, CollectivePermute's pairs, ShareMemHandles' rendezvous, index definitions and
// scalar statements, and the 2024 executor's allocations.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/host_ir_text.h"
#include "ir/semantics/interpreter.h"
#include "ir/semantics/mesh_rule.h"

namespace braid::sem {
namespace {

using ::testing::HasSubstr;

EventGraph run(const std::string& text, int64_t ranks, const HostProgram** keep = nullptr) {
  static std::vector<std::unique_ptr<HostProgram>> programs;  // events point at statements
  programs.push_back(std::make_unique<HostProgram>(parseHostProgram(text, "test.hir")));
  if (keep) *keep = programs.back().get();
  SemanticsOptions o;
  o.numRanks = ranks;
  return buildEventGraph(*programs.back(), o);
}

std::vector<std::string> ops(const EventGraph& g, int64_t rank) {
  std::vector<std::string> out;
  for (const Event& e : g.events)
    if (e.rank == rank && !e.isMarker()) out.push_back(e.op);
  return out;
}

bool hasIssue(const EventGraph& g, FindingKind k) {
  for (const Issue& i : g.issues)
    if (i.kind == k) return true;
  return false;
}

const char* kHeader = "%HostIrContainer { (T0_g_float[iS0{4}] (DeviceMesh{0 1})) -> () :\n";

TEST(SemanticsInterop, MeshRuleSkipsStatementsOfOtherRanks) {
  std::string text = std::string(kHeader) +
                     "  PostOnStream (HostUnit1, Inputs:{T0_g_float[iS0{4}] (DeviceMesh{0 1}), }, "
                     "Outputs:{T1_g_float[iS1{4}] (DeviceMesh{0}), })\n"
                     "  PostOnStream (HostUnit2, Inputs:{T5_g_float[iS5{4}] (DeviceMesh{1}), }, "
                     "Outputs:{T2_g_float[iS2{4}] (DeviceMesh{1}), })\n"
                     "  T3_g_float[iS3{4}] = ALLOCATE(mem_type=global, zero_init=false)\n"
                     "  Communication 7 (type=Allreduce, team=(0), input=T0_g_float, output=T3_g_float, backend=NCCL)\n"
                     "  Wait(Communication 7)\n"
                     "} // %HostIrContainer\n";
  const HostProgram* p = nullptr;
  EventGraph g = run(text, 2, &p);
  // Rank 0: its kernel, the allocation of the mesh-less T3, its Allreduce. Rank 1: the other kernel
  // (its input T5 has no producer on rank 1's side of this test, hence an unbound-tensor issue),
  // and no Wait without a post: the Allreduce it is not a member of posts nothing to wait for.
  EXPECT_EQ(ops(g, 0), (std::vector<std::string>{"kernel HostUnit1", "Allreduce"}));
  EXPECT_FALSE(hasIssue(g, FindingKind::kWaitWithoutPost));
  const Stmt& first = *p->body()[0];
  EXPECT_TRUE(runsOnRank(first, 0));
  EXPECT_FALSE(runsOnRank(first, 2));
  EXPECT_TRUE(runsOnRank(*p->body()[2], 5));  // no mesh: every rank
  EXPECT_FALSE(runsOnRank(*p->body()[3], 1));  // team (0)
}

const char* kRing =
    "%HostIrContainer { (T0_g_float[ideviceIdx.x0{3}, iS1{8}] (DeviceMesh{2 0 1})) -> () :\n"
    "  T1_g_float[iS2{8}] (DeviceMesh{2 0 1}) = ALLOCATE(mem_type=global, zero_init=false)\n"
    "  CollectivePermute 4 (team=(2 0 1), send_peer=SEND, recv_peer=RECV, input=T0_g_float, output=T1_g_float, "
    "backend=NCCL)\n"
    "  Wait(Communication 4)\n"
    "} // %HostIrContainer\n";

std::string ring(const std::string& send, const std::string& recv) {
  std::string s = kRing;
  s.replace(s.find("SEND"), 4, send);
  s.replace(s.find("RECV"), 4, recv);
  return s;
}

// Peers are positions in the team: with team (2 0 1), position p is device team[p].
TEST(SemanticsInterop, CollectivePermutePeersArePositionsInTheTeam) {
  // Device d at position k sends to position k+1 and receives from position k-1.
  // Positions: device 2 -> 0, device 0 -> 1, device 1 -> 2, so position = (rank + 1) % 3:
  // position + 1 is (rank + 2) % 3 and position - 1 is rank.
  EventGraph g = run(ring("( ( rank + 2 ) % 3 )", "rank"), 3);
  int pairs = 0;
  for (const Event& e : g.events) {
    if (e.kind != EventKind::kP2P) continue;
    ASSERT_EQ(e.p2p.size(), 2u);
    int64_t pos = e.rank == 2 ? 0 : e.rank == 0 ? 1 : 2;
    EXPECT_EQ(e.p2p[0].type, P2PType::kSend);
    EXPECT_EQ(e.p2p[0].peer, std::vector<int64_t>({2, 0, 1})[static_cast<size_t>((pos + 1) % 3)]);
    EXPECT_EQ(e.p2p[1].peer, std::vector<int64_t>({2, 0, 1})[static_cast<size_t>((pos + 2) % 3)]);
    EXPECT_EQ(e.communicator, "NCCL team (0 1 2)");
    pairs += static_cast<int>(e.pairGroups.size());
  }
  EXPECT_EQ(pairs, 6);  // three send/recv pairs, each counted on both sides
  EXPECT_TRUE(g.issues.empty()) << g.issues[0].message;
}

TEST(SemanticsInterop, CollectivePermuteToItselfIsALocalCopy) {
  EventGraph g = run(ring("( ( rank + 1 ) % 3 )", "( ( rank + 1 ) % 3 )"), 3);
  // rank + 1 mod 3 is each device's own position in (2 0 1).
  for (int64_t r : {0, 1, 2}) EXPECT_EQ(ops(g, r), (std::vector<std::string>{"CollectivePermute local copy"}));
  EXPECT_TRUE(g.issues.empty());
}

TEST(SemanticsInterop, ShareMemHandlesIsAHostRendezvousWithACache) {
  std::string text =
      "%HostIrContainer { (T0_g_float[iS0{4}] (DeviceMesh{0 1})) -> () :\n"
      "  FOR i3 from 0 to 3:\n"
      "    ShareMemHandles(P2PCommunication 5 (type=send, buffer=T0_g_float, peer=( 1 - rank ), backend=CUDA), "
      "P2PCommunication 6 (type=recv, buffer=T0_g_float, peer=( 1 - rank ), backend=CUDA),\n"
      "} // %HostIrContainer\n";
  EventGraph g = run(text, 2);
  // The same buffers in every iteration: exchanged (and the barrier reached) once only.
  ASSERT_EQ(g.rendezvous.size(), 1u);
  EXPECT_EQ(g.rendezvous[0].members.size(), 2u);
  EXPECT_EQ(g.rendezvous[0].what, "ShareMemHandles barrier #1");
  EXPECT_TRUE(g.issues.empty());
  // No device work.
  EXPECT_TRUE(ops(g, 0).empty());
}

TEST(SemanticsInterop, IndexDefinitionsAndScalarStatementsDriveViews) {
  std::string text =
      "%HostIrContainer { (T0_g_float[iS0{5}, iS1{2}]) -> () :\n"
      "  FOR i3 from 0 to 2:\n"
      "    i7 = i3 * 2;\n"
      "    T1_l_float[iS2{2}]\n"
      "       = HirAliasSelect( T0_g_float[iS0{5}, iS1{2}], axis = iS0{5}, index = i9 )\n"
      "    T2_g_float[iS3{2}] = ALLOCATE(mem_type=global, zero_init=false)\n"
      "    T2_g_float[iS3{2}]\n"
      "       = Set( T1_l_float[iS2{2}] )\n"
      "} // %HostIrContainer\n"
      "\nIndex definitions:\n  i9 = i8 + 1;\n  i8 = i7 + rank;\n";
  EventGraph g = run(text, 2);
  ASSERT_TRUE(g.issues.empty()) << g.issues[0].message;
  // Rank r, iteration i reads row 2i + r + 1 of T0: elements [2 (2i + r + 1), ... + 2).
  std::vector<std::string> rows;
  for (const Event& e : g.events)
    if (e.kind == EventKind::kCopy) rows.push_back(std::to_string(e.rank) + ":" + e.reads[0].region.str());
  EXPECT_EQ(rows, (std::vector<std::string>{"0:elements [2, 4)", "0:elements [6, 8)", "1:elements [4, 6)",
                                            "1:elements [8, 10)"}));
}

TEST(SemanticsInterop, UnboundIndexSymbolIsNamed) {
  std::string text =
      "%HostIrContainer { (T0_g_float[iS0{4}, iS1{2}]) -> () :\n"
      "  T1_l_float[iS2{2}]\n"
      "     = HirAliasSelect( T0_g_float[iS0{4}, iS1{2}], axis = iS0{4}, index = i84 )\n"
      "} // %HostIrContainer\n";
  HostProgram p = parseHostProgram(text, "test.hir");
  EXPECT_EQ(unboundSymbols(p, {}), (std::set<std::string>{"i84"}));
  HostProgram q = parseHostProgram(text + "\nIndex definitions:\n  i84 = rank % 4;\n", "test.hir");
  EXPECT_TRUE(unboundSymbols(q, {}).empty());
}

// The executor of 2024 allocated communication outputs before running the program; a dump of that
// time (recognized by its spelling) is read so. Later dumps allocate in the program.
TEST(SemanticsInterop, ExecutorAllocatedOnlyForTheOldestPrinter) {
  std::string body =
      "  Communication 3 (type=Allgather, team=(0 1), input=T0, output=T1)\n"
      "  Wait Communication 3\n"
      "} // %HostIrContainer\n";
  EventGraph old = run("%HostIrContainer { (T0_g[ iS0{4} ] (DeviceMesh{0 1})) -> (T1_g[ iS1{8} ] (DeviceMesh{0 1})) :\n" +
                           body,
                       2);
  EXPECT_TRUE(hasIssue(old, FindingKind::kExecutorAllocated));
  EXPECT_FALSE(hasIssue(old, FindingKind::kUnboundTensor));
  EXPECT_TRUE(hasIssue(old, FindingKind::kUnprintedDtype));
  EventGraph later =
      run("%HostIrContainer { (T0_g_float[iS0{4}] (DeviceMesh{0 1})) -> (T1_g_float[iS1{8}] (DeviceMesh{0 1})) :\n" +
              body,
          2);
  EXPECT_TRUE(hasIssue(later, FindingKind::kUnboundTensor));
  EXPECT_FALSE(hasIssue(later, FindingKind::kExecutorAllocated));
  for (const Issue& i : old.issues)
    if (i.kind == FindingKind::kUnprintedDtype) EXPECT_THAT(i.message, HasSubstr("T0_g, T1_g"));
  EXPECT_EQ(severityOf(FindingKind::kExecutorAllocated), Severity::kNote);
}

TEST(SemanticsInterop, OpaqueKernelsAreNotedOncePerStatement) {
  std::string text =
      "%HostIrContainer { (T0_g_float[iS0{4}]) -> () :\n"
      "  FOR i1 from 0 to 3:\n"
      "    PostOnStream (HostUnit0, Inputs:{T0_g_float[iS0{4}], }, Outputs:{T1_g_float[iS1{4}], })\n"
      "    PostOnStream (HostUnit1, Inputs:{T0_g_float[iS0{4}], }, Outputs:{T2_g_float[iS2{4}], })\n"
      "\nHostUnit1: Inputs={T0_g_float[iS0{4}], } -> Outputs={T2_g_float[iS2{4}], }\n"
      "%kernel {\nT2_g_float[iS2{4}]\n   = relu(T0_g_float[iS0{4}]);\n} // %kernel\n"
      "} // %HostIrContainer\n";
  EventGraph g = run(text, 1);
  int notes = 0;
  for (const Issue& i : g.issues) {
    ASSERT_EQ(i.kind, FindingKind::kOpaqueKernel);
    EXPECT_THAT(i.message, HasSubstr("HostUnit0 is not printed"));
    ++notes;
  }
  EXPECT_EQ(notes, 1);
  EXPECT_EQ(ops(g, 0).size(), 6u);
}

}  // namespace
}  // namespace braid::sem
