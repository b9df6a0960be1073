//===- Elementwise.cpp - elementwise arithmetic ---------------------------===//
//
// Add, Sub, Neg, Mul, Div, Pow, the element-wise math (Exp, Sqrt,
// Reciprocal, Sin, Cos, Sign, Floor, Ceil), Max and Min, Cast, CastLike,
// and IsNaN as far as the exporters' idioms use it (ExporterIdioms.cpp);
// Where is ops/Threshold.cpp's. Known operands fold before these
// (FoldValueOps.cpp).
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/Importer.h"
#include "frontend/onnx/OnnxOpTable.h"

#include "ir/nn/NNOps.h"

#include "mlir/Dialect/Traits.h"

#include <cmath>

using namespace mlir;

namespace dpc::frontend {
namespace {

/// `OpT` (commutative: add, mul, maximum, minimum) of two tensors whose
/// NumPy broadcast may widen either: the kernels broadcast the second
/// operand to the first, so the one with the result's shape goes first,
/// and where neither has it (rotary embeddings' [1, T, 1] x [1, 1, D]) the
/// first is widened by a product with ones of the result's shape (x * 1
/// is x).
template <typename OpT>
Value createBroadcast(Importer &im, Value lhs, Value rhs) {
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  SmallVector<int64_t> result;
  if (!OpTrait::util::getBroadcastedShape(lhsType.getShape(),
                                          rhsType.getShape(), result))
    return im.create<OpT>({lhs, rhs}); // the op says why, in one line
  if (lhsType.getShape() == ArrayRef<int64_t>(result))
    return im.create<OpT>({lhs, rhs});
  if (rhsType.getShape() == ArrayRef<int64_t>(result))
    return im.create<OpT>({rhs, lhs});
  if (ShapedType::isDynamic(result[0]))
    fail("both operands broadcast to " +
         typeToString(RankedTensorType::get(result, lhsType.getElementType())) +
         " along the batch, which is not supported");
  auto onesType = RankedTensorType::get(result, lhsType.getElementType());
  Value ones = im.create<nn::ConstantOp>(
      {}, {im.named("value", DenseElementsAttr::get(onesType, 1.f))});
  return im.create<OpT>({im.create<nn::MulOp>({ones, lhs}), rhs});
}

void importAdd(Importer &im, const onnx::NodeProto &node) {
  auto [lhs, rhs] = im.elementwiseOperands(node);
  im.define(node, 0, createBroadcast<nn::AddOp>(im, lhs, rhs));
}

void importSub(Importer &im, const onnx::NodeProto &node) {
  // a + (-1 b): exactly a - b in IEEE arithmetic.
  Value negated = im.createNegation(im.operand(node, 1));
  im.define(node, 0,
            createBroadcast<nn::AddOp>(im, im.operand(node, 0), negated));
}

void importNeg(Importer &im, const onnx::NodeProto &node) {
  im.define(node, 0, im.createNegation(im.operand(node, 0)));
}

void importMul(Importer &im, const onnx::NodeProto &node) {
  auto [lhs, rhs] = im.elementwiseOperands(node);
  im.define(node, 0, createBroadcast<nn::MulOp>(im, lhs, rhs));
}

void importDiv(Importer &im, const onnx::NodeProto &node) {
  // By a constant (GELU's x / sqrt(2), attention's scaling, a per-channel
  // normalization): times its reciprocal, of the divisor's shape, which
  // rounds within an ulp of the quotient. By a tensor: times
  // nn.reciprocal of it, whose gradient gives the divisor's.
  const KnownTensor *divisor = im.knownValue(node.input(1));
  if (!divisor) {
    Value reciprocal = im.create<nn::ReciprocalOp>(im.operand(node, 1));
    im.define(node, 0,
              createBroadcast<nn::MulOp>(im, im.operand(node, 0), reciprocal));
    return;
  }
  if (!divisor->isFloat())
    fail("only division by a tensor or a floating-point constant is "
         "supported");
  SmallVector<float> reciprocals;
  for (double value : divisor->floats) {
    if (value == 0 || !std::isfinite(value))
      fail("division by " + std::to_string(value));
    reciprocals.push_back(1.f / static_cast<float>(value));
  }
  // One value is a scalar whatever its dims (the exporters write [] or [1]).
  SmallVector<int64_t> dims;
  if (reciprocals.size() != 1)
    dims.assign(divisor->dims.begin(), divisor->dims.end());
  auto type = RankedTensorType::get(dims, im.opBuilder().getF32Type());
  Value constant = im.create<nn::ConstantOp>(
      {},
      {im.named("value", DenseElementsAttr::get(type, ArrayRef(reciprocals)))});
  im.define(node, 0,
            createBroadcast<nn::MulOp>(im, im.operand(node, 0), constant));
}

void importPow(Importer &im, const onnx::NodeProto &node) {
  // A constant, or a one-element initializer (PyTorch 2's optimizer writes
  // x.pow(2)'s exponent as one).
  std::optional<double> exponent = im.knownScalar(node, 1);
  if (!exponent)
    fail("only a constant scalar exponent is supported");
  double value = *exponent;
  Value base = im.operand(node, 0);
  // A small whole power (x.pow(2) in variances and RMS norms, GPT-2's
  // x.pow(3)): a product of x, whose gradient the products give. A square
  // root (an LPPool's 1 / p): nn.sqrt, correctly rounded as PyTorch's.
  if (value == 1 || value == 2 || value == 3 || value == 4) {
    Value power = base;
    for (int i = 1; i < int(value); ++i)
      power = im.create<nn::MulOp>({power, base});
    im.define(node, 0, power);
    return;
  }
  if (value == 0.5) {
    im.define(node, 0, im.create<nn::SqrtOp>(base));
    return;
  }
  im.define(
      node, 0,
      im.create<nn::PowOp>(
          base, {im.named("exponent", im.opBuilder().getF64FloatAttr(value))}));
}

/// An element-wise function of one tensor (Exp, Sqrt, Sign, ...).
template <typename OpT>
void importUnary(Importer &im, const onnx::NodeProto &node) {
  im.define(node, 0, im.create<OpT>(im.operand(node, 0)));
}

/// Max or Min of one or more tensors (NumPy broadcasting): a chain of
/// nn.maximum (nn.minimum) from the left.
template <typename OpT>
void importExtremum(Importer &im, const onnx::NodeProto &node) {
  if (node.input_size() == 2) {
    auto [lhs, rhs] = im.elementwiseOperands(node);
    im.define(node, 0, createBroadcast<OpT>(im, lhs, rhs));
    return;
  }
  Value result = im.operand(node, 0);
  for (int i = 1; i < node.input_size(); ++i)
    result = createBroadcast<OpT>(im, result, im.operand(node, i));
  im.define(node, 0, result);
}

/// A run-time tensor cast to the type it has (Transformers' GPT-2 casts its
/// position embeddings to the float type they already have; PyTorch 2's
/// GroupNorm CastLikes its weight to the input's): the identity. Casts of
/// known values fold before this; no other cast has a kernel.
void importCastTo(Importer &im, const onnx::NodeProto &node, int32_t to) {
  if (const ValueSet *comparison = im.comparison(node.input(0))) {
    if (to != onnx::TensorProto::BOOL)
      fail("only a cast of a comparison to bool is supported");
    im.recordComparison(node.output(0), *comparison);
    return;
  }
  int32_t from = im.onnxTypeOf(node.input(0));
  if (to != from) {
    std::string types = onnx::TensorProto::DataType_Name(from) + " to " +
                        onnx::TensorProto::DataType_Name(to);
    fail("only a cast of a run-time tensor to its own type is supported (" +
         types + ")");
  }
  im.define(node, 0, im.operand(node, 0));
}

void importCast(Importer &im, const onnx::NodeProto &node) {
  importCastTo(im, node, static_cast<int32_t>(intAttr(node, "to", 0)));
}

void importCastLike(Importer &im, const onnx::NodeProto &node) {
  importCastTo(im, node, im.onnxTypeOf(node.input(1)));
}

void importIsNaN(Importer &im, const onnx::NodeProto &node) {
  im.recordNanTest(node);
}

} // namespace

void registerElementwiseOps(OnnxOpTable &table) {
  table.add("Add", importAdd);
  table.add("Sub", importSub);
  table.add("Neg", importNeg);
  table.add("Mul", importMul);
  table.add("Div", importDiv);
  table.add("Pow", importPow);
  table.add("Exp", importUnary<nn::ExpOp>);
  table.add("Sqrt", importUnary<nn::SqrtOp>);
  table.add("Reciprocal", importUnary<nn::ReciprocalOp>);
  table.add("Sin", importUnary<nn::SinOp>);
  table.add("Cos", importUnary<nn::CosOp>);
  table.add("Sign", importUnary<nn::SignOp>);
  table.add("Floor", importUnary<nn::FloorOp>);
  table.add("Ceil", importUnary<nn::CeilOp>);
  table.add("Max", importExtremum<nn::MaximumOp>);
  table.add("Min", importExtremum<nn::MinimumOp>);
  table.add("Cast", importCast);
  table.add("CastLike", importCastLike);
  table.add("IsNaN", importIsNaN);
}

} // namespace dpc::frontend
