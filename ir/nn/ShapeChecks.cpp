//===- ShapeChecks.cpp - shape checks shared by nn ops --------------------===//
//
// The operand checks and window arithmetic behind the forward ops' result
// types (ShapeInference.cpp), shared with the gradient ops (NNGradOps.cpp)
// so both reject bad shapes with the same located diagnostics.
//
//===----------------------------------------------------------------------===//

#include "ir/nn/ShapeChecks.h"
#include "runtime/abi/CheckedMath.h"
#include "runtime/abi/WindowMath.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace dpc::nn::detail {

std::string dimToString(int64_t dim) {
  return isDynamic(dim) ? std::string("?") : std::to_string(dim);
}

LogicalResult checkRank(const ShapeError &error, RankedTensorType type,
                        int64_t rank, StringRef what) {
  if (type.getRank() == rank)
    return success();
  error() << what << " must have rank " << rank << ", got " << type;
  return failure();
}

LogicalResult checkWindowRank(const ShapeError &error, RankedTensorType type,
                              StringRef what) {
  if (type.getRank() == 4 || type.getRank() == 5)
    return success();
  error() << what << " must have rank 4 or 5 (2 or 3 spatial dims), got "
          << type;
  return failure();
}

/// Checks that an i64 array attribute has `size` entries, each >= `minValue`.
LogicalResult checkArray(const ShapeError &error, ArrayRef<int64_t> values,
                         size_t size, int64_t minValue, StringRef name) {
  if (values.size() != size) {
    error() << "'" << name << "' must have " << size << " entries, got "
            << values.size();
    return failure();
  }
  for (int64_t v : values) {
    if (v < minValue) {
      error() << "'" << name << "' entries must be >= " << minValue << ", got "
              << v;
      return failure();
    }
  }
  return success();
}

LogicalResult checkSameElementType(const ShapeError &error, Type a, Type b,
                                   StringRef what) {
  if (getElementTypeOrSelf(a) == getElementTypeOrSelf(b))
    return success();
  error() << what << " element type " << getElementTypeOrSelf(b)
          << " differs from " << getElementTypeOrSelf(a);
  return failure();
}

/// A 1-D per-channel operand (bias, batch-norm scale/shift/statistics).
LogicalResult checkPerChannel(const ShapeError &error, Value operand,
                              int64_t channels, Type elementType,
                              StringRef what) {
  auto type = cast<RankedTensorType>(operand.getType());
  if (failed(checkRank(error, type, 1, what)))
    return failure();
  if (!dimsAgree(type.getDimSize(0), channels)) {
    error() << what << " must have " << dimToString(channels)
            << " elements, got " << dimToString(type.getDimSize(0));
    return failure();
  }
  return checkSameElementType(error, elementType, type, what);
}

LogicalResult checkWindowArguments(const ShapeError &error, int64_t input,
                                   int64_t kernel, int64_t stride,
                                   int64_t padBefore, int64_t padAfter,
                                   int64_t dilation, StringRef axis) {
  if (dpc::plan::windowArgumentsInRange(input, kernel, stride, padBefore,
                                        padAfter, dilation))
    return success();
  error() << "window along the " << axis << " (extent " << input << ", kernel "
          << kernel << ", stride " << stride << ", padding " << padBefore << "+"
          << padAfter << ", dilation " << dilation
          << ") is out of range: each must be at most "
          << dpc::plan::kMaxWindowArgument
          << ", the kernel, stride and dilation positive";
  return failure();
}

/// Output size of a sliding window (convolution or pooling) along one axis.
/// The formula is the runtime's, so compiler and kernels cannot disagree.
FailureOr<int64_t> windowOutputSize(const ShapeError &error, int64_t input,
                                    int64_t kernel, int64_t stride,
                                    int64_t padBefore, int64_t padAfter,
                                    int64_t dilation, bool ceilMode,
                                    StringRef axis) {
  if (isDynamic(input) || isDynamic(kernel))
    return kDynamic;
  if (failed(checkWindowArguments(error, input, kernel, stride, padBefore,
                                  padAfter, dilation, axis)))
    return failure();
  int64_t effectiveKernel = dilation * (kernel - 1) + 1;
  if (input + padBefore + padAfter < effectiveKernel) {
    error() << "window of size " << effectiveKernel << " does not fit the "
            << axis << " extent " << input << " padded by " << padBefore << "+"
            << padAfter;
    return failure();
  }
  return dpc::plan::poolOutputSize(input, kernel, stride, padBefore, padAfter,
                                   dilation, ceilMode);
}

