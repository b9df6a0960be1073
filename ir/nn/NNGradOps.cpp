//===- NNGradOps.cpp - result types of nn gradient and optimizer ops ------===//
//
// As for the forward ops, `inferReturnTypes` checks operands and attributes
// and derives the result types, so the verifier reports bad gradient IR at
// the op's location. A gradient op that carries its forward op's attributes
// also re-derives the forward result shape and checks it against
// `result_grad`, which catches attributes copied wrongly.
//
//===----------------------------------------------------------------------===//

#include "ir/nn/NNOps.h"
#include "ir/nn/ShapeChecks.h"

#include "mlir/Dialect/Traits.h"
#include "mlir/IR/Diagnostics.h"

#include <limits>

using namespace mlir;
using namespace dpc::nn;
using namespace dpc::nn::detail;

namespace {

RankedTensorType rankedType(Value value) {
  return cast<RankedTensorType>(value.getType());
}

/// Checks that the forward op's result shape (as re-derived from the
/// gradient op's operands) is that of `resultGrad`.
LogicalResult checkForwardResult(const ShapeError &error,
                                 FailureOr<Type> forward,
                                 RankedTensorType resultGrad) {
  if (failed(forward))
    return failure();
  auto type = cast<RankedTensorType>(*forward);
  bool agree = type.getRank() == resultGrad.getRank();
  for (int64_t d = 0; agree && d < type.getRank(); ++d)
    agree = dimsAgree(type.getDimSize(d), resultGrad.getDimSize(d));
  if (agree)
    return success();
  error() << "result_grad " << resultGrad
          << " does not match the forward result " << type;
  return failure();
}

LogicalResult checkScalar(const ShapeError &error, Value value,
                          StringRef what) {
  return checkRank(error, rankedType(value), 0, what);
}

/// Checks the operand types shared by the training-mode batch-norm ops:
/// `perChannel` of the input's element type, `statistics` (the f64 sums of
/// synchronized batch norm) of f64.
LogicalResult
checkBatchNormOperands(const ShapeError &error, RankedTensorType input,
                       ArrayRef<std::pair<Value, StringRef>> perChannel,
                       ArrayRef<std::pair<Value, StringRef>> statistics = {}) {
  if (input.getRank() < 2) {
    error() << "input must have rank >= 2, got " << input;
    return failure();
  }
  Type f64 = Float64Type::get(input.getContext());
  for (auto [value, what] : perChannel)
    if (failed(checkPerChannel(error, value, input.getDimSize(1),
                               input.getElementType(), what)))
      return failure();
  for (auto [value, what] : statistics)
    if (failed(checkPerChannel(error, value, input.getDimSize(1), f64, what)))
      return failure();
  return success();
}

/// `groups` and the channel split shared by the convolution gradients.
LogicalResult checkGroups(const ShapeError &error, int64_t groups,
                          int64_t outChannels) {
  if (groups < 1) {
    error() << "'groups' must be >= 1, got " << groups;
    return failure();
  }
  if (!isDynamic(outChannels) && outChannels % groups != 0) {
    error() << "output channels " << outChannels
            << " are not divisible by groups " << groups;
    return failure();
  }
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

LogicalResult
Conv2dGradInputOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                    Adaptor adaptor,
                                    SmallVectorImpl<Type> &inferred) {
  ShapeError error{loc};
  auto resultGrad = rankedType(adaptor.getResultGrad());
  auto filter = rankedType(adaptor.getFilter());
  int64_t groups = adaptor.getGroups();
  ArrayRef<int64_t> inputSize = adaptor.getInputSize();
  if (failed(checkWindowRank(error, resultGrad, "result_grad")) ||
      failed(checkRank(error, filter, resultGrad.getRank(), "filter")) ||
      failed(checkSameElementType(error, resultGrad, filter, "filter")) ||
      failed(checkArray(error, inputSize, resultGrad.getRank() - 2, 1,
                        "input_size")) ||
      failed(checkGroups(error, groups, filter.getDimSize(0))))
    return failure();
  int64_t inChannels = isDynamic(filter.getDimSize(1))
                           ? kDynamic
                           : filter.getDimSize(1) * groups;
  SmallVector<int64_t> shape = {resultGrad.getDimSize(0), inChannels};
  shape.append(inputSize.begin(), inputSize.end());
  auto input = RankedTensorType::get(shape, resultGrad.getElementType());
  if (failed(checkForwardResult(
          error,
          inferWindow(error, input, filter.getDimSize(0),
                      {filter.getShape().drop_front(2), adaptor.getStride(),
                       adaptor.getPadding(), adaptor.getDilation(),
                       /*ceilMode=*/false}),
          resultGrad)))
    return failure();
  inferred.push_back(input);
  return success();
}

LogicalResult
Conv2dGradFilterOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                     Adaptor adaptor,
                                     SmallVectorImpl<Type> &inferred) {
  ShapeError error{loc};
  auto resultGrad = rankedType(adaptor.getResultGrad());
  auto input = rankedType(adaptor.getInput());
  int64_t groups = adaptor.getGroups();
  ArrayRef<int64_t> kernel = adaptor.getKernelSize();
  if (failed(checkWindowRank(error, resultGrad, "result_grad")) ||
      failed(checkRank(error, input, resultGrad.getRank(), "input")) ||
      failed(checkSameElementType(error, resultGrad, input, "input")) ||
      failed(checkArray(error, kernel, resultGrad.getRank() - 2, 1,
                        "kernel_size")) ||
      failed(checkGroups(error, groups, resultGrad.getDimSize(1))))
    return failure();
  int64_t inChannels = input.getDimSize(1);
  if (!isDynamic(inChannels) && inChannels % groups != 0)
    return emitOptionalError(loc, "input channels ", inChannels,
                             " are not divisible by groups ", groups);
  int64_t outChannels = resultGrad.getDimSize(1);
  if (failed(checkForwardResult(
          error,
          inferWindow(error, input, outChannels,
                      {kernel, adaptor.getStride(), adaptor.getPadding(),
                       adaptor.getDilation(), /*ceilMode=*/false}),
          resultGrad)))
    return failure();
  SmallVector<int64_t> shape = {
      outChannels, isDynamic(inChannels) ? kDynamic : inChannels / groups};
  shape.append(kernel.begin(), kernel.end());
  inferred.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Batch normalization
//===----------------------------------------------------------------------===//

LogicalResult
BatchNormTrainOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                   Adaptor adaptor,
                                   SmallVectorImpl<Type> &inferred) {
  ShapeError error{loc};
  auto input = rankedType(adaptor.getInput());
  if (failed(checkBatchNormAttrs(loc, adaptor.getEpsilon().convertToDouble(),
                                 adaptor.getMomentum().convertToDouble())))
    return failure();
  if (failed(
          checkBatchNormOperands(error, input,
                                 {{adaptor.getScale(), "scale"},
                                  {adaptor.getShift(), "shift"},
                                  {adaptor.getRunningMean(), "running_mean"},
                                  {adaptor.getRunningVar(), "running_var"}})))
    return failure();
  Type stats = adaptor.getRunningMean().getType();
  inferred.append({input, stats, stats, stats, stats});
  return success();
}

