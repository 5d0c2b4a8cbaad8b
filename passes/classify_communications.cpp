// Pass 4: every resharding expr must be exactly one lowerable communication
// (communication_classifier.h); a fusion where one is not fails here, before any host IR exists.
#include "passes/fusion_utils.h"
#include "passes/pass.h"

namespace braid {
namespace {

class ClassifyCommunications : public Pass {
 public:
  std::string name() const override { return "classify-communications"; }
  bool run(LoweringContext& ctx) override {
    ctx.communications.clear();
    for (const Expr* e : ctx.fusion.exprs()) {
      if (!isResharding(*e)) continue;
      CommunicationInfo info = classifyCommunication(*e);
      ctx.communications[e] = info;
      ctx.notes.push_back(tvLabel(e->output(0)) + ": " + info.str());
    }
    return !ctx.communications.empty();
  }
};

}  // namespace

std::unique_ptr<Pass> makeClassifyCommunicationsPass() { return std::make_unique<ClassifyCommunications>(); }

}  // namespace braid
