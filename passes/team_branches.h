// Communications over sub-teams of a 2D mesh. A host program is one SPMD text for every rank, so
// a collective that runs within each row (or column) of the mesh is emitted once per team, each
// under `IF Manual ( <this rank is in the team> ):`, with the team as nvFuser prints it for its
// members. A rank posts only its own team's collective and waits only for what it posted (a Wait
// for a communication this rank did not post is an error).
#pragma once

#include <functional>
#include <vector>

#include "ir/host_ir.h"
#include "passes/communication_classifier.h"

namespace braid {

// `deviceIdx.x` is in `team`, a slice of `mesh` along `along`: `( ( deviceIdx.x / C ) == r )` for
// a row of the mesh {0 .. R*C-1} shaped [R, C], `( ( deviceIdx.x % C ) == c )` for a column,
// otherwise a disjunction of `( deviceIdx.x == d )`.
Scalar teamPredicate(const DeviceMesh& mesh, ParallelType along, const std::vector<int64_t>& team);

// Calls `emit(team, into)` for every team of `info`: with one team `into` is `out` itself;
// otherwise `into` is the then-branch of an `IF` on the team's predicate, appended to `out`.
void forEachTeam(const CommunicationInfo& info, const DeviceMesh& mesh, Scope& out,
                 const std::function<void(const std::vector<int64_t>& team, Scope& into)>& emit);

}  // namespace braid
