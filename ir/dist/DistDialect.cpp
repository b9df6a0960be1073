//===- DistDialect.cpp - the dist dialect and its attributes --------------===//

#include "ir/dist/DistDialect.h"
#include "ir/dist/DistOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace dpc::dist;

#include "ir/dist/DistOpsDialect.cpp.inc"

void DistDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "ir/dist/DistOps.cpp.inc"
      >();
}

bool dpc::dist::isDeviceName(StringRef name) {
  if (!name.consume_front("cpu:") && !name.consume_front("cuda:"))
    return false;
  unsigned index;
  return !name.empty() &&
         llvm::all_of(name, [](char c) { return llvm::isDigit(c); }) &&
         !name.getAsInteger(10, index);
}

/// The device count of the step around `op`, if it says.
static std::optional<size_t> enclosingDeviceCount(Operation *op) {
  for (; op; op = op->getParentOp())
    if (auto devices =
            op->getAttrOfType<ArrayAttr>(DistDialect::kDevicesAttrName))
      return devices.size();
  return std::nullopt;
}

static LogicalResult verifyReplica(Operation *op, Attribute value) {
  auto replica = dyn_cast<IntegerAttr>(value);
  if (!replica || !replica.getType().isInteger(64) || replica.getInt() < 0)
    return op->emitError() << "'" << DistDialect::kReplicaAttrName
                           << "' must be a non-negative i64, got " << value;
  std::optional<size_t> devices = enclosingDeviceCount(op);
  if (devices && static_cast<uint64_t>(replica.getInt()) >= *devices)
    return op->emitError() << "replica " << replica.getInt() << " is out of "
                           << "range for " << *devices << " devices";
  return success();
}

static LogicalResult verifyDevices(Operation *op, Attribute value) {
  auto devices = dyn_cast<ArrayAttr>(value);
  if (!devices || devices.empty())
    return op->emitError() << "'" << DistDialect::kDevicesAttrName
                           << "' must be a non-empty array of device names";
  llvm::StringSet<> seen;
  for (Attribute device : devices) {
    auto name = dyn_cast<StringAttr>(device);
    if (!name || !isDeviceName(name.getValue()))
      return op->emitError()
             << "bad device " << device << ": expected \"cpu:K\" or \"cuda:K\"";
    if (!seen.insert(name.getValue()).second)
      return op->emitError() << "device " << device << " is listed twice";
  }
  return success();
}

static LogicalResult verifySplit(Operation *op, Attribute value) {
  auto split = dyn_cast<DenseI64ArrayAttr>(value);
  if (!split ||
      llvm::any_of(split.asArrayRef(), [](int64_t size) { return size < 0; }))
    return op->emitError() << "'" << DistDialect::kSplitAttrName
                           << "' must be an array<i64> of sizes >= 0";
  auto devices = op->getAttrOfType<ArrayAttr>(DistDialect::kDevicesAttrName);
  if (devices && devices.size() != static_cast<size_t>(split.size()))
    return op->emitError() << "'" << DistDialect::kSplitAttrName << "' has "
                           << split.size() << " sizes for " << devices.size()
                           << " devices";
  return success();
}

LogicalResult DistDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  StringRef name = attr.getName().strref();
  if (name == kDevicesAttrName)
    return verifyDevices(op, attr.getValue());
  if (name == kSplitAttrName)
    return verifySplit(op, attr.getValue());
  if (name == kReplicaAttrName)
    return verifyReplica(op, attr.getValue());
  if (name == kStatisticsAttrName) {
    if (!isa<UnitAttr>(attr.getValue()) ||
        op->getName().getStringRef() != "dist.all_reduce")
      return op->emitError()
             << "'" << name << "' must be a unit attribute of dist.all_reduce";
    return success();
  }
  if (name == kShardAttrName) {
    auto stage = dyn_cast<StringAttr>(attr.getValue());
    if (!stage ||
        !llvm::is_contained({"optimizer", "gradients", "parameters"},
                            stage.getValue()) ||
        !op->hasAttr(kDevicesAttrName))
      return op->emitError() << "'" << name
                             << "' must be \"optimizer\", \"gradients\" or "
                                "\"parameters\", on a partitioned step (with '"
                             << kDevicesAttrName << "')";
    return success();
  }
  return op->emitError() << "unknown dist attribute '" << name << "'";
}

LogicalResult DistDialect::verifyRegionResultAttribute(Operation *op, unsigned,
                                                       unsigned,
                                                       NamedAttribute attr) {
  if (attr.getName() != kReplicaAttrName)
    return op->emitError() << "unknown dist result attribute '"
                           << attr.getName().strref() << "'";
  return verifyReplica(op, attr.getValue());
}
