//===- KernelAttributes.h - exec.kernel attributes as plan tables -*- C++
//-*-===//
//
// The one conversion from an exec.kernel's attributes (stride, momentum,
// ...) to the plan's attribute table, chosen by the table Kernels.def
// gives the kernel: the plan writer serializes it, and the exec.kernel
// verifier hands it to the runtime's own shape checks, so a kernel call
// the loader would refuse is refused at compile time, at the op.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_IR_EXEC_KERNELATTRIBUTES_H
#define DPC_IR_EXEC_KERNELATTRIBUTES_H

#include "runtime/plan/KernelSignature.h"

#include "mlir/IR/Operation.h"
#include "mlir/Support/LogicalResult.h"

namespace dpc::exec {

/// The plan's element type for `type`; failure (diagnosed at `loc`) for one
/// it has none for.
mlir::FailureOr<plan::DType> getPlanDType(mlir::Type type, mlir::Location loc);

/// `op`'s kernel attributes as the table `signature` names; an error at
/// `op` for an attribute of the wrong kind (a float `stride`, an unknown
/// all-reduce `op`).
mlir::FailureOr<plan::KernelAttrsUnion>
convertKernelAttrs(mlir::Operation *op, const plan::KernelSignature &signature);

/// The name of the attribute that says what a convolution or matrix
/// multiply computes in: a type, f32 (the default when absent) or bf16.
inline constexpr llvm::StringLiteral kPrecisionAttrName = "precision";

/// `op`'s precision as the plan's Instruction.precision; an error at `op`
/// for another type, or bf16 on a kernel without kMixedPrecision.
mlir::FailureOr<plan::DType>
convertKernelPrecision(mlir::Operation *op,
                       const plan::KernelSignature &signature);

} // namespace dpc::exec

#endif // DPC_IR_EXEC_KERNELATTRIBUTES_H
