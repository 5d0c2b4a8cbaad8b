// Runs lowering passes in order over one LoweringContext. After every pass it runs the IR's
// verifier on the host program (once it exists), and with dumping on (BRAID_DUMP=passes or
// `braid lower --dump-passes`) prints the fusion or the host program after each pass.
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "passes/pass.h"

namespace braid {

// Instrumentation called after every pass (and after the verifier) with the pass's
// name, whether it changed anything and the context; e.g. `braid lower --verify-each` runs the
// verifier from one. Passes never see hooks; a hook that throws stops the pipeline.
using AfterPassHook = std::function<void(const std::string& pass, bool changed, const LoweringContext& ctx)>;

class PassManager {
 public:
  PassManager();
  void add(std::unique_ptr<Pass> p) { passes_.push_back(std::move(p)); }
  void addAfterPassHook(AfterPassHook h) { hooks_.push_back(std::move(h)); }
  // Dumps go to `out` (std::cerr when null). Dumping is on when BRAID_DUMP contains "passes".
  void setDump(bool on, std::ostream* out = nullptr) {
    dump_ = on;
    out_ = out;
  }
  bool dumping() const { return dump_; }
  void run(LoweringContext& ctx);
  std::vector<std::string> names() const;

 private:
  std::vector<std::unique_ptr<Pass>> passes_;
  std::vector<AfterPassHook> hooks_;
  bool dump_ = false;
  std::ostream* out_ = nullptr;
};

// The IR's verifier (ir/verifier.h) on the program a pass left, once there is one, with the
// invariants of that stage (allocations once the allocation pass has placed them). Throws
// WellFormednessError naming the pass and every problem with its statement.
void verifyAfterPass(const LoweringContext& ctx, const std::string& pass);

// The standard pipeline, in order.
std::vector<std::unique_ptr<Pass>> standardPasses();
void addStandardPasses(PassManager& pm);

}  // namespace braid
