// The IR's verifier in the pipeline: the pass manager runs it after every pass (with the
// allocation invariants once the allocation pass has placed them) and names the pass that broke
// the program; every catalog workload under protocols A, B and C (a sample of 1-8 ranks x 1-8
// streams) is well formed, lowered and after a round trip through its text.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "ir/host_ir_text.h"
#include "ir/verifier.h"
#include "lowering_test_util.h"
#include "passes/pass_manager.h"
#include "tests/verify/catalog_mutations.h"

namespace braid {
namespace {

using ::testing::HasSubstr;
using namespace testing_util;

WellFormednessOptions afterAllocation() {
  WellFormednessOptions o;
  o.allocationsPlaced = true;
  o.deallocationsPlaced = true;
  return o;
}

TEST(VerifierInPipeline, CatalogWorkloadsAreWellFormed) {
  int checked = 0;
  for (const std::string& name : braid::testing::catalogNames())
    for (StreamProtocol protocol :
         {StreamProtocol::kSeparateSyncLoop, StreamProtocol::kInLoopSync, StreamProtocol::kPerIterationJoin})
      for (auto [d, s] : {std::pair<int64_t, int64_t>{1, 1}, {1, 8}, {2, 3}, {3, 2}, {4, 4}, {8, 1}, {8, 8}}) {
        braid::testing::Config c;
        c.devices = d;
        c.streams = s;
        c.protocol = protocol;
        auto p = braid::testing::lowerWorkload(name, c);
        if (!p) continue;
        SCOPED_TRACE(braid::testing::configStr(name, c));
        std::vector<WellFormednessProblem> problems = findWellFormednessProblems(*p, afterAllocation());
        EXPECT_TRUE(problems.empty()) << problems.front().str();
        HostProgram parsed = parseHostProgram(print(*p), name + ".hir");
        problems = findWellFormednessProblems(parsed, afterAllocation());
        EXPECT_TRUE(problems.empty()) << problems.front().str();
        ++checked;
      }
  EXPECT_GE(checked, 100);
}

// A pass that breaks the program: the pass manager stops after it, naming it and the statement.
class BreakingPass : public Pass {
 public:
  explicit BreakingPass(std::function<void(HostProgram&)> f) : f_(std::move(f)) {}
  std::string name() const override { return "breaking-pass"; }
  bool run(LoweringContext& ctx) override {
    f_(ctx.program);
    return true;
  }

 private:
  std::function<void(HostProgram&)> f_;
};

std::string runBroken(std::function<void(HostProgram&)> breakIt, bool afterAllocationPass) {
  Fusion f;
  singleStreamSet(f);
  LoweringContext ctx(f, protocolA(), 1);
  PassManager pm;
  for (auto& pass : standardPasses()) {
    bool allocation = pass->name() == "allocate-and-deallocate";
    if (allocation && !afterAllocationPass) pm.add(std::make_unique<BreakingPass>(breakIt));
    pm.add(std::move(pass));
    if (allocation && afterAllocationPass) pm.add(std::make_unique<BreakingPass>(breakIt));
  }
  try {
    pm.run(ctx);
  } catch (const WellFormednessError& e) {
    return e.what();
  }
  return "";
}

TEST(VerifierInPipeline, NamesThePassThatBrokeTheProgram) {
  std::string msg = runBroken(
      [](HostProgram& p) {
        auto w = std::make_unique<Wait>();
        w->id = 77;
        p.body().push_back(std::move(w));
      },
      false);
  EXPECT_THAT(msg, HasSubstr("internal lowering error after pass 'breaking-pass'"));
  EXPECT_THAT(msg, HasSubstr("[communication] Wait for communication 77"));
  EXPECT_THAT(msg, HasSubstr("[statement: Wait Communication 77]"));
}

// Before the allocation pass tensors are used with no ALLOCATE, which the allocation invariants
// would refuse; the pass says when they hold, and from then on a double free is an error.
TEST(VerifierInPipeline, AllocationInvariantsHoldFromTheAllocationPassOn) {
  Fusion f;
  singleStreamSet(f);
  LoweringContext ctx(f, protocolA(), 1);
  PassManager pm;
  std::vector<std::unique_ptr<Pass>> passes = standardPasses();
  size_t i = 0;
  while (passes[i]->name() != "allocate-and-deallocate") pm.add(std::move(passes[i++]));
  pm.run(ctx);
  EXPECT_FALSE(ctx.allocationsPlaced);
  EXPECT_FALSE(findWellFormednessProblems(ctx.program, afterAllocation()).empty()) << print(ctx.program);
  passes[i]->run(ctx);
  EXPECT_TRUE(ctx.allocationsPlaced);
  std::vector<WellFormednessProblem> problems = findWellFormednessProblems(ctx.program, afterAllocation());
  EXPECT_TRUE(problems.empty()) << problems.front().str();

  std::string msg = runBroken(
      [](HostProgram& p) {
        for (int n = 0; n < 2; ++n) {
          auto d = std::make_unique<Deallocate>();
          d->tv = p.outputs().front();
          p.body().push_back(std::move(d));
        }
      },
      true);
  EXPECT_THAT(msg, HasSubstr("after pass 'breaking-pass'"));
  EXPECT_THAT(msg, HasSubstr("[allocation] deallocates"));
  EXPECT_THAT(msg, HasSubstr("a second time"));
}

}  // namespace
}  // namespace braid
