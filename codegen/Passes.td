//===- Passes.td - codegen passes --------------------------*- tablegen -*-===//

#ifndef DPC_CODEGEN_PASSES_TD
#define DPC_CODEGEN_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertNNToExec : Pass<"convert-nn-to-exec", "mlir::ModuleOp"> {
  let summary = "Lower @train_step and @eval_step to exec steps";
  let description = [{
    Gives every tensor a buffer (training state, a bound input, a view, or a
    planned arena offset from liveness) and turns every nn op into runtime
    kernel calls on one compute stream. The batch must be static (`--batch`);
    buffers whose leading dim is the batch get a `?` there.
  }];
  let dependentDialects = ["::dpc::exec::ExecDialect",
                           "::mlir::memref::MemRefDialect"];
}

#endif // DPC_CODEGEN_PASSES_TD
