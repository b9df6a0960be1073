//===- DistOps.td - dist dialect ops -----------------------*- tablegen -*-===//
//
// Every op takes or gives one tensor per device, in device order, so the
// device count is the operand or result count; verifiers check that the
// counts, sizes and element types agree.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_IR_DIST_DISTOPS_TD
#define DPC_IR_DIST_DISTOPS_TD

include "ir/dist/DistDialect.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Dist_ScatterOp : Dist_Op<"scatter", [Pure]> {
  let summary = "Split a tensor along dim 0 into per-device parts";
  let description = [{
    Part `d` holds rows `[sizes[0] + ... + sizes[d-1], ... + sizes[d])`; the
    sizes sum to dim 0 of the input, and a size may be 0.

    ```mlir
    %a, %b, %c = dist.scatter %x {sizes = array<i64: 3, 3, 2>}
        : tensor<8x4xf32> -> tensor<3x4xf32>, tensor<3x4xf32>, tensor<2x4xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, DenseI64ArrayAttr:$sizes);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` type($results)
  }];
  let hasVerifier = 1;
}

def Dist_ReplicateOp : Dist_Op<"replicate", [Pure]> {
  let summary = "One copy of a tensor per device";
  let description = [{
    Like `mesh.broadcast`: every result equals the input.

    ```mlir
    %a, %b = dist.replicate %w : tensor<4x4xf32> -> tensor<4x4xf32>, tensor<4x4xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $input attr-dict `:` type($input) `->` type($results)
  }];
  let hasVerifier = 1;
}

def Dist_AllReduceOp : Dist_Op<"all_reduce", [Pure]> {
  let summary = "Reduce per-device tensors; every device gets the result";
  let description = [{
    `reduction` is `sum`, `mean` or `max`. Every result is the elementwise
    reduction of all operands. `bucket`, set by gradient bucketing, says
    which communication bucket the op belongs to.

    ```mlir
    %ra, %rb = dist.all_reduce %a, %b {reduction = "sum"}
        : tensor<4x4xf32>, tensor<4x4xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs, StrAttr:$reduction,
    OptionalAttr<I64Attr>:$bucket);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $inputs attr-dict `:`
    custom<PerDeviceTypes>(type($inputs), type($results))
  }];
  let hasVerifier = 1;
}

def Dist_GatherOp : Dist_Op<"gather", [Pure]> {
  let summary = "Concatenate per-device tensors along dim 0";
  let description = [{
    The inverse of `dist.scatter`. 0-d tensors (per-device scalars such as a
    loss) gather into a vector with one entry per device.

    ```mlir
    %x = dist.gather %a, %b : tensor<3x4xf32>, tensor<5x4xf32> -> tensor<8x4xf32>
    %l = dist.gather %la, %lb : tensor<f32>, tensor<f32> -> tensor<2xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $inputs attr-dict `:` type($inputs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Dist_ReduceScatterOp : Dist_Op<"reduce_scatter", [Pure]> {
  let summary = "Reduce per-device tensors, then scatter the result on dim 0";
  let description = [{
    Device `d` gets part `d` (of `sizes[d]` rows) of the reduction of all
    operands, which have the same type. `reduction` is as for
    `dist.all_reduce`, and so is `bucket` (reduce-scatters of one bucket
    are one collective).

    ```mlir
    %ra, %rb = dist.reduce_scatter %a, %b {reduction = "sum", sizes = array<i64: 2, 2>}
        : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>, tensor<2x4xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs, StrAttr:$reduction,
    DenseI64ArrayAttr:$sizes, OptionalAttr<I64Attr>:$bucket);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $inputs attr-dict `:` type($inputs) `->` type($results)
  }];
  let hasVerifier = 1;
}

def Dist_AllGatherOp : Dist_Op<"all_gather", [Pure]> {
  let summary = "Concatenate per-device tensors; every device gets the result";
  let description = [{
    Every result is what `dist.gather` of the operands would be. `bucket`
    says which communication bucket the op belongs to (the all-gathers of
    one bucket are one collective).

    ```mlir
    %ra, %rb = dist.all_gather %a, %b
        : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<4x4xf32>, tensor<4x4xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$inputs,
    OptionalAttr<I64Attr>:$bucket);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $inputs attr-dict `:` type($inputs) `->` type($results)
  }];
  let hasVerifier = 1;
}

#endif // DPC_IR_DIST_DISTOPS_TD
