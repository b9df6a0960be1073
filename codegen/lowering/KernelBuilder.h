//===- KernelBuilder.h - what an nn op's lowering builds with ---*- C++ -*-===//
//
// The models of KernelLoweringOpInterface (one file per op family in this
// folder) lower an nn op to runtime kernel calls through a KernelBuilder.
// It names kernels by the plan's enum (runtime/plan/Kernels.def), places
// operands by their role (runtime/plan/KernelRoles.h), and gives values
// their buffers; the step lowering (NNToExec.cpp) implements the buffer
// half: which buffer a value lives in, arena buffers, views, in-place
// updates.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_CODEGEN_LOWERING_KERNELBUILDER_H
#define DPC_CODEGEN_LOWERING_KERNELBUILDER_H

#include "ir/exec/ExecOps.h"
#include "runtime/abi/KernelRoles.h"
#include "runtime/plan/Plan_generated.h"

#include "mlir/IR/Builders.h"

#include <optional>

namespace dpc {

/// The name exec.kernel spells `kernel` with (Kernels.def's): the one place
/// the lowering and the codegen passes turn the enum into a name.
llvm::StringRef getKernelName(plan::Kernel kernel);

/// The kernel `op` calls; none for a name Kernels.def does not list.
std::optional<plan::Kernel> getKernel(exec::KernelOp op);

/// Whether `op` calls `kernel`.
inline bool isKernel(exec::KernelOp op, plan::Kernel kernel) {
  return getKernel(op) == kernel;
}

/// One operand of a kernel call: the role it fills (a KernelRoles.h
/// enumerator, `roles::Conv2dForward::Bias`) and the value that fills it.
/// A null value leaves an optional role out.
struct RoleValue {
  unsigned role;
  mlir::Value value;
};

/// Whether roles of two kernels sit at the same position: code that serves
/// several kernels asserts it.
template <typename RoleA, typename RoleB>
constexpr bool samePosition(RoleA a, RoleB b) {
  return static_cast<unsigned>(a) == static_cast<unsigned>(b);
}

class KernelBuilder {
public:
  explicit KernelBuilder(mlir::MLIRContext *context) : builder(context) {}
  virtual ~KernelBuilder() = default;

  //===--------------------------------------------------------------------===//
  // Buffers: the step lowering's.
  //===--------------------------------------------------------------------===//

  /// The buffer `value` lives in.
  virtual mlir::Value buffer(mlir::Value value) const = 0;
  /// A new arena buffer for `value`, defined at the current op.
  virtual mlir::Value allocate(mlir::Value value) = 0;
  /// `bytes` of scratch for the current op's kernel alone.
  virtual mlir::Value allocateWorkspace(int64_t bytes) = 0;
  /// `value` is `source` under another shape: same bytes, same lifetime.
  virtual mlir::LogicalResult view(mlir::Value value, mlir::Value source) = 0;
  /// `value` is the elements of static `source` from element `offset` on
  /// (an element range): same bytes, same lifetime.
  virtual mlir::LogicalResult viewRange(mlir::Value value, mlir::Value source,
                                        int64_t offset) = 0;
  /// `value` lives in `operand`'s buffer, which the current op updates in
  /// place; `operand` must have no later reader.
  virtual mlir::LogicalResult inPlace(mlir::Value value,
                                      mlir::Value operand) = 0;
  /// `value` gets no buffer of its own (a transpose or a row merge that a
  /// kernel does itself): it joins `input`'s, which its readers read and
  /// which must live until the value's last reader.
  virtual mlir::LogicalResult joinBuffer(mlir::Value value,
                                         mlir::Value input) = 0;
  /// `value`, a constant that is not a splat, lives in a buffer holding
  /// `contents` (training state, shared by every step and replica of a
  /// device).
  virtual mlir::LogicalResult
  constantBuffer(mlir::Value value, mlir::DenseElementsAttr contents) = 0;
  /// Whether the step's replica runs on a GPU (cuDNN wants a workspace).
  virtual bool onCudaDevice() const = 0;

  //===--------------------------------------------------------------------===//
  // Kernel calls.
  //===--------------------------------------------------------------------===//

  /// A call of `kernel` that reads the buffers `ins` and writes the buffers
  /// `outs`, both in the kernel's order.
  exec::KernelOp kernel(plan::Kernel kernel, mlir::ValueRange ins,
                        mlir::ValueRange outs,
                        llvm::ArrayRef<mlir::NamedAttribute> attrs = {},
                        mlir::Value workspace = {});

  /// A call of `kernel` that reads the buffers of `ins` (by role, in any
  /// order) and writes a new arena buffer for each result of `op`, with
  /// `workspaceBytes` of scratch when not 0.
  mlir::LogicalResult call(mlir::Operation *op, plan::Kernel kernel,
                           llvm::ArrayRef<RoleValue> ins,
                           llvm::ArrayRef<mlir::NamedAttribute> attrs = {},
                           int64_t workspaceBytes = 0);
  /// As call, for a variadic kernel (kVariadic) reading all of `ins`.
  mlir::LogicalResult callVariadic(mlir::Operation *op, plan::Kernel kernel,
                                   mlir::ValueRange ins,
                                   llvm::ArrayRef<mlir::NamedAttribute> attrs);

  /// The values of `ins` in their roles' order; an optional role left out
  /// (a null value) must come after every role given.
  static llvm::SmallVector<mlir::Value>
  orderByRole(llvm::ArrayRef<RoleValue> ins);
  /// The buffers of `ins` in their roles' order (as orderByRole).
  llvm::SmallVector<mlir::Value> buffersByRole(llvm::ArrayRef<RoleValue> ins);
  /// New arena buffers for `values`, in order.
  llvm::SmallVector<mlir::Value> allocateAll(mlir::ValueRange values);

  mlir::NamedAttribute attr(llvm::StringRef name, mlir::Attribute value) {
    return builder.getNamedAttr(name, value);
  }
  mlir::OpBuilder &getBuilder() { return builder; }

protected:
  mlir::OpBuilder builder;
};

} // namespace dpc

#endif // DPC_CODEGEN_LOWERING_KERNELBUILDER_H
