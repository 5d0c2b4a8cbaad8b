#include "passes/schedule.h"

#include <algorithm>
#include <map>

#include "ir/error.h"
#include "passes/fusion_utils.h"

namespace braid {

namespace {

// The logical axes a merge tree covers, outer first; false when a leaf is not a logical axis.
bool mergeLeaves(const TensorView* tv, const IterDomain* id, std::vector<int>& out, int depth = 0) {
  if (depth > 64) return false;
  if (int pos = logicalPosition(tv, id); pos >= 0) {
    out.push_back(pos);
    return true;
  }
  const IdTransform* def = id->definition();
  if (def == nullptr || def->kind != IdTransform::Kind::kMerge) return false;
  return mergeLeaves(tv, def->outer, out, depth + 1) && mergeLeaves(tv, def->inner, out, depth + 1);
}

// For every IterDomain in tv's history (from its logical domain to its loop domain), the
// transform that consumes it.
std::map<const IterDomain*, const IdTransform*> transformUses(const TensorView* tv) {
  std::map<const IterDomain*, const IdTransform*> uses;
  std::vector<const IterDomain*> todo(tv->loop().begin(), tv->loop().end());
  for (size_t guard = 0; !todo.empty() && guard < 100000; ++guard) {
    const IterDomain* id = todo.back();
    todo.pop_back();
    if (logicalPosition(tv, id) >= 0) continue;
    const IdTransform* def = id->definition();
    if (def == nullptr) continue;
    if (def->kind == IdTransform::Kind::kSplit) {
      if (uses.emplace(def->in, def).second) todo.push_back(def->in);
    } else {
      if (uses.emplace(def->outer, def).second) todo.push_back(def->outer);
      if (uses.emplace(def->inner, def).second) todo.push_back(def->inner);
    }
  }
  return uses;
}

int loopPosition(const TensorView* tv, const IterDomain* id) {
  const auto& l = tv->loop();
  auto it = std::find(l.begin(), l.end(), id);
  return it == l.end() ? -1 : static_cast<int>(it - l.begin());
}

std::string scalarStr(const Scalar& s) { return s.str(); }

}  // namespace

std::string AxisPath::str() const {
  std::string s = base.size() == 1 ? "axis " + std::to_string(base[0])
                                   : "axes " + std::to_string(base.front()) + "-" + std::to_string(base.back()) +
                                         " merged";
  for (const SplitStep& st : steps)
    s += std::string(" / ") + (st.outer ? "outer" : "inner") + " part of " + (st.innerSplit ? "an inner" : "an outer") +
         " split by " + scalarStr(st.factor);
  return s;
}

std::optional<AxisPath> axisPath(const TensorView* tv, const IterDomain* id, std::string* why) {
  auto fail = [&](const std::string& w) -> std::optional<AxisPath> {
    if (why) *why = w;
    return std::nullopt;
  };
  std::vector<SplitStep> rev;
  const IterDomain* cur = id;
  AxisPath path;
  for (int guard = 0;; ++guard) {
    if (guard > 1000) return fail("its derivation is too deep");
    if (int pos = logicalPosition(tv, cur); pos >= 0) {
      path.base = AxisRange{pos, 1};
      break;
    }
    const IdTransform* def = cur->definition();
    if (def == nullptr) return fail(id->str() + " is not derived from the logical domain of " + tvLabel(tv));
    if (def->kind == IdTransform::Kind::kSplit) {
      rev.push_back(SplitStep{def->factor, def->inner_split, cur == def->outer});
      cur = def->in;
      continue;
    }
    std::vector<int> leaves;
    if (!mergeLeaves(tv, cur, leaves))
      return fail(id->str() + " comes from a merge of a split axis of " + tvLabel(tv) +
                  "; braid follows merges of whole logical axes only");
    for (size_t i = 1; i < leaves.size(); ++i)
      if (leaves[i] != leaves[i - 1] + 1)
        return fail(id->str() + " merges logical axes of " + tvLabel(tv) +
                    " that are not adjacent and in order; reorder them into place first");
    path.base = AxisRange{leaves.front(), static_cast<int>(leaves.size())};
    break;
  }
  path.steps = std::move(rev);
  std::reverse(path.steps.begin(), path.steps.end());
  return path;
}

AxisPath requireAxisPath(const TensorView* tv, const IterDomain* id) {
  std::string why;
  auto p = axisPath(tv, id, &why);
  if (!p) throw NotLowerableError(tvLabel(tv) + ": the " + std::string(parallelTypeName(id->parallelType())) +
                                  " axis " + id->str() + " cannot be lowered: " + why);
  return std::move(*p);
}

IterDomain* parallelLoopAxis(const TensorView* tv, ParallelType p, bool reduction) {
  for (IterDomain* id : tv->loop())
    if (id->parallelType() == p && id->isReduction() == reduction) return id;
  return nullptr;
}

std::optional<AxisPath> pathToConsumer(const Expr& e, size_t input_index, const AxisPath& path) {
  std::vector<int> map = producerToConsumerMap(e, input_index);
  AxisPath out;
  out.base.count = path.base.count;
  for (size_t i = 0; i < path.base.size(); ++i) {
    const int b = path.base[i];
    if (b < 0 || b >= static_cast<int>(map.size()) || map[static_cast<size_t>(b)] < 0) return std::nullopt;
    const int c = map[static_cast<size_t>(b)];
    if (i == 0) out.base.first = c;
    else if (c != out.base[i]) return std::nullopt;  // not consecutive on the consumer
  }
  out.steps = path.steps;
  return out;
}

std::optional<AxisPath> pathToProducer(const Expr& e, size_t input_index, const AxisPath& path) {
  std::vector<int> map = producerToConsumerMap(e, input_index);
  AxisPath out;
  out.base.count = path.base.count;
  for (size_t i = 0; i < path.base.size(); ++i) {
    const int b = path.base[i];
    auto it = std::find(map.begin(), map.end(), b);
    if (b < 0 || it == map.end()) return std::nullopt;
    const int p = static_cast<int>(it - map.begin());
    if (i == 0) out.base.first = p;
    else if (p != out.base[i]) return std::nullopt;  // not consecutive on the producer
  }
  out.steps = path.steps;
  return out;
}

namespace {

// Walks `path` over `tv`'s schedule: transforms `tv` already has are followed; a missing one is
// applied to its loop axes when `apply`, otherwise the walk stops there (every later transform
// then acts on fresh axes, so the path is feasible). Returns the axis reached (in a dry run: the
// last one followed), or null with `why` set on a conflict.
IterDomain* walkPath(TensorView* tv, const AxisPath& path, bool apply, std::string* why) {
  auto fail = [&](const std::string& w) -> IterDomain* {
    if (why) *why = w;
    return nullptr;
  };
  const auto& logical = tv->logical();
  for (int b : path.base)
    if (b < 0 || b >= static_cast<int>(logical.size())) return fail("axis " + std::to_string(b) + " is out of range");
  auto uses = transformUses(tv);
  IterDomain* cur = logical[static_cast<size_t>(path.base[0])];
  for (size_t j = 1; j < path.base.size(); ++j) {
    IterDomain* next = logical[static_cast<size_t>(path.base[j])];
    auto u = uses.find(cur);
    if (u != uses.end() && u->second->kind == IdTransform::Kind::kMerge && u->second->outer == cur &&
        u->second->inner == next) {
      cur = u->second->out;
      continue;
    }
    int pc = loopPosition(tv, cur), pn = loopPosition(tv, next);
    if (u != uses.end() || uses.count(next) || pc < 0 || pn != pc + 1)
      return fail(cur->str() + " and " + next->str() + " of " + tvLabel(tv) + " are not adjacent loop axes to merge");
    if (cur->isReduction() != next->isReduction())
      return fail(cur->str() + " and " + next->str() + " of " + tvLabel(tv) + " mix a reduction and an iteration axis");
    if (!apply) return cur;
    tv->merge(pc);
    cur = tv->loop()[static_cast<size_t>(pc)];
    uses = transformUses(tv);
  }
  for (const SplitStep& st : path.steps) {
    auto u = uses.find(cur);
    if (u != uses.end()) {
      const IdTransform* t = u->second;
      if (t->kind != IdTransform::Kind::kSplit || t->factor != st.factor || t->inner_split != st.innerSplit)
        return fail(cur->str() + " of " + tvLabel(tv) + " is already " +
                    (t->kind == IdTransform::Kind::kSplit ? "split by " + t->factor.str() : std::string("merged")) +
                    ", not " + (st.innerSplit ? "inner" : "outer") + " split by " + st.factor.str());
      cur = st.outer ? t->outer : t->inner;
      continue;
    }
    int pos = loopPosition(tv, cur);
    if (pos < 0) return fail(cur->str() + " is not a loop axis of " + tvLabel(tv));
    if (!apply) return cur;
    tv->split(pos, st.factor, st.innerSplit);
    cur = tv->loop()[static_cast<size_t>(st.outer ? pos : pos + 1)];
    uses = transformUses(tv);
  }
  return cur;
}

}  // namespace

IterDomain* replayPath(TensorView* tv, const AxisPath& path, std::string* why) {
  // Dry run first, so that a conflict leaves `tv` untouched.
  if (walkPath(tv, path, false, why) == nullptr) return nullptr;
  return walkPath(tv, path, true, why);
}

std::optional<int64_t> constExtent(const Scalar& e) { return e.simplify().constValue(); }

namespace {

// The mesh's size along a device type: DIDx is the last dimension of the mesh shape, DIDy the
// one before.
std::optional<int64_t> meshSizeAlong(const DeviceMesh& m, ParallelType p) {
  size_t axis = p == ParallelType::kDIDx ? 0 : 1;
  if (m.shape().size() <= axis) return std::nullopt;
  return m.shape()[m.shape().size() - 1 - axis];
}

void checkAxis(const TensorView* tv, const IterDomain* id) {
  const ParallelType p = id->parallelType();
  // Built only for a message: every parallel axis of every tensor passes through here.
  auto what = [&] { return tvLabel(tv) + ": the " + std::string(parallelTypeName(p)) + " axis " + id->str(); };
  if (id->isStream() && (id->isBroadcast() || id->isReduction()))
    throw NotLowerableError(tvLabel(tv) + ": the Stream axis " + id->str() + " is a " +
                            (id->isBroadcast() ? "broadcast" : "reduction") +
                            " axis; stream-parallelize an iteration axis");
  if (id->isDeviceParallel() && id->isBroadcast())
    throw NotLowerableError(what() + " is a broadcast axis; shard an iteration axis");
  AxisPath path = requireAxisPath(tv, id);
  // Walk the splits from the axis back to the logical domain, checking each.
  const IterDomain* cur = id;
  bool last = true;
  for (int guard = 0; guard < 1000 && logicalPosition(tv, cur) < 0; ++guard) {
    const IdTransform* def = cur->definition();
    if (def == nullptr || def->kind != IdTransform::Kind::kSplit) break;
    const bool outer = cur == def->outer;
    if (last && !outer)
      throw NotLowerableError(what() + " is the inner output of a split of " + def->in->str() +
                              "; parallelize the outer output (nvFuser supports neither DID nor Stream on inner "
                              "splits)");
    if (last && id->isStream() && def->inner_split)
      throw NotLowerableError(what() + " comes from an inner split of " + def->in->str() + " by " + def->factor.str() +
                              "; use an outer split (outerSplit / split(axis, S, false)): ShardByStream takes chunk i "
                              "of S equal chunks, which an inner split's factor does not give");
    auto e = constExtent(def->in->extent());
    auto f = constExtent(def->factor);
    if (e && f && *f > 0) {
      const int64_t parts = def->inner_split ? (*e + *f - 1) / *f : *f;
      const int64_t chunk = (*e + parts - 1) / parts;
      // Every split a buffer's layout takes over must divide (a device must hold an equal shard,
      // a chunk axis must not pad); only the Stream split itself may leave a shorter last chunk.
      if (!(last && id->isStream()) && *e % *f != 0)
        throw NotLowerableError(what() + " splits " + def->in->str() + " (" + std::to_string(*e) + ") by " +
                                std::to_string(*f) + ", which does not divide" +
                                (id->isDeviceParallel() ? ": every device must hold an equal shard"
                                                        : " (only the split that makes the Stream axis may leave a "
                                                          "shorter last chunk)"));
      if (last && id->isStream() && (parts - 1) * chunk >= *e)
        throw NotLowerableError(what() + " splits " + def->in->str() + " (" + std::to_string(*e) + ") into " +
                                std::to_string(parts) + " chunks of ceilDiv(" + std::to_string(*e) + ", " +
                                std::to_string(parts) + ") = " + std::to_string(chunk) +
                                ", which leaves the last chunk empty; choose a chunk count that leaves every chunk "
                                "some rows");
    }
    cur = def->in;
    last = false;
  }
  if (id->isDeviceParallel() && tv->hasDeviceMesh()) {
    auto size = meshSizeAlong(*tv->deviceMesh(), p);
    if (!size)
      throw NotLowerableError(what() + " is device-parallel but its mesh " + tv->deviceMesh()->str() +
                              " has no such dimension");
    auto ext = constExtent(id->extent());
    if (ext && *ext != *size)
      throw NotLowerableError(what() + " has extent " + std::to_string(*ext) + " but its mesh " +
                              tv->deviceMesh()->str() + " has " + std::to_string(*size) +
                              " devices along it; a sharded axis holds one shard per device");
  }
  (void)path;
}

}  // namespace

void checkSchedules(const Fusion& f) {
  for (const TensorView* tv : f.tensors()) {
    std::map<std::pair<ParallelType, bool>, const IterDomain*> seen;
    for (const IterDomain* id : tv->loop()) {
      if (id->parallelType() == ParallelType::kSerial) continue;
      auto [it, fresh] = seen.emplace(std::make_pair(id->parallelType(), id->isReduction()), id);
      if (!fresh)
        throw NotLowerableError(tvLabel(tv) + " has two " + (id->isReduction() ? "reduction" : "iteration") + " axes on " +
                                std::string(parallelTypeName(id->parallelType())) + ": " + it->second->str() + " and " +
                                id->str());
      checkAxis(tv, id);
    }
  }
}

}  // namespace braid
