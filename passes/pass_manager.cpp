#include "passes/pass_manager.h"

#include <cstdlib>
#include <iostream>
#include <set>
#include <sstream>

#include "ir/error.h"
#include "ir/host_ir_text.h"
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

void checkWellFormed(const LoweringContext& ctx, const std::string& after_pass) {
  if (!ctx.hasProgram) return;
  const HostProgram& p = ctx.program;
  auto fail = [&](const std::string& what) {
    throw Error("internal lowering error after pass '" + after_pass + "': " + what);
  };
  std::set<const TensorView*> owned;
  std::set<int> names;
  for (const TensorView* tv : p.tensors().tensors()) {
    owned.insert(tv);
    if (!names.insert(tv->name()).second) fail("tensor name T" + std::to_string(tv->name()) + " is used twice");
  }
  std::set<int> ids;
  std::set<int> waitable;
  forEachStmt(p.body(), [&](const Stmt& s, int) {
    for (const TensorView* t : stmtTensors(s))
      if (t == nullptr || !owned.count(t)) fail(std::string(stmtKindName(s.kind())) + " names a tensor outside the program");
    int id = -1;
    if (s.is<Communication>()) id = s.as<Communication>()->id;
    if (s.is<P2PCommunication>()) id = s.as<P2PCommunication>()->id;
    if (s.is<EndCoalescing>()) id = s.as<EndCoalescing>()->id;
    if (id >= 0) {
      if (!ids.insert(id).second) fail("communication id " + std::to_string(id) + " is used twice");
      waitable.insert(id);
    }
    if (s.is<Wait>() && !waitable.count(s.as<Wait>()->id))
      fail("Wait names communication " + std::to_string(s.as<Wait>()->id) + ", which is not issued before it");
  });
  for (const auto& [id, unit] : p.hostUnits())
    if (!unit.fusion) fail("HostUnit" + std::to_string(id) + " has no fusion");
}

void PassManager::run(LoweringContext& ctx) {
  std::ostream& out = out_ ? *out_ : std::cerr;
  size_t notes_seen = ctx.notes.size();
  for (const auto& pass : passes_) {
    bool changed = pass->run(ctx);
    checkWellFormed(ctx, pass->name());
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
  v.push_back(makeLowerCommunicationsPass());
  v.push_back(makeAllocateAndDeallocatePass());
  v.push_back(makeAssignStreamsPass());
  return v;
}

void addStandardPasses(PassManager& pm) {
  for (auto& p : standardPasses()) pm.add(std::move(p));
}

}  // namespace braid
