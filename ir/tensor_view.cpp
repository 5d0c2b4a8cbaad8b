#include "ir/tensor_view.h"

#include <algorithm>
#include <set>

#include "ir/error.h"
#include "ir/fusion.h"

namespace braid {

TensorView::TensorView(Fusion* fusion, int name, DataType dtype, std::vector<IterDomain*> logical, MemoryType mem)
    : fusion_(fusion), name_(name), dtype_(dtype), mem_(mem), logical_(logical), loop_(std::move(logical)) {}

namespace {
int normalizeAxis(int axis, int n, const TensorView& tv) {
  int a = axis < 0 ? axis + n : axis;
  if (a < 0 || a >= n)
    throw Error("axis " + std::to_string(axis) + " is out of range for " + tv.nameStr() + " with " +
                std::to_string(n) + " loop axes");
  return a;
}
}  // namespace

IterDomain* TensorView::axis(int i) const { return loop_[static_cast<size_t>(normalizeAxis(i, nDims(), *this))]; }

void TensorView::removeUse(Expr* e) { uses_.erase(std::remove(uses_.begin(), uses_.end(), e), uses_.end()); }

TensorView* TensorView::split(int axis, Scalar factor, bool inner_split) {
  int a = normalizeAxis(axis, nDims(), *this);
  IterDomain* in = loop_[static_cast<size_t>(a)];
  if (auto f = factor.constValue(); f && *f <= 0)
    throw Error("split factor of " + nameStr() + " must be positive, got " + std::to_string(*f));
  Scalar other = ceilDiv(in->extent(), factor);
  Scalar outer_extent = inner_split ? other : factor;
  Scalar inner_extent = inner_split ? factor : other;
  IterDomain* outer = fusion_->newIterDomain(outer_extent, in->iterType(), ParallelType::kSerial);
  IterDomain* inner = fusion_->newIterDomain(inner_extent, in->iterType(), ParallelType::kSerial);
  // The parallel type stays with the part that keeps the axis's role: nvFuser leaves both
  // serial; callers parallelize the piece they want.
  IdTransform t;
  t.kind = IdTransform::Kind::kSplit;
  t.in = in;
  t.factor = factor;
  t.inner_split = inner_split;
  t.outer = outer;
  t.inner = inner;
  fusion_->addTransform(t);
  loop_[static_cast<size_t>(a)] = outer;
  loop_.insert(loop_.begin() + a + 1, inner);
  return this;
}

TensorView* TensorView::merge(int axis) {
  int a = normalizeAxis(axis, nDims(), *this);
  if (a + 1 >= nDims()) throw Error("merge of " + nameStr() + " needs an axis after axis " + std::to_string(axis));
  IterDomain* outer = loop_[static_cast<size_t>(a)];
  IterDomain* inner = loop_[static_cast<size_t>(a) + 1];
  if (outer->isReduction() != inner->isReduction())
    throw Error("merge of " + nameStr() + " mixes a reduction and an iteration axis");
  IterType t = outer->isBroadcast() && inner->isBroadcast() ? IterType::kBroadcast
               : outer->isReduction()                      ? IterType::kReduction
                                                           : IterType::kIteration;
  IterDomain* out = fusion_->newIterDomain(outer->extent() * inner->extent(), t);
  IdTransform tr;
  tr.kind = IdTransform::Kind::kMerge;
  tr.outer = outer;
  tr.inner = inner;
  tr.out = out;
  fusion_->addTransform(tr);
  loop_[static_cast<size_t>(a)] = out;
  loop_.erase(loop_.begin() + a + 1);
  return this;
}

TensorView* TensorView::reorder(const std::unordered_map<int, int>& old_to_new) {
  int n = nDims();
  std::vector<IterDomain*> out(static_cast<size_t>(n), nullptr);
  std::set<int> used_old;
  for (auto [o, nw] : old_to_new) {
    int oa = normalizeAxis(o, n, *this);
    int na = normalizeAxis(nw, n, *this);
    if (out[static_cast<size_t>(na)] != nullptr || !used_old.insert(oa).second)
      throw Error("reorder of " + nameStr() + " names an axis twice");
    out[static_cast<size_t>(na)] = loop_[static_cast<size_t>(oa)];
  }
  size_t next = 0;
  for (int i = 0; i < n; ++i) {
    if (used_old.count(i)) continue;
    while (out[next] != nullptr) ++next;
    out[next] = loop_[static_cast<size_t>(i)];
  }
  loop_ = std::move(out);
  return this;
}

TensorView* TensorView::parallelize(int axis, ParallelType p) {
  IterDomain* id = this->axis(axis);
  if (p != ParallelType::kSerial) {
    for (IterDomain* other : loop_) {
      if (other == id || other->parallelType() != p) continue;
      // A device type may shard one iteration axis and one reduction axis.
      if (isDeviceParallel(p) && other->isReduction() != id->isReduction()) continue;
      throw Error(nameStr() + " already has a loop axis parallelized on " + std::string(parallelTypeName(p)) + " (" +
                  other->str() + ")");
    }
  }
  id->parallelize(p);
  return this;
}

TensorView* TensorView::setDeviceMesh(DeviceMesh mesh) {
  mesh_ = std::move(mesh);
  user_mesh_ = true;
  return this;
}

TensorView* TensorView::inheritDeviceMesh(DeviceMesh mesh) {
  mesh_ = std::move(mesh);
  user_mesh_ = false;
  return this;
}

namespace {
// Adds to `out` the logical axes `id` derives from through splits and merges; false when `id`
// does not derive from `logical` at all.
bool collectLogicalSources(const IterDomain* id, const std::vector<IterDomain*>& logical,
                           std::set<const IterDomain*>& out, int depth = 0) {
  if (depth > 1000) return false;
  if (std::find(logical.begin(), logical.end(), id) != logical.end()) {
    out.insert(id);
    return true;
  }
  const IdTransform* def = id->definition();
  if (def == nullptr) return false;
  if (def->kind == IdTransform::Kind::kSplit) return collectLogicalSources(def->in, logical, out, depth + 1);
  return collectLogicalSources(def->outer, logical, out, depth + 1) &&
         collectLogicalSources(def->inner, logical, out, depth + 1);
}
}  // namespace

TensorView* TensorView::setAllocationDomain(std::vector<IterDomain*> allocation) {
  // Every allocation axis must be a logical axis or derive from logical axes through the
  // transforms of this tensor; no axis twice; every non-reduction logical axis covered. An empty
  // domain resets the allocation to the logical domain.
  if (allocation.empty()) {
    allocation_.clear();
    return this;
  }
  std::set<const IterDomain*> seen;
  std::set<const IterDomain*> covered;
  for (IterDomain* id : allocation) {
    if (id == nullptr) throw Error("allocation domain of " + nameStr() + " contains a null axis");
    if (!seen.insert(id).second)
      throw Error("allocation domain of " + nameStr() + " names " + id->str() + " twice");
    if (!collectLogicalSources(id, logical_, covered))
      throw Error("allocation domain of " + nameStr() + " names " + id->str() +
                  ", which is neither a logical axis of it nor derived from one by split or merge");
  }
  for (IterDomain* l : logical_)
    if (!l->isReduction() && !covered.count(l))
      throw Error("allocation domain of " + nameStr() + " does not cover its logical axis " + l->str());
  allocation_ = std::move(allocation);
  return this;
}

std::string TensorView::nameStr() const {
  std::string s = "T";
  s += std::to_string(name_);
  s += '_';
  s += memoryTypeLetter(mem_);
  if (dtype_known_) {
    s += '_';
    s += dataTypeName(dtype_);
  }
  return s;
}

std::string TensorView::str() const {
  std::string s = nameStr();
  s += '[';
  for (size_t i = 0; i < loop_.size(); ++i) {
    if (i) s += ", ";
    s += loop_[i]->str();
  }
  s += ']';
  if (mesh_) {
    s += " (";
    s += mesh_->str();
    s += ')';
  }
  return s;
}

IterDomain* TensorView::logicalOrigin(const IterDomain* id) const {
  const IterDomain* cur = id;
  for (int guard = 0; guard < 1000 && cur != nullptr; ++guard) {
    for (IterDomain* l : logical_)
      if (l == cur) return l;
    const IdTransform* def = cur->definition();
    if (def == nullptr || def->kind != IdTransform::Kind::kSplit) return nullptr;
    cur = def->in;
  }
  return nullptr;
}

int TensorView::loopAxisOf(ParallelType p) const {
  for (size_t i = 0; i < loop_.size(); ++i)
    if (loop_[i]->parallelType() == p) return static_cast<int>(i);
  return -1;
}

}  // namespace braid
