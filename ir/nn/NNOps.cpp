//===- NNOps.cpp - nn dialect ops -----------------------------------------===//
//
// Result-type inference (and with it, operand verification) lives in
// ShapeInference.cpp; this file holds the generated op definitions and folds.
//
//===----------------------------------------------------------------------===//

#include "ir/nn/NNOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>
#include <optional>

using namespace mlir;
using namespace dpc::nn;

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

/// Exporters emit zero padding before pooling (PyTorch's AvgPool2d does).
OpFoldResult PadOp::fold(FoldAdaptor) {
  auto isZero = [](int64_t v) { return v == 0; };
  if (llvm::all_of(getLow(), isZero) && llvm::all_of(getHigh(), isZero) &&
      getInput().getType() == getType())
    return getInput();
  return {};
}

/// A view of a view back to the original type is the original (PyTorch 2's
/// x.view(n, c, 1, 1).flatten(1)).
static OpFoldResult foldView(Value input, Type type) {
  if (input.getType() == type)
    return input;
  Operation *source = input.getDefiningOp();
  if (source && isa<FlattenOp, ReshapeOp>(source) &&
      source->getOperand(0).getType() == type)
    return source->getOperand(0);
  return {};
}

OpFoldResult FlattenOp::fold(FoldAdaptor) {
  return foldView(getInput(), getType());
}

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  return foldView(getInput(), getType());
}

namespace {

int64_t numElements(Value v) {
  return cast<RankedTensorType>(v.getType()).getNumElements();
}

/// The larger operand first (dynamic batch dims count as large).
template <typename OpTy> struct LargerOperandFirst : OpRewritePattern<OpTy> {
  using OpRewritePattern<OpTy>::OpRewritePattern;
  LogicalResult matchAndRewrite(OpTy op,
                                PatternRewriter &rewriter) const override {
    auto lhs = cast<RankedTensorType>(op.getLhs().getType());
    auto rhs = cast<RankedTensorType>(op.getRhs().getType());
    bool swap = lhs.hasStaticShape() && rhs.hasStaticShape()
                    ? numElements(op.getLhs()) < numElements(op.getRhs())
                    : lhs.hasStaticShape() && !rhs.hasStaticShape();
    if (!swap || op.getType() != rhs)
      return failure();
    rewriter.modifyOpInPlace(op, [&] {
      Value l = op.getLhs();
      op->setOperand(0, op.getRhs());
      op->setOperand(1, l);
    });
    return success();
  }
};

/// The scalar value of a splat float constant, if `v` is one.
std::optional<float> splatValue(Value v) {
  auto constant = v.getDefiningOp<ConstantOp>();
  auto attr = constant ? dyn_cast<SplatElementsAttr>(constant.getValue())
                       : SplatElementsAttr();
  if (!attr || !isa<FloatType>(attr.getElementType()))
    return std::nullopt;
  return attr.getSplatValue<APFloat>().convertToFloat();
}

/// The operand of a commutative `op` that is not the splat `value`, if the
/// other one is.
template <typename OpTy> Value otherThanSplat(OpTy op, float value) {
  if (splatValue(op.getRhs()) == value)
    return op.getLhs();
  if (splatValue(op.getLhs()) == value)
    return op.getRhs();
  return Value();
}

/// x * (erf(x * (1 / sqrt 2)) + 1) * 0.5 -> gelu(x), as the legacy exporter
/// writes GELU (x / sqrt 2 imports as a product with the reciprocal).
struct GeluFromErf : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MulOp half,
                                PatternRewriter &rewriter) const override {
    Value product = otherThanSplat(half, 0.5f);
    auto mul = product ? product.getDefiningOp<MulOp>() : MulOp();
    if (!mul || !mul->hasOneUse())
      return failure();
    for (auto [x, onePlus] : {std::pair(mul.getLhs(), mul.getRhs()),
                              std::pair(mul.getRhs(), mul.getLhs())}) {
      auto add = onePlus.getDefiningOp<AddOp>();
      Value erfValue = add ? otherThanSplat(add, 1.f) : Value();
      auto erf = erfValue ? erfValue.getDefiningOp<ErfOp>() : ErfOp();
      auto scaled = erf ? erf.getInput().getDefiningOp<MulOp>() : MulOp();
      if (!scaled || otherThanSplat(scaled, float(M_SQRT1_2)) != x ||
          !add->hasOneUse() || !erf->hasOneUse() || !scaled->hasOneUse() ||
          half.getType() != x.getType())
        continue;
      rewriter.replaceOpWithNewOp<GeluOp>(half, x, /*tanh=*/false);
      return success();
    }
    return failure();
  }
};

} // namespace

namespace {

/// x^T times a scalar is (x times the scalar)^T: the transpose moves next to
/// its reader (attention scales q and k^T by 1/sqrt(d) before q k^T).
struct ScaleBeforeTranspose : OpRewritePattern<MulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MulOp op,
                                PatternRewriter &rewriter) const override {
    auto transpose = op.getLhs().getDefiningOp<TransposeOp>();
    auto scale = cast<RankedTensorType>(op.getRhs().getType());
    if (!transpose || !transpose->hasOneUse() || !scale.hasStaticShape() ||
        scale.getNumElements() != 1 || op.getType() != op.getLhs().getType())
      return failure();
    Value scaled =
        rewriter.create<MulOp>(op.getLoc(), transpose.getInput(), op.getRhs());
    rewriter.replaceOpWithNewOp<TransposeOp>(op, scaled,
                                             transpose.getPermutation());
    return success();
  }
};

