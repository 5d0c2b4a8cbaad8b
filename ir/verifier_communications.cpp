// Communication references and teams: every id a Wait can name belongs to one statement, every Wait names
// one (before it, or later in a loop that holds both: a pipeline waiting one iteration behind),
// rooted collectives have a root, teams are non-empty sets of devices within their tensors' meshes.
//
// Not here, because they depend on the rank, the iteration or the order of execution: a root
// outside its team (bad-root), a Wait a rank reaches without having posted the communication
// (wait-without-post), a missing or misplaced Wait (missing-wait, wait-on-wrong-stream), a
// StartCoalescing never closed (unclosed-coalescing), buffer sizes (communication-size).
#include <algorithm>
#include <map>
#include <set>

#include "ir/host_ir_text.h"
#include "ir/verifier_internal.h"

namespace braid::wellformed {

namespace {

std::string teamStr(const std::vector<int64_t>& team) {
  std::string s;
  for (int64_t d : team) s += (s.empty() ? "" : " ") + std::to_string(d);
  return "(" + s + ")";
}

void checkTeam(Context& c, const Stmt& s, const std::vector<int64_t>& team, const TensorView* in,
               const TensorView* out) {
  if (team.empty()) {
    c.report("team", &s, "the team is empty: a communication needs at least one device");
    return;
  }
  std::set<int64_t> seen;
  for (int64_t d : team) {
    if (d < 0) c.report("team", &s, "the team " + teamStr(team) + " names device " + std::to_string(d) + ", which is negative");
    if (!seen.insert(d).second)
      c.report("team", &s, "the team " + teamStr(team) + " names device " + std::to_string(d) + " twice");
  }
  // A member outside the meshes of both buffers holds neither of them (nvFuser's lowering builds
  // the team from those meshes). Buffers printed without a mesh say nothing.
  const TensorView* with_mesh[] = {in, out};
  std::vector<const DeviceMesh*> meshes;
  for (const TensorView* tv : with_mesh) {
    if (!tv) continue;
    if (!tv->hasDeviceMesh()) return;
    meshes.push_back(&*tv->deviceMesh());
  }
  if (meshes.empty()) return;
  for (int64_t d : team) {
    bool inside = std::any_of(meshes.begin(), meshes.end(), [&](const DeviceMesh* m) { return m->has(d); });
    if (!inside)
      c.report("team", &s,
               "the team " + teamStr(team) + " names device " + std::to_string(d) + ", which is in the mesh of neither " +
                   (in ? in->nameStr() + " " + in->deviceMesh()->str() : std::string()) +
                   (in && out ? " nor " : "") + (out ? out->nameStr() + " " + out->deviceMesh()->str() : std::string()));
  }
}

}  // namespace

void checkCommunications(Context& c) {
  const std::vector<const Stmt*>& stmts = c.statements();
  std::map<int, int> waitable;  // id -> the position of the statement that posts it
  for (int i = 0; i < static_cast<int>(stmts.size()); ++i) {
    const Stmt* s = stmts[static_cast<size_t>(i)];
    int id = 0;
    if (!isWaitable(*s, &id)) continue;
    auto [it, inserted] = waitable.emplace(id, i);
    const Stmt* first = stmts[static_cast<size_t>(it->second)];
    // A dump prints one IR node in each branch that posts it (one IF per team): the same
    // statement twice is one communication; two different ones under one id are not.
    if (!inserted && printStmt(c.program, *s) != printStmt(c.program, *first))
      c.report("communication", s,
               std::string(stmtKindName(s->kind())) + " reuses id " + std::to_string(id) + " of the different " +
                   stmtKindName(first->kind()) + " at " + where(*first) +
                   ": a Wait for that id could not tell them apart");
  }
  for (int i = 0; i < static_cast<int>(stmts.size()); ++i) {
    const Stmt* s = stmts[static_cast<size_t>(i)];
    if (s->is<Wait>()) {
      int id = s->as<Wait>()->id;
      auto it = waitable.find(id);
      if (it == waitable.end()) {
        c.report("communication", s,
                 "Wait for communication " + std::to_string(id) +
                     ", which no Communication, CollectivePermute, P2PCommunication or EndCoalescing of the program "
                     "defines");
      } else if (!c.visible(it->second, i)) {
        const Stmt* post = stmts[static_cast<size_t>(it->second)];
        c.report("communication", s,
                 "Wait for communication " + std::to_string(id) + ", which the " + stmtKindName(post->kind()) +
                     " at " + where(*post) +
                     " posts only later, outside any loop around this Wait (a Wait may name a communication later "
                     "in the body of a loop that holds both: the previous iteration posted it)");
      }
    }
    if (s->is<Communication>()) {
      const auto* m = s->as<Communication>();
      if (isRooted(m->type) && !m->root)
        c.report("communication", s, std::string("a ") + communicationTypeName(m->type) + " needs a root");
      if (!isRooted(m->type) && m->root)
        c.report("communication", s,
                 std::string("a ") + communicationTypeName(m->type) + " has no root, but this one names " + m->root->str());
      checkTeam(c, *s, m->team, m->input, m->output);
    }
    if (s->is<CollectivePermute>()) {
      const auto* m = s->as<CollectivePermute>();
      checkTeam(c, *s, m->team, m->input, m->output);
    }
  }
}

}  // namespace braid::wellformed
