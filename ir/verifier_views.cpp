// Shapes of views, which do not depend on sizes: HirAliasSelect / select name an axis of their
// input (select: one its buffer holds), ShardByStream has a Stream axis to chunk, a slice has one
// range per buffer dimension and step 1, SymmetricContiguousView views symmetric memory.
//
// Indices are not structure: an index out of range, even a constant one into a constant extent,
// is the checker's view-out-of-bounds, reported with the rank and iteration where it happens
// (one finding class for one problem, whatever makes the index).
#include <algorithm>

#include "ir/semantics/buffer_rules.h"
#include "ir/verifier_internal.h"

namespace braid::wellformed {

namespace {

bool operands(Context& c, const Stmt& s, const TensorView* in, const TensorView* out) {
  if (in && out) return true;
  c.report("view", &s, std::string(stmtKindName(s.kind())) + " without " + (in ? "an output" : "an input"));
  return false;
}

// The axis `axis` names among the buffer axes of `in` (matched by identity, then by id as the
// parser shares them), or null.
const IterDomain* axisOf(const TensorView& in, const IterDomain* axis) {
  const std::vector<IterDomain*>& dom = sem::bufferDomain(in);
  auto pos = std::find(dom.begin(), dom.end(), axis);
  if (pos == dom.end() && axis)
    pos = std::find_if(dom.begin(), dom.end(), [&](const IterDomain* id) { return id->id() == axis->id(); });
  return pos == dom.end() ? nullptr : *pos;
}

template <StmtKind K>
void checkSelect(Context& c, const SelectStmt<K>& s, bool hir) {
  if (!operands(c, s, s.in, s.out)) return;
  const char* op = hir ? "HirAliasSelect" : "select";
  const IterDomain* axis = axisOf(*s.in, s.axis);
  if (!axis) {
    c.report("view", &s,
             std::string(op) + " axis " + (s.axis ? s.axis->str() : std::string("(none)")) + " is not an axis of " +
                 s.in->nameStr());
    return;
  }
  if (axis->isReduction() && !hir)
    c.report("view", &s,
             std::string("select along ") + axis->str() + ", a reduction axis of " + s.in->nameStr() +
                 " that its buffer does not hold");
}

void checkShard(Context& c, const ShardByStream& s) {
  if (!operands(c, s, s.in, s.out)) return;
  const IterDomain* stream = nullptr;
  for (const TensorView* tv : {s.out, s.in}) {
    for (const IterDomain* id : sem::bufferDomain(*tv))
      if (!stream && id->isStream()) stream = id;
  }
  if (!stream) {
    c.report("view", &s,
             "ShardByStream of " + s.in->nameStr() + " into " + s.out->nameStr() +
                 ": neither has a Stream axis, so there are no chunks to take");
    return;
  }
}

void checkSlice(Context& c, const Slice& s) {
  if (!operands(c, s, s.in, s.out)) return;
  const std::vector<IterDomain*>& dom = sem::bufferDomain(*s.in);
  size_t dims = static_cast<size_t>(
      std::count_if(dom.begin(), dom.end(), [](const IterDomain* id) { return !id->isReduction(); }));
  if (s.ranges.size() != dims)
    c.report("view", &s,
             "slice of " + s.in->nameStr() + " gives " + std::to_string(s.ranges.size()) + " ranges for its " +
                 std::to_string(dims) + " buffer dimensions");
  for (size_t d = 0; d < s.ranges.size(); ++d) {
    std::optional<int64_t> step = s.ranges[d].step.constValue();
    if (step && *step != 1)
      c.report("view", &s,
               "slice of " + s.in->nameStr() + " with step " + std::to_string(*step) + " along dimension " +
                   std::to_string(d) + ": a host-program slice has step 1");
  }
}

void checkSymmetricView(Context& c, const SymmetricContiguousView& v) {
  if (!operands(c, v, v.in, v.out)) return;
  if (v.in->memoryType() != MemoryType::kSymmetric)
    c.report("view", &v,
             "SymmetricContiguousView needs a symmetric input (`_sym`); " + v.in->nameStr() + " is " +
                 std::string(memoryTypeName(v.in->memoryType())));
}

}  // namespace

void checkViews(Context& c) {
  for (const Stmt* s : c.statements()) {
    switch (s->kind()) {
      case StmtKind::kAliasSelect: checkSelect(c, *s->as<AliasSelect>(), true); break;
      case StmtKind::kSelect: checkSelect(c, *s->as<Select>(), false); break;
      case StmtKind::kShardByStream: checkShard(c, *s->as<ShardByStream>()); break;
      case StmtKind::kSlice: checkSlice(c, *s->as<Slice>()); break;
      case StmtKind::kSymmetricContiguousView: checkSymmetricView(c, *s->as<SymmetricContiguousView>()); break;
      default: break;
    }
  }
}

}  // namespace braid::wellformed
