// The copy-engine backend's signal steps (see signal_protocol.h).
#include "exec/signal_protocol.h"

namespace braid::exec::ce {

std::vector<Step> signalSteps(const Plan& plan) {
  std::vector<Step> steps;
  for (int64_t c : plan.consumers) steps.push_back({StepKind::kSignalReady, c, 0});
  for (int64_t p : plan.producers) steps.push_back({StepKind::kWaitReady, p, 0});
  for (size_t k = 0; k < plan.copies.size(); ++k) steps.push_back({StepKind::kCopy, -1, k});
  const bool twoPhases = !plan.gathers.empty();
  if (twoPhases) {
    if (plan.reduction.peerRows > 0) steps.push_back({StepKind::kReduce, -1, 0});
    for (int64_t c : plan.consumers) steps.push_back({StepKind::kSignalReduced, c, 0});
    for (int64_t p : plan.producers) steps.push_back({StepKind::kWaitReduced, p, 0});
    for (size_t k = 0; k < plan.gathers.size(); ++k) steps.push_back({StepKind::kGather, -1, k});
  }
  for (int64_t p : plan.producers) steps.push_back({StepKind::kSignalConsumed, p, 0});
  for (int64_t c : plan.consumers) steps.push_back({StepKind::kWaitConsumed, c, 0});
  if (!twoPhases && plan.reduction.peerRows > 0) steps.push_back({StepKind::kReduce, -1, 0});
  return steps;
}

}  // namespace braid::exec::ce