/// A swap of the last two dims feeding batch_matmul becomes its operand's
/// transpose flag: attention's q k^T reads k in place, no copy is made.
struct FoldTransposeIntoBatchMatmul : OpRewritePattern<BatchMatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BatchMatmulOp op,
                                PatternRewriter &rewriter) const override {
    auto swapped = [](Value value) -> Value {
      auto transpose = value.getDefiningOp<TransposeOp>();
      if (!transpose)
        return Value();
      ArrayRef<int64_t> perm = transpose.getPermutation();
      int64_t rank = static_cast<int64_t>(perm.size());
      for (int64_t d = 0; d < rank - 2; ++d)
        if (perm[d] != d)
          return Value();
      if (perm[rank - 2] != rank - 1 || perm[rank - 1] != rank - 2)
        return Value();
      return transpose.getInput();
    };
    Value lhs = swapped(op.getLhs()), rhs = swapped(op.getRhs());
    if (!lhs && !rhs)
      return failure();
    rewriter.replaceOpWithNewOp<BatchMatmulOp>(
        op, lhs ? lhs : op.getLhs(), rhs ? rhs : op.getRhs(),
        op.getTransposeLhs() != bool(lhs), op.getTransposeRhs() != bool(rhs));
    return success();
  }
};

/// x W^T with a 2-D W (a linear layer as the dynamo exporter writes it:
/// MatMul of a transposed weight) is nn.linear, whose kernels read W in
/// place and whose gradients need no transposes; x's leading dims merge
/// into rows around it (the batch must be the only dynamic one).
struct MatmulOfTransposeIsLinear : OpRewritePattern<MatmulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatmulOp op,
                                PatternRewriter &rewriter) const override {
    auto transpose = op.getRhs().getDefiningOp<TransposeOp>();
    if (!transpose || transpose.getPermutation() != ArrayRef<int64_t>{1, 0})
      return failure();
    auto xType = cast<RankedTensorType>(op.getLhs().getType());
    auto yType = cast<RankedTensorType>(op.getType());
    if (xType.getRank() < 2 ||
        llvm::any_of(xType.getShape().drop_front().drop_back(),
                     ShapedType::isDynamic))
      return failure();
    Location loc = op.getLoc();
    Value x = op.getLhs();
    int64_t rank = xType.getRank();
    if (rank > 2)
      x = rewriter.create<ReshapeOp>(
          loc, x, ArrayRef<int64_t>{-1, xType.getShape().back()});
    Value y = rewriter.create<LinearOp>(loc, x, transpose.getInput(),
                                        /*bias=*/Value());
    if (rank > 2) {
      SmallVector<int64_t> shape(yType.getShape());
      shape.front() = -1;
      y = rewriter.create<ReshapeOp>(loc, y, shape);
    }
    rewriter.replaceOp(op, y);
    return success();
  }
};

/// A linear layer without bias plus a vector of its width (directly or
/// through the reshape that unmerges its rows) is the linear layer with
/// that bias: one kernel instead of two, and its gradient a row sum.
struct LinearAbsorbsBias : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp op,
                                PatternRewriter &rewriter) const override {
    auto bias = cast<RankedTensorType>(op.getRhs().getType());
    auto reshape = op.getLhs().getDefiningOp<ReshapeOp>();
    Value product = reshape ? reshape.getInput() : op.getLhs();
    auto linear = product.getDefiningOp<LinearOp>();
    if (!linear || linear.getBias() || !linear->hasOneUse() ||
        (reshape && !reshape->hasOneUse()) || bias.getRank() != 1 ||
        op.getType() != op.getLhs().getType() ||
        bias.getDimSize(0) != linear.getType().getShape().back() ||
        bias.getElementType() != linear.getType().getElementType())
      return failure();
    Value y = rewriter.create<LinearOp>(op.getLoc(), linear.getInput(),
                                        linear.getWeight(), op.getRhs());
    if (reshape)
      y = rewriter.create<ReshapeOp>(op.getLoc(), y, reshape.getShape());
    rewriter.replaceOp(op, y);
    return success();
  }
};

} // namespace

void AddOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                        MLIRContext *context) {
  patterns.add<LargerOperandFirst<AddOp>, LinearAbsorbsBias>(context);
}

void MatmulOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                           MLIRContext *context) {
  patterns.add<MatmulOfTransposeIsLinear>(context);
}

void BatchMatmulOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                                MLIRContext *context) {
  patterns.add<FoldTransposeIntoBatchMatmul>(context);
}

void MulOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                        MLIRContext *context) {
  patterns.add<LargerOperandFirst<MulOp>, GeluFromErf, ScaleBeforeTranspose>(
      context);
}

#include "ir/nn/NNEnums.cpp.inc"

#define GET_OP_CLASSES
#include "ir/nn/NNOps.cpp.inc"
