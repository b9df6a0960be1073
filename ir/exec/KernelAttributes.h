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

#include "runtime/abi/KernelSignature.h"

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

/// The attributes that share a bf16 call's cast of one operand (X or DY,
/// by kernel) with later calls (runtime/abi/SharedCast.h): `cast_slot = K`
/// keeps the copy in slot K (1-based), and with `cast_reuse` the call reads
/// slot K instead.
inline constexpr llvm::StringLiteral kCastSlotAttrName = "cast_slot";
inline constexpr llvm::StringLiteral kCastReuseAttrName = "cast_reuse";

struct SharedCast {
  int32_t slot = 0; // 0: the operand is cast by the call alone
  bool reuse = false;
};

/// `op`'s cast slot as the plan's Instruction.cast_slot and cast_reuse; an
/// error at `op` for a slot out of range, on a kernel that shares no
/// operand's cast, or on a call that does not compute in bf16.
mlir::FailureOr<SharedCast> convertKernelSharedCast(mlir::Operation *op,
                                                    plan::Kernel kernel,
                                                    plan::DType precision);

} // namespace dpc::exec

#endif // DPC_IR_EXEC_KERNELATTRIBUTES_H
