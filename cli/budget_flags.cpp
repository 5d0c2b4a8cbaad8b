#include "cli/budget_flags.h"

#include <limits>

#include "ir/error.h"
#include "ir/semantics/budget.h"

namespace braid::cli {

void addBudgetFlags(CLI::App& sub, BudgetFlags& f) {
  sub.add_option("--max-events", f.maxEvents,
                 "refuse programs that unroll into more device operations than this (default: the memory "
                 "budget / " + std::to_string(sem::kBytesPerEvent) + " bytes per event)")
      ->check(CLI::Range(int64_t{1}, std::numeric_limits<int64_t>::max()).description("a positive count"));
  sub.add_option("--max-memory", f.maxMemory,
                 "memory the event graph may take, e.g. 512M or 4G (default: half the machine's memory)")
      ->check([](const std::string& s) {
        try {
          sem::parseByteSize(s);
          return std::string();
        } catch (const Error& e) {
          return std::string(e.what());
        }
      });
}

int64_t applyBudgetFlags(const BudgetFlags& f) {
  sem::WorkBudget b;
  b.maxEvents = f.maxEvents;
  if (!f.maxMemory.empty()) b.maxMemoryBytes = sem::parseByteSize(f.maxMemory);
  sem::setWorkBudget(b);
  return b.maxMemoryBytes;
}

}  // namespace braid::cli