LogicalResult
BatchNormGradOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                  Adaptor adaptor,
                                  SmallVectorImpl<Type> &inferred) {
  ShapeError error{loc};
  auto input = rankedType(adaptor.getInput());
  if (adaptor.getResultGrad().getType() != input)
    return emitOptionalError(loc, "result_grad type ",
                             adaptor.getResultGrad().getType(),
                             " differs from the input type ", input);
  if (failed(
          checkBatchNormOperands(error, input,
                                 {{adaptor.getScale(), "scale"},
                                  {adaptor.getBatchMean(), "batch_mean"},
                                  {adaptor.getBatchInvstd(), "batch_invstd"}})))
    return failure();
  Type scale = adaptor.getScale().getType();
  inferred.append({input, scale, scale});
  return success();
}

LogicalResult
EmbeddingGradOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                  Adaptor adaptor,
                                  SmallVectorImpl<Type> &inferred) {
  auto dy = rankedType(adaptor.getResultGrad());
  auto indices = rankedType(adaptor.getIndices());
  if (dy.getRank() != indices.getRank() + 1 ||
      dy.getShape().drop_back() != indices.getShape())
    return emitOptionalError(loc, "result_grad ", dy,
                             " is not one row per index of ", indices);
  // A u64 attribute: above 2^63 it is no dimension (nor a negative one).
  uint64_t numEmbeddings = adaptor.getNumEmbeddings();
  if (numEmbeddings < 1 ||
      numEmbeddings > uint64_t(std::numeric_limits<int64_t>::max()))
    return emitOptionalError(loc, "num_embeddings must be positive");
  inferred.push_back(RankedTensorType::get(
      {static_cast<int64_t>(numEmbeddings), dy.getShape().back()},
      dy.getElementType()));
  return success();
}

