//===- ExecOps.td - exec dialect ops -----------------------*- tablegen -*-===//

#ifndef DPC_IR_EXEC_EXECOPS_TD
#define DPC_IR_EXEC_EXECOPS_TD

include "ir/exec/ExecDialect.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Exec_PersistentOp : Exec_Op<"persistent", [Symbol]> {
  let summary = "A tensor of training state, kept across steps";
  let description = [{
    `kind` is `parameter`, `buffer` (e.g. batch-norm running statistics) or
    `optimizer_state`. `init` says where its first value comes from:
    `model` (the model file's tensor named `source`), `zeros`, `ones` or
    `constant` (`value`: a constant tensor of the model that is not a
    splat, such as a causal attention mask, held as a buffer no kernel
    writes).
    For optimizer state, `parameter` names the parameter it belongs to.
    Data-parallel replicas each keep a copy on their `device`; the copies
    share the plan `name` (the symbol, for device 0's) and stay equal.
    A shard (dpc-shard-optimizer-state) is instead one device's element
    range of a tensor of `logical_shape`: a 1-D run of its row-major
    elements from `shard_offset` on; the shards of one name tile it.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, TypeAttr:$type,
    StrAttr:$kind, StrAttr:$init, OptionalAttr<StrAttr>:$source,
    OptionalAttr<StrAttr>:$parameter,
    DefaultValuedAttr<I64Attr, "0">:$device, OptionalAttr<StrAttr>:$name,
    OptionalAttr<ElementsAttr>:$value,
    OptionalAttr<DenseI64ArrayAttr>:$logical_shape,
    OptionalAttr<I64Attr>:$shard_offset);
  let assemblyFormat = "$sym_name $kind `init` `=` $init attr-dict `:` $type";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The tensor's name in the plan (shared by every device's copy).
    ::llvm::StringRef getPlanName() {
      return getName() ? *getName() : getSymName();
    }
  }];
}

