//===- RematSupport.h - what remat and its report share ---------*- C++ -*-===//
//
// The op cost model (FLOPs) and where a training step's forward pass ends.
// Used by the rematerialization pass (passes/Rematerialize.cpp) and by the
// lowering's memory report (codegen/NNToExec.cpp), so both count the same.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_PASSES_REMATSUPPORT_H
#define DPC_PASSES_REMATSUPPORT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>

namespace dpc {

/// Unit attribute of an op that recomputes a forward op for the backward
/// pass (a clone made by dpc-rematerialize).
constexpr llvm::StringLiteral kRematAttrName = "nn.remat";

/// Floating-point operations of one nn op at its static shapes (multiply and
/// add count as two); 0 for views, constants and non-nn ops.
int64_t estimateFlops(mlir::Operation *op);

/// Whether `op` belongs to replica `replica` of a (possibly partitioned)
/// step: ops without `dist.replica` belong to every replica.
bool inReplica(mlir::Operation *op, int64_t replica);

/// The op that ends replica `replica`'s forward pass in a training step: its
/// `nn.loss`. Null for a step without one (@eval_step has one too,
/// but no backward pass).
mlir::Operation *findLossOp(mlir::func::FuncOp step, int64_t replica);

} // namespace dpc

#endif // DPC_PASSES_REMATSUPPORT_H
