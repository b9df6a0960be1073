//===- ShapeInference.cpp - result types of nn ops ------------------------===//
//
// Each op's `inferReturnTypes` checks its operands and attributes and derives
// its result type. InferTypeOpInterface's verifier calls it with the op's
// location, so every shape or attribute error below is a located diagnostic,
// and the same code serves builders, the parser and shape propagation.
//
// Dimensions may be dynamic (`?`, the batch dimension before `--batch` fixes
// it): a dynamic input dimension yields a dynamic output dimension, and a
// check against a dynamic dimension passes.
//
//===----------------------------------------------------------------------===//

#include "ir/nn/NNOps.h"
#include "ir/nn/ShapeChecks.h"
#include "runtime/abi/CheckedMath.h"
#include "runtime/abi/WindowMath.h"

#include "mlir/Dialect/Traits.h"
#include "mlir/IR/Diagnostics.h"

#include <cmath>

using namespace mlir;
using namespace dpc::nn;
using namespace dpc::nn::detail;

LogicalResult dpc::nn::inferResultTypes(InferTypeOpInterface op) {
  SmallVector<Type> types;
  if (failed(op.inferReturnTypes(op->getContext(), op->getLoc(),
                                 op->getOperands(), op->getAttrDictionary(),
                                 op->getPropertiesStorage(), op->getRegions(),
                                 types)))
    return failure();
  for (auto [result, type] : llvm::zip_equal(op->getResults(), types))
    result.setType(type);
  return success();
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location> loc,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &inferred) {
  auto type = dyn_cast<RankedTensorType>(adaptor.getValue().getType());
  if (!type)
    return emitOptionalError(loc, "value must be a ranked tensor");
  inferred.push_back(type);
  return success();
}

//===----------------------------------------------------------------------===//
// Convolution, normalization, pooling
//===----------------------------------------------------------------------===//

LogicalResult Conv2dOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  ShapeError error{loc};
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  auto filter = cast<RankedTensorType>(adaptor.getFilter().getType());
  int64_t groups = adaptor.getGroups();
  if (failed(checkWindowRank(error, input, "input")) ||
      failed(checkRank(error, filter, input.getRank(), "filter")) ||
      failed(checkSameElementType(error, input, filter, "filter")))
    return failure();
  if (groups < 1)
    return emitOptionalError(loc, "'groups' must be >= 1, got ", groups);
  int64_t outChannels = filter.getDimSize(0);
  if (!isDynamic(outChannels) && outChannels % groups != 0)
    return emitOptionalError(loc, "output channels ", outChannels,
                             " are not divisible by groups ", groups);
  int64_t inChannels = input.getDimSize(1);
  int64_t filterChannels = filter.getDimSize(1);
  if (!isDynamic(inChannels) && !isDynamic(filterChannels) &&
      dpc::checkedMul(filterChannels, groups) != inChannels)
    return emitOptionalError(loc, "input has ", inChannels,
                             " channels but the filter expects ",
                             filterChannels, " x ", groups, " groups");
  if (Value bias = adaptor.getBias())
    if (failed(checkPerChannel(error, bias, outChannels, input.getElementType(),
                               "bias")))
      return failure();
  return pushResult(inferWindow(error, input, outChannels,
                                {filter.getShape().drop_front(2),
                                 adaptor.getStride(), adaptor.getPadding(),
                                 adaptor.getDilation(), /*ceilMode=*/false}),
                    inferred);
}

/// Output extent of a transposed convolution along one axis: the input
/// extent of the convolution it is the input gradient of. An output padding
/// below the stride keeps that convolution's output the transposed one's
/// input.
static FailureOr<int64_t>
transposedOutputSize(const ShapeError &error, int64_t input, int64_t kernel,
                     int64_t stride, int64_t padBefore, int64_t padAfter,
                     int64_t dilation, int64_t outputPadding, StringRef axis) {
  if (outputPadding >= stride) {
    error() << "'output_padding' " << outputPadding << " along the " << axis
            << " must be smaller than the stride " << stride;
    return failure();
  }
  if (isDynamic(input) || isDynamic(kernel))
    return kDynamic;
  if (failed(checkWindowArguments(error, input, kernel, stride, padBefore,
                                  padAfter, dilation, axis)))
    return failure();
  // Each term is below 2^62 (windowArgumentsInRange): no overflow.
  int64_t output = (input - 1) * stride - padBefore - padAfter +
                   dilation * (kernel - 1) + 1 + outputPadding;
  if (output < 1 || output > dpc::plan::kMaxWindowArgument) {
    error() << "transposed convolution output along the " << axis
            << " would have extent " << output << " (input " << input
            << ", kernel " << kernel << ", stride " << stride << ", padding "
            << padBefore << "+" << padAfter << ", dilation " << dilation
            << "): it must be in [1, " << dpc::plan::kMaxWindowArgument << "]";
    return failure();
  }
  return output;
}

