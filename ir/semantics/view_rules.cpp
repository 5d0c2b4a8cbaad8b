#include "ir/semantics/view_rules.h"

#include <algorithm>
#include <functional>
#include <numeric>

#include "ir/checked_math.h"
#include "ir/semantics/buffer_rules.h"

namespace braid::sem {

namespace {

int64_t evalAt(const Scalar& s, const Bindings& env, const Stmt& stmt) {
  std::optional<int64_t> v;
  try {
    v = s.tryEvaluate(env);
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + " in " + s.str() + boundValues(s, env));
  }
  if (!v) {
    std::string names;
    for (const auto& n : s.substitute(env).freeSymbols()) names += (names.empty() ? "" : ", ") + n;
    throw Error(stmt.loc.str() + ": cannot evaluate " + s.str() + ": unbound symbol(s) " + names +
                " (bind them with --bind NAME=VALUE)");
  }
  return *v;
}

ViewRule problem(FindingKind k, std::string message) {
  ViewRule r;
  r.problem = k;
  r.message = std::move(message);
  return r;
}

ViewStep step(ViewStep::Kind k, int dim, int64_t start = 0, int64_t length = 0) {
  ViewStep s;
  s.kind = k;
  s.dim = dim;
  s.start = start;
  s.length = length;
  return s;
}

// Position of `id` among the buffer dimensions of `dom` (reductions are not in the buffer).
int bufferDim(const std::vector<IterDomain*>& dom, size_t pos) {
  return static_cast<int>(std::count_if(dom.begin(), dom.begin() + static_cast<long>(pos),
                                        [](const IterDomain* id) { return !id->isReduction(); }));
}

int64_t product(const std::vector<int64_t>& v) { return checkedElementCount(v, "view"); }

}  // namespace

namespace {

// HirAliasSelect (`hir`: broadcast and size-1 axes take index 0, a reduction axis leaves the input
// unchanged) and ATen's select (a negative index counts from the end).
template <StmtKind K>
ViewRule selectStmtView(const SelectStmt<K>& a, const std::vector<int64_t>& baseSizes, const Bindings& env, bool hir) {
  const char* op = hir ? "HirAliasSelect" : "select";
  std::vector<IterDomain*> dom = bufferDomain(*a.in);
  auto pos = std::find(dom.begin(), dom.end(), a.axis);
  if (pos == dom.end() && a.axis)
    pos = std::find_if(dom.begin(), dom.end(), [&](const IterDomain* id) { return id->id() == a.axis->id(); });
  if (pos == dom.end() || (!hir && (*pos)->isReduction()))
    throw Error(a.loc.str() + ": " + op + " axis " + (a.axis ? a.axis->str() : std::string("?")) +
                " is not a dimension of " + a.in->nameStr());
  if ((*pos)->isReduction()) return {};  // not in the buffer: the input unchanged
  int dim = bufferDim(dom, static_cast<size_t>(pos - dom.begin()));
  if (dim >= static_cast<int>(baseSizes.size()))
    return problem(FindingKind::kShapeMismatch, a.in->nameStr() + " is bound to a view with " +
                                                    std::to_string(baseSizes.size()) + " dimensions; axis " +
                                                    (*pos)->str() + " would be dimension " + std::to_string(dim));
  int64_t size = baseSizes[static_cast<size_t>(dim)];
  int64_t index = hir && ((*pos)->isBroadcast() || size == 1) ? 0 : evalAt(a.index, env, a);
  int64_t at = !hir && index < 0 ? index + size : index;
  if (at < 0 || at >= size)
    return problem(FindingKind::kViewOutOfBounds, "selects index " + std::to_string(index) + " of " +
                                                      a.in->nameStr() + " along " + (*pos)->str() + ", which has " +
                                                      std::to_string(size) + " elements there");
  ViewRule r;
  r.steps.push_back(step(ViewStep::Kind::kSelect, dim, at));
  return r;
}

}  // namespace

ViewRule aliasSelectView(const AliasSelect& a, const std::vector<int64_t>& baseSizes, const Bindings& env) {
  return selectStmtView(a, baseSizes, env, /*hir=*/true);
}

ViewRule selectView(const Select& s, const std::vector<int64_t>& baseSizes, const Bindings& env) {
  return selectStmtView(s, baseSizes, env, /*hir=*/false);
}

ViewRule sliceView(const Slice& s, const std::vector<int64_t>& baseSizes, const Bindings& env) {
  if (s.ranges.size() != baseSizes.size())
    throw Error(s.loc.str() + ": slice of " + s.in->nameStr() + " gives " + std::to_string(s.ranges.size()) +
                " ranges for " + std::to_string(baseSizes.size()) + " dimensions");
  ViewRule r;
  for (size_t d = 0; d < s.ranges.size(); ++d) {
    const SliceRange& range = s.ranges[d];
    int64_t size = baseSizes[d];
    int64_t step_by = evalAt(range.step, env, s);
    if (step_by != 1)
      throw Error(s.loc.str() + ": slice of " + s.in->nameStr() + " with step " + std::to_string(step_by) +
                  " along dimension " + std::to_string(d) + ": braid models slices with step 1 only");
    auto clamp = [&](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + size : v, 0, size); };
    int64_t start = clamp(evalAt(range.start, env, s));
    int64_t stop = clamp(evalAt(range.stop, env, s));
    if (start == 0 && stop == size) continue;
    r.steps.push_back(step(ViewStep::Kind::kNarrow, static_cast<int>(d), start, std::max<int64_t>(0, stop - start)));
  }
  return r;
}

