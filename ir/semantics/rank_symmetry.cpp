#include "ir/semantics/rank_symmetry.h"

#include "ir/semantics/mesh_rule.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <sstream>
#include <unordered_map>

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

namespace {

// The signature walk of rankClasses, statement by statement for a set of ranks at once (rather
// than rank by rank over the whole program): a 2D mesh of 8192 ranks has thousands of branches,
// one per team, and each rank takes one of them. Appending to every rank's signature in statement
// order gives each rank the signature a walk of its own would.
class SignatureWalk {
 public:
  SignatureWalk(int64_t numRanks, int64_t ranksPerNode)
      : sig(static_cast<size_t>(numRanks)), ranksPerNode_(ranksPerNode), count_(static_cast<size_t>(numRanks), 0),
        posted_(static_cast<size_t>(numRanks)), mark_(static_cast<size_t>(numRanks), 0) {}

  void scope(const Scope& scope, const std::vector<int64_t>& ranks, bool branch) {
    // Buckets of `ranks` by the value of a rank-only expression E, for the branches `E == c` of
    // this scope (one evaluation per rank and expression, not per rank and branch).
    std::map<std::string, std::unordered_map<int64_t, std::vector<int64_t>>> byValue;
    for (const auto& st : scope) {
      const Stmt& s = *st;
      std::vector<int64_t> runs = running(s, ranks);
      if (s.is<ForLoop>()) {
        this->scope(s.as<ForLoop>()->body, runs, branch);
      } else if (s.is<IfThenElse>()) {
        const auto* b = s.as<IfThenElse>();
        if (onlyRank(b->predicate) && mentionsRank(b->predicate)) {
          // A branch has no tensors, so the mesh rule keeps all of the scope's ranks on it and the
          // buckets apply; the check keeps that true should the rule change.
          std::map<std::string, std::unordered_map<int64_t, std::vector<int64_t>>> own;
          std::vector<int64_t> taken = takenBy(b->predicate, runs, runs.size() == ranks.size() ? byValue : own);
          this->scope(b->thenBody, taken, true);
          if (!b->elseBody.empty()) this->scope(b->elseBody, without(runs, taken), true);
        } else {
          this->scope(b->thenBody, runs, branch);
          this->scope(b->elseBody, runs, branch);
        }
      } else if (s.is<Communication>()) {
        communication(s, runs, branch);
      } else if (s.is<Wait>() && branch) {
        for (int64_t r : runs) {
          auto& posted = posted_[static_cast<size_t>(r)];
          auto it = posted.find(s.as<Wait>()->id);
          push(r, {-3, it == posted.end() ? -1 : it->second});
        }
      } else if (branch) {
        for (int64_t r : runs) push(r, {reinterpret_cast<intptr_t>(&s)});
      }
    }
  }

  std::vector<std::vector<int64_t>> sig;  // per rank

 private:
  int64_t ranksPerNode_;
  std::vector<int64_t> count_;                                // communications posted, per rank
  std::vector<std::unordered_map<int, int64_t>> posted_;      // communication id -> position, per rank
  std::vector<char> mark_;                                    // scratch, all zero between uses

  void push(int64_t r, std::initializer_list<int64_t> values) {
    auto& v = sig[static_cast<size_t>(r)];
    v.insert(v.end(), values);
  }

  // The ranks of `ranks` that run `s` by the mesh rule (runsOnRank); the others record that
  // they skip it. Communications decide by their team (communication()).
  std::vector<int64_t> running(const Stmt& s, const std::vector<int64_t>& ranks) {
    if (s.is<Communication>()) return ranks;
    std::vector<TensorView*> tvs = s.is<CollectivePermute>() ? std::vector<TensorView*>{} : stmtTensors(s);
    bool everyRank = !s.is<CollectivePermute>() &&
                     (tvs.empty() || std::any_of(tvs.begin(), tvs.end(), [](const TensorView* tv) { return !tv->hasDeviceMesh(); }));
    if (everyRank) return ranks;
    std::vector<int64_t> runs;
    if (s.is<CollectivePermute>()) {
      for (int64_t r : ranks) (runsOnRank(s, r) ? runs.push_back(r) : skip(r, s));
      return runs;
    }
    std::vector<int64_t> marked;
    for (const TensorView* tv : tvs)
      for (int64_t d : tv->deviceMesh()->devices())
        if (d >= 0 && d < static_cast<int64_t>(mark_.size()) && !mark_[static_cast<size_t>(d)]) {
          mark_[static_cast<size_t>(d)] = 1;
          marked.push_back(d);
        }
    for (int64_t r : ranks) (mark_[static_cast<size_t>(r)] ? runs.push_back(r) : skip(r, s));
    for (int64_t d : marked) mark_[static_cast<size_t>(d)] = 0;
    return runs;
  }