LogicalResult
ConvTranspose2dOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                    Adaptor adaptor,
                                    SmallVectorImpl<Type> &inferred) {
  ShapeError error{loc};
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  auto filter = cast<RankedTensorType>(adaptor.getFilter().getType());
  ArrayRef<int64_t> stride = adaptor.getStride(),
                    padding = adaptor.getPadding(),
                    outputPadding = adaptor.getOutputPadding(),
                    dilation = adaptor.getDilation();
  int64_t groups = adaptor.getGroups();
  if (failed(checkWindowRank(error, input, "input")) ||
      failed(checkRank(error, filter, input.getRank(), "filter")) ||
      failed(checkSameElementType(error, input, filter, "filter")))
    return failure();
  size_t axes = input.getRank() - 2;
  if (failed(checkArray(error, stride, axes, 1, "stride")) ||
      failed(checkArray(error, padding, 2 * axes, 0, "padding")) ||
      failed(checkArray(error, outputPadding, axes, 0, "output_padding")) ||
      failed(checkArray(error, dilation, axes, 1, "dilation")))
    return failure();
  if (groups < 1)
    return emitOptionalError(loc, "'groups' must be >= 1, got ", groups);
  // The filter is [C_in, C_out / groups, k...]: the conv2d filter of the
  // convolution this op is the input gradient of.
  int64_t inChannels = filter.getDimSize(0);
  if (!isDynamic(inChannels) && inChannels % groups != 0)
    return emitOptionalError(loc, "input channels ", inChannels,
                             " are not divisible by groups ", groups);
  if (!dimsAgree(input.getDimSize(1), inChannels))
    return emitOptionalError(loc, "input has ", input.getDimSize(1),
                             " channels but the filter expects ", inChannels);
  int64_t outChannels = kDynamic;
  if (!isDynamic(filter.getDimSize(1))) {
    std::optional<int64_t> channels =
        dpc::checkedMul(filter.getDimSize(1), groups);
    if (!channels)
      return emitOptionalError(loc, "output channels overflow: ",
                               filter.getDimSize(1), " x ", groups, " groups");
    outChannels = *channels;
  }
  SmallVector<int64_t> shape = {input.getDimSize(0), outChannels};
  for (size_t axis = 0; axis < axes; ++axis) {
    FailureOr<int64_t> extent = transposedOutputSize(
        error, input.getDimSize(2 + axis), filter.getDimSize(2 + axis),
        stride[axis], padding[axis], padding[axes + axis], dilation[axis],
        outputPadding[axis], spatialAxisName(axis, axes));
    if (failed(extent))
      return failure();
    shape.push_back(*extent);
  }
  inferred.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult BatchNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  ShapeError error{loc};
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  if (input.getRank() < 2)
    return emitOptionalError(loc, "input must have rank >= 2, got ", input);
  if (failed(checkBatchNormAttrs(loc, adaptor.getEpsilon().convertToDouble(),
                                 adaptor.getMomentum().convertToDouble())))
    return failure();
  int64_t channels = input.getDimSize(1);
  Type elementType = input.getElementType();
  if (failed(checkPerChannel(error, adaptor.getScale(), channels, elementType,
                             "scale")) ||
      failed(checkPerChannel(error, adaptor.getShift(), channels, elementType,
                             "shift")) ||
      failed(checkPerChannel(error, adaptor.getRunningMean(), channels,
                             elementType, "running_mean")) ||
      failed(checkPerChannel(error, adaptor.getRunningVar(), channels,
                             elementType, "running_var")))
    return failure();
  inferred.push_back(input);
  return success();
}

