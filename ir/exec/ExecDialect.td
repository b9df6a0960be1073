//===- ExecDialect.td - the exec dialect -------------------*- tablegen -*-===//
//
// The plan in IR form: buffers with planned storage, kernel calls in stream
// order, per device. It mirrors runtime/plan/Plan.fbs one to one, so that
// what `--emit=exec` prints is what the plan file holds.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_IR_EXEC_EXECDIALECT_TD
#define DPC_IR_EXEC_EXECDIALECT_TD

include "mlir/IR/AttrTypeBase.td"
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
  let useDefaultAttributePrinterParser = 1;
}

// A kernel of runtime/abi/Kernels.def, held as the plan's own enum (which
// is generated from that list), so that no pass names a kernel by string.
// Generic form: #exec.kernel<"LinearForward">; exec.kernel prints the name
// alone.
def Exec_KernelAttr : AttrDef<Exec_Dialect, "Kernel"> {
  let mnemonic = "kernel";
  let summary = "A runtime kernel, by the plan's kernel enum";
  let parameters = (ins "::dpc::plan::Kernel":$kernel);
  let hasCustomAssemblyFormat = 1;
  let returnType = "::dpc::plan::Kernel";
  let convertFromStorage = "$_self.getKernel()";
  let constBuilderCall =
      "::dpc::exec::KernelAttr::get($_builder.getContext(), $0)";
}

class Exec_Op<string mnemonic, list<Trait> traits = []>
    : Op<Exec_Dialect, mnemonic, traits>;

#endif // DPC_IR_EXEC_EXECDIALECT_TD