  void skip(int64_t r, const Stmt& s) { push(r, {-4, reinterpret_cast<intptr_t>(&s)}); }

  // A communication counts for the ranks of its team: outside rank-dependent branches by
  // identity, inside one by its type, tensors and the shape of its team.
  void communication(const Stmt& s, const std::vector<int64_t>& runs, bool branch) {
    const auto* c = s.as<Communication>();
    for (int64_t m : c->team)
      if (m >= 0 && m < static_cast<int64_t>(mark_.size())) mark_[static_cast<size_t>(m)] = 1;
    std::vector<int64_t> shape;
    if (branch) {
      shape = {static_cast<int64_t>(c->type), c->input ? c->input->name() : -1, c->output ? c->output->name() : -1};
      std::vector<int64_t> team = c->team;
      std::sort(team.begin(), team.end());
      shape.push_back(static_cast<int64_t>(team.size()));
      for (int64_t m : team) {
        shape.push_back(m - team.front());
        if (ranksPerNode_ > 0) shape.push_back(m / ranksPerNode_ - team.front() / ranksPerNode_);
      }
    }
    for (int64_t r : runs) {
      if (!mark_[static_cast<size_t>(r)]) continue;
      posted_[static_cast<size_t>(r)][c->id] = count_[static_cast<size_t>(r)]++;
      auto& v = sig[static_cast<size_t>(r)];
      if (branch) {
        v.insert(v.end(), shape.begin(), shape.end());
      } else {
        v.push_back(reinterpret_cast<intptr_t>(&s));
      }
    }
    for (int64_t m : c->team)
      if (m >= 0 && m < static_cast<int64_t>(mark_.size())) mark_[static_cast<size_t>(m)] = 0;
  }

  // The ranks of `runs` for which the rank-only `predicate` holds. `E == c` (the branch of one
  // team of a 2D mesh) looks the ranks up in `byValue`, buckets of `runs` by E's value.
  std::vector<int64_t> takenBy(
      const Scalar& predicate, const std::vector<int64_t>& runs,
      std::map<std::string, std::unordered_map<int64_t, std::vector<int64_t>>>& byValue) {
    if (predicate.op() == ScalarOp::kEq && (predicate.lhs().isConst() || predicate.rhs().isConst())) {
      const Scalar& e = predicate.rhs().isConst() ? predicate.lhs() : predicate.rhs();
      int64_t c = *(predicate.rhs().isConst() ? predicate.rhs() : predicate.lhs()).constValue();
      auto [it, fresh] = byValue.try_emplace(e.str());
      if (fresh)
        for (int64_t r : runs) it->second[evalForRank(e, r)].push_back(r);
      auto bucket = it->second.find(c);
      return bucket == it->second.end() ? std::vector<int64_t>{} : bucket->second;
    }
    std::vector<int64_t> taken;
    for (int64_t r : runs)
      if (evalForRank(predicate, r) != 0) taken.push_back(r);
    return taken;
  }

  // `all` without the ranks of `some` (both ascending).
  static std::vector<int64_t> without(const std::vector<int64_t>& all, const std::vector<int64_t>& some) {
    std::vector<int64_t> out;
    std::set_difference(all.begin(), all.end(), some.begin(), some.end(), std::back_inserter(out));
    return out;
  }
};

}  // namespace

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
  SignatureWalk walk(numRanks, ranksPerNode);
  std::vector<int64_t> all(static_cast<size_t>(numRanks));
  for (int64_t r = 0; r < numRanks; ++r) all[static_cast<size_t>(r)] = r;
  walk.scope(p.body(), all, false);
  std::map<std::vector<int64_t>, int32_t> classes;
  for (int64_t r = 0; r < rc.numRanks; ++r) {
    auto [it, inserted] = classes.try_emplace(std::move(walk.sig[static_cast<size_t>(r)]), 0);
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
