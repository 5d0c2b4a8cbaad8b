// Expr: one tensor operation of the Fusion IR (set, permute, unary, binary, reduction,
// broadcast, squeeze, reshape, matmul, linear). Host programs run the same Exprs on the host
// ("host-evaluated fusion ops") and inside HostUnit kernels.
#pragma once

#include <string>
#include <vector>

#include "ir/scalar.h"

namespace braid {

class TensorView;

enum class OpType {
  kSet,        // Set: copy (or view, on the host, when the output is unallocated)
  kPermute,    // Set.Permute
  kUnary,
  kBinary,
  kReduction,
  kBroadcast,
  kSqueeze,
  kReshape,    // printed `view( ... )`
  kMatmul,
  kLinear,
};

enum class BinaryOpType { kAdd, kSub, kMul, kDiv };
enum class UnaryOpType { kNeg, kAbs, kExp, kLog, kSqrt, kRelu, kGelu, kTanh, kSigmoid, kSilu, kCast };
enum class ReductionOpType { kAdd, kMax, kMin };

const char* opTypeName(OpType t);
const char* binaryOpSymbol(BinaryOpType t);     // "+", "-", "*", "/"
const char* unaryOpName(UnaryOpType t);         // "neg", "gelu", ...
const char* reductionOpName(ReductionOpType t); // "add", "max", "min"

class Expr {
 public:
  Expr(OpType type, std::vector<TensorView*> inputs, std::vector<TensorView*> outputs)
      : type_(type), inputs_(std::move(inputs)), outputs_(std::move(outputs)) {}

  OpType type() const { return type_; }
  const std::vector<TensorView*>& inputs() const { return inputs_; }
  const std::vector<TensorView*>& outputs() const { return outputs_; }
  TensorView* input(size_t i) const { return inputs_.at(i); }
  TensorView* output(size_t i = 0) const { return outputs_.at(i); }
  void replaceInput(TensorView* from, TensorView* to);
  void replaceOutput(TensorView* from, TensorView* to);

  // Attributes (meaningful for the op types named).
  BinaryOpType binaryOp = BinaryOpType::kAdd;        // kBinary
  UnaryOpType unaryOp = UnaryOpType::kNeg;           // kUnary
  ReductionOpType reductionOp = ReductionOpType::kAdd;  // kReduction
  std::string initValue = "float(0)";                // kReduction, as printed
  std::vector<int64_t> permutation;  // kPermute: output logical axis i is input axis permutation[i]
  std::vector<bool> broadcastFlags;  // kBroadcast: true where the output gets a new size-1 axis
  std::vector<bool> squeezeFlags;    // kSqueeze: true where an input axis is removed
  std::string cacheOp = "Streaming"; // kSet / kPermute; "" when not printed (nvFuser's Unspecified)
  // kSet: nvFuser's SegmenterSet, a Set that marks a segment boundary. It behaves as a Set
  // wherever it runs (the host evaluator handles both alike); only its spelling differs.
  bool segmenterSet = false;

 private:
  OpType type_;
  std::vector<TensorView*> inputs_;
  std::vector<TensorView*> outputs_;
};

}  // namespace braid