LogicalResult MaxPool2dOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  return pushResult(inferPool2d(ShapeError{loc}, adaptor.getInput(),
                                {adaptor.getKernelSize(), adaptor.getStride(),
                                 adaptor.getPadding(), adaptor.getDilation(),
                                 adaptor.getCeilMode()}),
                    inferred);
}

LogicalResult AvgPool2dOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  static const int64_t kNoDilation[2] = {1, 1};
  return pushResult(
      inferPool2d(ShapeError{loc}, adaptor.getInput(),
                  {adaptor.getKernelSize(), adaptor.getStride(),
                   adaptor.getPadding(), kNoDilation, adaptor.getCeilMode()}),
      inferred);
}

LogicalResult
GlobalAvgPool2dOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                    Adaptor adaptor,
                                    SmallVectorImpl<Type> &inferred) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  if (failed(checkRank(ShapeError{loc}, input, 4, "input")))
    return failure();
  inferred.push_back(
      RankedTensorType::get({input.getDimSize(0), input.getDimSize(1), 1, 1},
                            input.getElementType()));
  return success();
}

LogicalResult PadOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &inferred) {
  ShapeError error{loc};
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  size_t rank = input.getRank();
  if (failed(checkArray(error, adaptor.getLow(), rank, 0, "low")) ||
      failed(checkArray(error, adaptor.getHigh(), rank, 0, "high")))
    return failure();
  SmallVector<int64_t> shape(input.getShape());
  for (size_t d = 0; d < rank; ++d)
    if (!isDynamic(shape[d]))
      shape[d] += adaptor.getLow()[d] + adaptor.getHigh()[d];
  inferred.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

template <typename Adaptor>
static LogicalResult inferBroadcast(std::optional<Location> loc,
                                    Adaptor adaptor,
                                    SmallVectorImpl<Type> &inferred) {
  auto lhs = cast<RankedTensorType>(adaptor.getLhs().getType());
  auto rhs = cast<RankedTensorType>(adaptor.getRhs().getType());
  if (failed(checkSameElementType(ShapeError{loc}, lhs, rhs, "rhs")))
    return failure();
  SmallVector<int64_t> shape;
  if (!OpTrait::util::getBroadcastedShape(lhs.getShape(), rhs.getShape(),
                                          shape))
    return emitOptionalError(loc, "shapes ", lhs, " and ", rhs,
                             " do not broadcast");
  // The one dynamic dim is the batch (or a multiple of it): against a
  // static dim other than 1 it would broadcast for one batch size only,
  // and the gradients built from it would disagree with the forward.
  ArrayRef<int64_t> a = lhs.getShape(), b = rhs.getShape();
  for (size_t i = 1; i <= std::min(a.size(), b.size()); ++i) {
    int64_t x = a[a.size() - i], y = b[b.size() - i];
    if (ShapedType::isDynamic(x) != ShapedType::isDynamic(y) &&
        (ShapedType::isDynamic(x) ? y : x) != 1)
      return emitOptionalError(loc, "shapes ", lhs, " and ", rhs,
                               " broadcast the batch dim against ",
                               ShapedType::isDynamic(x) ? y : x);
  }
  inferred.push_back(RankedTensorType::get(shape, lhs.getElementType()));
  return success();
}

LogicalResult AddOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &inferred) {
  return inferBroadcast(loc, adaptor, inferred);
}

LogicalResult MulOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> loc,
                                      Adaptor adaptor,
                                      SmallVectorImpl<Type> &inferred) {
  return inferBroadcast(loc, adaptor, inferred);
}

LogicalResult MaximumOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  return inferBroadcast(loc, adaptor, inferred);
}

LogicalResult MinimumOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  return inferBroadcast(loc, adaptor, inferred);
}

//===----------------------------------------------------------------------===//
// Shape
//===----------------------------------------------------------------------===//

LogicalResult FlattenOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  int64_t axis = adaptor.getAxis();
  if (axis < 0 || axis > input.getRank())
    return emitOptionalError(loc, "'axis' must be in [0, ", input.getRank(),
                             "], got ", axis);
  ArrayRef<int64_t> shape = input.getShape();
  std::optional<int64_t> rows = product(shape.take_front(axis));
  std::optional<int64_t> columns = product(shape.drop_front(axis));
  if (!rows || !columns)
    return emitOptionalError(loc, "the element count of ", input,
                             " overflows 64 bits");
  inferred.push_back(
      RankedTensorType::get({*rows, *columns}, input.getElementType()));
  return success();
}

