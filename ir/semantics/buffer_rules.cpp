#include "ir/semantics/buffer_rules.h"

#include <optional>
#include <string>

#include "ir/checked_math.h"

namespace braid::sem {

const std::vector<IterDomain*>& bufferDomain(const TensorView& tv) {
  if (tv.hasAllocationDomain()) return tv.allocation();
  for (IterDomain* id : tv.loop())
    if (id->definition() != nullptr) return tv.logical();
  return tv.loop();
}

std::vector<int64_t> bufferShape(const TensorView& tv, const Bindings& b, ShapeMode mode) {
  std::vector<int64_t> shape;
  for (const IterDomain* id : mode.logical ? tv.logical() : bufferDomain(tv)) {
    if (id->isReduction()) continue;
    if (id->isBroadcast() || (id->isDeviceParallel() && !mode.fullDevice) || (mode.streamChunk && id->isStream())) {
      shape.push_back(1);
      continue;
    }
    std::optional<int64_t> v;
    try {
      v = id->extent().tryEvaluate(b);
    } catch (const Error& e) {
      throw Error("the size of " + tv.nameStr() + " (axis " + id->str() + "): " + e.what() +
                  boundValues(id->extent(), b));
    }
    if (!v) {
      std::string names;
      for (const auto& n : id->extent().substitute(b).freeSymbols()) names += (names.empty() ? "" : ", ") + n;
      throw Error("the size of " + tv.nameStr() + " (axis " + id->str() + ") depends on unbound symbol(s) " + names +
                  " (bind them with --bind NAME=VALUE)");
    }
    if (*v < 0)
      throw Error("the size of " + tv.nameStr() + " (axis " + id->str() + ") is negative: " + std::to_string(*v) +
                  boundValues(id->extent(), b));
    shape.push_back(*v);
  }
  checkedElementCount(shape, "tensor " + tv.nameStr());
  return shape;
}

std::string boundValues(const Scalar& s, const Bindings& env) {
  std::string out;
  for (const auto& n : s.freeSymbols()) {
    auto it = env.find(n);
    if (it == env.end()) continue;
    out += (out.empty() ? " (" : ", ") + n + " = " + std::to_string(it->second);
  }
  return out.empty() ? out : out + ")";
}

bool loopRunsOverAxis(const ForLoop& loop, const IterDomain& axis) {
  if (loop.domain) return loop.domain == &axis || loop.domain->id() == axis.id() ||
                           loop.domain->extent().simplify() == axis.extent().simplify();
  return loop.start.simplify() == Scalar(0) && loop.stop.simplify() == axis.extent().simplify();
}

bool allocatedPerStreamChunk(const TensorView& tv, const std::vector<const ForLoop*>& enclosing) {
  for (const IterDomain* id : bufferDomain(tv)) {
    if (!id->isStream()) continue;
    for (const ForLoop* loop : enclosing)
      if (loopRunsOverAxis(*loop, *id)) return true;
  }
  return false;
}

bool makesView(const Expr& op) {
  switch (op.type()) {
    case OpType::kSet:
    case OpType::kPermute:
    case OpType::kBroadcast:
    case OpType::kSqueeze:
    case OpType::kReshape:
      return true;
    default:
      return false;
  }
}

}  // namespace braid::sem
