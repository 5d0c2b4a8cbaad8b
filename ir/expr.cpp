#include "ir/expr.h"

#include <algorithm>

namespace braid {

const char* opTypeName(OpType t) {
  switch (t) {
    case OpType::kSet: return "Set";
    case OpType::kPermute: return "Set.Permute";
    case OpType::kUnary: return "unary";
    case OpType::kBinary: return "binary";
    case OpType::kReduction: return "reduction";
    case OpType::kBroadcast: return "broadcast";
    case OpType::kSqueeze: return "squeeze";
    case OpType::kReshape: return "view";
    case OpType::kMatmul: return "matmul";
    case OpType::kLinear: return "linear";
  }
  return "?";
}

const char* binaryOpSymbol(BinaryOpType t) {
  switch (t) {
    case BinaryOpType::kAdd: return "+";
    case BinaryOpType::kSub: return "-";
    case BinaryOpType::kMul: return "*";
    case BinaryOpType::kDiv: return "/";
  }
  return "?";
}

const char* unaryOpName(UnaryOpType t) {
  switch (t) {
    case UnaryOpType::kNeg: return "neg";
    case UnaryOpType::kAbs: return "abs";
    case UnaryOpType::kExp: return "exp";
    case UnaryOpType::kLog: return "log";
    case UnaryOpType::kSqrt: return "sqrt";
    case UnaryOpType::kRelu: return "relu";
    case UnaryOpType::kGelu: return "gelu";
    case UnaryOpType::kTanh: return "tanh";
    case UnaryOpType::kSigmoid: return "sigmoid";
    case UnaryOpType::kSilu: return "silu";
    case UnaryOpType::kCast: return "cast";
  }
  return "?";
}

const char* reductionOpName(ReductionOpType t) {
  switch (t) {
    case ReductionOpType::kAdd: return "add";
    case ReductionOpType::kMax: return "max";
    case ReductionOpType::kMin: return "min";
  }
  return "?";
}

void Expr::replaceInput(TensorView* from, TensorView* to) {
  std::replace(inputs_.begin(), inputs_.end(), from, to);
}

void Expr::replaceOutput(TensorView* from, TensorView* to) {
  std::replace(outputs_.begin(), outputs_.end(), from, to);
}

}  // namespace braid
