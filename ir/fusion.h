// Fusion: a container of TensorViews, IterDomains and Exprs with inputs and outputs. Users build
// one with the functions of ir/ops.h; host programs keep their tensors in one too.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ir/expr.h"
#include "ir/iter_domain.h"
#include "ir/tensor_view.h"

namespace braid {

class Fusion {
 public:
  Fusion() = default;
  Fusion(const Fusion&) = delete;
  Fusion& operator=(const Fusion&) = delete;

  // A new tensor with a fresh logical domain of the given extents (all iteration, serial).
  TensorView* makeTensor(const std::vector<Scalar>& shape, DataType dtype = DataType::kFloat);
  // A new tensor over existing IterDomains (used by ops and by the parser). `name` < 0 picks
  // the next free name.
  TensorView* newTensor(std::vector<IterDomain*> logical, DataType dtype,
                        MemoryType mem = MemoryType::kGlobal, int name = -1);
  // A new IterDomain. `id` < 0 picks the next free id.
  IterDomain* newIterDomain(Scalar extent, IterType t = IterType::kIteration,
                            ParallelType p = ParallelType::kSerial, bool rfactor = false, int id = -1);
  // Records a transform and points its outputs' definition at it.
  const IdTransform* addTransform(IdTransform t);
  // A new Expr; sets the outputs' definition and the inputs' uses.
  Expr* newExpr(OpType type, std::vector<TensorView*> inputs, std::vector<TensorView*> outputs);

  void addInput(TensorView* tv);
  void addOutput(TensorView* tv);
  const std::vector<TensorView*>& inputs() const { return inputs_; }
  const std::vector<TensorView*>& outputs() const { return outputs_; }
  bool isInput(const TensorView* tv) const;
  bool isOutput(const TensorView* tv) const;

  // Every Expr, in creation order (which is a topological order for built fusions). The lists
  // grow as the fusion does: a loop over one must not make new exprs or tensors in the same fusion.
  const std::vector<Expr*>& exprs() const { return expr_list_; }
  const std::vector<TensorView*>& tensors() const { return tensor_list_; }
  TensorView* findTensor(int name) const;

  int nextTensorName() const { return next_tensor_; }
  int nextIdName() const { return next_id_; }

 private:
  // Owned, in creation order. Vectors of pointers, not deques of values: an empty Fusion (a host
  // program makes one per kernel) allocates nothing, and the objects never move.
  std::vector<std::unique_ptr<IterDomain>> ids_;
  std::vector<std::unique_ptr<TensorView>> tensors_;
  std::vector<std::unique_ptr<Expr>> exprs_;
  std::vector<std::unique_ptr<IdTransform>> transforms_;
  // The tensors and exprs again as plain pointers, which tensors() and exprs() hand out.
  std::vector<TensorView*> tensor_list_;
  std::vector<Expr*> expr_list_;
  std::vector<TensorView*> inputs_;
  std::vector<TensorView*> outputs_;
  int next_tensor_ = 0;
  int next_id_ = 0;
};

}  // namespace braid
