// Once the allocation pass has placed them (WellFormednessOptions::allocationsPlaced): every
// tensor a statement reads is defined before it (an input, an ALLOCATE, a view, an op's or a
// kernel's or a communication's output); what a communication or a compiled kernel writes into is
// allocated before it; every Deallocate follows a definition of its tensor and is not a second one
// in a row; and with deallocationsPlaced, every ALLOCATE of an intermediate has its Deallocate later in the
// same scope.
#include <algorithm>
#include <iterator>
#include <set>

#include "ir/verifier_internal.h"

namespace braid::wellformed {

namespace {

enum class Use {
  kReads,       // must be defined before
  kWritesInto,  // must be allocated (or a view) before
  kDefines,     // defined by this statement
};

// Calls f(tensor, use) on each tensor operand of a statement: what it reads first, then what it
// writes into or defines.
template <class F>
void forEachUse(const Stmt& s, F&& f) {
  auto view = [&](const TensorView* in, const TensorView* out) {
    f(in, Use::kReads);
    f(out, Use::kDefines);
  };
  switch (s.kind()) {
    case StmtKind::kAllocate: f(s.as<Allocate>()->tv, Use::kDefines); break;
    case StmtKind::kAliasSelect: view(s.as<AliasSelect>()->in, s.as<AliasSelect>()->out); break;
    case StmtKind::kSelect: view(s.as<Select>()->in, s.as<Select>()->out); break;
    case StmtKind::kSlice: view(s.as<Slice>()->in, s.as<Slice>()->out); break;
    case StmtKind::kShardByStream: view(s.as<ShardByStream>()->in, s.as<ShardByStream>()->out); break;
    case StmtKind::kSymmetricContiguousView:
      view(s.as<SymmetricContiguousView>()->in, s.as<SymmetricContiguousView>()->out);
      break;
    case StmtKind::kHostOp:
      if (const Expr* e = s.as<HostOp>()->op) {
        for (const TensorView* tv : e->inputs()) f(tv, Use::kReads);
        for (const TensorView* tv : e->outputs()) f(tv, Use::kDefines);
      }
      break;
    case StmtKind::kPostOnStream:
      for (const TensorView* tv : s.as<PostOnStream>()->inputs) f(tv, Use::kReads);
      for (const TensorView* tv : s.as<PostOnStream>()->outputs) f(tv, Use::kDefines);
      break;
    case StmtKind::kLaunchKernel:
      for (const TensorView* tv : s.as<LaunchKernel>()->inputs) f(tv, Use::kReads);
      for (const TensorView* tv : s.as<LaunchKernel>()->outputs) f(tv, Use::kWritesInto);
      break;
    case StmtKind::kCommunication:
      if (s.as<Communication>()->input) f(s.as<Communication>()->input, Use::kReads);
      if (s.as<Communication>()->output) f(s.as<Communication>()->output, Use::kWritesInto);
      break;
    case StmtKind::kCollectivePermute:
      f(s.as<CollectivePermute>()->input, Use::kReads);
      f(s.as<CollectivePermute>()->output, Use::kWritesInto);
      break;
    case StmtKind::kP2PCommunication: {
      const auto* p = s.as<P2PCommunication>();
      f(p->buffer, p->type == P2PType::kSend ? Use::kReads : Use::kWritesInto);
      break;
    }
    default: break;
  }
}

// The statements that define each tensor, by position in program order. Bucketed by tensor name
// (a counting sort: names are dense, from 0 up to the Fusion's next name; a name outside that range,
// possible only for a tensor of another fusion, goes to one extra bucket), and within a bucket in
// program order; a lookup keeps the entries of the tensor itself, since a malformed program may
// give two tensors one name.
class Definitions {
 public:
  explicit Definitions(const Context& c) : buckets_(static_cast<size_t>(c.program.tensors().nextTensorName()) + 1) {
    const std::vector<const Stmt*>& stmts = c.statements();
    auto eachDefinition = [&](auto&& f) {
      for (int i = 0; i < static_cast<int>(stmts.size()); ++i)
        forEachUse(*stmts[static_cast<size_t>(i)], [&](const TensorView* tv, Use u) {
          if (u == Use::kDefines && tv) f(tv, i);
        });
    };
    std::vector<size_t> start(buckets_ + 1, 0);
    eachDefinition([&](const TensorView* tv, int) { ++start[bucket(tv) + 1]; });
    for (size_t b = 0; b < buckets_; ++b) start[b + 1] += start[b];
    defs_.resize(start.back());
    start_ = start;
    eachDefinition([&](const TensorView* tv, int i) { defs_[start[bucket(tv)]++] = {tv, i}; });
  }

  // Calls f(position) for each statement that defines `tv`, in program order, until f returns true;
  // returns whether one did.
  template <class F>
  bool any(const TensorView* tv, F&& f) const {
    const size_t b = bucket(tv);
    for (size_t k = start_[b]; k < start_[b + 1]; ++k)
      if (defs_[k].first == tv && f(defs_[k].second)) return true;
    return false;
  }

