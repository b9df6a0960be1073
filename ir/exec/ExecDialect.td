//===- ExecDialect.td - the exec dialect -------------------*- tablegen -*-===//
//
// The plan in IR form: buffers with planned storage, kernel calls in stream
// order, per device. It mirrors runtime/plan/Plan.fbs one to one, so that
// what `--emit=exec` prints is what the plan file holds.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_IR_EXEC_EXECDIALECT_TD
#define DPC_IR_EXEC_EXECDIALECT_TD

include "mlir/IR/OpBase.td"

def Exec_Dialect : Dialect {
  let name = "exec";
  let cppNamespace = "::dpc::exec";
  let summary = "Planned buffers and kernel calls: the executable plan";
  let description = [{
    A module of `exec.persistent` declarations (training state) and
    `exec.step` ops (train_step, eval_step). A step's body declares buffers
    -- `exec.input`, `exec.arena` (at a planned offset), `exec.state`
    (persistent), `exec.view` (an alias) -- as memrefs whose leading `?` is
    the batch, and calls kernels on them with `exec.kernel`, in order.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

class Exec_Op<string mnemonic, list<Trait> traits = []>
    : Op<Exec_Dialect, mnemonic, traits>;

#endif // DPC_IR_EXEC_EXECDIALECT_TD
