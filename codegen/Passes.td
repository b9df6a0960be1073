//===- Passes.td - codegen passes --------------------------*- tablegen -*-===//

#ifndef DPC_CODEGEN_PASSES_TD
#define DPC_CODEGEN_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertNNToExec : Pass<"convert-nn-to-exec", "mlir::ModuleOp"> {
  let summary = "Lower @train_step and @eval_step to exec steps";
  let description = [{
    Gives every tensor a buffer (training state, a bound input, a view, or
    an arena buffer, at offset 0 until plan-exec-arena places it, with what
    it holds for report-exec-memory) and turns every nn op into runtime
    kernel calls, in program order on one compute stream: a gradient
    bucket's all-reduce too, which schedule-exec-streams then moves to the
    communication stream. The batch must be static (`--batch`); buffers
    whose leading dim is the batch get a `?` there.
  }];
  let dependentDialects = ["::dpc::exec::ExecDialect",
                           "::mlir::memref::MemRefDialect"];
}

def ScheduleExecStreams : Pass<"schedule-exec-streams", "mlir::ModuleOp"> {
  let summary = "Run gradient all-reduces on the communication stream";
  let description = [{
    Moves every AllReduce kernel call of an exec step to stream 1 and
    orders the streams with events: the compute kernel that completes a
    bucket signals an event the AllReduce waits for, and the first later
    compute kernel that touches a reduced buffer waits for the AllReduce's
    own event. The rest of the backward pass overlaps the all-reduce.
  }];
}

def PlanExecArena : Pass<"plan-exec-arena", "mlir::ModuleOp"> {
  let summary = "Place every arena buffer of a step at a byte offset";
  let description = [{
    Sets the offset of every exec.arena of every step, and the step's arena
    size, from the buffers' lifetimes (codegen/BufferLiveness.h: from a
    buffer's first user to its last, views included): buffers alive at the
    same kernel never share bytes, and a kernel's output never aliases its
    input. First fit, the smaller of two orders (codegen/MemoryPlanner.h).
  }];
}

def ReportExecMemory : Pass<"report-exec-memory", "mlir::ModuleOp"> {
  let summary = "Record what each step's arena holds at its peak";
  let description = [{
    At the position where the most arena bytes of a planned step are alive:
    `activation_bytes`, `gradient_bytes` and the ten largest buffers alive
    there (`live_at_peak`: name, kind, bytes), from what convert-nn-to-exec
    recorded on each exec.arena (`exec.holds`, `exec.kind`), which this
    pass removes. `dpc inspect` and `--report-memory` print it.
  }];
}

def AssignExecLayouts : Pass<"assign-exec-layouts", "mlir::ModuleOp"> {
  let summary = "Keep activations in the convolutions' blocked layout";
  let description = [{
    Decides which arena buffers of planned exec steps live in nChw16c (the
    layout oneDNN's convolutions run in), class by class of buffers that
    must share a layout (runtime/abi/KernelLayouts.h): blocked where that
    saves more convolution reorders than it needs explicit ones. Inserts an
    exec.kernel "Reorder", through a plain arena buffer placed where no
    live buffer lies, only where a producer and a consumer disagree. Steps
    on CUDA devices stay plain.
  }];
}

def FuseExecKernels : Pass<"fuse-exec-kernels", "mlir::ModuleOp"> {
  let summary = "Fuse adjacent kernel calls of planned exec steps";
  let description = [{
    A Conv2dForward or LinearForward whose output only the next kernel, a
    ReluForward, reads becomes one Conv2dReluForward or LinearReluForward
    writing the ReLU's buffer (oneDNN's ReLU post-op on the CPU), when that
    buffer shares no arena bytes with the producer's inputs or workspace
    and no event lies between the two; batch norm + ReLU likewise, forward
    and backward; a bias gradient joins the weight gradient before it, and
    a CorrectCount the loss before it. FuseKernels.cpp says when each is
    safe on the planned arena.
  }];
}

def AssignKernelPrecision : Pass<"assign-kernel-precision", "mlir::ModuleOp"> {
  let summary = "Choose each convolution and matmul call's precision and "
                "algorithm";
  let description = [{
    Sets `precision` on every kernel call that may compute in bf16
    (Kernels.def's kMixedPrecision: convolutions, linear layers, matmuls,
    each pass a call of its own): `bf16` everywhere with `precision=bf16`
    (torch.autocast's rule), or with `precision=auto` whichever of f32 and
    bf16 the built-in cost rules, measured with dpc-bench-precision on
    oneDNN 2.6, rank faster for the call's shape and pass -- or, for the
    calls a `costs` file times (`dpc calibrate --kernels`, keyed as
    runtime/abi/KernelCostKey.h says), whichever it measured faster.
    Everything else
    (loss, softmax, batch norm, reductions, optimizer, master weights)
    stays f32. `precision=f32` leaves the calls' precision as it is.
    `precision=tf32` sets `tf32` on every such call, for CUDA devices
    (cuDNN and cuBLAS round the f32 operands to TensorFloat-32 on tensor
    cores, f32 accumulation: PyTorch's allow_tf32); the CPU refuses it at
    run time, `dpc compile` before.

    On CPU devices it also sets `algorithm = "winograd"` on f32 3x3
    stride-1 convolution calls (oneDNN's Winograd F(4x4, 3x3)), per pass:
    with `conv-algorithm=auto` where the `costs` file measured it fastest,
    else where the rules say it pays (enough channels, and enough rows --
    the step's global batch times the 4x4 output tiles); with
    `conv-algorithm=winograd` wherever it applies; `conv-algorithm=direct`
    keeps oneDNN's direct algorithm. Winograd computes in f32 only:
    `precision=bf16` with `conv-algorithm=winograd` is an error.
  }];
  let options = [
    Option<"precision", "precision", "std::string", /*default=*/"\"f32\"",
           "f32, bf16, tf32 or auto">,
    Option<"costs", "costs", "std::string", /*default=*/"",
           "f32 or auto: a kernel cost file (dpc calibrate --kernels) "
           "whose times decide the calls it has">,
    Option<"convAlgorithm", "conv-algorithm", "std::string",
           /*default=*/"\"auto\"", "direct, winograd or auto">,
  ];
}

def ShareExecCasts : Pass<"share-exec-casts", "mlir::ModuleOp"> {
  let summary = "Cast an operand that several bf16 calls read only once";
  let description = [{
    Where several bf16 calls of a step read the same tensor on one stream
    (the operand runtime/abi/SharedCast.h names per kernel: a linear
    layer's X, a convolution's DY), with nothing writing it between them,
    the first keeps its bf16 copy in a cast slot (`cast_slot = K`) and the
    later ones read it there (`cast_slot = K, cast_reuse`) instead of
    casting again: the MLP's input batch is cast once per step, not by the
    forward and again by the weight gradient, and a convolution's DY once
    for both backward passes. A slot is held from a group's first call to
    its last, then reused. Runs after assign-kernel-precision.
  }];
}

#endif // DPC_CODEGEN_PASSES_TD
