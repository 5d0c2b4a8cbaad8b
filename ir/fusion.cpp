#include "ir/fusion.h"

#include <algorithm>

namespace braid {

TensorView* Fusion::makeTensor(const std::vector<Scalar>& shape, DataType dtype) {
  std::vector<IterDomain*> logical;
  for (const Scalar& e : shape) logical.push_back(newIterDomain(e));
  return newTensor(std::move(logical), dtype);
}

TensorView* Fusion::newTensor(std::vector<IterDomain*> logical, DataType dtype, MemoryType mem, int name) {
  if (name < 0) name = next_tensor_;
  next_tensor_ = std::max(next_tensor_, name + 1);
  tensors_.push_back(std::make_unique<TensorView>(this, name, dtype, std::move(logical), mem));
  tensor_list_.push_back(tensors_.back().get());
  return tensor_list_.back();
}

IterDomain* Fusion::newIterDomain(Scalar extent, IterType t, ParallelType p, bool rfactor, int id) {
  if (id < 0) id = next_id_;
  next_id_ = std::max(next_id_, id + 1);
  ids_.push_back(std::make_unique<IterDomain>(id, std::move(extent), t, p, rfactor));
  return ids_.back().get();
}

const IdTransform* Fusion::addTransform(IdTransform t) {
  transforms_.push_back(std::make_unique<IdTransform>(std::move(t)));
  const IdTransform* rec = transforms_.back().get();
  if (rec->kind == IdTransform::Kind::kSplit) {
    rec->outer->setDefinition(rec);
    rec->inner->setDefinition(rec);
  } else {
    rec->out->setDefinition(rec);
  }
  return rec;
}

Expr* Fusion::newExpr(OpType type, std::vector<TensorView*> inputs, std::vector<TensorView*> outputs) {
  exprs_.push_back(std::make_unique<Expr>(type, std::move(inputs), std::move(outputs)));
  Expr* e = exprs_.back().get();
  expr_list_.push_back(e);
  for (TensorView* in : e->inputs()) in->addUse(e);
  for (TensorView* out : e->outputs()) out->setDefinition(e);
  return e;
}

void Fusion::addInput(TensorView* tv) {
  if (!isInput(tv)) inputs_.push_back(tv);
}

void Fusion::addOutput(TensorView* tv) {
  if (!isOutput(tv)) outputs_.push_back(tv);
}

bool Fusion::isInput(const TensorView* tv) const {
  return std::find(inputs_.begin(), inputs_.end(), tv) != inputs_.end();
}

bool Fusion::isOutput(const TensorView* tv) const {
  return std::find(outputs_.begin(), outputs_.end(), tv) != outputs_.end();
}

TensorView* Fusion::findTensor(int name) const {
  for (const auto& t : tensors_)
    if (t->name() == name) return t.get();
  return nullptr;
}

}  // namespace braid
