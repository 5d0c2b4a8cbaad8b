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

// The scalars a statement evaluates when it runs (not those of nested bodies), with what they are.
std::vector<std::pair<const Scalar*, std::string>> scalarsOf(const Stmt& s) {
  std::vector<std::pair<const Scalar*, std::string>> out;
  auto add = [&](const Scalar& v, std::string what) { out.emplace_back(&v, std::move(what)); };
  switch (s.kind()) {
    case StmtKind::kForLoop: {
      const auto* f = s.as<ForLoop>();
      if (f->domain) {
        add(f->domain->extent(), "the loop's extent");
      } else {
        add(f->start, "the loop's start");
        add(f->stop, "the loop's stop");
      }
      break;
    }
    case StmtKind::kIfThenElse: add(s.as<IfThenElse>()->predicate, "the condition"); break;
    case StmtKind::kAliasSelect: add(s.as<AliasSelect>()->index, "the index"); break;
    case StmtKind::kSelect: add(s.as<Select>()->index, "the index"); break;
    case StmtKind::kShardByStream: add(s.as<ShardByStream>()->streamIndex, "the stream index"); break;
    case StmtKind::kSetCurrentStream:
      if (s.as<SetCurrentStream>()->stream.kind == StreamRef::Kind::kIndexed)
        add(s.as<SetCurrentStream>()->stream.index, "the stream key");
      break;
    case StmtKind::kSynchronize:
      if (s.as<Synchronize>()->stream.kind == StreamRef::Kind::kIndexed)
        add(s.as<Synchronize>()->stream.index, "the stream key");
      break;
    case StmtKind::kCommunication:
      if (s.as<Communication>()->root) add(*s.as<Communication>()->root, "the root");
      break;
    case StmtKind::kP2PCommunication: add(s.as<P2PCommunication>()->peer, "the peer"); break;
    case StmtKind::kCollectivePermute:
      add(s.as<CollectivePermute>()->sendPeer, "the send peer");
      add(s.as<CollectivePermute>()->recvPeer, "the receive peer");
      break;
    case StmtKind::kSlice:
      for (const SliceRange& r : s.as<Slice>()->ranges) {
        add(r.start, "a slice start");
        add(r.stop, "a slice stop");
        add(r.step, "a slice step");
      }
      break;
    case StmtKind::kScalarAssign: add(s.as<ScalarAssign>()->value, "the assigned value"); break;
    case StmtKind::kPostOnStream:
      for (const ScalarOperand& o : s.as<PostOnStream>()->scalarInputs) add(o.value, "a scalar operand");
      break;
    case StmtKind::kLaunchKernel:
      for (const ScalarOperand& o : s.as<LaunchKernel>()->scalarInputs) add(o.value, "a scalar operand");
      break;
    default: break;
  }
  return out;
}

void checkScalars(Context& c) {
  std::map<std::string, const ForLoop*> loopIndices;  // name -> the first loop over it
  std::map<std::string, std::vector<const Stmt*>> assigns;
  for (const Stmt* s : c.statements()) {
    if (s->is<ForLoop>()) loopIndices.try_emplace(s->as<ForLoop>()->index, s->as<ForLoop>());
    if (s->is<ScalarAssign>()) {
      const std::string& name = s->as<ScalarAssign>()->name;
      assigns[name].push_back(s);
      if (providedByHostThread(name))
        c.report("scope", s, "assigns " + name + ", which the host thread defines (the rank or the stream count)");
    }
  }
  for (const Stmt* s : c.statements()) {
    const auto& enclosing = c.at(*s).loops;
    for (const auto& [value, what] : scalarsOf(*s)) {
      Scalar expanded = c.program.expandIndexDefinitions(*value);
      for (const std::string& name : expanded.freeSymbols()) {
        if (providedByHostThread(name)) continue;
        bool in_loop = false;
        for (const ForLoop* l : enclosing) in_loop = in_loop || l->index == name;
        if (in_loop) continue;
        if (auto a = assigns.find(name); a != assigns.end()) {
          bool defined = false;
          for (const Stmt* def : a->second) defined = defined || c.visible(*def, *s);
          if (!defined)
            c.report("scope", s,
                     what + " uses " + name + " before the ScalarAssign at " + where(*a->second.front()) +
                         " defines it");
          continue;
        }
        if (auto l = loopIndices.find(name); l != loopIndices.end()) {
          std::string via = value->freeSymbols().count(name) ? "" : " (through the Index definitions)";
          c.report("scope", s,
                   what + " uses loop index " + name + via + " outside its loop (FOR " + name + " at " +
                       where(*l->second) + "): the index is defined only inside the loop body");
        }
      }
    }
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
  std::map<std::string, std::vector<const Stmt*>> captures;
  for (const Stmt* s : c.statements())
    if (s->is<GetCurrentStream>()) captures[s->as<GetCurrentStream>()->stream.name].push_back(s);
  for (const Stmt* s : c.statements()) {
    const StreamRef* ref = streamOf(*s);
    if (!ref || ref->kind != StreamRef::Kind::kNamed) continue;
    auto it = captures.find(ref->name);
    if (it == captures.end()) continue;
    bool defined = false;
    for (const Stmt* def : it->second) defined = defined || c.visible(*def, *s);
    if (!defined)
      c.report("stream", s,
               std::string(stmtKindName(s->kind())) + " names " + ref->str() + " before the GetCurrentStream at " +
                   where(*it->second.front()) + " captures it: there it would be a separate pool stream, not the " +
                   "captured one");
  }
}

}  // namespace

void checkScopes(Context& c) {
  checkScalars(c);
  checkStreams(c);
}

}  // namespace braid::wellformed
