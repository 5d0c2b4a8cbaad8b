#include "verify/parametric/liveness.h"

#include <algorithm>

#include "passes/host_builder.h"

namespace braid::verify::parametric {

namespace {

enum class Touch { kNone, kUse, kKill };

// The first thing statement `s` does to the binding of `tv`: read it (any operand, an op's
// output, which is written in place when bound, an ALLOCATE(buffer=...), which looks at it, a
// Deallocate) or rebind it unconditionally (a view statement's output, a new-style ALLOCATE).
Touch touchOf(const Stmt& s, const TensorView* tv) {
  switch (s.kind()) {
    case StmtKind::kAliasSelect:
      if (s.as<AliasSelect>()->in == tv) return Touch::kUse;
      return s.as<AliasSelect>()->out == tv ? Touch::kKill : Touch::kNone;
    case StmtKind::kShardByStream:
      if (s.as<ShardByStream>()->in == tv) return Touch::kUse;
      return s.as<ShardByStream>()->out == tv ? Touch::kKill : Touch::kNone;
    case StmtKind::kAllocate:
      if (s.as<Allocate>()->tv != tv) return Touch::kNone;
      return s.as<Allocate>()->legacy ? Touch::kUse : Touch::kKill;
    default: {
      auto ts = stmtTensors(s);
      return std::find(ts.begin(), ts.end(), tv) != ts.end() ? Touch::kUse : Touch::kNone;
    }
  }
}

// kUse: some path reads the incoming binding; kKill: every path rebinds it first; kNone
// otherwise.
Touch scan(const Scope& scope, const TensorView* tv) {
  for (const auto& s : scope) {
    Touch t = Touch::kNone;
    if (s->is<IfThenElse>()) {
      Touch a = scan(s->as<IfThenElse>()->thenBody, tv);
      Touch b = scan(s->as<IfThenElse>()->elseBody, tv);
      if (a == Touch::kUse || b == Touch::kUse) return Touch::kUse;
      if (a == Touch::kKill && b == Touch::kKill) return Touch::kKill;
      continue;  // some path still carries the incoming binding
    }
    if (s->is<ForLoop>()) {
      if (scan(s->as<ForLoop>()->body, tv) == Touch::kUse) return Touch::kUse;
      continue;  // it may run zero times
    }
    t = touchOf(*s, tv);
    if (t != Touch::kNone) return t;
  }
  return Touch::kNone;
}

bool mentionedOutside(const Scope& scope, const ForLoop& loop, const TensorView* tv) {
  for (const auto& s : scope) {
    if (s.get() == &loop) continue;
    auto ts = stmtTensors(*s);
    if (std::find(ts.begin(), ts.end(), tv) != ts.end()) return true;
    if (s->is<ForLoop>() && mentionedOutside(s->as<ForLoop>()->body, loop, tv)) return true;
    if (s->is<IfThenElse>() && (mentionedOutside(s->as<IfThenElse>()->thenBody, loop, tv) ||
                                mentionedOutside(s->as<IfThenElse>()->elseBody, loop, tv)))
      return true;
  }
  return false;
}

}  // namespace

std::set<const TensorView*> namesNotCarried(const HostProgram& p, const ForLoop& loop) {
  std::set<const TensorView*> names;
  forEachStmt(loop.body, [&](const Stmt& s, int) {
    for (const TensorView* tv : stmtTensors(s)) names.insert(tv);
  });
  std::set<const TensorView*> out;
  for (const TensorView* tv : names) {
    if (std::find(p.inputs().begin(), p.inputs().end(), tv) != p.inputs().end()) continue;
    if (std::find(p.outputs().begin(), p.outputs().end(), tv) != p.outputs().end()) continue;
    bool aliased = false;
    for (const auto& [o, i] : p.aliases()) aliased |= o == tv || i == tv;
    if (aliased || scan(loop.body, tv) == Touch::kUse) continue;
    if (mentionedOutside(p.body(), loop, tv)) continue;
    out.insert(tv);
  }
  return out;
}

}  // namespace braid::verify::parametric
