#include "passes/buffer_layout.h"

#include <algorithm>

#include "ir/error.h"
#include "passes/fusion_utils.h"
#include "passes/schedule.h"

namespace braid {

namespace {

int positionIn(const std::vector<IterDomain*>& dom, const IterDomain* id) {
  auto it = std::find(dom.begin(), dom.end(), id);
  return it == dom.end() ? -1 : static_cast<int>(it - dom.begin());
}

// Makes `id` an axis of `dom` by applying, in place, the transforms that produce it.
void expose(const TensorView* tv, std::vector<IterDomain*>& dom, IterDomain* id, int depth = 0) {
  if (positionIn(dom, id) >= 0) return;
  const IdTransform* def = id->definition();
  if (depth > 1000 || def == nullptr)
    throw NotLowerableError(tvLabel(tv) + ": " + id->str() + " does not derive from its logical domain");
  if (def->kind == IdTransform::Kind::kSplit) {
    expose(tv, dom, def->in, depth + 1);
    int q = positionIn(dom, def->in);
    if (q < 0) return;  // already split (the sibling's path did it)
    dom[static_cast<size_t>(q)] = def->outer;
    dom.insert(dom.begin() + q + 1, def->inner);
    return;
  }
  expose(tv, dom, def->outer, depth + 1);
  expose(tv, dom, def->inner, depth + 1);
  int qo = positionIn(dom, def->outer), qi = positionIn(dom, def->inner);
  if (qo < 0 || qi != qo + 1)
    throw NotLowerableError(tvLabel(tv) + ": " + id->str() + " merges " + def->outer->str() + " and " +
                            def->inner->str() + ", which its buffer does not hold side by side");
  dom[static_cast<size_t>(qo)] = def->out;
  dom.erase(dom.begin() + qi);
}

}  // namespace

std::vector<LayoutAxis> bufferLayout(const TensorView* tv, bool per_iteration) {
  std::vector<IterDomain*> dom = tv->logical();
  for (IterDomain* id : tv->loop()) {
    if (id->isDeviceParallel() || (per_iteration && id->isStream() && !id->isReduction())) {
      expose(tv, dom, id);
    } else if (id->isStream()) {
      // The whole buffer holds the axis the Stream axis's splits cut (a merge of logical axes
      // is one buffer axis: merging adjacent axes does not move memory), so that views can
      // take its chunks.
      IterDomain* top = id;
      while (positionIn(dom, top) < 0 && top->definition() != nullptr &&
             top->definition()->kind == IdTransform::Kind::kSplit)
        top = top->definition()->in;
      if (positionIn(dom, top) < 0 && top->definition() != nullptr) expose(tv, dom, top);
    }
  }
  std::vector<LayoutAxis> out;
  for (IterDomain* id : dom) {
    const bool in_loop = std::find(tv->loop().begin(), tv->loop().end(), id) != tv->loop().end();
    out.push_back(LayoutAxis{id, in_loop ? id->parallelType() : ParallelType::kSerial});
  }
  return out;
}

bool canChunk(const TensorView* tv, const AxisPath& path) {
  AxisPath parent = path;
  if (!parent.steps.empty()) {
    const SplitStep last = parent.steps.back();
    if (!last.outer || last.innerSplit) return false;
    parent.steps.pop_back();
  }
  for (const LayoutAxis& a : bufferLayout(tv, false)) {
    auto p = axisPath(tv, a.id);
    if (p && (*p == path || *p == parent)) return true;
  }
  return false;
}

int layoutPosition(const std::vector<LayoutAxis>& layout, const IterDomain* id) {
  for (size_t i = 0; i < layout.size(); ++i)
    if (layout[i].id == id) return static_cast<int>(i);
  return -1;
}

}  // namespace braid
