// Structural equality (and its reasons) and the JSON dump of host programs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ir/host_ir_text.h"

namespace braid {
namespace {

using ::testing::HasSubstr;

std::string examplePath(const char* name) { return std::string(BRAID_SOURCE_DIR) + "/examples/" + name; }

HostProgram parseExample(const char* name) { return parseHostProgramFile(examplePath(name)); }

TEST(HostIrEqual, SameFileIsEqualDifferentFilesAreNot) {
  HostProgram a = parseExample("stream_set_serialized.hir");
  HostProgram b = parseExample("stream_set_serialized.hir");
  HostProgram c = parseExample("stream_set_sync_loop.hir");
  std::string why;
  EXPECT_TRUE(structurallyEqual(a, b, &why)) << why;
  EXPECT_FALSE(structurallyEqual(a, c, &why));
  EXPECT_THAT(why, HasSubstr("body"));
}

// Changes one detail of the text and checks that equality notices it and names it.
TEST(HostIrEqual, ReasonsNameTheDifference) {
  const std::string base = R"(%HostIrContainer { (T0_g_float[iS0{i0}]) -> (T1_g_float[iS1{i0}]) :
  FOR i from 0 to 4:
    SetCurrentStream to Stream ( i % numberOfStreams )
    Communication 3 (type=Allreduce, team=(0 1), input=T0_g_float[iS0{i0}], output=T1_g_float[iS1{i0}], backend=NCCL)
    Wait Communication 3
} // %HostIrContainer
)";
  HostProgram a = parseHostProgram(base);
  struct Change {
    std::string from, to, reason;
  };
  std::vector<Change> changes = {
      {"team=(0 1)", "team=(0 1 2)", "team"},
      {"( i % numberOfStreams )", "( i % 4 )", "Stream ( i % numberOfStreams ) vs Stream ( i % 4 )"},
      {"from 0 to 4", "from 0 to 8", "stop"},
      {"type=Allreduce", "type=Allgather", "type"},
      {"backend=NCCL", "backend=UCC", "backend"},
      {"Allreduce, team", "Allreduce, red_op=max, team", "red_op"},
      {"T1_g_float[iS1{i0}]", "T1_g_float[iS1{i2}]", "T1_g_float[iS1{i0}] vs T1_g_float[iS1{i2}]"},
      {"    Wait Communication 3\n", "", "statements"},
  };
  for (const auto& c : changes) {
    SCOPED_TRACE(c.to);
    std::string text = base;
    size_t pos = text.find(c.from);
    ASSERT_NE(pos, std::string::npos);
    text.replace(pos, c.from.size(), c.to);
    HostProgram b = parseHostProgram(text);
    std::string why;
    EXPECT_FALSE(structurallyEqual(a, b, &why));
    EXPECT_THAT(why, HasSubstr(c.reason));
  }
}

TEST(HostIrEqual, RedOpAbsentMeansAdd) {
  HostProgram a;
  auto* t = a.tensors().newTensor({a.tensors().newIterDomain(8)}, DataType::kFloat);
  auto c = std::make_unique<Communication>();
  c->type = CommunicationType::kAllreduce;
  c->input = c->output = t;
  a.body().push_back(std::move(c));
  HostProgram b = parseHostProgram(print(a));
  EXPECT_TRUE(structurallyEqual(a, b));
}

TEST(HostIrJson, Structure) {
  HostProgram p = parseExample("ag_p2p_matmul_4ranks.hir");
  auto j = nlohmann::json::parse(toJson(p));
  EXPECT_EQ(j["inputs"], (nlohmann::json{"T0", "T1"}));
  EXPECT_EQ(j["outputs"], (nlohmann::json{"T6"}));
  const auto& t0 = j["tensors"][0];
  EXPECT_EQ(t0["name"], "T0");
  EXPECT_EQ(t0["dtype"], "float");
  EXPECT_EQ(t0["mem"], "global");
  EXPECT_EQ(t0["mesh"]["devices"], (nlohmann::json{0, 1, 2, 3}));
  EXPECT_EQ(t0["domain"][0]["parallel"], "deviceIdx.x");
  EXPECT_EQ(t0["domain"][1]["extent"], "ceilDiv(i0, 4)");
  EXPECT_EQ(t0["domain"][0]["rf"], false);
  const auto& stmts = j["statements"];
  ASSERT_EQ(stmts.size(), 5u);
  EXPECT_EQ(stmts[0]["kind"], "Allocate");
  EXPECT_EQ(stmts[0]["form"], "if_unbound");
  EXPECT_EQ(stmts[0]["line"], 2);
  const auto& loop = stmts[4];
  EXPECT_EQ(loop["kind"], "ForLoop");
  EXPECT_EQ(loop["stop"], "4");
  const auto& branch = loop["body"][2];
  EXPECT_EQ(branch["kind"], "IfThenElse");
  EXPECT_EQ(branch["predicate"], "( StreamIdx == deviceIdx.x )");
  EXPECT_EQ(branch["else"][1]["kind"], "P2PCommunication");
  EXPECT_EQ(branch["else"][1]["type"], "recv");
  EXPECT_EQ(branch["else"][1]["peer"], "StreamIdx");
  EXPECT_EQ(branch["else"][4]["kind"], "Wait");
  EXPECT_EQ(branch["else"][4]["id"], 45);
  EXPECT_EQ(loop["body"][4]["op"]["op"], "matmul");
}

TEST(HostIrJson, HostUnitsAndAliases) {
  HostProgram p = parseExample("hostunit_broadcast_relu.hir");
  auto j = nlohmann::json::parse(toJson(p));
  ASSERT_EQ(j["host_units"].size(), 1u);
  EXPECT_EQ(j["host_units"][0]["ops"][0]["op"], "broadcast");
  EXPECT_EQ(j["host_units"][0]["ops"][0]["flags"], (nlohmann::json{true, false}));
  HostProgram q = parseExample("stream_inplace_square_alias.hir");
  auto k = nlohmann::json::parse(toJson(q));
  EXPECT_EQ(k["aliases"][0]["output"], "T1");
  EXPECT_EQ(k["aliases"][0]["input"], "T0");
}

TEST(HostIrJson, EveryExampleDumps) {
  for (const char* f : {"ag_matmul_8ranks.hir", "linear_allreduce_rowparallel.hir", "matmul_reducescatter_4ranks.hir",
                        "stream_add_gelu_modern.hir", "stream_transpose_sum.hir", "broadcast_allgather_4ranks.hir"}) {
    SCOPED_TRACE(f);
    auto j = nlohmann::json::parse(toJson(parseExample(f)));
    EXPECT_FALSE(j["statements"].empty());
  }
}

}  // namespace
}  // namespace braid
