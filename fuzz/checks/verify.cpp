// Fuzz check: the bounded verifier on parsed programs: every free extent bound to a small value, at
// most 8 ranks and 4 streams, and an event cap, so one input stays fast. Bad input must be an
// Error; anything else (a crash, a sanitizer report, another exception) is a bug.
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/checks/checks.h"
#include "ir/error.h"
#include "ir/host_ir_text.h"
#include "ir/semantics/interpreter.h"
#include "verify/checker.h"

namespace braid::fuzz {

namespace {
constexpr int64_t kMaxRanks = 8;
constexpr int64_t kMaxEvents = 20'000;
}  // namespace

void checkVerify(std::string_view text) {
  try {
    HostProgram p = parseHostProgram(text, "fuzz.hir");
    int64_t ranks = sem::ranksFromProgram(p);
    if (ranks > kMaxRanks) return;  // a large mesh is the budget's business, not this target's
    // Extents from the input's length, so the corpus explores a few sizes: 1..16.
    int64_t extent = 1 + static_cast<int64_t>(text.size() % 16);
    sem::SemanticsOptions so;
    for (const std::string& name : sem::unboundSymbols(p, {})) so.bindings[name] = extent;
    so.numRanks = ranks;
    so.numberOfStreams = 1 + static_cast<int64_t>(text.size() % 4);
    so.maxEvents = kMaxEvents;
    // What verifyProgram does, with the event cap it does not expose.
    sem::EventGraph g = sem::buildEventGraph(p, so);
    verify::VerifyOptions o;
    o.bindings = so.bindings;
    o.ranks = ranks;
    o.streams = so.numberOfStreams;
    verify::VerifyResult r = verify::checkEventGraph(g, o);
    (void)verify::formatReport(r);
    (void)verify::formatJson(r);
  } catch (const Error&) {
  }
}

}  // namespace braid::fuzz
