#include "passes/team_branches.h"

namespace braid {

namespace {

// The mesh {0 1 ... n-1}, in order.
bool isRangeMesh(const DeviceMesh& mesh) {
  for (size_t i = 0; i < mesh.devices().size(); ++i)
    if (mesh.devices()[i] != static_cast<int64_t>(i)) return false;
  return true;
}

}  // namespace

Scalar teamPredicate(const DeviceMesh& mesh, ParallelType along, const std::vector<int64_t>& team) {
  const Scalar rank = Scalar::symbol(kDeviceIdxX);
  if (mesh.shape().size() == 2 && isRangeMesh(mesh) && !team.empty()) {
    const int64_t cols = mesh.shape()[1];
    if (along == ParallelType::kDIDx)  // a row: the devices with the same DIDy coordinate
      return Scalar::binary(ScalarOp::kEq, Scalar::binary(ScalarOp::kDiv, rank, Scalar(cols)),
                            Scalar(team.front() / cols));
    return Scalar::binary(ScalarOp::kEq, Scalar::binary(ScalarOp::kMod, rank, Scalar(cols)),
                          Scalar(team.front() % cols));
  }
  Scalar pred;
  for (size_t i = 0; i < team.size(); ++i) {
    Scalar is = Scalar::binary(ScalarOp::kEq, rank, Scalar(team[i]));
    pred = i == 0 ? is : Scalar::binary(ScalarOp::kOr, pred, is);
  }
  return pred;
}

void forEachTeam(const CommunicationInfo& info, const DeviceMesh& mesh, Scope& out,
                 const std::function<void(const std::vector<int64_t>& team, Scope& into)>& emit) {
  if (info.teams.size() <= 1) {
    emit(info.team, out);
    return;
  }
  for (const std::vector<int64_t>& team : info.teams) {
    auto branch = std::make_unique<IfThenElse>();
    branch->predicate = teamPredicate(mesh, info.along, team);
    emit(team, branch->thenBody);
    out.push_back(std::move(branch));
  }
}

}  // namespace braid
