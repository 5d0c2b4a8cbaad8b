// Helpers the lowering passes share: how an op maps its inputs' axes onto its output's, the
// "mapped axes" graph (nvFuser's IdModel, reduced to logical axes), and the local extent of an
// axis on one rank.
#pragma once

#include <unordered_map>
#include <string>
#include <utility>
#include <vector>

#include "ir/fusion.h"

namespace braid {

// For input `input_index` of `e`: for each logical axis of that input, the logical axis of e's
// output it becomes, or -1 (reduction axes of the input, axes a reshape scrambles).
std::vector<int> producerToConsumerMap(const Expr& e, size_t input_index);

// The fusion's exprs in a topological order (creation order where it already is one; passes
// that insert exprs, like decompose-reshardings, create producers after their consumers).
std::vector<Expr*> topologicalExprs(const Fusion& f);

// Logical position of `id` in `tv`, or -1.
int logicalPosition(const TensorView* tv, const IterDomain* id);
// Whether a tensor has a non-serial loop (or logical) axis.
bool hasParallelAxes(const TensorView* tv);

// A union-find over (tensor, logical axis): two axes are mapped when an op maps one onto the
// other, directly or through a chain of ops (nvFuser's exact/broadcast graph, logical only).
class AxisGraph {
 public:
  explicit AxisGraph(const Fusion& f);
  int classOf(const TensorView* tv, int axis) const;
  bool mapped(const TensorView* a, int ai, const TensorView* b, int bi) const {
    return ai >= 0 && bi >= 0 && classOf(a, ai) == classOf(b, bi);
  }
  // The logical axis of `tv` in class `cls`, or -1.
  int axisInClass(const TensorView* tv, int cls) const;

 private:
  int find(int x) const;
  // Each tensor's logical axes are consecutive ids: the first one and the number of axes.
  std::unordered_map<const TensorView*, std::pair<int, int>> first_;
  mutable std::vector<int> parent_;
};

// An axis's extent in one rank's buffer: 1 for device-parallel and broadcast axes.
bool hasLocalExtentOne(const IterDomain* id);

// `T3`: short label for messages.
std::string tvLabel(const TensorView* tv);

// A readable dump of a fusion (tensors with their domains and meshes, exprs), for
// BRAID_DUMP=passes before the host program exists.
std::string printFusion(const Fusion& f);
std::string exprStr(const Expr& e);

}  // namespace braid
