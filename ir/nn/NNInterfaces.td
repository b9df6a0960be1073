//===- NNInterfaces.td - nn op interfaces ------------------*- tablegen -*-===//

#ifndef DPC_IR_NN_NNINTERFACES_TD
#define DPC_IR_NN_NNINTERFACES_TD

include "mlir/IR/OpBase.td"

def NN_DifferentiableOpInterface : OpInterface<"DifferentiableOpInterface"> {
  let cppNamespace = "::dpc::nn";
  let description = [{
    An op that reverse-mode differentiation can pass through: given the
    gradients of the loss with respect to its results, it builds the
    vector-Jacobian product, the gradients with respect to its operands.
    The forward ops implement it as external models (see
    VectorJacobianProducts.cpp), so autodiff needs no per-op switch.
  }];
  let methods = [
    InterfaceMethod<[{
        Builds, at `b`'s insertion point, the gradients of the operands from
        `resultGradients` (one per result, null where a result does not reach
        the loss; at least one is non-null). Appends one value per operand to
        `operandGradients`, null for an operand that has no gradient (labels,
        running statistics). Fails with a diagnostic on the op if it cannot
        be differentiated in its current form.
      }],
      "::llvm::LogicalResult", "buildVectorJacobianProduct",
      (ins "::mlir::OpBuilder &":$b, "::mlir::ValueRange":$resultGradients,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGradients)>,
  ];
}

def NN_KernelLoweringOpInterface : OpInterface<"KernelLoweringOpInterface"> {
  let cppNamespace = "::dpc::nn";
  let description = [{
    An op the lowering to the plan (convert-nn-to-exec) turns into runtime
    kernel calls: it names the kernels and places its operands in their
    roles (runtime/plan/Kernels.def) through a `KernelBuilder`, which gives
    it its buffers. The ops implement it as external models, one file per
    op family under codegen/lowering/, which the tools register
    (registerKernelLoweringModels), so the lowering needs no per-op switch
    and the nn dialect no knowledge of the plan.
  }];
  let methods = [
    InterfaceMethod<[{
        Emits, through `builder`, the kernel calls that compute the op, and
        gives each result a buffer (a new arena buffer, a view, or an
        operand's buffer updated in place). Fails with a diagnostic on the
        op if it cannot be lowered.
      }],
      "::llvm::LogicalResult", "lowerToKernels",
      (ins "::dpc::KernelBuilder &":$builder)>,
  ];
}

#endif // DPC_IR_NN_NNINTERFACES_TD
