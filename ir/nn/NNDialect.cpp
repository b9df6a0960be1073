//===- NNDialect.cpp - the nn dialect -------------------------------------===//

#include "ir/nn/NNDialect.h"
#include "ir/nn/NNOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace dpc::nn;

#include "ir/nn/NNOpsDialect.cpp.inc"

void NNDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "ir/nn/NNOps.cpp.inc"
      >();
  attachDifferentiableOpInterfaces(*getContext());
}

Operation *NNDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                          Type type, Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return builder.create<ConstantOp>(loc, elements);
}

/// The naming attributes are strings and the marker attributes units; any
/// other `nn.` attribute is a typo.
static LogicalResult verifyNamingAttr(Operation *op, NamedAttribute attr,
                                      ArrayRef<StringRef> known,
                                      ArrayRef<StringRef> markers = {}) {
  StringRef name = attr.getName().strref();
  if (!name.starts_with("nn."))
    return success();
  if (llvm::is_contained(markers, name)) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError() << "'" << name << "' must be a unit attribute";
    return success();
  }
  if (!llvm::is_contained(known, name))
    return op->emitError() << "unknown nn attribute '" << name << "'";
  auto str = dyn_cast<StringAttr>(attr.getValue());
  if (!str || str.getValue().empty())
    return op->emitError() << "'" << name << "' must be a non-empty string";
  return success();
}

LogicalResult NNDialect::verifyRegionArgAttribute(Operation *op, unsigned,
                                                  unsigned,
                                                  NamedAttribute attr) {
  return verifyNamingAttr(
      op, attr,
      {kParamAttrName, kBufferAttrName, kInputAttrName, kInitFromAttrName,
       kOptStateAttrName},
      {kLabelsAttrName, kLearningRateAttrName, kStepAttrName});
}

LogicalResult NNDialect::verifyRegionResultAttribute(Operation *op, unsigned,
                                                     unsigned,
                                                     NamedAttribute attr) {
  return verifyNamingAttr(op, attr,
                          {kOutputAttrName, kParamUpdateAttrName,
                           kBufferUpdateAttrName, kOptStateUpdateAttrName});
}