LogicalResult ReshapeOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &inferred) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  ArrayRef<int64_t> target = adaptor.getShape();
  SmallVector<int64_t> shape(target);
  // Input dims that a 0 entry copies drop out of the element-count balance,
  // so a dynamic batch copied through stays consistent.
  SmallVector<bool> copied(input.getRank(), false);
  int64_t inferredIndex = -1;
  for (auto [i, dim] : llvm::enumerate(target)) {
    if (dim == 0) {
      if (static_cast<int64_t>(i) >= input.getRank())
        return emitOptionalError(loc, "shape entry ", i,
                                 " copies a dimension the input lacks");
      shape[i] = input.getDimSize(i);
      copied[i] = true;
    } else if (dim == -1) {
      if (inferredIndex >= 0)
        return emitOptionalError(loc, "shape has more than one -1 entry");
      inferredIndex = i;
    } else if (dim < -1) {
      return emitOptionalError(loc, "shape entry ", i, " is ", dim,
                               "; must be > 0, 0 (copy) or -1 (infer)");
    }
  }
  SmallVector<int64_t> remainingDims, explicitDims;
  for (auto [i, dim] : llvm::enumerate(input.getShape()))
    if (!copied[i])
      remainingDims.push_back(dim);
  for (int64_t dim : target)
    if (dim > 0)
      explicitDims.push_back(dim);
  std::optional<int64_t> remaining = product(remainingDims);
  std::optional<int64_t> explicitCount = product(explicitDims);
  if (!remaining || !explicitCount)
    return emitOptionalError(loc, "cannot reshape ", input, " to [", target,
                             "]: an element count overflows 64 bits");
  int64_t remainingInput = *remaining, explicitOutput = *explicitCount;
  if (inferredIndex >= 0) {
    if (isDynamic(remainingInput)) {
      shape[inferredIndex] = kDynamic;
    } else {
      if (remainingInput % explicitOutput != 0)
        return emitOptionalError(loc, "cannot reshape ", input, " to [", target,
                                 "]: element counts do not divide");
      shape[inferredIndex] = remainingInput / explicitOutput;
    }
  } else if (!isDynamic(remainingInput) && remainingInput != explicitOutput) {
    return emitOptionalError(loc, "cannot reshape ", input, " to [", target,
                             "]: element counts differ");
  }
  inferred.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

LogicalResult LinearOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  ShapeError error{loc};
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  auto weight = cast<RankedTensorType>(adaptor.getWeight().getType());
  if (failed(checkRank(error, input, 2, "input")) ||
      failed(checkRank(error, weight, 2, "weight")) ||
      failed(checkSameElementType(error, input, weight, "weight")))
    return failure();
  if (!dimsAgree(input.getDimSize(1), weight.getDimSize(1)))
    return emitOptionalError(
        loc, "input has ", dimToString(input.getDimSize(1)),
        " features but the weight expects ", dimToString(weight.getDimSize(1)));
  int64_t outFeatures = weight.getDimSize(0);
  if (Value bias = adaptor.getBias())
    if (failed(checkPerChannel(error, bias, outFeatures, input.getElementType(),
                               "bias")))
      return failure();
  inferred.push_back(RankedTensorType::get({input.getDimSize(0), outFeatures},
                                           input.getElementType()));
  return success();
}

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  ShapeError error{loc};
  auto lhs = cast<RankedTensorType>(adaptor.getLhs().getType());
  auto rhs = cast<RankedTensorType>(adaptor.getRhs().getType());
  if (lhs.getRank() < 2)
    return emitOptionalError(loc, "lhs must have rank >= 2, got ", lhs);
  if (failed(checkRank(error, rhs, 2, "rhs")) ||
      failed(checkSameElementType(error, lhs, rhs, "rhs")))
    return failure();
  int64_t contracted = lhs.getDimSize(lhs.getRank() - 1);
  if (!dimsAgree(contracted, rhs.getDimSize(0)))
    return emitOptionalError(
        loc, "contracted dimensions differ: ", dimToString(contracted), " vs ",
        dimToString(rhs.getDimSize(0)));
  SmallVector<int64_t> shape(lhs.getShape());
  shape.back() = rhs.getDimSize(1);
  inferred.push_back(RankedTensorType::get(shape, lhs.getElementType()));
  return success();
}

