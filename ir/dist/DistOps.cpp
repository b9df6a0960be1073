//===- DistOps.cpp - dist dialect ops -------------------------------------===//

#include "ir/dist/DistOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace dpc::dist;

//===----------------------------------------------------------------------===//
// Shared checks
//===----------------------------------------------------------------------===//

static LogicalResult verifyDeviceCount(Operation *op, size_t count,
                                       StringRef what) {
  if (count == 0)
    return op->emitOpError()
           << "needs at least one " << what << " (one per device)";
  return success();
}

/// Collectives with per-device operands and results have one of each per
/// device.
static LogicalResult verifyOneResultPerOperand(Operation *op) {
  if (op->getNumResults() != op->getNumOperands())
    return op->emitOpError()
           << "has " << op->getNumOperands() << " operands but "
           << op->getNumResults() << " results: one each per device";
  return success();
}

static LogicalResult verifyReduction(Operation *op, StringRef reduction) {
  if (!llvm::is_contained({"sum", "mean", "max"}, reduction))
    return op->emitOpError()
           << "reduction must be sum, mean or max, got '" << reduction << "'";
  return success();
}

/// Per-device operands of a reduction all have the first one's type.
static LogicalResult verifySameTypes(Operation *op, TypeRange types) {
  for (auto [i, type] : llvm::enumerate(types))
    if (type != types.front())
      return op->emitOpError() << "operand " << i << " has type " << type
                               << ", but operand 0 has type " << types.front();
  return success();
}

/// Checks that `parts` are `whole` split on dim 0 into `sizes`.
static LogicalResult verifyParts(Operation *op, RankedTensorType whole,
                                 TypeRange parts, ArrayRef<int64_t> sizes) {
  if (whole.getRank() == 0)
    return op->emitOpError() << "cannot split a 0-d tensor on dim 0";
  if (sizes.size() != parts.size())
    return op->emitOpError() << "has " << sizes.size() << " sizes for "
                             << parts.size() << " devices";
  int64_t total = 0;
  for (auto [d, size] : llvm::enumerate(sizes)) {
    if (size < 0)
      return op->emitOpError()
             << "size " << size << " of device " << d << " is negative";
    total += size;
  }
  if (!whole.isDynamicDim(0) && total != whole.getDimSize(0))
    return op->emitOpError() << "sizes sum to " << total << ", not to dim 0 ("
                             << whole.getDimSize(0) << ")";
  for (auto [d, type] : llvm::enumerate(parts)) {
    SmallVector<int64_t> shape(whole.getShape());
    shape[0] = sizes[d];
    auto expected = whole.clone(shape);
    if (type != expected)
      return op->emitOpError() << "part " << d << " has type " << type
                               << ", expected " << expected;
  }
  return success();
}

/// The type of per-device `parts` concatenated on dim 0; 0-d parts make a
/// vector with one entry per device.
static FailureOr<RankedTensorType> gatheredType(Operation *op,
                                                TypeRange parts) {
  auto first = cast<RankedTensorType>(parts.front());
  int64_t dim0 = first.getRank() == 0 ? 0 : first.getDimSize(0);
  for (auto [d, part] : llvm::enumerate(parts.drop_front())) {
    auto type = cast<RankedTensorType>(part);
    if (type.getElementType() != first.getElementType() ||
        type.getRank() != first.getRank() ||
        (first.getRank() > 0 &&
         type.getShape().drop_front() != first.getShape().drop_front()))
      return op->emitOpError()
             << "part " << d + 1 << " has type " << type
             << ", which does not concatenate on dim 0 with " << first;
    if (first.getRank() > 0)
      dim0 = ShapedType::isDynamic(dim0) || type.isDynamicDim(0)
                 ? ShapedType::kDynamic
                 : dim0 + type.getDimSize(0);
  }
  if (first.getRank() == 0)
    return RankedTensorType::get({static_cast<int64_t>(parts.size())},
                                 first.getElementType());
  SmallVector<int64_t> shape(first.getShape());
  shape[0] = dim0;
  return first.clone(shape);
}

/// all_reduce prints its operand types only: the results have the same.
static ParseResult parsePerDeviceTypes(OpAsmParser &parser,
                                       SmallVectorImpl<Type> &inputs,
                                       SmallVectorImpl<Type> &results) {
  if (parser.parseTypeList(inputs))
    return failure();
  results.assign(inputs.begin(), inputs.end());
  return success();
}

static void printPerDeviceTypes(OpAsmPrinter &printer, Operation *,
                                TypeRange inputs, TypeRange) {
  llvm::interleaveComma(inputs, printer);
}

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

LogicalResult ScatterOp::verify() {
  if (failed(verifyDeviceCount(*this, getNumResults(), "result")))
    return failure();
  return verifyParts(*this, getInput().getType(), getResultTypes(), getSizes());
}

LogicalResult ReplicateOp::verify() {
  if (failed(verifyDeviceCount(*this, getNumResults(), "result")))
    return failure();
  for (auto [d, type] : llvm::enumerate(getResultTypes()))
    if (type != getInput().getType())
      return emitOpError() << "result " << d << " has type " << type
                           << ", but the input has type "
                           << getInput().getType();
  return success();
}

LogicalResult AllReduceOp::verify() {
  if (failed(verifyDeviceCount(*this, getNumOperands(), "operand")) ||
      failed(verifyReduction(*this, getReduction())) ||
      failed(verifySameTypes(*this, getOperandTypes())))
    return failure();
  if (failed(verifyOneResultPerOperand(*this)))
    return failure();
  for (auto [d, type] : llvm::enumerate(getResultTypes()))
    if (type != getOperand(0).getType())
      return emitOpError() << "result " << d << " has type " << type
                           << ", but the operands have type "
                           << getOperand(0).getType();
  if (getBucketAttr() && getBucketAttr().getInt() < 0)
    return emitOpError() << "bucket must be >= 0, got "
                         << getBucketAttr().getInt();
  return success();
}

LogicalResult GatherOp::verify() {
  if (failed(verifyDeviceCount(*this, getNumOperands(), "operand")))
    return failure();
  FailureOr<RankedTensorType> expected = gatheredType(*this, getOperandTypes());
  if (failed(expected))
    return failure();
  if (getType() != *expected)
    return emitOpError() << "result has type " << getType() << ", expected "
                         << *expected;
  return success();
}

LogicalResult ReduceScatterOp::verify() {
  if (failed(verifyDeviceCount(*this, getNumOperands(), "operand")) ||
      failed(verifyReduction(*this, getReduction())) ||
      failed(verifySameTypes(*this, getOperandTypes())))
    return failure();
  if (failed(verifyOneResultPerOperand(*this)))
    return failure();
  return verifyParts(*this, cast<RankedTensorType>(getOperand(0).getType()),
                     getResultTypes(), getSizes());
}

LogicalResult AllGatherOp::verify() {
  if (failed(verifyDeviceCount(*this, getNumOperands(), "operand")))
    return failure();
  if (failed(verifyOneResultPerOperand(*this)))
    return failure();
  FailureOr<RankedTensorType> expected = gatheredType(*this, getOperandTypes());
  if (failed(expected))
    return failure();
  for (auto [d, type] : llvm::enumerate(getResultTypes()))
    if (type != *expected)
      return emitOpError() << "result " << d << " has type " << type
                           << ", expected " << *expected;
  return success();
}

#define GET_OP_CLASSES
#include "ir/dist/DistOps.cpp.inc"
