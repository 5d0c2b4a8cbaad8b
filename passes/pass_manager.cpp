#include "passes/pass_manager.h"

#include <cstdlib>
#include <iostream>

#include "ir/error.h"
#include "ir/host_ir_text.h"
#include "ir/verifier.h"
#include "passes/fusion_utils.h"
#include "passes/host_builder.h"

namespace braid {

PassManager::PassManager() {
  const char* env = std::getenv("BRAID_DUMP");
  dump_ = env != nullptr && std::string(env).find("passes") != std::string::npos;
}

std::vector<std::string> PassManager::names() const {
  std::vector<std::string> n;
  for (const auto& p : passes_) n.push_back(p->name());
  return n;
}

void verifyAfterPass(const LoweringContext& ctx, const std::string& pass) {
  if (!ctx.hasProgram) return;
  WellFormednessOptions o;
  o.allocationsPlaced = ctx.allocationsPlaced;
  o.deallocationsPlaced = ctx.deallocationsPlaced;
  verifyWellFormed(ctx.program, o, "internal lowering error after pass '" + pass + "'");
}

void PassManager::run(LoweringContext& ctx) {
  std::ostream& out = out_ ? *out_ : std::cerr;
  size_t notes_seen = ctx.notes.size();
  for (const auto& pass : passes_) {
    bool changed = pass->run(ctx);
    verifyAfterPass(ctx, pass->name());
    if (dump_) {
      out << "// ===== after pass " << pass->name() << (changed ? "" : " (no change)") << " =====\n";
      for (size_t i = notes_seen; i < ctx.notes.size(); ++i) out << "// " << ctx.notes[i] << "\n";
      notes_seen = ctx.notes.size();
      if (ctx.hasProgram) out << print(ctx.program);
      else out << printFusion(ctx.fusion);
    }
    for (const auto& hook : hooks_) hook(pass->name(), changed, ctx);
  }
}

std::vector<std::unique_ptr<Pass>> standardPasses() {
  std::vector<std::unique_ptr<Pass>> v;
  v.push_back(makePropagateShardingPass());
  v.push_back(makeDecomposeReshardingsPass());
  v.push_back(makeFinalizeAllocationPass());
  v.push_back(makeSegmentationPass());
  v.push_back(makeClassifyCommunicationsPass());
  v.push_back(makeHostLoweringPass());
  v.push_back(makeStreamLoweringPass());
  v.push_back(makeForwardOwnShardPass());
  v.push_back(makeLowerCommunicationsPass());
  v.push_back(makeAllocateAndDeallocatePass());
  v.push_back(makeAssignStreamsPass());
  v.push_back(makeSelectCommBackendPass());
  return v;
}

void addStandardPasses(PassManager& pm) {
  for (auto& p : standardPasses()) pm.add(std::move(p));
}

}  // namespace braid
