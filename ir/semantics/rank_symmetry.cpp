#include "ir/semantics/rank_symmetry.h"

#include <map>
#include <sstream>

namespace braid::sem {

namespace {

bool mentionsRank(const Scalar& s) {
  auto names = s.freeSymbols();
  return names.count(kRank) > 0 || names.count(kDeviceIdxX) > 0;
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
        check(s, s.as<IfThenElse>()->predicate, "the branch predicate");
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

RankClasses rankClasses(const HostProgram& p, int64_t numRanks) {
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
  // Same teams, same communications: the signature of a rank is the list of the communication
  // statements it belongs to.
  std::vector<std::vector<int32_t>> member_of(static_cast<size_t>(rc.numRanks));
  int32_t index = 0;
  forEachStmt(p.body(), [&](const Stmt& s, int) {
    if (!s.is<Communication>()) return;
    for (int64_t r : s.as<Communication>()->team)
      if (r >= 0 && r < rc.numRanks) member_of[static_cast<size_t>(r)].push_back(index);
    ++index;
  });
  std::map<std::vector<int32_t>, int32_t> classes;
  for (int64_t r = 0; r < rc.numRanks; ++r) {
    auto [it, inserted] = classes.try_emplace(member_of[static_cast<size_t>(r)], 0);
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
