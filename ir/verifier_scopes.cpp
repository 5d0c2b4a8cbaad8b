// Definitions before use, in scope: the scalars a statement evaluates (loop indices, names a
// ScalarAssign defines, through the Index definitions) and the stream variables it names.
//
// A symbol that no loop and no ScalarAssign of the program defines is a symbolic extent the caller
// binds (`--bind`), so it is never an error here. A loop index is defined inside its loop only (the
// host thread restores it after the loop); a ScalarAssign's name from that statement on, or, inside
// a loop holding it, from the previous iteration.
#include <map>
#include <set>

#include "ir/verifier_internal.h"

namespace braid::wellformed {

namespace {

bool providedByHostThread(const std::string& name) {
  return name == kRank || name == kDeviceIdxX || name == kDeviceIdxY || name == kNumberOfStreams;
}

// Calls f(value, what) on each scalar a statement evaluates when it runs (not those of nested
// bodies), with what it is.
template <class F>
void forEachScalarOf(const Stmt& s, F&& f) {
  switch (s.kind()) {
    case StmtKind::kForLoop: {
      const auto* l = s.as<ForLoop>();
      if (l->domain) {
        f(l->domain->extent(), "the loop's extent");
      } else {
        f(l->start, "the loop's start");
        f(l->stop, "the loop's stop");
      }
      break;
    }
    case StmtKind::kIfThenElse: f(s.as<IfThenElse>()->predicate, "the condition"); break;
    case StmtKind::kAliasSelect: f(s.as<AliasSelect>()->index, "the index"); break;
    case StmtKind::kSelect: f(s.as<Select>()->index, "the index"); break;
    case StmtKind::kShardByStream: f(s.as<ShardByStream>()->streamIndex, "the stream index"); break;
    case StmtKind::kSetCurrentStream:
      if (s.as<SetCurrentStream>()->stream.kind == StreamRef::Kind::kIndexed)
        f(s.as<SetCurrentStream>()->stream.index, "the stream key");
      break;
    case StmtKind::kSynchronize:
      if (s.as<Synchronize>()->stream.kind == StreamRef::Kind::kIndexed)
        f(s.as<Synchronize>()->stream.index, "the stream key");
      break;
    case StmtKind::kCommunication:
      if (s.as<Communication>()->root) f(*s.as<Communication>()->root, "the root");
      break;
    case StmtKind::kP2PCommunication: f(s.as<P2PCommunication>()->peer, "the peer"); break;
    case StmtKind::kCollectivePermute:
      f(s.as<CollectivePermute>()->sendPeer, "the send peer");
      f(s.as<CollectivePermute>()->recvPeer, "the receive peer");
      break;
    case StmtKind::kSlice:
      for (const SliceRange& r : s.as<Slice>()->ranges) {
        f(r.start, "a slice start");
        f(r.stop, "a slice stop");
        f(r.step, "a slice step");
      }
      break;
    case StmtKind::kScalarAssign: f(s.as<ScalarAssign>()->value, "the assigned value"); break;
    case StmtKind::kPostOnStream:
      for (const ScalarOperand& o : s.as<PostOnStream>()->scalarInputs) f(o.value, "a scalar operand");
      break;
    case StmtKind::kLaunchKernel:
      for (const ScalarOperand& o : s.as<LaunchKernel>()->scalarInputs) f(o.value, "a scalar operand");
      break;
    default: break;
  }
}

void checkScalars(Context& c) {
  std::map<std::string, int> loopIndices;  // name -> the first loop over it
  std::map<std::string, std::vector<int>> assigns;
  const std::vector<const Stmt*>& stmts = c.statements();
  for (int i = 0; i < static_cast<int>(stmts.size()); ++i) {
    const Stmt* s = stmts[static_cast<size_t>(i)];
    if (s->is<ForLoop>()) loopIndices.try_emplace(s->as<ForLoop>()->index, i);
    if (s->is<ScalarAssign>()) {
      const std::string& name = s->as<ScalarAssign>()->name;
      assigns[name].push_back(i);
      if (providedByHostThread(name))
        c.report("scope", s, "assigns " + name + ", which the host thread defines (the rank or the stream count)");
    }
  }
  for (int i = 0; i < static_cast<int>(stmts.size()); ++i) {
    const Stmt* s = stmts[static_cast<size_t>(i)];
    forEachScalarOf(*s, [&](const Scalar& value, const char* what) {
      Scalar expanded = c.program.expandIndexDefinitions(value);
      for (const std::string& name : expanded.freeSymbols()) {
        if (providedByHostThread(name)) continue;
        if (c.insideLoopOver(i, name)) continue;
        if (auto a = assigns.find(name); a != assigns.end()) {
          bool defined = false;
          for (int def : a->second) defined = defined || c.visible(def, i);
          if (!defined)
            c.report("scope", s,
                     what + (" uses " + name) + " before the ScalarAssign at " +
                         where(*stmts[static_cast<size_t>(a->second.front())]) + " defines it");
          continue;
        }
        if (auto l = loopIndices.find(name); l != loopIndices.end()) {
          std::string via = value.freeSymbols().count(name) ? "" : " (through the Index definitions)";
          c.report("scope", s,
                   what + (" uses loop index " + name) + via + " outside its loop (FOR " + name + " at " +
                       where(*stmts[static_cast<size_t>(l->second)]) +
                       "): the index is defined only inside the loop body");
        }
      }
    });
  }
}

const StreamRef* streamOf(const Stmt& s) {
  if (s.is<SetCurrentStream>()) return &s.as<SetCurrentStream>()->stream;
  if (s.is<Synchronize>()) return &s.as<Synchronize>()->stream;
  return nullptr;
}

// A stream variable that some GetCurrentStream captures names the captured stream only once the
// capture ran; before that the same name is a pool stream of its own (DESIGN.md), which is never
// what a program that captures it means.
void checkStreams(Context& c) {
  std::map<std::string, std::vector<int>> captures;
  const std::vector<const Stmt*>& stmts = c.statements();
  for (int i = 0; i < static_cast<int>(stmts.size()); ++i)
    if (stmts[static_cast<size_t>(i)]->is<GetCurrentStream>())
      captures[stmts[static_cast<size_t>(i)]->as<GetCurrentStream>()->stream.name].push_back(i);
  for (int i = 0; i < static_cast<int>(stmts.size()); ++i) {
    const Stmt* s = stmts[static_cast<size_t>(i)];
    const StreamRef* ref = streamOf(*s);
    if (!ref || ref->kind != StreamRef::Kind::kNamed) continue;
    auto it = captures.find(ref->name);
    if (it == captures.end()) continue;
    bool defined = false;
    for (int def : it->second) defined = defined || c.visible(def, i);
    if (!defined)
      c.report("stream", s,
               std::string(stmtKindName(s->kind())) + " names " + ref->str() + " before the GetCurrentStream at " +
                   where(*stmts[static_cast<size_t>(it->second.front())]) +
                   " captures it: there it would be a separate pool stream, not the captured one");
  }
}

}  // namespace

void checkScopes(Context& c) {
  checkScalars(c);
  checkStreams(c);
}

}  // namespace braid::wellformed