ViewRule shardByStreamView(const ShardByStream& s, const std::vector<int64_t>& baseSizes, const Bindings& env) {
  // The chunk count is the extent of the Stream axis of the output's domain (as nvFuser), else the
  // input's.
  const TensorView* ref = s.out;
  std::vector<IterDomain*> dom = bufferDomain(*ref);
  auto stream = std::find_if(dom.begin(), dom.end(), [](const IterDomain* id) { return id->isStream(); });
  if (stream == dom.end()) {
    ref = s.in;
    dom = bufferDomain(*ref);
    stream = std::find_if(dom.begin(), dom.end(), [](const IterDomain* id) { return id->isStream(); });
  }
  if (stream == dom.end())
    return problem(FindingKind::kShapeMismatch,
                   "neither " + s.in->nameStr() + " nor its shard " + s.out->nameStr() + " has a Stream axis");
  int dim = bufferDim(dom, static_cast<size_t>(stream - dom.begin()));
  int rank = static_cast<int>(baseSizes.size());
  if (dim >= rank)
    return problem(FindingKind::kShapeMismatch, "the Stream axis " + (*stream)->str() + " is dimension " +
                                                    std::to_string(dim) + " but " + s.in->nameStr() + " has " +
                                                    std::to_string(rank));
  int64_t chunks = evalAt((*stream)->extent(), env, s);
  int64_t index = evalAt(s.streamIndex, env, s);
  int64_t size = baseSizes[static_cast<size_t>(dim)];
  int64_t chunk = chunks > 0 ? (size + chunks - 1) / chunks : size;
  int64_t start = index * chunk;
  if (chunks <= 0 || index < 0 || index >= chunks || start >= size)
    return problem(FindingKind::kViewOutOfBounds,
                   "takes chunk " + std::to_string(index) + " of " + std::to_string(chunks) + " of " +
                       s.in->nameStr() + " along dimension " + std::to_string(dim) + " (" + std::to_string(size) +
                       " elements: " + std::to_string(size == 0 || chunk == 0 ? 0 : (size + chunk - 1) / chunk) +
                       " non-empty chunks)");
  ViewRule r;
  r.steps.push_back(step(ViewStep::Kind::kNarrow, dim, start, std::min(chunk, size - start)));
  int out_rank = static_cast<int>(std::count_if(s.out->loop().begin(), s.out->loop().end(),
                                                [](const IterDomain* id) { return !id->isReduction(); }));
  if (out_rank == rank + 1) r.steps.push_back(step(ViewStep::Kind::kUnsqueeze, dim));
  return r;
}

std::optional<ViewRule> opView(const Expr& op, const std::vector<int64_t>& inSizes, bool inContiguous,
                               const std::vector<int64_t>& outShape) {
  if (!makesView(op) || op.inputs().empty()) return std::nullopt;
  int rank = static_cast<int>(inSizes.size());
  ViewRule r;
  switch (op.type()) {
    case OpType::kSet:
      return r;
    case OpType::kPermute: {
      if (op.permutation.size() != inSizes.size())
        return problem(FindingKind::kShapeMismatch, "Set.Permute's permutation has " +
                                                        std::to_string(op.permutation.size()) + " axes but " +
                                                        op.input(0)->nameStr() + " has " + std::to_string(rank));
      ViewStep p = step(ViewStep::Kind::kPermute, 0);
      p.perm = op.permutation;
      r.steps.push_back(p);
      return r;
    }
    case OpType::kBroadcast: {
      if (op.broadcastFlags.empty()) return std::nullopt;
      int d = 0, now = rank;
      for (bool f : op.broadcastFlags) {
        if (f) r.steps.push_back(step(ViewStep::Kind::kUnsqueeze, std::min(d, now++)));
        ++d;
      }
      return r;
    }
    case OpType::kSqueeze: {
      if (op.squeezeFlags.empty()) return std::nullopt;
      for (size_t d = op.squeezeFlags.size(); d-- > 0;)
        if (op.squeezeFlags[d] && static_cast<int>(d) < rank && inSizes[d] == 1)
          r.steps.push_back(step(ViewStep::Kind::kSelect, static_cast<int>(d), 0));
      return r;
    }
    case OpType::kReshape: {
      if (!inContiguous || product(outShape) != product(inSizes)) return std::nullopt;
      ViewStep v = step(ViewStep::Kind::kReshape, 0);
      v.shape = outShape;
      r.steps.push_back(v);
      return r;
    }
    default:
      return std::nullopt;
  }
}

Region applyView(Region r, const std::vector<ViewStep>& steps) {
  for (const ViewStep& s : steps) {
    switch (s.kind) {
      case ViewStep::Kind::kSelect:
        r = r.select(s.dim, s.start);
        break;
      case ViewStep::Kind::kNarrow:
        r = r.narrow(s.dim, s.start, s.length);
        break;
      case ViewStep::Kind::kPermute:
        r = r.permute(s.perm);
        break;
      case ViewStep::Kind::kUnsqueeze:
        r = r.unsqueeze(s.dim);
        break;
      case ViewStep::Kind::kReshape: {
        Region v = Region::contiguous(r.buffer, s.shape);
        v.offset = r.minAddress();
        r = v;
        break;
      }
    }
  }
  return r;
}

}  // namespace braid::sem
