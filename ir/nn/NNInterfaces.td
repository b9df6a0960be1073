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

#endif // DPC_IR_NN_NNINTERFACES_TD
