#include "ir/semantics/rank_symmetry.h"

#include "ir/semantics/mesh_rule.h"

#include <algorithm>
#include <functional>
#include <map>
#include <sstream>

namespace braid::sem {

namespace {

bool mentionsRank(const Scalar& s) {
  auto names = s.freeSymbols();
  return names.count(kRank) > 0 || names.count(kDeviceIdxX) > 0;
}

// A predicate that names nothing but the rank (`( deviceIdx.x / 4 ) == 1`, one branch per team
// of a 2D mesh): every rank's choice is known without running anything.
bool onlyRank(const Scalar& s) {
  for (const std::string& n : s.freeSymbols())
    if (n != kRank && n != kDeviceIdxX) return false;
  return true;
}

int64_t evalForRank(const Scalar& s, int64_t rank) {
  Bindings b = {{kRank, rank}, {kDeviceIdxX, rank}};
  return s.evaluate(b);
}

std::string where(const Stmt& s) {
  return s.loc.known() ? "line " + std::to_string(s.loc.line) : std::string("statement");
}

// The first rank-dependent choice that changes what a rank does ("" when there is none).
std::string rankDependence(const HostProgram& p, int64_t numRanks) {
  for (const TensorView* tv : p.tensors().tensors())
    for (const IterDomain* id : tv->loop())
      if (mentionsRank(id->extent())) return "the size of " + tv->nameStr() + " depends on the rank";
  std::string why;
  auto check = [&](const Stmt& s, const Scalar& e, const std::string& what) {
    if (why.empty() && mentionsRank(e)) why = where(s) + ": " + what + " " + e.str() + " depends on the rank";
  };
  auto streamRef = [&](const Stmt& s, const StreamRef& r) {
    if (r.kind == StreamRef::Kind::kIndexed) check(s, r.index, "the stream key");
  };
  forEachStmt(p.body(), [&](const Stmt& s, int) {
    switch (s.kind()) {
      case StmtKind::kForLoop:
        check(s, s.as<ForLoop>()->begin(), "the loop bound");
        check(s, s.as<ForLoop>()->end(), "the loop bound");
        break;
      case StmtKind::kIfThenElse:
        if (!onlyRank(s.as<IfThenElse>()->predicate)) check(s, s.as<IfThenElse>()->predicate, "the branch predicate");
        break;
      case StmtKind::kSetCurrentStream:
        streamRef(s, s.as<SetCurrentStream>()->stream);
        break;
      case StmtKind::kSynchronize:
        streamRef(s, s.as<Synchronize>()->stream);
        break;
      case StmtKind::kAliasSelect:
        check(s, s.as<AliasSelect>()->index, "the view index");
        break;
      case StmtKind::kShardByStream:
        check(s, s.as<ShardByStream>()->streamIndex, "the shard index");
        break;
      case StmtKind::kP2PCommunication:
      case StmtKind::kCollectivePermute:
        if (why.empty() && numRanks > 1)
          why = where(s) + ": P2P communications pair ranks with specific peers";
        break;
      default:
        break;
    }
  });
  return why;
}

}  // namespace

std::string RankClasses::members(int32_t c, int limit) const {
  std::ostringstream os;
  int ranges = 0;
  int64_t r = 0;
  while (r < numRanks) {
    if (classOf[static_cast<size_t>(r)] != c) {
      ++r;
      continue;
    }
    int64_t end = r;
    while (end + 1 < numRanks && classOf[static_cast<size_t>(end + 1)] == c) ++end;
    if (ranges == limit) {
      os << ", ...";
      break;
    }
    os << (ranges ? ", " : "") << r;
    if (end > r) os << "-" << end;
    ++ranges;
    r = end + 1;
  }
  return os.str();
}

RankClasses singletonClasses(int64_t numRanks) {
  RankClasses rc;
  rc.numRanks = std::max<int64_t>(numRanks, 1);
  rc.classOf.resize(static_cast<size_t>(rc.numRanks));
  rc.classSize.assign(static_cast<size_t>(rc.numRanks), 1);
  for (int64_t r = 0; r < rc.numRanks; ++r) {
    rc.representatives.push_back(r);
    rc.classOf[static_cast<size_t>(r)] = static_cast<int32_t>(r);
  }
  return rc;
}

RankClasses rankClasses(const HostProgram& p, int64_t numRanks, int64_t ranksPerNode) {
  numRanks = std::max<int64_t>(numRanks, 1);
  std::string why = numRanks > 1 ? rankDependence(p, numRanks) : "";
  if (!why.empty()) {
    RankClasses rc = singletonClasses(numRanks);
    rc.notFoldedBecause = why;
    return rc;
  }
  RankClasses rc;
  rc.numRanks = numRanks;
  rc.classOf.assign(static_cast<size_t>(numRanks), 0);
  // A rank's signature is what it executes: statements outside rank-dependent branches are the
  // same for all; inside one, a communication counts by its type, tensors and the shape of its
  // team (members relative to the team's first, and how they spread over nodes), so the ranks of
  // the rows of a 2D mesh, each in its own row's collective, fall in one class. Other statements
  // in such a branch count by identity (ranks that take different branches differ).
  std::vector<std::vector<int64_t>> signature(static_cast<size_t>(rc.numRanks));
  for (int64_t r = 0; r < rc.numRanks; ++r) {
    std::vector<int64_t>& sig = signature[static_cast<size_t>(r)];
    std::map<int, int64_t> posted;  // communication id -> its position among this rank's
    int64_t count = 0;
    std::function<void(const Scope&, bool)> walk = [&](const Scope& scope, bool branch) {
      for (const auto& st : scope) {
        const Stmt& s = *st;
        if (!s.is<Communication>() && !runsOnRank(s, r)) {  // the mesh rule leaves this rank out
          sig.push_back(-4);
          sig.push_back(reinterpret_cast<intptr_t>(&s));
          continue;
        }
        if (s.is<ForLoop>()) {
          walk(s.as<ForLoop>()->body, branch);
        } else if (s.is<IfThenElse>()) {
          const auto* b = s.as<IfThenElse>();
          if (onlyRank(b->predicate) && mentionsRank(b->predicate)) {
            bool taken = evalForRank(b->predicate, r) != 0;
            walk(taken ? b->thenBody : b->elseBody, true);
          } else {
            walk(b->thenBody, branch);
            walk(b->elseBody, branch);
          }
        } else if (s.is<Communication>()) {
          const auto* c = s.as<Communication>();
          if (std::find(c->team.begin(), c->team.end(), r) == c->team.end()) continue;
          posted[c->id] = count++;
          if (!branch) {
            sig.push_back(reinterpret_cast<intptr_t>(&s));
            continue;
          }
          sig.push_back(static_cast<int64_t>(c->type));
          sig.push_back(c->input ? c->input->name() : -1);
          sig.push_back(c->output ? c->output->name() : -1);
          std::vector<int64_t> team = c->team;
          std::sort(team.begin(), team.end());
          sig.push_back(static_cast<int64_t>(team.size()));
          for (int64_t m : team) {
            sig.push_back(m - team.front());
            if (ranksPerNode > 0) sig.push_back(m / ranksPerNode - team.front() / ranksPerNode);
          }
        } else if (s.is<Wait>() && branch) {
          auto it = posted.find(s.as<Wait>()->id);
          sig.push_back(-3);
          sig.push_back(it == posted.end() ? -1 : it->second);
        } else if (branch) {
          sig.push_back(reinterpret_cast<intptr_t>(&s));
        }
      }
    };
    walk(p.body(), false);
  }
  std::map<std::vector<int64_t>, int32_t> classes;
  for (int64_t r = 0; r < rc.numRanks; ++r) {
    auto [it, inserted] = classes.try_emplace(std::move(signature[static_cast<size_t>(r)]), 0);
    if (inserted) {
      it->second = static_cast<int32_t>(rc.representatives.size());
      rc.representatives.push_back(r);
      rc.classSize.push_back(0);
    }
    rc.classOf[static_cast<size_t>(r)] = it->second;
    ++rc.classSize[static_cast<size_t>(it->second)];
  }
  return rc;
}

}  // namespace braid::sem
