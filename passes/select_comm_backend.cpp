// Pass select-comm-backend: every communication the lowering created runs on the transport the
// options choose (LoweringOptions::commBackend). The earlier passes create NCCL communications;
// this pass is the one place that decides the transport, so the printed program, the verifier, the
// simulator and the executor all read it from the statements (`backend=CUDA`).
#include "passes/pass.h"

namespace braid {
namespace {

// Sets `b` on every communication of `scope`, descending into loops and branches; counts them.
int64_t assign(Scope& scope, CommBackend b) {
  int64_t n = 0;
  for (StmtPtr& s : scope) {
    switch (s->kind()) {
      case StmtKind::kCommunication: s->as<Communication>()->backend = b; ++n; break;
      case StmtKind::kP2PCommunication: s->as<P2PCommunication>()->backend = b; ++n; break;
      case StmtKind::kCollectivePermute: s->as<CollectivePermute>()->backend = b; ++n; break;
      case StmtKind::kShareMemHandles:
        for (P2PCommunication& c : s->as<ShareMemHandles>()->communications) c.backend = b;
        break;
      case StmtKind::kForLoop: n += assign(s->as<ForLoop>()->body, b); break;
      case StmtKind::kIfThenElse:
        n += assign(s->as<IfThenElse>()->thenBody, b);
        n += assign(s->as<IfThenElse>()->elseBody, b);
        break;
      default: break;
    }
  }
  return n;
}

class SelectCommBackend : public Pass {
 public:
  std::string name() const override { return "select-comm-backend"; }
  bool run(LoweringContext& ctx) override {
    const CommBackend b = ctx.options.commBackend;
    if (!ctx.hasProgram || b == CommBackend::kNccl) return false;
    const int64_t n = assign(ctx.program.body(), b);
    if (n == 0) return false;
    ctx.notes.push_back(std::to_string(n) + " communication statement" + (n == 1 ? "" : "s") + " on backend=" +
                        commBackendName(b));
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> makeSelectCommBackendPass() { return std::make_unique<SelectCommBackend>(); }

}  // namespace braid
