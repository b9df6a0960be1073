//===- VectorJacobianProducts.cpp - gradients of the forward nn ops -------===//
//
// DifferentiableOpInterface for every forward op, as external models: the
// forward ops' ODS stays about what they compute, and reverse-mode autodiff
// (nn-build-train-step) asks each op for its gradients through the interface.
//
// Gradients have their value's type; where NumPy broadcasting widened an
// operand, its gradient is summed back down to the operand's shape.
//
//===----------------------------------------------------------------------===//

#include "ir/nn/NNOps.h"

using namespace mlir;
using namespace dpc::nn;

namespace {

RankedTensorType rankedType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

/// Sums `grad` down to `target`'s shape: over the leading dims that
/// broadcasting added and over the dims where `target` has size 1.
Value unbroadcast(OpBuilder &b, Location loc, Value grad,
                  RankedTensorType target) {
  auto type = rankedType(grad);
  if (type.getShape() == target.getShape())
    return grad;
  int64_t leading = type.getRank() - target.getRank();
  SmallVector<int64_t> widened;
  for (int64_t d = leading; d < type.getRank(); ++d)
    if (target.getDimSize(d - leading) == 1 && type.getDimSize(d) != 1)
      widened.push_back(d);
  if (!widened.empty())
    grad = b.create<ReduceSumOp>(loc, grad, widened, /*keep_dims=*/true);
  if (leading > 0)
    grad = b.create<ReduceSumOp>(loc, grad,
                                 llvm::to_vector(llvm::seq<int64_t>(leading)),
                                 /*keep_dims=*/false);
  return grad;
}

/// Reshapes `grad` back to `target`'s shape; at most one dim (the batch) may
/// be dynamic, and it is the one reshape infers.
FailureOr<Value> reshapeTo(Operation *op, OpBuilder &b, Value grad,
                           RankedTensorType target) {
  SmallVector<int64_t> shape(target.getShape());
  if (llvm::count_if(shape, ShapedType::isDynamic) > 1)
    return op->emitOpError()
           << "cannot be differentiated: more than one dynamic dim in "
           << target;
  for (int64_t &dim : shape)
    if (ShapedType::isDynamic(dim))
      dim = -1;
  // A leading dim the gradient shares is copied (0), not spelled out, so the
  // reshape stays valid at any batch size.
  auto gradType = cast<RankedTensorType>(grad.getType());
  if (!shape.empty() && gradType.getRank() > 0 && shape[0] != -1 &&
      gradType.getDimSize(0) == target.getDimSize(0))
    shape[0] = 0;
  return b.create<ReshapeOp>(op->getLoc(), grad, shape).getResult();
}

/// The spatial dims (`[H, W]` or `[D, H, W]`) of an NCHW or NCDHW value,
/// which gradient ops take as `input_size`.
FailureOr<SmallVector<int64_t>> spatialSize(Operation *op, Value value) {
  auto type = rankedType(value);
  ArrayRef<int64_t> spatial = type.getShape().drop_front(2);
  if ((type.getRank() != 4 && type.getRank() != 5) ||
      llvm::any_of(spatial, ShapedType::isDynamic))
    return op->emitOpError()
           << "cannot be differentiated: needs static spatial dims, got "
           << type;
  return SmallVector<int64_t>(spatial);
}

Value transpose2d(OpBuilder &b, Location loc, Value value) {
  return b.create<TransposeOp>(loc, value, ArrayRef<int64_t>{1, 0});
}

//===----------------------------------------------------------------------===//
// One vector-Jacobian product per forward op
//===----------------------------------------------------------------------===//

LogicalResult buildVJP(ConstantOp, OpBuilder &, ValueRange,
                       SmallVectorImpl<Value> &) {
  return success();
}

LogicalResult buildVJP(Conv2dOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  FailureOr<SmallVector<int64_t>> inputSize = spatialSize(op, op.getInput());
  if (failed(inputSize))
    return failure();
  Location loc = op.getLoc();
  ArrayRef<int64_t> kernel = op.getFilter().getType().getShape().drop_front(2);
  grads.push_back(b.create<Conv2dGradInputOp>(
      loc, dys[0], op.getFilter(), *inputSize, op.getStride(), op.getPadding(),
      op.getDilation(), op.getGroups()));
  grads.push_back(b.create<Conv2dGradFilterOp>(
      loc, dys[0], op.getInput(), kernel, op.getStride(), op.getPadding(),
      op.getDilation(), op.getGroups()));
  if (op.getBias()) {
    // Over every dim but the channels.
    SmallVector<int64_t> dims = {0};
    for (int64_t d = 2; d < op.getInput().getType().getRank(); ++d)
      dims.push_back(d);
    grads.push_back(
        b.create<ReduceSumOp>(loc, dys[0], dims, /*keep_dims=*/false));
  }
  return success();
}

/// y = conv2d_grad_input(x, W) is linear in x and in W: x's gradient is the
/// convolution of dy with W, and W's is the filter gradient of that
/// convolution, with x in the role of its result gradient and dy in that of
/// its input.
LogicalResult buildVJP(ConvTranspose2dOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  Location loc = op.getLoc();
  ArrayRef<int64_t> kernel = op.getFilter().getType().getShape().drop_front(2);
  grads.push_back(b.create<Conv2dOp>(loc, dys[0], op.getFilter(),
                                     /*bias=*/Value(), op.getStride(),
                                     op.getPadding(), op.getDilation(),
                                     op.getGroups()));
  grads.push_back(b.create<Conv2dGradFilterOp>(
      loc, op.getInput(), dys[0], kernel, op.getStride(), op.getPadding(),
      op.getDilation(), op.getGroups()));
  return success();
}

LogicalResult buildVJP(BatchNormOp op, OpBuilder &, ValueRange,
                       SmallVectorImpl<Value> &) {
  return op.emitOpError()
         << "uses running statistics and is not differentiated; a training "
            "step uses nn.batch_norm_train";
}

LogicalResult buildVJP(BatchNormTrainOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  if (llvm::any_of(dys.drop_front(), [](Value dy) { return dy; }))
    return op.emitOpError()
           << "cannot be differentiated through its statistics results";
  auto grad = b.create<BatchNormGradOp>(op.getLoc(), dys[0], op.getInput(),
                                        op.getScale(), op.getBatchMean(),
                                        op.getBatchInvstd());
  grads.append({grad.getInputGrad(), grad.getScaleGrad(), grad.getShiftGrad(),
                Value(), Value()});
  return success();
}

LogicalResult buildVJP(MaxPool2dOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  grads.push_back(b.create<MaxPool2dGradOp>(
      op.getLoc(), dys[0], op.getInput(), op.getKernelSize(), op.getStride(),
      op.getPadding(), op.getDilation(), op.getCeilMode()));
  return success();
}

LogicalResult buildVJP(AvgPool2dOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  FailureOr<SmallVector<int64_t>> inputSize = spatialSize(op, op.getInput());
  if (failed(inputSize))
    return failure();
  grads.push_back(b.create<AvgPool2dGradOp>(
      op.getLoc(), dys[0], *inputSize, op.getKernelSize(), op.getStride(),
      op.getPadding(), op.getCeilMode(), op.getCountIncludePad()));
  return success();
}

LogicalResult buildVJP(GlobalAvgPool2dOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  FailureOr<SmallVector<int64_t>> inputSize = spatialSize(op, op.getInput());
  if (failed(inputSize))
    return failure();
  grads.push_back(
      b.create<GlobalAvgPool2dGradOp>(op.getLoc(), dys[0], *inputSize));
  return success();
}

LogicalResult buildVJP(PadOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  grads.push_back(
      b.create<PadGradOp>(op.getLoc(), dys[0], op.getLow(), op.getHigh()));
  return success();
}

LogicalResult buildVJP(ReluOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  grads.push_back(b.create<ReluGradOp>(op.getLoc(), dys[0], op.getInput()));
  return success();
}

LogicalResult buildVJP(ConcatOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  SmallVector<int64_t> sizes;
  for (Value input : op.getInputs())
    sizes.push_back(
        cast<RankedTensorType>(input.getType()).getDimSize(op.getAxis()));
  auto split = b.create<SplitOp>(op.getLoc(), dys[0], op.getAxis(), sizes);
  llvm::append_range(grads, split.getResults());
  return success();
}

LogicalResult buildVJP(SplitOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  // A part nothing reads (a slice's rest) has a zero gradient.
  SmallVector<Value> parts;
  for (auto [part, dy] : llvm::zip_equal(op.getResults(), dys))
    parts.push_back(dy ? dy : b.create<ZerosLikeOp>(op.getLoc(), part));
  grads.push_back(b.create<ConcatOp>(op.getLoc(), parts, op.getAxis()));
  return success();
}

LogicalResult buildVJP(TransposeOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  // The inverse permutation moves every dim back.
  ArrayRef<int64_t> permutation = op.getPermutation();
  SmallVector<int64_t> inverse(permutation.size());
  for (auto [i, p] : llvm::enumerate(permutation))
    inverse[p] = static_cast<int64_t>(i);
  grads.push_back(b.create<TransposeOp>(op.getLoc(), dys[0], inverse));
  return success();
}

LogicalResult buildVJP(ClipOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  grads.push_back(b.create<ClipGradOp>(op.getLoc(), dys[0], op.getInput(),
                                       op.getMinAttr(), op.getMaxAttr()));
  return success();
}

LogicalResult buildVJP(HardSigmoidOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  grads.push_back(b.create<HardSigmoidGradOp>(
      op.getLoc(), dys[0], op.getInput(), op.getAlphaAttr(), op.getBetaAttr()));
  return success();
}

LogicalResult buildVJP(HardSwishOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  grads.push_back(
      b.create<HardSwishGradOp>(op.getLoc(), dys[0], op.getInput()));
  return success();
}

LogicalResult buildVJP(ErfOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  grads.push_back(b.create<ErfGradOp>(op.getLoc(), dys[0], op.getInput()));
  return success();
}

LogicalResult buildVJP(GeluOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  grads.push_back(b.create<GeluGradOp>(op.getLoc(), dys[0], op.getInput(),
                                       op.getTanhApproximationAttr()));
  return success();
}

/// The activations defined with their gradient op (NNOps.td's
/// NN_InputActivation): the gradient op takes dy, x and the op's attributes.
template <typename GradOpT, typename OpT>
LogicalResult buildInputActivationVJP(OpT op, OpBuilder &b, ValueRange dys,
                                      SmallVectorImpl<Value> &grads) {
  SmallVector<NamedAttribute> attrs;
  for (StringRef name : OpT::getAttributeNames())
    if (Attribute value = op->getAttr(name))
      attrs.push_back(b.getNamedAttr(name, value));
  grads.push_back(b.create<GradOpT>(op.getLoc(), op.getType(),
                                    ValueRange{dys[0], op.getInput()}, attrs));
  return success();
}

LogicalResult buildVJP(LeakyReluOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  return buildInputActivationVJP<LeakyReluGradOp>(op, b, dys, grads);
}

LogicalResult buildVJP(EluOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  return buildInputActivationVJP<EluGradOp>(op, b, dys, grads);
}

LogicalResult buildVJP(SeluOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  return buildInputActivationVJP<SeluGradOp>(op, b, dys, grads);
}

LogicalResult buildVJP(CeluOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  return buildInputActivationVJP<CeluGradOp>(op, b, dys, grads);
}

LogicalResult buildVJP(SoftplusOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  return buildInputActivationVJP<SoftplusGradOp>(op, b, dys, grads);
}

LogicalResult buildVJP(MishOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  return buildInputActivationVJP<MishGradOp>(op, b, dys, grads);
}

LogicalResult buildVJP(AbsOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  return buildInputActivationVJP<AbsGradOp>(op, b, dys, grads);
}

LogicalResult buildVJP(LogOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  return buildInputActivationVJP<LogGradOp>(op, b, dys, grads);
}

LogicalResult buildVJP(LogSigmoidOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  return buildInputActivationVJP<LogSigmoidGradOp>(op, b, dys, grads);
}

LogicalResult buildVJP(ShrinkOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  return buildInputActivationVJP<ShrinkGradOp>(op, b, dys, grads);
}

LogicalResult buildVJP(ThresholdOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  return buildInputActivationVJP<ThresholdGradOp>(op, b, dys, grads);
}

LogicalResult buildVJP(ExpOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  return buildInputActivationVJP<ExpGradOp>(op, b, dys, grads);
}

LogicalResult buildVJP(SqrtOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  return buildInputActivationVJP<SqrtGradOp>(op, b, dys, grads);
}

LogicalResult buildVJP(PowOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  return buildInputActivationVJP<PowGradOp>(op, b, dys, grads);
}

LogicalResult buildVJP(SinOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  return buildInputActivationVJP<SinGradOp>(op, b, dys, grads);
}

LogicalResult buildVJP(CosOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  return buildInputActivationVJP<CosGradOp>(op, b, dys, grads);
}

LogicalResult buildVJP(SignOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  return buildInputActivationVJP<SignGradOp>(op, b, dys, grads);
}

LogicalResult buildVJP(FloorOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  return buildInputActivationVJP<FloorGradOp>(op, b, dys, grads);
}

LogicalResult buildVJP(CeilOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  return buildInputActivationVJP<CeilGradOp>(op, b, dys, grads);
}

/// dy to the operand that won (half to each on a tie), summed over the dims
/// it was broadcast along: one gradient op gives both.
template <typename GradOpT, typename OpT>
LogicalResult buildExtremumVJP(OpT op, OpBuilder &b, ValueRange dys,
                               SmallVectorImpl<Value> &grads) {
  auto grad = b.create<GradOpT>(op.getLoc(), dys[0], op.getLhs(), op.getRhs());
  grads.append({grad.getLhsGrad(), grad.getRhsGrad()});
  return success();
}

LogicalResult buildVJP(MaximumOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  return buildExtremumVJP<MaximumGradOp>(op, b, dys, grads);
}

LogicalResult buildVJP(MinimumOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  return buildExtremumVJP<MinimumGradOp>(op, b, dys, grads);
}

/// dy shared evenly by the elements equal to the result (PyTorch's amax).
template <typename OpT>
std::enable_if_t<llvm::is_one_of<OpT, ReduceMaxOp, ReduceMinOp>::value,
                 LogicalResult>
buildVJP(OpT op, OpBuilder &b, ValueRange dys, SmallVectorImpl<Value> &grads) {
  grads.push_back(b.create<ReduceExtremumGradOp>(
      op.getLoc(), dys[0], op.getInput(), op.getResult(), op.getDims(),
      op.getKeepDims()));
  return success();
}

/// Every summed element gets dy: dy (with the summed dims kept as 1)
/// broadcast over zeros of the input's shape.
LogicalResult buildVJP(ReduceSumOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  Location loc = op.getLoc();
  Value dy = dys[0];
  if (!op.getKeepDims()) {
    SmallVector<int64_t> kept(rankedType(op.getInput()).getShape());
    for (int64_t d : op.getDims())
      kept[d] = 1;
    if (!kept.empty())
      kept[0] = 0; // the batch, as it is at run time
    dy = b.create<ReshapeOp>(loc, dy, kept);
  }
  grads.push_back(
      b.create<AddOp>(loc, b.create<ZerosLikeOp>(loc, op.getInput()), dy));
  return success();
}

LogicalResult buildVJP(EmbeddingOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  int64_t rows = op.getTable().getType().getDimSize(0);
  Value grad =
      b.create<EmbeddingGradOp>(op.getLoc(), dys[0], op.getIndices(), rows);
  if (std::optional<int64_t> padding = op.getPaddingIdx()) {
    // The padding row's gradient is zero: the rows around it, and zeros.
    SmallVector<int64_t> sizes;
    for (int64_t size : {*padding, int64_t(1), rows - *padding - 1})
      if (size > 0)
        sizes.push_back(size);
    auto parts = b.create<SplitOp>(op.getLoc(), grad, 0, sizes);
    SmallVector<Value> rowsOfGrad(parts.getResults());
    Value &paddingRow = rowsOfGrad[*padding > 0 ? 1 : 0];
    paddingRow = b.create<ZerosLikeOp>(op.getLoc(), paddingRow);
    grad = b.create<ConcatOp>(op.getLoc(), rowsOfGrad, 0);
  }
  grads.push_back(grad);
  grads.push_back(Value()); // indices
  return success();
}

LogicalResult buildVJP(LayerNormOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  auto grad = b.create<LayerNormGradOp>(op.getLoc(), dys[0], op.getInput(),
                                        op.getScale(), op.getAxisAttr(),
                                        op.getEpsilonAttr());
  grads.push_back(grad.getInputGrad());
  grads.push_back(grad.getScaleGrad());
  if (op.getBias())
    grads.push_back(grad.getBiasGrad());
  return success();
}

LogicalResult buildVJP(DropoutOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  // The kept elements' slope is the scale; the shift and fill are
  // constants.
  grads.push_back(b.create<DropoutGradOp>(
      op.getLoc(), dys[0], op.getRatioAttr(), op.getKeyAttr(),
      op.getRowwiseAttr(), op.getSpanAttr(), op.getScaleAttr()));
  return success();
}

// Linear in its input: the same draws scale the gradient.
LogicalResult buildVJP(RandomScaleOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  grads.push_back(b.create<RandomScaleOp>(op.getLoc(), dys[0], op.getLowAttr(),
                                          op.getHighAttr(), op.getKeyAttr()));
  return success();
}

LogicalResult buildVJP(SigmoidOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  grads.push_back(b.create<SigmoidGradOp>(op.getLoc(), dys[0], op.getResult()));
  return success();
}

LogicalResult buildVJP(TanhOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  grads.push_back(b.create<TanhGradOp>(op.getLoc(), dys[0], op.getResult()));
  return success();
}

LogicalResult buildVJP(ReciprocalOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  grads.push_back(
      b.create<ReciprocalGradOp>(op.getLoc(), dys[0], op.getResult()));
  return success();
}

LogicalResult buildVJP(AddOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  Location loc = op.getLoc();
  grads.push_back(unbroadcast(b, loc, dys[0], op.getLhs().getType()));
  grads.push_back(unbroadcast(b, loc, dys[0], op.getRhs().getType()));
  return success();
}

LogicalResult buildVJP(MulOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  Location loc = op.getLoc();
  Value lhsGrad = b.create<MulOp>(loc, dys[0], op.getRhs());
  Value rhsGrad = b.create<MulOp>(loc, dys[0], op.getLhs());
  grads.push_back(unbroadcast(b, loc, lhsGrad, op.getLhs().getType()));
  grads.push_back(unbroadcast(b, loc, rhsGrad, op.getRhs().getType()));
  return success();
}

/// Flatten and reshape move no data: the gradient takes the input's shape.
template <typename OpTy>
std::enable_if_t<llvm::is_one_of<OpTy, FlattenOp, ReshapeOp>::value,
                 LogicalResult>
buildVJP(OpTy op, OpBuilder &b, ValueRange dys, SmallVectorImpl<Value> &grads) {
  FailureOr<Value> grad = reshapeTo(op, b, dys[0], op.getInput().getType());
  if (failed(grad))
    return failure();
  grads.push_back(*grad);
  return success();
}

/// y = x W^T + b: dx = dy W, dW = dy^T x, db = sum over the batch of dy.
LogicalResult buildVJP(LinearOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  Location loc = op.getLoc();
  Value dy = dys[0];
  grads.push_back(b.create<MatmulOp>(loc, dy, op.getWeight()));
  grads.push_back(
      b.create<MatmulOp>(loc, transpose2d(b, loc, dy), op.getInput()));
  if (op.getBias())
    grads.push_back(b.create<ReduceSumOp>(loc, dy, ArrayRef<int64_t>{0},
                                          /*keep_dims=*/false));
  return success();
}

/// y = A B with A [..., N, K]: dA = dy B^T; dB = A^T dy with A's leading
/// dims folded into its rows.
LogicalResult buildVJP(MatmulOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  Location loc = op.getLoc();
  Value dy = dys[0];
  Value lhs = op.getLhs();
  grads.push_back(
      b.create<MatmulOp>(loc, dy, transpose2d(b, loc, op.getRhs())));
  auto lhsType = op.getLhs().getType();
  if (lhsType.getRank() > 2) {
    int64_t rows[2] = {-1, lhsType.getShape().back()};
    int64_t gradRows[2] = {-1, rankedType(dy).getShape().back()};
    lhs = b.create<ReshapeOp>(loc, lhs, rows);
    dy = b.create<ReshapeOp>(loc, dy, gradRows);
  }
  grads.push_back(b.create<MatmulOp>(loc, transpose2d(b, loc, lhs), dy));
  return success();
}

/// Each row is the input: its gradient is their sum; `rows` only sizes.
LogicalResult buildVJP(BroadcastRowsOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  grads.push_back(b.create<ReduceSumOp>(op.getLoc(), dys[0],
                                        ArrayRef<int64_t>{0},
                                        /*keep_dims=*/true));
  grads.push_back(Value());
  return success();
}

/// C = op(A) op(B), op a transpose where flagged: dA = dC op(B)^T (or,
/// for a transposed A, its transpose op(B) dC^T), and likewise for B.
LogicalResult buildVJP(BatchMatmulOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  Location loc = op.getLoc();
  Value dc = dys[0], lhs = op.getLhs(), rhs = op.getRhs();
  bool tl = op.getTransposeLhs(), tr = op.getTransposeRhs();
  auto product = [&](Value x, Value y, bool tx, bool ty) -> Value {
    return b.create<BatchMatmulOp>(loc, x, y, tx, ty);
  };
  grads.push_back(tl ? product(rhs, dc, tr, true)
                     : product(dc, rhs, false, !tr));
  grads.push_back(tr ? product(dc, lhs, true, tl)
                     : product(lhs, dc, !tl, false));
  return success();
}

LogicalResult buildVJP(SoftmaxOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  grads.push_back(b.create<SoftmaxGradOp>(op.getLoc(), dys[0], op.getResult(),
                                          op.getAxis()));
  return success();
}

LogicalResult buildVJP(LogSoftmaxOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  grads.push_back(b.create<LogSoftmaxGradOp>(op.getLoc(), dys[0],
                                             op.getResult(), op.getAxis()));
  return success();
}

LogicalResult buildVJP(LossOp op, OpBuilder &b, ValueRange dys,
                       SmallVectorImpl<Value> &grads) {
  SmallVector<Value> operands = {op.getOutput(), op.getTarget(), dys[0]};
  if (Value divisor = op.getDivisor())
    operands.push_back(divisor);
  grads.push_back(b.create<LossGradOp>(op.getLoc(), op.getOutput().getType(),
                                       operands,
                                       op->getAttrDictionary().getValue()));
  grads.push_back(Value()); // target
  if (op.getDivisor())
    grads.push_back(Value()); // a count of the targets
  return success();
}

//===----------------------------------------------------------------------===//
// Attaching
//===----------------------------------------------------------------------===//

template <typename OpT>
struct DifferentiableModel
    : public DifferentiableOpInterface::ExternalModel<DifferentiableModel<OpT>,
                                                      OpT> {
  LogicalResult
  buildVectorJacobianProduct(Operation *op, OpBuilder &b,
                             ValueRange resultGradients,
                             SmallVectorImpl<Value> &operandGradients) const {
    return buildVJP(cast<OpT>(op), b, resultGradients, operandGradients);
  }
};

template <typename... OpTs> void attach(MLIRContext &context) {
  (OpTs::template attachInterface<DifferentiableModel<OpTs>>(context), ...);
}

} // namespace