LogicalResult
BroadcastRowsOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                  Adaptor adaptor,
                                  SmallVectorImpl<Type> &inferred) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  auto rows = cast<RankedTensorType>(adaptor.getRows().getType());
  if (input.getRank() < 1 || input.getDimSize(0) != 1)
    return emitOptionalError(loc, "input must have a dim 0 of 1, got ", input);
  if (rows.getRank() < 1)
    return emitOptionalError(loc, "rows must have a dim 0, got ", rows);
  SmallVector<int64_t> shape(input.getShape());
  shape[0] = rows.getDimSize(0);
  inferred.push_back(RankedTensorType::get(shape, input.getElementType()));
  return success();
}

LogicalResult BatchMatmulOp::inferReturnTypes(MLIRContext *,
                                              std::optional<Location> loc,
                                              Adaptor adaptor,
                                              SmallVectorImpl<Type> &inferred) {
  ShapeError error{loc};
  auto lhs = cast<RankedTensorType>(adaptor.getLhs().getType());
  auto rhs = cast<RankedTensorType>(adaptor.getRhs().getType());
  if (lhs.getRank() < 3 || rhs.getRank() != lhs.getRank())
    return emitOptionalError(loc, "operands must have the same rank >= 3, got ",
                             lhs, " and ", rhs);
  if (failed(checkSameElementType(error, lhs, rhs, "rhs")))
    return failure();
  int64_t rank = lhs.getRank();
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank - 2; ++d) {
    if (!dimsAgree(lhs.getDimSize(d), rhs.getDimSize(d)))
      return emitOptionalError(loc, "leading dim ", d,
                               " differs: ", dimToString(lhs.getDimSize(d)),
                               " vs ", dimToString(rhs.getDimSize(d)));
    shape.push_back(ShapedType::isDynamic(lhs.getDimSize(d))
                        ? rhs.getDimSize(d)
                        : lhs.getDimSize(d));
  }
  // op(x) reads x's last two dims swapped when transposed.
  auto dim = [&](RankedTensorType type, bool transposed, int64_t i) {
    return type.getDimSize(rank - 2 + (transposed ? 1 - i : i));
  };
  bool tl = adaptor.getTransposeLhs(), tr = adaptor.getTransposeRhs();
  if (!dimsAgree(dim(lhs, tl, 1), dim(rhs, tr, 0)))
    return emitOptionalError(
        loc, "contracted dimensions differ: ", dimToString(dim(lhs, tl, 1)),
        " vs ", dimToString(dim(rhs, tr, 0)));
  shape.push_back(dim(lhs, tl, 0));
  shape.push_back(dim(rhs, tr, 1));
  inferred.push_back(RankedTensorType::get(shape, lhs.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Softmax and loss
//===----------------------------------------------------------------------===//

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  if (failed(detail::checkLayerNorm(loc, input, adaptor.getScale(),
                                    adaptor.getBias(), adaptor.getAxis(),
                                    adaptor.getEpsilon().convertToDouble())))
    return failure();
  inferred.push_back(input);
  return success();
}

LogicalResult SoftmaxOp::verify() {
  return detail::verifySoftmaxAxis(*this, getInput(), getAxis());
}

LogicalResult LogSoftmaxOp::verify() {
  return detail::verifySoftmaxAxis(*this, getInput(), getAxis());
}

/// Concat and split: `axis` is a dim of `type` other than the batch (0).
static LogicalResult checkJoinAxis(std::optional<Location> loc,
                                   RankedTensorType type, int64_t axis) {
  if (axis < 0 || axis >= type.getRank() || type.isDynamicDim(axis))
    return emitOptionalError(loc, "'axis' must be a static dim of ", type,
                             ", got ", axis, " (the batch's is open)");
  return success();
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &inferred) {
  if (adaptor.getInputs().empty())
    return emitOptionalError(loc, "needs at least one input");
  auto first = cast<RankedTensorType>(adaptor.getInputs()[0].getType());
  int64_t axis = adaptor.getAxis();
  if (failed(checkJoinAxis(loc, first, axis)))
    return failure();
  SmallVector<int64_t> shape(first.getShape());
  shape[axis] = 0;
  for (Value input : adaptor.getInputs()) {
    auto type = cast<RankedTensorType>(input.getType());
    if (type.getRank() != first.getRank() ||
        type.getElementType() != first.getElementType())
      return emitOptionalError(loc, "input ", type, " does not match ", first);
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (d != axis && !dimsAgree(type.getDimSize(d), first.getDimSize(d)))
        return emitOptionalError(loc, "input ", type, " does not match ", first,
                                 " outside dim ", axis);
    if (type.isDynamicDim(axis))
      return emitOptionalError(loc, "input ", type, " has a dynamic dim ",
                               axis);
    shape[axis] += type.getDimSize(axis);
  }
  inferred.push_back(RankedTensorType::get(shape, first.getElementType()));
  return success();
}

LogicalResult SplitOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &inferred) {
  auto input = cast<RankedTensorType>(adaptor.getInput().getType());
  int64_t axis = adaptor.getAxis();
  if (failed(checkJoinAxis(loc, input, axis)))
    return failure();
  int64_t total = 0;
  for (int64_t size : adaptor.getSizes()) {
    if (size < 1)
      return emitOptionalError(loc, "'sizes' must be positive");
    total += size;
    SmallVector<int64_t> shape(input.getShape());
    shape[axis] = size;
    inferred.push_back(RankedTensorType::get(shape, input.getElementType()));
  }
  if (total != input.getDimSize(axis))
    return emitOptionalError(loc, "'sizes' add up to ", total, ", but dim ",
                             axis, " of ", input, " is ",
                             input.getDimSize(axis));
  return success();
}

