//===- ShapeChecks.h - shape checks shared by nn ops ------------*- C++ -*-===//
//
// The operand checks and window arithmetic behind the forward ops' result-type
// inference, shared with the gradient ops so both reject bad shapes with the
// same located diagnostics.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_IR_NN_SHAPECHECKS_H
#define DPC_IR_NN_SHAPECHECKS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Value.h"

#include <optional>
#include <string>

namespace dpc::nn::detail {

constexpr int64_t kDynamic = mlir::ShapedType::kDynamic;

inline bool isDynamic(int64_t dim) { return mlir::ShapedType::isDynamic(dim); }

/// Two dimensions agree if they are equal or one is not yet known.
inline bool dimsAgree(int64_t a, int64_t b) {
  return isDynamic(a) || isDynamic(b) || a == b;
}

std::string dimToString(int64_t dim);

/// Emits a located error if a location is known; always returns failure.
struct ShapeError {
  std::optional<mlir::Location> loc;

  mlir::InFlightDiagnostic operator()() const {
    // emitOptionalError needs at least one argument to stream; callers add
    // the message with <<.
    if (loc)
      return mlir::emitError(*loc);
    return mlir::InFlightDiagnostic();
  }
};

mlir::LogicalResult checkRank(const ShapeError &error,
                              mlir::RankedTensorType type, int64_t rank,
                              llvm::StringRef what);

/// An NCHW or NCDHW operand of a window op (2 or 3 spatial dims).
mlir::LogicalResult checkWindowRank(const ShapeError &error,
                                    mlir::RankedTensorType type,
                                    llvm::StringRef what);

/// Checks that an i64 array attribute has `size` entries, each >= `minValue`.
mlir::LogicalResult checkArray(const ShapeError &error,
                               llvm::ArrayRef<int64_t> values, size_t size,
                               int64_t minValue, llvm::StringRef name);

mlir::LogicalResult checkSameElementType(const ShapeError &error, mlir::Type a,
                                         mlir::Type b, llvm::StringRef what);

/// A 1-D per-channel operand (bias, batch-norm scale/shift/statistics).
mlir::LogicalResult checkPerChannel(const ShapeError &error,
                                    mlir::Value operand, int64_t channels,
                                    mlir::Type elementType,
                                    llvm::StringRef what);

/// A window's static arguments along one axis are in range
/// (dpc::plan::windowArgumentsInRange), or a located error naming `axis`.
mlir::LogicalResult checkWindowArguments(const ShapeError &error, int64_t input,
                                         int64_t kernel, int64_t stride,
                                         int64_t padBefore, int64_t padAfter,
                                         int64_t dilation,
                                         llvm::StringRef axis);

/// The name of spatial axis `axis` of `axes` (2: height and width; 3: depth
/// first), for diagnostics.
inline const char *spatialAxisName(size_t axis, size_t axes) {
  static const char *const names[] = {"depth", "height", "width"};
  return names[3 - axes + axis];
}

/// A sliding window's geometry, one entry per spatial axis (`padding`: the
/// starts of every axis, then the ends).
struct Window {
  llvm::ArrayRef<int64_t> kernel, stride, padding, dilation;
  bool ceilMode;
};

/// Result type of a window op over NCHW or NCDHW `input` (2 or 3 spatial
/// axes, the window's arrays as long) with `channels` outputs.
mlir::FailureOr<mlir::Type> inferWindow(const ShapeError &error,
                                        mlir::RankedTensorType input,
                                        int64_t channels, const Window &window);

/// Result of a pooling op: checks the kernel, then the shared window rules.
mlir::FailureOr<mlir::Type>
inferPool2d(const ShapeError &error, mlir::Value input, const Window &window);

mlir::LogicalResult pushResult(mlir::FailureOr<mlir::Type> type,
                               llvm::SmallVectorImpl<mlir::Type> &inferred);

/// Product of dims, kDynamic if any is dynamic, or nullopt if it overflows.
std::optional<int64_t> product(llvm::ArrayRef<int64_t> dims);

/// Batch norm's epsilon (> 0) and momentum (in [0, 1]), for every form of
/// the op.
mlir::LogicalResult checkBatchNormAttrs(std::optional<mlir::Location> loc,
                                        double epsilon, double momentum);

/// Layer norm (forward and gradient): `axis` in [1, rank), epsilon > 0,
/// and `scale` (and `bias`, when given) of the input's dims from `axis` on.
mlir::LogicalResult checkLayerNorm(std::optional<mlir::Location> loc,
                                   mlir::RankedTensorType input,
                                   mlir::Value scale, mlir::Value bias,
                                   int64_t axis, double epsilon);

/// The softmax ops (forward and gradient) keep their type; only the axis
/// needs checking against the rank of `value`.
mlir::LogicalResult verifySoftmaxAxis(mlir::Operation *op, mlir::Value value,
                                      int64_t axis);

} // namespace dpc::nn::detail

#endif // DPC_IR_NN_SHAPECHECKS_H