void dpc::nn::attachDifferentiableOpInterfaces(MLIRContext &context) {
  attach<ConstantOp, Conv2dOp, ConvTranspose2dOp, BatchNormOp, BatchNormTrainOp,
         MaxPool2dOp, AvgPool2dOp, GlobalAvgPool2dOp, PadOp, ReluOp, SigmoidOp,
         TanhOp, ReciprocalOp, ClipOp, HardSigmoidOp, HardSwishOp, GeluOp,
         ErfOp, LeakyReluOp, EluOp, SeluOp, CeluOp, SoftplusOp, MishOp, AbsOp,
         LogOp, LogSigmoidOp, ShrinkOp, ThresholdOp, DropoutOp, RandomScaleOp,
         EmbeddingOp, ReduceSumOp, LayerNormOp, TransposeOp, ConcatOp, SplitOp,
         AddOp, MulOp, FlattenOp, ReshapeOp, LinearOp, MatmulOp, BatchMatmulOp,
         BroadcastRowsOp, SoftmaxOp, LogSoftmaxOp, LossOp, ExpOp, SqrtOp, PowOp,
         SinOp, CosOp, SignOp, FloorOp, CeilOp, MaximumOp, MinimumOp,
         ReduceMaxOp, ReduceMinOp>(context);
}