LogicalResult
LayerNormGradOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                  Adaptor adaptor,
                                  SmallVectorImpl<Type> &inferred) {
  auto input = rankedType(adaptor.getInput());
  if (adaptor.getResultGrad().getType() != input)
    return emitOptionalError(loc, "result_grad type ",
                             adaptor.getResultGrad().getType(),
                             " differs from the input type ", input);
  if (failed(detail::checkLayerNorm(loc, input, adaptor.getScale(), Value(),
                                    adaptor.getAxis(),
                                    adaptor.getEpsilon().convertToDouble())))
    return failure();
  Type scale = adaptor.getScale().getType();
  inferred.append({input, scale, scale});
  return success();
}

/// Checks that `count` is a 1-element f64 tensor, as nn.batch_norm_stats
/// makes it.
static LogicalResult checkCount(std::optional<Location> loc, Value count) {
  auto type = rankedType(count);
  if (type.getRank() == 1 && type.getDimSize(0) == 1 &&
      type.getElementType().isF64())
    return success();
  return emitOptionalError(loc, "count must be tensor<1xf64>, got ", type);
}

LogicalResult
BatchNormStatsOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                   Adaptor adaptor,
                                   SmallVectorImpl<Type> &inferred) {
  ShapeError error{loc};
  auto input = rankedType(adaptor.getInput());
  if (failed(checkBatchNormOperands(error, input, {})))
    return failure();
  // f64, so that the global sums, and the mean and variance derived from
  // them, round to what one device computes from the whole batch.
  Type f64 = Float64Type::get(input.getContext());
  auto perChannel = RankedTensorType::get({input.getDimSize(1)}, f64);
  inferred.append({perChannel, perChannel, RankedTensorType::get({1}, f64)});
  return success();
}

LogicalResult
BatchNormApplyOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                   Adaptor adaptor,
                                   SmallVectorImpl<Type> &inferred) {
  ShapeError error{loc};
  auto input = rankedType(adaptor.getInput());
  if (failed(checkBatchNormAttrs(loc, adaptor.getEpsilon().convertToDouble(),
                                 adaptor.getMomentum().convertToDouble())))
    return failure();
  if (failed(checkBatchNormOperands(
          error, input,
          {{adaptor.getScale(), "scale"},
           {adaptor.getShift(), "shift"},
           {adaptor.getRunningMean(), "running_mean"},
           {adaptor.getRunningVar(), "running_var"}},
          {{adaptor.getSum(), "sum"}, {adaptor.getSumSq(), "sum_sq"}})) ||
      failed(checkCount(loc, adaptor.getCount())))
    return failure();
  Type stats = adaptor.getRunningMean().getType();
  inferred.append({input, stats, stats, stats, stats});
  return success();
}

LogicalResult BatchNormGradStatsOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  ShapeError error{loc};
  auto input = rankedType(adaptor.getInput());
  if (adaptor.getResultGrad().getType() != input)
    return emitOptionalError(loc, "result_grad type ",
                             adaptor.getResultGrad().getType(),
                             " differs from the input type ", input);
  if (failed(
          checkBatchNormOperands(error, input,
                                 {{adaptor.getBatchMean(), "batch_mean"},
                                  {adaptor.getBatchInvstd(), "batch_invstd"}})))
    return failure();
  Type stats = adaptor.getBatchMean().getType();
  inferred.append({stats, stats});
  return success();
}