def Exec_StepOp : Exec_Op<"step", [NoTerminator, SingleBlock]> {
  let summary = "One step (train or eval) on one device";
  let description = [{
    Replicas of a data-parallel step are the steps of one `name` on several
    devices. `batch` is the batch the step is compiled for (its share of the
    global batch): a buffer's one `?` dim is that many rows, times the
    buffer's `batch_scale` where the batch is merged with other dims
    (attention's batch x heads). The batch may be any dim of a buffer but
    the step's inputs and outputs, whose dim 0 it is.

    The memory report, from the arena's liveness: at the position where the
    most arena bytes are alive, `activation_bytes` (forward values, kept for
    the backward pass or recomputed), `gradient_bytes` (parameter
    gradients) and the largest tensors alive there (`live_at_peak`,
    dictionaries with `name`, `kind` and `bytes`), and
    `gathered_parameter_bytes` (whole parameters all-gathered from their
    shards, --shard parameters); `remat_flops` is what recomputation (ops
    marked `nn.remat`) adds to the step.
  }];
  let arguments = (ins StrAttr:$name, I64Attr:$device, I64Attr:$batch,
    I64Attr:$arena_bytes, OptionalAttr<I64Attr>:$activation_bytes,
    OptionalAttr<I64Attr>:$gradient_bytes, OptionalAttr<I64Attr>:$remat_flops,
    OptionalAttr<DictArrayAttr>:$live_at_peak,
    OptionalAttr<I64Attr>:$gathered_parameter_bytes);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $name `device` `(` $device `)` `batch` `(` $batch `)` `arena` `(`
    $arena_bytes `)` attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
}

def Exec_InputOp : Exec_Op<"input", [Pure]> {
  let summary = "A buffer the caller binds before the step, by name";
  let arguments = (ins StrAttr:$name);
  let results = (outs AnyMemRef:$buffer);
  let assemblyFormat = "$name attr-dict `:` type($buffer)";
}

def Exec_ArenaOp : Exec_Op<"arena", [Pure]> {
  let summary = "A buffer at a planned byte offset in the step's arena";
  let description = [{
    `layout`, when present, is how its elements lie in memory if not plain:
    "nChw16c" (oneDNN's blocked activation layout, f32 [n, c, h, w] with c a
    multiple of 16), as the layout assignment decided. Which kernel
    operands may take it is the runtime's table
    (runtime/plan/KernelLayouts.h), which the exec.kernel verifier checks.
  }];
  let arguments = (ins I64Attr:$offset,
    DefaultValuedAttr<I64Attr, "1">:$batch_scale,
    OptionalAttr<StrAttr>:$layout);
  let results = (outs AnyMemRef:$buffer);
  let builders = [
    OpBuilder<(ins "::mlir::Type":$type, "uint64_t":$offset,
                   "uint64_t":$batch_scale), [{
      build($_builder, $_state, type, offset, batch_scale, /*layout=*/nullptr);
    }]>
  ];
  let assemblyFormat = "`[` $offset `]` attr-dict `:` type($buffer)";
  let hasVerifier = 1;
}

def Exec_StateOp : Exec_Op<"state", [Pure]> {
  let summary = "The buffer of a persistent tensor";
  let arguments = (ins FlatSymbolRefAttr:$tensor);
  let results = (outs AnyMemRef:$buffer);
  let assemblyFormat = "$tensor attr-dict `:` type($buffer)";
}

def Exec_ViewOp : Exec_Op<"view", [Pure]> {
  let summary = "The same bytes under another shape (reshape, flatten)";
  let description = [{
    A view covers the same elements as its source, or, with an `offset`, a
    contiguous run of a static source's elements from element `offset` on
    (an element range, as a split along a leading dim or a replica's shard
    of a flattened tensor takes).
  }];
  let arguments = (ins AnyMemRef:$source,
    DefaultValuedAttr<I64Attr, "1">:$batch_scale,
    OptionalAttr<I64Attr>:$offset);
  let results = (outs AnyMemRef:$buffer);
  let assemblyFormat = "$source attr-dict `:` type($source) `to` type($buffer)";
  let hasVerifier = 1;
}

def Exec_KernelOp : Exec_Op<"kernel", [AttrSizedOperandSegments]> {
  let summary = "Run a runtime kernel: read `ins`, write `outs`";
  let description = [{
    `kernel` is a kernel of the plan schema (runtime/plan/Plan.fbs's enum,
    generated from runtime/abi/Kernels.def), printed by its name; the
    operand order and counts are the schema's, checked against the
    runtime's own table (runtime/plan/KernelSignature.h). Kernel attributes
    (strides, momentum, ...) are the op's discardable attributes, read by
    name through the same table.

    `workspace`, for the kernels whose signature allows one, is a 1-D `i8`
    arena buffer the kernel may use as scratch while it runs (cuDNN's
    convolution workspace): planned like any other buffer, alive at this
    kernel only.

    What the passes after the lowering decide is declared:
    - `stream`: the stream the call runs on (0, computing, when absent; 1
      communicates), and the events it `wait`s for before it starts and
      `signal`s when it is done (schedule-exec-streams);
    - `remat`: the call recomputes a forward value (dpc-rematerialize);
    - `algorithm`: the implementation chosen at compile time ("winograd",
      "cudnn_heuristic");
    - `precision`: what a convolution or matrix multiply computes in, f32
      (when absent) or bf16 (assign-kernel-precision);
    - `cast_slot` and `cast_reuse`: a bf16 call keeps its cast of one
      operand in slot K for later calls, or reads it there
      (share-exec-casts; runtime/plan/SharedCast.h).
  }];
  let arguments = (ins Exec_KernelAttr:$kernel, Variadic<AnyMemRef>:$ins,
    Variadic<AnyMemRef>:$outs, Optional<MemRefRankOf<[I8], [1]>>:$workspace,
    OptionalAttr<I64Attr>:$stream,
    OptionalAttr<DenseI64ArrayAttr>:$wait,
    OptionalAttr<DenseI64ArrayAttr>:$signal,
    UnitAttr:$remat,
    OptionalAttr<StrAttr>:$algorithm,
    OptionalAttr<TypeAttr>:$precision,
    OptionalAttr<I64Attr>:$cast_slot,
    UnitAttr:$cast_reuse);
  let builders = [
    // A call before scheduling: the passes that decide the rest set it.
    OpBuilder<(ins "::dpc::plan::Kernel":$kernel, "::mlir::ValueRange":$ins,
                   "::mlir::ValueRange":$outs, "::mlir::Value":$workspace), [{
      build($_builder, $_state,
            ::dpc::exec::KernelAttr::get($_builder.getContext(), kernel), ins,
            outs,
            workspace, /*stream=*/nullptr, /*wait=*/nullptr,
            /*signal=*/nullptr, /*remat=*/nullptr, /*algorithm=*/nullptr,
            /*precision=*/nullptr, /*cast_slot=*/nullptr,
            /*cast_reuse=*/nullptr);
    }]>
  ];
  let assemblyFormat = [{
    custom<KernelName>($kernel) (`ins` `(` $ins^ `:` type($ins) `)`)?
    (`outs` `(` $outs^ `:` type($outs) `)`)?
    (`workspace` `(` $workspace^ `:` type($workspace) `)`)? attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Every attribute but the op's own structure (the kernel's name and
    /// the operand segments): the kernel's attributes and the scheduling
    /// ones, as a call that replaces this one (a fusion) takes them over.
    ::llvm::SmallVector<::mlir::NamedAttribute> getKernelAttrs();
    /// The kernel's name in Kernels.def ("LinearForward"), for messages.
    ::llvm::StringRef getKernelName() {
      return ::dpc::plan::EnumNameKernel(getKernel());
    }
  }];
}

def Exec_OutputOp : Exec_Op<"output"> {
  let summary = "A buffer the caller reads after the step, by name";
  let arguments = (ins StrAttr:$name, AnyMemRef:$buffer);
  let assemblyFormat = "$name `,` $buffer attr-dict `:` type($buffer)";
}

#endif // DPC_IR_EXEC_EXECOPS_TD
