// The mutations of issue 9 that break what a communication, a collective or an allocation
// promises, each applied to a lowered catalog program and saying which finding it must cause and
// which statements that finding must name: drop a Wait; free a communication's buffer before its
// Wait; use a fresh allocation on another stream without synchronization; a root outside the team;
// a Scatter whose root holds one chunk; a permuted view handed to a collective; swap two
// collectives on half the ranks (on the program's text: each branch prints the same statements).
#pragma once

#include <algorithm>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "ir/ops.h"
#include "ir/semantics/finding_kind.h"
#include "tests/verify/catalog_mutations.h"

namespace braid::testing {

// The finding a mutant must get: one of `kinds`, whose sites include a statement at each of
// `lines` (with a rank and a stream).
struct Located {
  std::vector<sem::FindingKind> kinds;
  std::vector<int> lines;
};

using LocatedMutation = std::function<std::optional<Located>(HostProgram&, size_t k, const Config&)>;

// The waitable statement `id` names (Communication, P2P, EndCoalescing, CollectivePermute).
inline const Stmt* waitableWithId(const HostProgram& p, int id) {
  const Stmt* found = nullptr;
  forEachStmt(p.body(), [&](const Stmt& s, int) {
    int sid = 0;
    if (!found && isWaitable(s, &sid) && sid == id) found = &s;
  });
  return found;
}

inline std::optional<Located> dropWait(HostProgram& p, size_t k, const Config&) {
  size_t n = 0;
  for (const Pos& pos : positions(p)) {
    if (!at(pos)->is<Wait>() || n++ != k) continue;
    const Stmt* comm = waitableWithId(p, at(pos)->as<Wait>()->id);
    pos.scope->erase(pos.scope->begin() + static_cast<long>(pos.index));
    return Located{{sem::FindingKind::kMissingWait, sem::FindingKind::kUnwaitedCommunication}, {comm->loc.line}};
  }
  return std::nullopt;
}

// The buffers a communication reads (nothing but the communication uses them after it).
inline std::vector<const TensorView*> commInputs(const Stmt& s) {
  if (s.is<Communication>()) return {s.as<Communication>()->input};
  if (s.is<CollectivePermute>()) return {s.as<CollectivePermute>()->input};
  if (s.is<P2PCommunication>() && s.as<P2PCommunication>()->type == P2PType::kSend)
    return {s.as<P2PCommunication>()->buffer};
  return {};
}

// A Deallocate of a buffer a communication reads moves before the communication's Wait.
inline std::optional<Located> freeBeforeWait(HostProgram& p, size_t k, const Config&) {
  size_t n = 0;
  for (const Pos& pos : positions(p)) {
    if (!at(pos)->is<Deallocate>()) continue;
    const TensorView* tv = at(pos)->as<Deallocate>()->tv;
    Scope& sc = *pos.scope;
    for (size_t w = pos.index; w-- > 0;) {
      if (!sc[w]->is<Wait>()) continue;
      const Stmt* comm = waitableWithId(p, sc[w]->as<Wait>()->id);
      std::vector<const TensorView*> bufs = comm ? commInputs(*comm) : std::vector<const TensorView*>{};
      if (std::find(bufs.begin(), bufs.end(), tv) == bufs.end()) continue;
      if (n++ != k) break;
      Located l{{sem::FindingKind::kMissingWait, sem::FindingKind::kUnsafeReuse}, {comm->loc.line, at(pos)->loc.line}};
      StmtPtr d = std::move(sc[pos.index]);
      sc.erase(sc.begin() + static_cast<long>(pos.index));
      sc.insert(sc.begin() + static_cast<long>(w), std::move(d));
      return l;
    }
  }
  return std::nullopt;
}

// A fresh ALLOCATE on a worker stream moves to the main stream (SetCurrentStream there and back),
// after the worker's last wait on the main stream: the block may be one the main stream just
// freed, and nothing orders the worker's use after that point.
inline std::optional<Located> freshAllocationOnAnotherStream(HostProgram& p, size_t k, const Config&) {
  std::string main_stream;
  for (const auto& s : p.body())
    if (s->is<GetCurrentStream>()) main_stream = s->as<GetCurrentStream>()->stream.name;
  if (main_stream.empty()) return std::nullopt;
  size_t n = 0;
  for (const Pos& pos : positions(p)) {
    if (!at(pos)->is<Allocate>() || at(pos)->as<Allocate>()->legacy) continue;
    Scope& sc = *pos.scope;
    const SetCurrentStream* worker = nullptr;
    for (size_t j = 0; j < pos.index; ++j)
      if (sc[j]->is<SetCurrentStream>()) worker = sc[j]->as<SetCurrentStream>();
    if (!worker || worker->stream.kind != StreamRef::Kind::kIndexed || n++ != k) continue;
    Located l{{sem::FindingKind::kUnsafeReuse}, {at(pos)->loc.line}};
    auto to_main = std::make_unique<SetCurrentStream>();
    to_main->stream = StreamRef::named(main_stream);
    auto back = std::make_unique<SetCurrentStream>();
    back->stream = worker->stream;
    sc.insert(sc.begin() + static_cast<long>(pos.index) + 1, std::move(back));
    sc.insert(sc.begin() + static_cast<long>(pos.index), std::move(to_main));
    return l;
  }
  return std::nullopt;
}

// The k-th Allgather of a team of at least two, for the rooted mutations below.
inline Communication* allgather(HostProgram& p, size_t k) {
  size_t n = 0;
  for (const Pos& pos : positions(p)) {
    if (!at(pos)->is<Communication>()) continue;
    auto* c = at(pos)->as<Communication>();
    if (c->type == CommunicationType::kAllgather && c->team.size() >= 2 && n++ == k) return c;
  }
  return nullptr;
}

// An Allgather becomes a Gather whose root is one past the last member of its team.
inline std::optional<Located> rootOutsideTeam(HostProgram& p, size_t k, const Config&) {
  Communication* c = allgather(p, k);
  if (!c) return std::nullopt;
  c->type = CommunicationType::kGather;
  c->root = Scalar(*std::max_element(c->team.begin(), c->team.end()) + 1);
  return Located{{sem::FindingKind::kBadRoot}, {c->loc.line}};
}

// An Allgather (one chunk in, team-size chunks out) becomes a Scatter rooted at its first member:
// the root sends from a buffer of one chunk, where a Scatter needs team size x its output.
inline std::optional<Located> scatterRootWithOneChunk(HostProgram& p, size_t k, const Config&) {
  Communication* c = allgather(p, k);
  if (!c) return std::nullopt;
  c->type = CommunicationType::kScatter;
  c->root = Scalar(c->team.front());
  return Located{{sem::FindingKind::kCommunicationSize}, {c->loc.line}};
}

// A collective's input becomes a transposed view of it (Set.Permute into an unbound tensor).
inline std::optional<Located> permutedViewToCollective(HostProgram& p, size_t k, const Config&) {
  size_t n = 0;
  for (const Pos& pos : positions(p)) {
    if (!at(pos)->is<Communication>()) continue;
    auto* c = at(pos)->as<Communication>();
    if (!c->input) continue;
    int64_t axes = 0;
    for (const IterDomain* id : c->input->logical()) axes += id->isReduction() ? 0 : 1;
    if (axes < 2 || n++ != k) continue;
    std::vector<int64_t> reversed;
    for (int64_t i = axes; i-- > 0;) reversed.push_back(i);
    TensorView* view = permute(c->input, reversed);
    if (c->input->hasDeviceMesh()) view->setDeviceMesh(*c->input->deviceMesh());
    auto op = std::make_unique<HostOp>();
    op->op = view->definition();
    c->input = view;
    Located l{{sem::FindingKind::kNonContiguousComm}, {c->loc.line}};
    pos.scope->insert(pos.scope->begin() + static_cast<long>(pos.index), std::move(op));
    return l;
  }
  return std::nullopt;
}

inline const std::vector<std::pair<const char*, LocatedMutation>>& locatedMutations() {
  static const std::vector<std::pair<const char*, LocatedMutation>> m = {
      {"drop a Wait", dropWait},
      {"free before the Wait", freeBeforeWait},
      {"fresh allocation on another stream", freshAllocationOnAnotherStream},
      {"root outside the team", rootOutsideTeam},
      {"Scatter root with one chunk", scatterRootWithOneChunk},
      {"permuted view to a collective", permutedViewToCollective},
  };
  return m;
}

// Two Communications on consecutive lines of one scope swap places on the ranks below half of
// `devices` (an IF whose branches print the same two statements in either order). nullopt when the
// text has no such pair; `lines` receives the lines of the two statements the first mismatch names.
inline std::optional<std::string> swapCollectivesOnHalfTheRanks(const std::string& text, int64_t devices,
                                                                std::vector<int>* lines) {
  std::vector<std::string> ls;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) ls.push_back(l);
  auto indent = [](const std::string& l) { return l.find_first_not_of(' '); };
  for (size_t i = 0; i + 1 < ls.size(); ++i) {
    size_t a = indent(ls[i]), b = indent(ls[i + 1]);
    if (a == std::string::npos || a != b) continue;
    if (ls[i].compare(a, 14, "Communication ") != 0 || ls[i + 1].compare(b, 14, "Communication ") != 0) continue;
    std::string pad(a, ' ');
    std::string c1 = "  " + ls[i], c2 = "  " + ls[i + 1];
    std::vector<std::string> out(ls.begin(), ls.begin() + static_cast<long>(i));
    out.push_back(pad + "IF Manual ( deviceIdx.x < " + std::to_string(devices / 2) + " ):");
    out.push_back(c2);
    out.push_back(c1);
    out.push_back(pad + "ELSE:");
    out.push_back(c1);
    out.push_back(c2);
    out.insert(out.end(), ls.begin() + static_cast<long>(i) + 2, ls.end());
    // 1-based, the IF is at line i + 1: the first collective of a rank below half (the second
    // statement, then-branch) meets the first of a rank above (the first statement, else-branch).
    *lines = {static_cast<int>(i) + 2, static_cast<int>(i) + 5};
    std::string joined;
    for (const auto& l : out) joined += l + "\n";
    return joined;
  }
  return std::nullopt;
}

}  // namespace braid::testing