LogicalResult BatchNormGradApplyOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  ShapeError error{loc};
  auto input = rankedType(adaptor.getInput());
  if (adaptor.getResultGrad().getType() != input)
    return emitOptionalError(loc, "result_grad type ",
                             adaptor.getResultGrad().getType(),
                             " differs from the input type ", input);
  if (failed(
          checkBatchNormOperands(error, input,
                                 {{adaptor.getScale(), "scale"},
                                  {adaptor.getBatchMean(), "batch_mean"},
                                  {adaptor.getBatchInvstd(), "batch_invstd"},
                                  {adaptor.getSumDy(), "sum_dy"},
                                  {adaptor.getSumDyXhat(), "sum_dy_xhat"}})) ||
      failed(checkCount(loc, adaptor.getCount())))
    return failure();
  inferred.push_back(input);
  return success();
}

//===----------------------------------------------------------------------===//
// Pooling and padding
//===----------------------------------------------------------------------===//

LogicalResult
MaxPool2dGradOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                  Adaptor adaptor,
                                  SmallVectorImpl<Type> &inferred) {
  ShapeError error{loc};
  auto resultGrad = rankedType(adaptor.getResultGrad());
  if (failed(checkSameElementType(error, adaptor.getInput().getType(),
                                  resultGrad, "result_grad")) ||
      failed(checkForwardResult(
          error,
          inferPool2d(error, adaptor.getInput(),
                      {adaptor.getKernelSize(), adaptor.getStride(),
                       adaptor.getPadding(), adaptor.getDilation(),
                       adaptor.getCeilMode()}),
          resultGrad)))
    return failure();
  inferred.push_back(adaptor.getInput().getType());
  return success();
}

/// The forward input of a pooling gradient that gets `[H, W]` from
/// `input_size` and batch and channels from `result_grad`.
static FailureOr<RankedTensorType>
pooledInputType(const ShapeError &error, RankedTensorType resultGrad,
                ArrayRef<int64_t> inputSize) {
  if (failed(checkRank(error, resultGrad, 4, "result_grad")) ||
      failed(checkArray(error, inputSize, 2, 1, "input_size")))
    return failure();
  return RankedTensorType::get({resultGrad.getDimSize(0),
                                resultGrad.getDimSize(1), inputSize[0],
                                inputSize[1]},
                               resultGrad.getElementType());
}

LogicalResult
AvgPool2dGradOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                  Adaptor adaptor,
                                  SmallVectorImpl<Type> &inferred) {
  static const int64_t kNoDilation[2] = {1, 1};
  ShapeError error{loc};
  auto resultGrad = rankedType(adaptor.getResultGrad());
  FailureOr<RankedTensorType> input =
      pooledInputType(error, resultGrad, adaptor.getInputSize());
  if (failed(input) ||
      failed(checkArray(error, adaptor.getKernelSize(), 2, 1, "kernel_size")) ||
      failed(checkForwardResult(
          error,
          inferWindow(error, *input, resultGrad.getDimSize(1),
                      {adaptor.getKernelSize(), adaptor.getStride(),
                       adaptor.getPadding(), kNoDilation,
                       adaptor.getCeilMode()}),
          resultGrad)))
    return failure();
  inferred.push_back(*input);
  return success();
}

LogicalResult GlobalAvgPool2dGradOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  ShapeError error{loc};
  auto resultGrad = rankedType(adaptor.getResultGrad());
  FailureOr<RankedTensorType> input =
      pooledInputType(error, resultGrad, adaptor.getInputSize());
  if (failed(input))
    return failure();
  if (!dimsAgree(resultGrad.getDimSize(2), 1) ||
      !dimsAgree(resultGrad.getDimSize(3), 1))
    return emitOptionalError(loc, "result_grad must be N x C x 1 x 1, got ",
                             resultGrad);
  inferred.push_back(*input);
  return success();
}