 private:
  size_t bucket(const TensorView* tv) const {
    const auto name = static_cast<size_t>(tv->name());
    return tv->name() >= 0 && name < buckets_ - 1 ? name : buckets_ - 1;
  }

  size_t buckets_;
  std::vector<size_t> start_;  // bucket b holds defs_[start_[b], start_[b + 1])
  std::vector<std::pair<const TensorView*, int>> defs_;
};

// ALLOCATE / Deallocate pairs within one scope, recursively. Linear in the scope's length (up to a
// sort of its Deallocates): a lowered 10,000-op fusion has tens of thousands of statements in one
// scope. `next` is the position (in program order) of the scope's first statement; it ends past
// the scope.
void checkPairs(Context& c, const Scope& scope, int& next, const std::set<const TensorView*>& owedToCaller,
                const Definitions& defs) {
  auto deallocated = [](const Stmt& s) { return s.is<Deallocate>() ? s.as<Deallocate>()->tv : nullptr; };
  // The Deallocates of this scope by tensor, then index: the last one of a tensor answers "does a
  // Deallocate follow", the one before a Deallocate (same tensor) is the previous one.
  std::vector<std::pair<const TensorView*, size_t>> deallocates;
  for (size_t i = 0; i < scope.size(); ++i)
    if (const TensorView* tv = deallocated(*scope[i])) deallocates.emplace_back(tv, i);
  std::sort(deallocates.begin(), deallocates.end());
  std::vector<int> order(scope.size());  // program order of each statement of the scope
  for (size_t i = 0; i < scope.size(); ++i) {
    const Stmt& s = *scope[i];
    order[i] = next++;
    if (c.options.deallocationsPlaced && s.is<Allocate>() && s.as<Allocate>()->tv &&
        !owedToCaller.count(s.as<Allocate>()->tv)) {
      const TensorView* tv = s.as<Allocate>()->tv;
      auto after = std::upper_bound(deallocates.begin(), deallocates.end(), std::make_pair(tv, i));
      if (after == deallocates.end() || after->first != tv)
        c.report("allocation", &s,
                 "allocates " + tv->nameStr() + ", an intermediate, but no Deallocate follows in the same scope " +
                     "(the allocation pass frees every buffer it allocates after its last use)");
    }
    if (const TensorView* tv = deallocated(s)) {
      // The previous Deallocate of the tensor in this scope, unless something defines it in between.
      auto self = std::lower_bound(deallocates.begin(), deallocates.end(), std::make_pair(tv, i));
      if (self != deallocates.begin() && std::prev(self)->first == tv) {
        const size_t t = std::prev(self)->second;
        const bool redefined = defs.any(tv, [&](int d) { return d > order[t] && d < order[i]; });
        if (!redefined)
          c.report("allocation", &s, "deallocates " + tv->nameStr() + " a second time: the Deallocate at " +
                                         where(*scope[t]) + " freed it and nothing defines it again in between");
      }
    }
    if (s.is<ForLoop>()) checkPairs(c, s.as<ForLoop>()->body, next, owedToCaller, defs);
    if (s.is<IfThenElse>()) {
      checkPairs(c, s.as<IfThenElse>()->thenBody, next, owedToCaller, defs);
      checkPairs(c, s.as<IfThenElse>()->elseBody, next, owedToCaller, defs);
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
  const Definitions defs(c);
  // Whether a statement other than `use` defines `tv` where `use` sees it.
  auto defined = [&](const TensorView* tv, int use) {
    if (atEntry.count(tv)) return true;
    return defs.any(tv, [&](int def) { return def != use && c.visible(def, use); });
  };
  const std::vector<const Stmt*>& stmts = c.statements();
  for (int i = 0; i < static_cast<int>(stmts.size()); ++i) {
    const Stmt* s = stmts[static_cast<size_t>(i)];
    forEachUse(*s, [&](const TensorView* tv, Use u) {
      if (!tv || u == Use::kDefines || defined(tv, i)) return;
      if (u == Use::kReads)
        c.report("allocation", s, "reads " + tv->nameStr() + ", which nothing defines before it");
      else
        c.report("allocation", s,
                 "writes into " + tv->nameStr() + ", which nothing allocates before it (a communication or a " +
                     "compiled kernel does not allocate its output)");
    });
    if (s->is<Deallocate>() && s->as<Deallocate>()->tv && !defined(s->as<Deallocate>()->tv, i))
      c.report("allocation", s,
               "deallocates " + s->as<Deallocate>()->tv->nameStr() + ", which nothing defines before it");
  }
  int next = 0;
  checkPairs(c, p.body(), next, owedToCaller, defs);
}

}  // namespace braid::wellformed
