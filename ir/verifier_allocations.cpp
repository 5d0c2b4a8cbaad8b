// Once the allocation pass has placed them (WellFormednessOptions::allocationsPlaced): every
// tensor a statement reads is defined before it (an input, an ALLOCATE, a view, an op's or a
// kernel's or a communication's output); what a communication or a compiled kernel writes into is
// allocated before it; every Deallocate follows a definition of its tensor and is not a second one
// in a row; and with deallocationsPlaced, every ALLOCATE of an intermediate has its Deallocate later in the
// same scope.
#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "ir/verifier_internal.h"

namespace braid::wellformed {

namespace {

struct Uses {
  std::vector<const TensorView*> reads;        // must be defined before
  std::vector<const TensorView*> writesInto;   // must be allocated (or a view) before
  std::vector<const TensorView*> defines;      // defined by this statement
};

Uses usesOf(const Stmt& s) {
  Uses u;
  auto view = [&](const TensorView* in, const TensorView* out) {
    u.reads.push_back(in);
    u.defines.push_back(out);
  };
  switch (s.kind()) {
    case StmtKind::kAllocate: u.defines.push_back(s.as<Allocate>()->tv); break;
    case StmtKind::kAliasSelect: view(s.as<AliasSelect>()->in, s.as<AliasSelect>()->out); break;
    case StmtKind::kSelect: view(s.as<Select>()->in, s.as<Select>()->out); break;
    case StmtKind::kSlice: view(s.as<Slice>()->in, s.as<Slice>()->out); break;
    case StmtKind::kShardByStream: view(s.as<ShardByStream>()->in, s.as<ShardByStream>()->out); break;
    case StmtKind::kSymmetricContiguousView:
      view(s.as<SymmetricContiguousView>()->in, s.as<SymmetricContiguousView>()->out);
      break;
    case StmtKind::kHostOp:
      if (const Expr* e = s.as<HostOp>()->op) {
        for (const TensorView* tv : e->inputs()) u.reads.push_back(tv);
        for (const TensorView* tv : e->outputs()) u.defines.push_back(tv);
      }
      break;
    case StmtKind::kPostOnStream:
      for (const TensorView* tv : s.as<PostOnStream>()->inputs) u.reads.push_back(tv);
      for (const TensorView* tv : s.as<PostOnStream>()->outputs) u.defines.push_back(tv);
      break;
    case StmtKind::kLaunchKernel:
      for (const TensorView* tv : s.as<LaunchKernel>()->inputs) u.reads.push_back(tv);
      for (const TensorView* tv : s.as<LaunchKernel>()->outputs) u.writesInto.push_back(tv);
      break;
    case StmtKind::kCommunication:
      if (s.as<Communication>()->input) u.reads.push_back(s.as<Communication>()->input);
      if (s.as<Communication>()->output) u.writesInto.push_back(s.as<Communication>()->output);
      break;
    case StmtKind::kCollectivePermute:
      u.reads.push_back(s.as<CollectivePermute>()->input);
      u.writesInto.push_back(s.as<CollectivePermute>()->output);
      break;
    case StmtKind::kP2PCommunication: {
      const auto* p = s.as<P2PCommunication>();
      (p->type == P2PType::kSend ? u.reads : u.writesInto).push_back(p->buffer);
      break;
    }
    default: break;
  }
  return u;
}

// ALLOCATE / Deallocate pairs within one scope, recursively. Linear in the scope's length: a
// lowered 10,000-op fusion has tens of thousands of statements in one scope.
void checkPairs(Context& c, const Scope& scope, const std::set<const TensorView*>& owedToCaller,
                const std::map<const TensorView*, std::vector<const Stmt*>>& defs) {
  auto deallocated = [](const Stmt& s) { return s.is<Deallocate>() ? s.as<Deallocate>()->tv : nullptr; };
  // The last Deallocate of each tensor in this scope, for "does a Deallocate follow".
  std::unordered_map<const TensorView*, size_t> lastDeallocate;
  for (size_t i = 0; i < scope.size(); ++i)
    if (const TensorView* tv = deallocated(*scope[i])) lastDeallocate[tv] = i;
  // The latest Deallocate of each tensor before the statement being checked.
  std::unordered_map<const TensorView*, const Stmt*> previousDeallocate;
  for (size_t i = 0; i < scope.size(); ++i) {
    const Stmt& s = *scope[i];
    if (c.options.deallocationsPlaced && s.is<Allocate>() && s.as<Allocate>()->tv &&
        !owedToCaller.count(s.as<Allocate>()->tv)) {
      const TensorView* tv = s.as<Allocate>()->tv;
      auto last = lastDeallocate.find(tv);
      if (last == lastDeallocate.end() || last->second <= i)
        c.report("allocation", &s,
                 "allocates " + tv->nameStr() + ", an intermediate, but no Deallocate follows in the same scope " +
                     "(the allocation pass frees every buffer it allocates after its last use)");
    }
    if (const TensorView* tv = deallocated(s)) {
      // The previous Deallocate of the tensor in this scope, unless something defines it in between.
      auto prev = previousDeallocate.find(tv);
      if (prev != previousDeallocate.end()) {
        const Stmt& t = *prev->second;
        auto d = defs.find(tv);
        bool redefined = d != defs.end() && std::any_of(d->second.begin(), d->second.end(), [&](const Stmt* def) {
                           int o = c.at(*def).order;
                           return o > c.at(t).order && o < c.at(s).order;
                         });
        if (!redefined)
          c.report("allocation", &s, "deallocates " + tv->nameStr() + " a second time: the Deallocate at " + where(t) +
                                         " freed it and nothing defines it again in between");
      }
      previousDeallocate[tv] = &s;
    }
    if (s.is<ForLoop>()) checkPairs(c, s.as<ForLoop>()->body, owedToCaller, defs);
    if (s.is<IfThenElse>()) {
      checkPairs(c, s.as<IfThenElse>()->thenBody, owedToCaller, defs);
      checkPairs(c, s.as<IfThenElse>()->elseBody, owedToCaller, defs);
    }
  }
}

}  // namespace

void checkAllocations(Context& c) {
  const HostProgram& p = c.program;
  std::set<const TensorView*> atEntry(p.inputs().begin(), p.inputs().end());
  std::set<const TensorView*> owedToCaller(p.outputs().begin(), p.outputs().end());
  for (const auto& [out, in] : p.aliases()) {
    atEntry.insert(out);
    owedToCaller.insert(in);
  }
  std::map<const TensorView*, std::vector<const Stmt*>> defs;
  for (const Stmt* s : c.statements())
    for (const TensorView* tv : usesOf(*s).defines) defs[tv].push_back(s);
  auto defined = [&](const TensorView* tv, const Stmt& use, bool excludingSelf) {
    if (atEntry.count(tv)) return true;
    auto it = defs.find(tv);
    if (it == defs.end()) return false;
    return std::any_of(it->second.begin(), it->second.end(),
                       [&](const Stmt* d) { return !(excludingSelf && d == &use) && c.visible(*d, use); });
  };
  for (const Stmt* s : c.statements()) {
    Uses u = usesOf(*s);
    for (const TensorView* tv : u.reads)
      if (tv && !defined(tv, *s, true))
        c.report("allocation", s, "reads " + tv->nameStr() + ", which nothing defines before it");
    for (const TensorView* tv : u.writesInto)
      if (tv && !defined(tv, *s, true))
        c.report("allocation", s,
                 "writes into " + tv->nameStr() + ", which nothing allocates before it (a communication or a " +
                     "compiled kernel does not allocate its output)");
    if (s->is<Deallocate>() && s->as<Deallocate>()->tv && !defined(s->as<Deallocate>()->tv, *s, true))
      c.report("allocation", s,
               "deallocates " + s->as<Deallocate>()->tv->nameStr() + ", which nothing defines before it");
  }
  checkPairs(c, p.body(), owedToCaller, defs);
}

}  // namespace braid::wellformed
