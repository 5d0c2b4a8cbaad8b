// `--max-events N` and `--max-memory SIZE`, shared by `braid verify`, `sim` and `run`: the budget
// every event graph is built under (ir/semantics/budget.h). A program whose estimated events
// exceed it is refused before anything runs.
#pragma once

#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

namespace braid::cli {

struct BudgetFlags {
  int64_t maxEvents = 0;  // 0: from the memory budget
  std::string maxMemory;  // "" : half the machine's memory
};

void addBudgetFlags(CLI::App& sub, BudgetFlags& flags);
// Installs the budget for this process (sem::setWorkBudget); throws Error for a malformed size.
// Returns the memory budget in bytes (0 when not given).
int64_t applyBudgetFlags(const BudgetFlags& flags);

}  // namespace braid::cli