LogicalResult PadGradOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  ShapeError error{loc};
  auto resultGrad = rankedType(adaptor.getResultGrad());
  size_t rank = resultGrad.getRank();
  if (failed(checkArray(error, adaptor.getLow(), rank, 0, "low")) ||
      failed(checkArray(error, adaptor.getHigh(), rank, 0, "high")))
    return failure();
  SmallVector<int64_t> shape(resultGrad.getShape());
  for (size_t d = 0; d < rank; ++d) {
    if (isDynamic(shape[d]))
      continue;
    shape[d] -= adaptor.getLow()[d] + adaptor.getHigh()[d];
    if (shape[d] < 0)
      return emitOptionalError(loc, "padding of dim ", d, " exceeds its size ",
                               resultGrad.getDimSize(d));
  }
  inferred.push_back(RankedTensorType::get(shape, resultGrad.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions and layout
//===----------------------------------------------------------------------===//

/// The result of reducing `input` over `dims` (strictly increasing), kept as
/// size 1 or dropped: nn.reduce_sum's, nn.reduce_max's and nn.reduce_min's.
static LogicalResult inferReduce(std::optional<Location> loc, Value inputValue,
                                 ArrayRef<int64_t> dims, bool keepDims,
                                 SmallVectorImpl<Type> &inferred) {
  auto input = rankedType(inputValue);
  int64_t previous = -1;
  for (int64_t dim : dims) {
    if (dim <= previous || dim >= input.getRank())
      return emitOptionalError(loc,
                               "'dims' must be strictly increasing in [0, ",
                               input.getRank(), "), got [", dims, "]");
    previous = dim;
  }
  SmallVector<int64_t> shape;
  for (auto [d, size] : llvm::enumerate(input.getShape())) {
    if (!llvm::is_contained(dims, static_cast<int64_t>(d)))
      shape.push_back(size);
    else if (keepDims)
      shape.push_back(1);
  }
  inferred.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult ReduceSumOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  return inferReduce(loc, adaptor.getInput(), adaptor.getDims(),
                     adaptor.getKeepDims(), inferred);
}

LogicalResult ReduceMaxOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  return inferReduce(loc, adaptor.getInput(), adaptor.getDims(),
                     adaptor.getKeepDims(), inferred);
}

LogicalResult ReduceMinOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  return inferReduce(loc, adaptor.getInput(), adaptor.getDims(),
                     adaptor.getKeepDims(), inferred);
}

/// The input's type, where `resultGrad` and `result` have the type that
/// reducing it gives.
LogicalResult ReduceExtremumGradOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &inferred) {
  SmallVector<Type, 1> reduced;
  if (failed(inferReduce(loc, adaptor.getInput(), adaptor.getDims(),
                         adaptor.getKeepDims(), reduced)))
    return failure();
  for (Value value : {adaptor.getResultGrad(), adaptor.getResult()})
    if (value.getType() != reduced[0])
      return emitOptionalError(loc, "expected ", reduced[0],
                               " (the reduced input), got ", value.getType());
  inferred.push_back(adaptor.getInput().getType());
  return success();
}

/// The operands' types, where `resultGrad` has the type of their broadcast.
template <typename Adaptor>
static LogicalResult inferExtremumGrad(std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &inferred) {
  auto lhs = rankedType(adaptor.getLhs()), rhs = rankedType(adaptor.getRhs());
  SmallVector<int64_t> shape;
  if (!OpTrait::util::getBroadcastedShape(lhs.getShape(), rhs.getShape(),
                                          shape) ||
      rankedType(adaptor.getResultGrad()).getShape() != ArrayRef(shape))
    return emitOptionalError(loc, "result_grad ",
                             adaptor.getResultGrad().getType(),
                             " is not the broadcast of ", lhs, " and ", rhs);
  inferred.append({lhs, rhs});
  return success();
}

LogicalResult MaximumGradOp::inferReturnTypes(MLIRContext *,
                                              std::optional<Location> loc,
                                              Adaptor adaptor,
                                              SmallVectorImpl<Type> &inferred) {
  return inferExtremumGrad(loc, adaptor, inferred);
}

