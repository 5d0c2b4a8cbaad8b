#include "passes/fusion_utils.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <unordered_set>

namespace braid {

namespace {

// Logical positions of the non-reduction axes (what an op reads).
std::vector<int> dataPositions(const TensorView* tv) {
  std::vector<int> out;
  for (size_t i = 0; i < tv->logical().size(); ++i)
    if (!tv->logical()[i]->isReduction()) out.push_back(static_cast<int>(i));
  return out;
}

// The number of non-reduction axes.
int dataAxisCount(const TensorView* tv) {
  return static_cast<int>(std::count_if(tv->logical().begin(), tv->logical().end(),
                                        [](const IterDomain* id) { return !id->isReduction(); }));
}

}  // namespace

std::vector<int> producerToConsumerMap(const Expr& e, size_t input_index) {
  const TensorView* in = e.input(input_index);
  const TensorView* out = e.output(0);
  std::vector<int> map(in->logical().size(), -1);
  const int nd = dataAxisCount(in);
  // Without reduction axes (the usual input) the i-th data axis is logical axis i: no list needed.
  const bool dense = nd == static_cast<int>(in->logical().size());
  const std::vector<int> data = dense ? std::vector<int>() : dataPositions(in);
  const int L = static_cast<int>(out->logical().size());
  auto set = [&](int data_index, int out_pos) {
    if (data_index >= 0 && data_index < nd && out_pos >= 0 && out_pos < L)
      map[static_cast<size_t>(dense ? data_index : data[static_cast<size_t>(data_index)])] = out_pos;
  };
  switch (e.type()) {
    case OpType::kSet:
    case OpType::kUnary:
    case OpType::kBinary:
    case OpType::kReduction:
      for (int i = 0; i < nd; ++i) set(i, i);
      break;
    case OpType::kPermute:
      for (int i = 0; i < static_cast<int>(e.permutation.size()); ++i) set(static_cast<int>(e.permutation[i]), i);
      break;
    case OpType::kBroadcast: {
      int j = 0;
      for (int i = 0; i < static_cast<int>(e.broadcastFlags.size()); ++i)
        if (!e.broadcastFlags[static_cast<size_t>(i)]) set(j++, i);
      break;
    }
    case OpType::kSqueeze: {
      int j = 0;
      for (int i = 0; i < static_cast<int>(e.squeezeFlags.size()); ++i)
        if (!e.squeezeFlags[static_cast<size_t>(i)]) set(i, j++);
      break;
    }
    case OpType::kReshape: {
      // Consecutive groups of axes with equal element counts: one to one, a split (one input
      // axis, several output axes) or a merge (several, one). The outermost axis of a group maps
      // to the outermost of the other side, as nvFuser follows reshapes when it propagates
      // shardings: a split-off outer part then names the same elements on both sides whenever
      // its factor divides the outermost extent (checkSchedules checks that for constants).
      const std::vector<int> in_data = dataPositions(in), out_data = dataPositions(out);
      std::vector<Scalar> in_ext, out_ext;
      for (int i : in_data) in_ext.push_back(in->logical()[static_cast<size_t>(i)]->extent());
      for (int i : out_data) out_ext.push_back(out->logical()[static_cast<size_t>(i)]->extent());
      size_t a = 0, b = 0;
      while (a < in_ext.size() && b < out_ext.size()) {
        size_t a0 = a, b0 = b;
        Scalar pa = in_ext[a++], pb = out_ext[b++];
        // Grow the smaller side until the products agree (constants), or stop at equal extents.
        for (int guard = 0; guard < 64 && pa.simplify() != pb.simplify(); ++guard) {
          auto ca = pa.simplify().constValue(), cb = pb.simplify().constValue();
          if (!ca || !cb) break;
          if (*ca < *cb && a < in_ext.size()) pa = pa * in_ext[a++];
          else if (*cb < *ca && b < out_ext.size()) pb = pb * out_ext[b++];
          else break;
        }
        if (pa.simplify() != pb.simplify()) break;  // not a plain split or merge: map nothing more
        if (a - a0 == 1 || b - b0 == 1) map[static_cast<size_t>(in_data[a0])] = out_data[b0];
      }
      break;
    }
    case OpType::kMatmul:
    case OpType::kLinear: {
      const int na = dataAxisCount(e.input(0));
      const int nw = dataAxisCount(e.input(1));
      const bool linear = e.type() == OpType::kLinear;
      const int has_m = na >= 2 ? 1 : 0;
      const int has_n = nw >= 2 ? 1 : 0;
      const int nb = L - has_m - has_n - 1;  // output batch axes
      if (input_index == 0) {
        for (int i = 0; i < na - 2; ++i) set(i, nb - (na - 2) + i);
        if (has_m) set(na - 2, nb);
        set(na - 1, L - 1);
      } else if (input_index == 1) {
        for (int i = 0; i < nw - 2; ++i) set(i, nb - (nw - 2) + i);
        if (nw == 1) {
          set(0, L - 1);
        } else if (linear) {
          set(nw - 2, nb + has_m);
          set(nw - 1, L - 1);
        } else {
          set(nw - 2, L - 1);
          set(nw - 1, nb + has_m);
        }
      } else {
        // Bias: right-aligned against the weight's [batch..., n].
        const int wb = std::max(nw - 2, 0);
        const int target = wb + has_n;
        for (int t = 0; t < nd; ++t) {
          int idx = target - nd + t;
          if (idx < 0) continue;
          set(t, idx < wb ? nb - wb + idx : nb + has_m);
        }
      }
      break;
    }
  }
  return map;
}

std::vector<Expr*> topologicalExprs(const Fusion& f) {
  // Repeatedly takes the first expression (in creation order) whose inputs are all ready. The
  // scan starts at the first expression not yet taken, so a fusion built in order (the usual
  // case) costs linear time rather than a scan and an erase from the front per expression.
  const std::vector<Expr*>& pending = f.exprs();
  std::vector<Expr*> out;
  out.reserve(pending.size());
  std::vector<bool> taken(pending.size(), false);
  std::unordered_set<const TensorView*> ready;
  ready.reserve(f.tensors().size());
  for (const TensorView* tv : f.tensors())
    if (tv->definition() == nullptr) ready.insert(tv);
  auto inputsReady = [&](const Expr* e) {
    return std::all_of(e->inputs().begin(), e->inputs().end(), [&](const TensorView* t) { return ready.count(t) > 0; });
  };
  size_t first = 0;  // every expression before it is taken
  while (out.size() < pending.size()) {
    size_t i = first;
    while (i < pending.size() && (taken[i] || !inputsReady(pending[i]))) ++i;
    if (i == pending.size()) {  // a cycle: cannot happen for built fusions; keep creation order
      for (size_t j = first; j < pending.size(); ++j)
        if (!taken[j]) out.push_back(pending[j]);
      break;
    }
    for (const TensorView* o : pending[i]->outputs()) ready.insert(o);
    out.push_back(pending[i]);
    taken[i] = true;
    while (first < pending.size() && taken[first]) ++first;
  }
  return out;
}

int logicalPosition(const TensorView* tv, const IterDomain* id) {
  const auto& l = tv->logical();
  auto it = std::find(l.begin(), l.end(), id);
  return it == l.end() ? -1 : static_cast<int>(it - l.begin());
}

bool hasParallelAxes(const TensorView* tv) {
  for (const IterDomain* id : tv->loop())
    if (id->parallelType() != ParallelType::kSerial) return true;
  for (const IterDomain* id : tv->logical())
    if (id->parallelType() != ParallelType::kSerial) return true;
  return false;
}

AxisGraph::AxisGraph(const Fusion& f) {
  first_.reserve(f.tensors().size());
  for (const TensorView* tv : f.tensors()) {
    const int axes = static_cast<int>(tv->logical().size());
    first_.emplace(tv, std::make_pair(static_cast<int>(parent_.size()), axes));
    for (int i = 0; i < axes; ++i) parent_.push_back(static_cast<int>(parent_.size()));
  }
  auto id = [&](const TensorView* tv, int axis) {
    const auto& [first, axes] = first_.at(tv);
    if (axis < 0 || axis >= axes) throw std::out_of_range("AxisGraph: no such axis");
    return first + axis;
  };
  for (const Expr* e : f.exprs()) {
    for (size_t k = 0; k < e->inputs().size(); ++k) {
      std::vector<int> m = producerToConsumerMap(*e, k);
      for (size_t p = 0; p < m.size(); ++p) {
        if (m[p] < 0) continue;
        for (const TensorView* out : e->outputs()) {
          int a = find(id(e->input(k), static_cast<int>(p)));
          int b = find(id(out, m[p]));
          if (a != b) parent_[static_cast<size_t>(a)] = b;
        }
      }
    }
  }
}

int AxisGraph::find(int x) const {
  while (parent_[static_cast<size_t>(x)] != x) {
    parent_[static_cast<size_t>(x)] = parent_[static_cast<size_t>(parent_[static_cast<size_t>(x)])];
    x = parent_[static_cast<size_t>(x)];
  }
  return x;
}

int AxisGraph::classOf(const TensorView* tv, int axis) const {
  auto it = first_.find(tv);
  if (it == first_.end() || axis < 0 || axis >= it->second.second) return -1;
  return find(it->second.first + axis);
}

int AxisGraph::axisInClass(const TensorView* tv, int cls) const {
  if (cls < 0) return -1;
  for (int i = 0; i < static_cast<int>(tv->logical().size()); ++i)
    if (classOf(tv, i) == cls) return i;
  return -1;
}

bool hasLocalExtentOne(const IterDomain* id) {
  return id->isDeviceParallel() || id->isBroadcast() || id->extent().constValue() == std::optional<int64_t>(1);
}

std::string tvLabel(const TensorView* tv) { return tv ? "T" + std::to_string(tv->name()) : "<null>"; }

std::string exprStr(const Expr& e) {
  std::string s;
  for (size_t i = 0; i < e.outputs().size(); ++i) s += (i ? ", " : "") + e.output(i)->str();
  s += " = ";
  switch (e.type()) {
    case OpType::kBinary: s += std::string("binary(") + binaryOpSymbol(e.binaryOp) + ")"; break;
    case OpType::kUnary: s += unaryOpName(e.unaryOp); break;
    case OpType::kReduction: s += std::string("reduction(") + reductionOpName(e.reductionOp) + ")"; break;
    default: s += opTypeName(e.type()); break;
  }
  s += "(";
  for (size_t i = 0; i < e.inputs().size(); ++i) s += (i ? ", " : "") + e.input(i)->str();
  return s + ")";
}

std::string printFusion(const Fusion& f) {
  std::string s = "Fusion {\n  inputs:\n";
  for (const TensorView* tv : f.inputs()) s += "    " + tv->str() + "\n";
  s += "  outputs:\n";
  for (const TensorView* tv : f.outputs()) s += "    " + tv->str() + "\n";
  s += "  exprs:\n";
  for (const Expr* e : f.exprs()) s += "    " + exprStr(*e) + "\n";
  return s + "}\n";
}

}  // namespace braid