/// Result type of a window op over NCHW or NCDHW `input` with `channels`
/// outputs: one axis per spatial dim, the window's arrays of that length
/// (`padding` twice it: every axis's start, then every axis's end).
FailureOr<Type> inferWindow(const ShapeError &error, RankedTensorType input,
                            int64_t channels, const Window &window) {
  if (failed(checkWindowRank(error, input, "input")))
    return failure();
  size_t axes = input.getRank() - 2;
  // A filter's dims may be dynamic: windowOutputSize checks known ones.
  if (failed(checkArray(error, window.kernel, axes, kDynamic, "kernel_size")) ||
      failed(checkArray(error, window.stride, axes, 1, "stride")) ||
      failed(checkArray(error, window.padding, 2 * axes, 0, "padding")) ||
      failed(checkArray(error, window.dilation, axes, 1, "dilation")))
    return failure();
  SmallVector<int64_t> shape = {input.getDimSize(0), channels};
  for (size_t axis = 0; axis < axes; ++axis) {
    FailureOr<int64_t> extent = windowOutputSize(
        error, input.getDimSize(2 + axis), window.kernel[axis],
        window.stride[axis], window.padding[axis], window.padding[axes + axis],
        window.dilation[axis], window.ceilMode, spatialAxisName(axis, axes));
    if (failed(extent))
      return failure();
    shape.push_back(*extent);
  }
  return Type(RankedTensorType::get(shape, input.getElementType()));
}

/// Result of a pooling op: checks the kernel, then the shared window rules.
FailureOr<Type> inferPool2d(const ShapeError &error, Value input,
                            const Window &window) {
  auto type = cast<RankedTensorType>(input.getType());
  if (failed(checkRank(error, type, 4, "input")) ||
      failed(checkArray(error, window.kernel, 2, 1, "kernel_size")) ||
      failed(checkArray(error, window.padding, 4, 0, "padding")))
    return failure();
  // A padding of more than half the window would average or max over
  // nothing but padding.
  for (int i = 0; i < 4; ++i) {
    if (window.padding[i] > window.kernel[i % 2] / 2) {
      error() << "padding " << window.padding[i]
              << " exceeds half the kernel size " << window.kernel[i % 2];
      return failure();
    }
  }
  return inferWindow(error, type, type.getDimSize(1), window);
}

LogicalResult pushResult(FailureOr<Type> type,
                         SmallVectorImpl<Type> &inferred) {
  if (failed(type))
    return failure();
  inferred.push_back(*type);
  return success();
}

/// Product of dims, kDynamic if any is dynamic, or nullopt if it overflows.
std::optional<int64_t> product(ArrayRef<int64_t> dims) {
  if (llvm::any_of(dims, isDynamic))
    return kDynamic;
  return dpc::checkedProduct(dims);
}

} // namespace dpc::nn::detail

LogicalResult dpc::nn::detail::checkBatchNormAttrs(std::optional<Location> loc,
                                                   double epsilon,
                                                   double momentum) {
  if (!(epsilon > 0))
    return emitOptionalError(loc, "'epsilon' must be > 0, got ", epsilon);
  if (!(momentum >= 0 && momentum <= 1))
    return emitOptionalError(loc, "'momentum' must be in [0, 1], got ",
                             momentum);
  return success();
}

LogicalResult dpc::nn::detail::checkLayerNorm(std::optional<Location> loc,
                                              RankedTensorType input,
                                              Value scale, Value bias,
                                              int64_t axis, double epsilon) {
  if (axis < 1 || axis >= input.getRank())
    return emitOptionalError(loc, "'axis' must be in [1, ", input.getRank(),
                             ") (dim 0 is the batch), got ", axis);
  if (!(epsilon > 0))
    return emitOptionalError(loc, "'epsilon' must be > 0, got ", epsilon);
  auto expected = RankedTensorType::get(input.getShape().drop_front(axis),
                                        input.getElementType());
  for (auto [value, name] :
       {std::pair(scale, "scale"), std::pair(bias, "bias")})
    if (value && value.getType() != expected)
      return emitOptionalError(loc, "'", name, "' must be ", expected,
                               " (the input's dims from axis ", axis,
                               " on), got ", value.getType());
  return success();
}

LogicalResult dpc::nn::detail::verifySoftmaxAxis(Operation *op, Value value,
                                                 int64_t axis) {
  int64_t rank = cast<RankedTensorType>(value.getType()).getRank();
  if (axis < 0 || axis >= rank)
    return op->emitOpError()
           << "'axis' must be in [0, " << rank << "), got " << axis;
  return success();
}
