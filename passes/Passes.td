//===- Passes.td - dpc passes ------------------------------*- tablegen -*-===//

#ifndef DPC_PASSES_PASSES_TD
#define DPC_PASSES_PASSES_TD

include "mlir/Pass/PassBase.td"

def NNSetBatch : Pass<"nn-set-batch", "mlir::func::FuncOp"> {
  let summary = "Fix the batch (leading) dimension of the model's data inputs";
  let description = [{
    Sets the leading dimension of every argument marked `nn.input` to
    `batch`, then recomputes every nn op's result type and the function's
    result types from there. A data input whose
    leading dimension is already a different static size is rebatched too:
    the batch size a model was exported with is not part of the model.
  }];
  let options = [
    Option<"batch", "batch", "int64_t", /*default=*/"0",
           "The batch size (> 0)">,
  ];
}

#endif // DPC_PASSES_PASSES_TD