LogicalResult MinimumGradOp::inferReturnTypes(MLIRContext *,
                                              std::optional<Location> loc,
                                              Adaptor adaptor,
                                              SmallVectorImpl<Type> &inferred) {
  return inferExtremumGrad(loc, adaptor, inferred);
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  auto input = rankedType(adaptor.getInput());
  ArrayRef<int64_t> permutation = adaptor.getPermutation();
  SmallVector<bool> seen(input.getRank(), false);
  bool valid = static_cast<int64_t>(permutation.size()) == input.getRank();
  for (int64_t p : permutation) {
    valid = valid && p >= 0 && p < input.getRank() && !seen[p];
    if (valid)
      seen[p] = true;
  }
  if (!valid)
    return emitOptionalError(loc, "'permutation' [", permutation,
                             "] is not a permutation of the ", input.getRank(),
                             " dims of ", input);
  SmallVector<int64_t> shape;
  for (int64_t p : permutation)
    shape.push_back(input.getDimSize(p));
  inferred.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Softmax and loss
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxGradOp::verify() {
  return detail::verifySoftmaxAxis(*this, getResult(), getAxis());
}

LogicalResult LogSoftmaxGradOp::verify() {
  return detail::verifySoftmaxAxis(*this, getResult(), getAxis());
}

//===----------------------------------------------------------------------===//
// Optimizers
//===----------------------------------------------------------------------===//

/// Optimizer state has the parameter's type, element by element.
static LogicalResult checkLikeParam(std::optional<Location> loc, Type param,
                                    Value value, StringRef what) {
  if (value.getType() == param)
    return success();
  return emitOptionalError(loc, what, " type ", value.getType(),
                           " differs from the param type ", param);
}

/// Checks that a hyperparameter lies in [low, high) or [low, high].
static LogicalResult checkRange(std::optional<Location> loc, StringRef name,
                                double value, double low, double high,
                                bool highIncluded) {
  if (value >= low && (highIncluded ? value <= high : value < high))
    return success();
  return emitOptionalError(loc, "'", name, "' must be in [", low, ", ", high,
                           highIncluded ? "]" : ")", ", got ", value);
}

LogicalResult SgdUpdateOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  Type param = adaptor.getParam().getType();
  double momentum = adaptor.getMomentum().convertToDouble();
  double dampening = adaptor.getDampening().convertToDouble();
  double weightDecay = adaptor.getWeightDecay().convertToDouble();
  double inf = std::numeric_limits<double>::infinity();
  if (failed(checkLikeParam(loc, param, adaptor.getGrad(), "grad")) ||
      failed(checkScalar(ShapeError{loc}, adaptor.getLr(), "lr")) ||
      failed(checkRange(loc, "momentum", momentum, 0, inf, false)) ||
      failed(checkRange(loc, "dampening", dampening, 0, 1, true)) ||
      failed(checkRange(loc, "weight_decay", weightDecay, 0, inf, false)))
    return failure();
  if (adaptor.getNesterov() && (momentum == 0 || dampening != 0))
    return emitOptionalError(
        loc, "nesterov needs a momentum > 0 and a dampening of 0");
  Value buffer = adaptor.getMomentumBuffer();
  if ((momentum != 0) != static_cast<bool>(buffer))
    return emitOptionalError(loc, "a momentum buffer is needed exactly when "
                                  "momentum is not 0");
  inferred.push_back(param);
  if (buffer) {
    if (failed(checkLikeParam(loc, param, buffer, "momentum_buffer")))
      return failure();
    inferred.push_back(param);
  }
  return success();
}

LogicalResult AdamWUpdateOp::inferReturnTypes(MLIRContext *,
                                              std::optional<Location> loc,
                                              Adaptor adaptor,
                                              SmallVectorImpl<Type> &inferred) {
  ShapeError error{loc};
  Type param = adaptor.getParam().getType();
  double inf = std::numeric_limits<double>::infinity();
  if (failed(checkLikeParam(loc, param, adaptor.getGrad(), "grad")) ||
      failed(checkLikeParam(loc, param, adaptor.getExpAvg(), "exp_avg")) ||
      failed(checkLikeParam(loc, param, adaptor.getExpAvgSq(), "exp_avg_sq")) ||
      failed(checkScalar(error, adaptor.getStep(), "step")) ||
      failed(checkScalar(error, adaptor.getLr(), "lr")) ||
      failed(checkRange(loc, "beta1", adaptor.getBeta1().convertToDouble(), 0,
                        1, false)) ||
      failed(checkRange(loc, "beta2", adaptor.getBeta2().convertToDouble(), 0,
                        1, false)) ||
      failed(checkRange(loc, "weight_decay",
                        adaptor.getWeightDecay().convertToDouble(), 0, inf,
                        false)))
    return failure();
  if (!(adaptor.getEps().convertToDouble() > 0))
    return emitOptionalError(loc, "'eps' must be > 0, got ",
                             adaptor.getEps().convertToDouble());
  inferred.append({param, param, param});
  return success();
}
