#include "ir/semantics/mesh_rule.h"

#include <algorithm>

namespace braid::sem {

bool runsOnRank(const Stmt& s, int64_t rank) {
  if (s.is<Communication>()) {
    const auto& team = s.as<Communication>()->team;
    return std::find(team.begin(), team.end(), rank) != team.end();
  }
  if (s.is<CollectivePermute>()) {
    const auto& team = s.as<CollectivePermute>()->team;
    return std::find(team.begin(), team.end(), rank) != team.end();
  }
  std::vector<TensorView*> tvs = stmtTensors(s);
  if (tvs.empty()) return true;
  for (const TensorView* tv : tvs)
    if (!tv->hasDeviceMesh() || tv->deviceMesh()->has(rank)) return true;
  return false;
}

}  // namespace braid::sem