LogicalResult ClipOp::verify() {
  double min = getMin().convertToDouble(), max = getMax().convertToDouble();
  if (!std::isfinite(min) || !std::isfinite(max) || min > max)
    return emitOpError() << "bounds [" << min << ", " << max
                         << "] are not a finite interval";
  return success();
}

LogicalResult RandomScaleOp::verify() {
  double low = getLow().convertToDouble(), high = getHigh().convertToDouble();
  if (!std::isfinite(low) || !std::isfinite(high) || low > high)
    return emitOpError() << "factors [" << low << ", " << high
                         << ") are not a finite interval";
  if (cast<RankedTensorType>(getInput().getType()).getRank() < 1)
    return emitOpError() << "needs a batch dimension";
  return success();
}

LogicalResult DropoutOp::verify() {
  double ratio = getRatio().convertToDouble();
  if (!(ratio >= 0 && ratio <= 1))
    return emitOpError() << "ratio " << ratio << " is not in [0, 1]";
  int64_t span = getSpan();
  auto type = cast<RankedTensorType>(getInput().getType());
  if (span < 1)
    return emitOpError() << "span " << span << " is not positive";
  if (span == 1)
    return success();
  if (type.getRank() < 1 ||
      llvm::any_of(type.getShape().drop_front(), ShapedType::isDynamic))
    return emitOpError() << "span needs static dims after the batch";
  ArrayRef<int64_t> rowDims = type.getShape().drop_front();
  int64_t row = 1;
  for (int64_t d : rowDims)
    row *= d;
  if (row % span != 0)
    return emitOpError() << "span " << span << " does not divide a row of "
                         << row << " elements";
  return success();
}

LogicalResult EmbeddingOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &inferred) {
  auto table = cast<RankedTensorType>(adaptor.getTable().getType());
  auto indices = cast<RankedTensorType>(adaptor.getIndices().getType());
  if (failed(checkRank(ShapeError{loc}, table, 2, "table")))
    return failure();
  if (indices.getRank() < 1)
    return emitOptionalError(loc, "indices must have a batch dim, got ",
                             indices);
  if (std::optional<int64_t> padding = adaptor.getPaddingIdx();
      padding && (*padding < 0 || *padding >= table.getDimSize(0)))
    return emitOptionalError(loc, "padding_idx ", *padding,
                             " is not a row of the table ", table);
  SmallVector<int64_t> shape(indices.getShape());
  shape.push_back(table.getDimSize(1));
  inferred.push_back(RankedTensorType::get(shape, table.getElementType()));
  return success();
}
