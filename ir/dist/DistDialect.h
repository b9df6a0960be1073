//===- DistDialect.h - the dist dialect -------------------------*- C++ -*-===//

#ifndef DPC_IR_DIST_DISTDIALECT_H
#define DPC_IR_DIST_DISTDIALECT_H

#include "mlir/IR/Dialect.h"

#include "ir/dist/DistOpsDialect.h.inc"

namespace dpc::dist {
/// Whether `name` names a device: "cpu:K" or "cuda:K", K a decimal index.
bool isDeviceName(llvm::StringRef name);
} // namespace dpc::dist

#endif // DPC_IR_DIST_DISTDIALECT_H
