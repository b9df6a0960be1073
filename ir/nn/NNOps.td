//===- NNOps.td - nn dialect ops ---------------------------*- tablegen -*-===//
//
// Every op verifies its operands and attributes and infers its result type
// from them (InferTypeOpInterface); the verifier then checks that the written
// result type is exactly the inferred one, so types always follow operands.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_IR_NN_NNOPS_TD
#define DPC_IR_NN_NNOPS_TD

include "ir/nn/NNDialect.td"
include "mlir/IR/EnumAttr.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

def NN_ConstantOp : NN_Op<"constant",
    [ConstantLike, Pure, InferTypeOpAdaptor]> {
  let summary = "A tensor constant";
  let arguments = (ins ElementsAttr:$value);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Convolution, normalization, pooling
//===----------------------------------------------------------------------===//

def NN_Conv2dOp : NN_Op<"conv2d", [Pure, InferTypeOpAdaptor]> {
  let summary = "2-D or 3-D convolution: NCHW with OIHW, or NCDHW with OIDHW";
  let description = [{
    `padding` is `[top, left, bottom, right]`. The filter has shape
    `[C_out, C_in / groups, kH, kW]`; the optional bias has shape `[C_out]`.
    A 3-D convolution (a rank-5 input and filter, `[..., kD, kH, kW]`) has
    `stride` and `dilation` `[d, h, w]` and `padding` `[front, top, left,
    back, bottom, right]` (every axis's start, then its end), given: the
    defaults are the 2-D ones.
  }];
  let arguments = (ins NN_FloatTensor:$input, NN_FloatTensor:$filter,
    Optional<NN_FloatTensor>:$bias,
    DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$stride,
    DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$padding,
    DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$dilation,
    DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $filter (`,` $bias^)? attr-dict `:`
    functional-type(operands, results)
  }];
}

def NN_ConvTranspose2dOp : NN_Op<"conv_transpose2d",
    [Pure, InferTypeOpAdaptor]> {
  let summary = "2-D or 3-D transposed convolution (IOHW or IODHW filter)";
  let description = [{
    PyTorch's `conv_transpose2d` without bias (the importer adds it): the
    input gradient of an `nn.conv2d` with the same filter and attributes
    whose input has this op's result size. The filter has shape
    `[C_in, C_out / groups, kH, kW]`. `padding` (`[top, left, bottom,
    right]`) crops the full output; `output_padding` (`[h, w]`, each below
    the stride) extends it at the bottom and right, where several sizes
    give the same forward convolution. Along the height:
    `(H - 1) * stride - top - bottom + dilation * (kH - 1) + 1 + output_padding`.
    A 3-D one (rank 5) has a depth first in every attribute, as
    `nn.conv2d`'s.
  }];
  let arguments = (ins NN_FloatTensor:$input, NN_FloatTensor:$filter,
    DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$stride,
    DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$padding,
    DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0}">:$output_padding,
    DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$dilation,
    DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $filter attr-dict `:` functional-type(operands, results)
  }];
}

def NN_BatchNormOp : NN_Op<"batch_norm", [Pure, InferTypeOpAdaptor]> {
  let summary = "Batch normalization over the channel dimension (dim 1)";
  let description = [{
    `y = (x - mean) / sqrt(var + epsilon) * scale + shift`. Which statistics
    are used is decided by the step built from the forward graph: the batch's
    in a training step (which also updates the running statistics with
    `momentum`, PyTorch's convention: `running = (1 - momentum) * running +
    momentum * batch`), the running ones in an evaluation step.
  }];
  let arguments = (ins NN_FloatTensor:$input, NN_FloatTensor:$scale,
    NN_FloatTensor:$shift, NN_FloatTensor:$running_mean,
    NN_FloatTensor:$running_var,
    DefaultValuedAttr<F64Attr, "1e-5">:$epsilon,
    DefaultValuedAttr<F64Attr, "0.1">:$momentum);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale `,` $shift `,` $running_mean `,` $running_var attr-dict
    `:` functional-type(operands, results)
  }];
}

def NN_LayerNormOp : NN_Op<"layer_norm", [Pure, InferTypeOpAdaptor]> {
  let summary = "Layer normalization over the dims from `axis` on";
  let description = [{
    Each row (the dims before `axis`) is normalized over the dims from
    `axis` on with its own mean and biased variance:
    `y = (x - mean) / sqrt(var + epsilon) * scale + bias`, `scale` and
    `bias` having the shape of those dims. The same in training and
    evaluation; `axis` >= 1, so rows never mix samples.
  }];
  let arguments = (ins NN_FloatTensor:$input, NN_FloatTensor:$scale,
    Optional<NN_FloatTensor>:$bias, I64Attr:$axis,
    DefaultValuedAttr<F64Attr, "1e-5">:$epsilon);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $scale (`,` $bias^)? attr-dict `:`
    functional-type(operands, results)
  }];
}

def NN_MaxPool2dOp : NN_Op<"max_pool2d", [Pure, InferTypeOpAdaptor]> {
  let summary = "2-D max pooling over NCHW input";
  let description = [{
    `padding` is `[top, left, bottom, right]`; padded positions never win.
    With `ceil_mode`, the output size rounds up, but no window starts in the
    bottom/right padding (PyTorch's rule).
  }];
  let arguments = (ins NN_FloatTensor:$input,
    DenseI64ArrayAttr:$kernel_size,
    DenseI64ArrayAttr:$stride,
    DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$padding,
    DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$dilation,
    DefaultValuedAttr<BoolAttr, "false">:$ceil_mode);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` functional-type(operands, results)
  }];
}

def NN_AvgPool2dOp : NN_Op<"avg_pool2d", [Pure, InferTypeOpAdaptor]> {
  let summary = "2-D average pooling over NCHW input";
  let description = [{
    `padding` is `[top, left, bottom, right]`. With `count_include_pad`, the
    divisor counts padded positions (PyTorch's default).
  }];
  let arguments = (ins NN_FloatTensor:$input,
    DenseI64ArrayAttr:$kernel_size,
    DenseI64ArrayAttr:$stride,
    DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$padding,
    DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
    DefaultValuedAttr<BoolAttr, "true">:$count_include_pad);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` functional-type(operands, results)
  }];
}

def NN_GlobalAvgPool2dOp : NN_Op<"global_avg_pool2d",
    [Pure, InferTypeOpAdaptor]> {
  let summary = "Mean over H and W of NCHW input, keeping them as size 1";
  let arguments = (ins NN_FloatTensor:$input);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` functional-type(operands, results)
  }];
}

def NN_PadOp : NN_Op<"pad", [Pure, InferTypeOpAdaptor]> {
  let summary = "Constant padding: `low[d]` before and `high[d]` after dim d";
  let arguments = (ins NN_FloatTensor:$input,
    DenseI64ArrayAttr:$low, DenseI64ArrayAttr:$high,
    DefaultValuedAttr<F64Attr, "0.0">:$value);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` functional-type(operands, results)
  }];
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class NN_UnaryOp<string mnemonic, string formula>
    : NN_Op<mnemonic,
            [Pure, SameOperandsAndResultType, InferTypeOpInterface]> {
  let summary = "Elementwise " # formula;
  let arguments = (ins NN_FloatTensor:$input);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def NN_ReluOp : NN_UnaryOp<"relu", "max(x, 0)">;
def NN_SigmoidOp : NN_UnaryOp<"sigmoid", "1 / (1 + exp(-x))">;
def NN_TanhOp : NN_UnaryOp<"tanh", "tanh(x)">;
def NN_ReciprocalOp : NN_UnaryOp<"reciprocal", "1 / x">;

// Activations whose gradient reads the input x; PyTorch's definitions.
class NN_InputActivationOp<string mnemonic, string formula, dag attrs>
    : NN_Op<mnemonic,
            [Pure, SameOperandsAndResultType, InferTypeOpInterface]> {
  let summary = "Elementwise " # formula;
  let arguments = !con((ins NN_FloatTensor:$input), attrs);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def NN_ClipOp : NN_InputActivationOp<"clip",
    "min(max(x, min), max): hardtanh, ReLU6 (min 0, max 6)",
    (ins F64Attr:$min, F64Attr:$max)> {
  let description = [{
    As PyTorch's hardtanh: the gradient is 0 where x <= min or x >= max.
  }];
  let hasVerifier = 1;
}
def NN_HardSigmoidOp : NN_InputActivationOp<"hard_sigmoid",
    "clamp(alpha x + beta, 0, 1) (PyTorch's: alpha 1/6, beta 0.5)",
    (ins DefaultValuedAttr<F64Attr, "0.2">:$alpha,
         DefaultValuedAttr<F64Attr, "0.5">:$beta)>;
def NN_HardSwishOp : NN_InputActivationOp<"hard_swish",
    "x relu6(x + 3) / 6", (ins)>;
def NN_ErfOp : NN_InputActivationOp<"erf", "erf(x)", (ins)>;
def NN_GeluOp : NN_InputActivationOp<"gelu",
    "x Phi(x) (erf), or its tanh approximation",
    (ins DefaultValuedAttr<BoolAttr, "false">:$tanh_approximation)>;

def NN_DropoutOp : NN_Op<"dropout",
    [Pure, SameOperandsAndResultType, InferTypeOpInterface]> {
  let summary = "Training-mode dropout: zero each element with probability "
                "`ratio`, scale the rest by 1 / (1 - ratio)";
  let description = [{
    Identity in an evaluation step. In a training step the mask is a pure
    function of the run's seed, the optimizer step, `key` (which dropout
    this is) and the element's position in the global batch (row and index
    within the row): Philox4x32-10 as a counter-based generator. N devices
    and one device therefore drop the same units, a recomputed forward
    (rematerialization) and the backward regenerate the mask instead of
    storing it, and a resumed run draws what the uninterrupted one would.
    With `rowwise`, each row (sample) is kept or dropped whole: stochastic
    depth. With `span`, runs of that many elements of a row share one draw:
    a channel's plane (Dropout1d/2d/3d). A kept element becomes
    x * scale + shift (`scale` by default 1 / (1 - ratio)), a dropped one
    `fill`: AlphaDropout's affine form.
  }];
  let arguments = (ins NN_FloatTensor:$input, F64Attr:$ratio, I64Attr:$key,
    UnitAttr:$rowwise, DefaultValuedAttr<I64Attr, "1">:$span,
    OptionalAttr<F64Attr>:$scale, DefaultValuedAttr<F64Attr, "0.0">:$shift,
    DefaultValuedAttr<F64Attr, "0.0">:$fill);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def NN_RandomScaleOp : NN_Op<"random_scale",
    [Pure, SameOperandsAndResultType, InferTypeOpInterface]> {
  let summary = "Training mode: each element times a uniform draw in "
                "[low, high)";
  let description = [{
    RReLU's random slopes, on the negative part of its input. Each element
    draws as an element-wise nn.dropout with the same `key` does (a pure
    function of the run's seed, the optimizer step, the key and the
    element's place in the global batch), its factor low + (high - low) u
    for the draw's u in [0, 1). Linear in the input: its gradient is the
    same op on the output's gradient. In an evaluation step, the input
    times the mean factor (low + high) / 2.
  }];
  let arguments = (ins NN_FloatTensor:$input, F64Attr:$low, F64Attr:$high,
    I64Attr:$key);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def NN_ConcatOp : NN_Op<"concat", [Pure, InferTypeOpAdaptor]> {
  let summary = "Join tensors along `axis` (torch.cat)";
  let description = [{
    The inputs agree on every dim but `axis`, which is not the batch (0).
  }];
  let arguments = (ins Variadic<NN_FloatTensor>:$inputs, I64Attr:$axis);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $inputs attr-dict `:` functional-type(operands, results)
  }];
}

def NN_SplitOp : NN_Op<"split", [Pure, InferTypeOpAdaptor]> {
  let summary = "Cut a tensor along `axis` into parts of `sizes` (torch.split)";
  let arguments = (ins NN_FloatTensor:$input, I64Attr:$axis,
    DenseI64ArrayAttr:$sizes);
  let results = (outs Variadic<NN_FloatTensor>:$results);
  let assemblyFormat = [{
    $input attr-dict `:` functional-type(operands, results)
  }];
}

class NN_BinaryOp<string mnemonic, string formula>
    : NN_Op<mnemonic, [Pure, InferTypeOpAdaptor]> {
  let summary = "Elementwise " # formula # " with NumPy broadcasting";
  let arguments = (ins NN_FloatTensor:$lhs, NN_FloatTensor:$rhs);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
}

// Canonical form: the operand with more elements first (both commute), so
// that exporters writing bias + x and x + bias give the same IR; and x *
// (erf(x / sqrt 2) + 1) * 0.5, the legacy exporter's GELU, is nn.gelu.
def NN_AddOp : NN_BinaryOp<"add", "lhs + rhs"> {
  let hasCanonicalizer = 1;
}
def NN_MulOp : NN_BinaryOp<"mul", "lhs * rhs"> {
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Shape
//===----------------------------------------------------------------------===//

def NN_FlattenOp : NN_Op<"flatten", [Pure, InferTypeOpAdaptor]> {
  let hasFolder = 1;
  let summary = "Collapse dims [0, axis) and [axis, rank) into a 2-D tensor";
  let arguments = (ins AnyRankedTensor:$input,
    DefaultValuedAttr<I64Attr, "1">:$axis);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` functional-type(operands, results)
  }];
}

def NN_ReshapeOp : NN_Op<"reshape", [Pure, InferTypeOpAdaptor]> {
  let hasFolder = 1;
  let summary = "Reshape to `shape` (0 copies the input dim, -1 is inferred)";
  let arguments = (ins AnyRankedTensor:$input, DenseI64ArrayAttr:$shape);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` functional-type(operands, results)
  }];
}

def NN_BroadcastRowsOp : NN_Op<"broadcast_rows", [Pure, InferTypeOpAdaptor]> {
  let summary = "`input` [1, ...] repeated for each row of `rows`: [N, ...]";
  let description = [{
    A tensor without the batch expanded to it (ViT's class token,
    `token.expand(n, -1, -1)`): the result has dim 0 of `rows` (a tensor
    holding the batch in dim 0, e.g. the data input) and `input`'s other
    dims. `rows` gives only its size; the gradient sums over the rows.
  }];
  let arguments = (ins NN_FloatTensor:$input, AnyRankedTensor:$rows);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $rows attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Matrix products
//===----------------------------------------------------------------------===//

def NN_LinearOp : NN_Op<"linear", [Pure, InferTypeOpAdaptor]> {
  let summary = "y = x * transpose(weight) + bias, x: [N, K], weight: [M, K]";
  let arguments = (ins NN_FloatTensor:$input, NN_FloatTensor:$weight,
    Optional<NN_FloatTensor>:$bias);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:`
    functional-type(operands, results)
  }];
}

def NN_MatmulOp : NN_Op<"matmul", [Pure, InferTypeOpAdaptor]> {
  let summary = "Matrix product [..., N, K] x [K, M] -> [..., N, M]";
  let hasCanonicalizer = 1;
  let arguments = (ins NN_FloatTensor:$lhs, NN_FloatTensor:$rhs);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
}

def NN_BatchMatmulOp : NN_Op<"batch_matmul", [Pure, InferTypeOpAdaptor]> {
  let summary = "Matrix product per leading index: [B..., M, K] x [B..., K, N]";
  let description = [{
    torch.matmul of two batched operands (attention's scores and weighted
    values): one product per index of the leading dims, which must be equal
    (no broadcasting). `transpose_lhs` / `transpose_rhs` read that operand's
    last two dims swapped, which its gradients use instead of copies.
  }];
  let arguments = (ins NN_FloatTensor:$lhs, NN_FloatTensor:$rhs,
    DefaultValuedAttr<BoolAttr, "false">:$transpose_lhs,
    DefaultValuedAttr<BoolAttr, "false">:$transpose_rhs);
  let results = (outs NN_FloatTensor:$result);
  let hasCanonicalizer = 1;
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
}

def NN_EmbeddingOp : NN_Op<"embedding", [Pure, InferTypeOpAdaptor]> {
  let summary = "Rows of `table` [V, D] picked by integer `indices` [N, ...]";
  let description = [{
    torch.nn.Embedding: the result is `[N, ..., D]`, row `indices[i]` of
    the table for each index. Every index must be in [0, V); the runtime
    checks them where they enter. Row `padding_idx`, when set, gets no
    gradient (PyTorch's padding_idx).
  }];
  let arguments = (ins NN_FloatTensor:$table, NN_IndexTensor:$indices,
                       OptionalAttr<I64Attr>:$padding_idx);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $table `,` $indices attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Softmax and loss
//===----------------------------------------------------------------------===//

def NN_SoftmaxOp : NN_Op<"softmax",
    [Pure, SameOperandsAndResultType, InferTypeOpInterface]> {
  let summary = "Softmax along `axis`";
  let arguments = (ins NN_FloatTensor:$input, I64Attr:$axis);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def NN_LogSoftmaxOp : NN_Op<"log_softmax",
    [Pure, SameOperandsAndResultType, InferTypeOpInterface]> {
  let summary = "Log-softmax along `axis`";
  let arguments = (ins NN_FloatTensor:$input, I64Attr:$axis);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def NN_LossKind : I32EnumAttr<"LossKind", "what a training loss computes", [
    I32EnumAttrCase<"cross_entropy", 0>,
    I32EnumAttrCase<"mse", 1>,
    I32EnumAttrCase<"l1", 2>,
    I32EnumAttrCase<"huber", 3>,
    I32EnumAttrCase<"smooth_l1", 4>,
    I32EnumAttrCase<"bce_with_logits", 5>]> {
  let cppNamespace = "::dpc::nn";
}

/// The attributes every loss op carries, PyTorch's names and defaults.
defvar NN_LossAttrs = (ins NN_LossKind:$kind,
    DefaultValuedAttr<I64Attr, "1">:$class_axis,
    OptionalAttr<I64Attr>:$ignore_index,
    DefaultValuedAttr<F64Attr, "0.0">:$label_smoothing,
    OptionalAttr<DenseF64ArrayAttr>:$class_weights,
    DefaultValuedAttr<F64Attr, "1.0">:$delta,
    OptionalAttr<DenseF64ArrayAttr>:$pos_weight);

def NN_LossOp : NN_Op<"loss", [Pure, InferTypeOpAdaptor]> {
  let summary = "A training loss of the output against the targets: a 0-d "
                "mean";
  let description = [{
    PyTorch's loss of the same name with `reduction="mean"`:

    - `cross_entropy`: `output` holds logits with the classes along
      `class_axis` (PyTorch: 1; a language model's [N, T, V]: the last),
      `target` integer classes of the output's shape less that axis.
      `ignore_index` targets count for nothing; `class_weights` [C] weight
      each target by its class; `label_smoothing` mixes the one-hot target
      with the uniform distribution.
    - `mse`, `l1`, `huber` (`delta`), `smooth_l1` (beta = `delta`),
      `bce_with_logits` (`pos_weight` [C], C the last dim): float targets of
      the output's shape.

    The mean divides by the elements of the global batch, or, when
    `divisor` is given (cross-entropy with `ignore_index` or
    `class_weights`), by it: the global sum of the valid targets' weights,
    `nn.loss_weight`'s all-reduced result.
  }];
  let arguments = !con((ins NN_FloatTensor:$output, NN_AnyTensor:$target,
    Optional<NN_FloatTensor>:$divisor), NN_LossAttrs);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $kind $output `,` $target (`,` $divisor^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// Whether the mean divides by a weight the targets decide (an
    /// nn.loss_weight), rather than by the count of elements.
    bool needsDivisor();
  }];
}

def NN_LossWeightOp : NN_Op<"loss_weight", [Pure, InferTypeOpAdaptor]> {
  let summary = "The sum of the weights of a cross-entropy's valid targets";
  let description = [{
    A 0-d float of `output`'s element type: the number of targets not equal
    to `ignore_index`, or, with `class_weights`, the sum of their classes'
    weights: what PyTorch's weighted mean divides by. A data-parallel step
    all-reduces it, so that every replica divides by the global sum.
  }];
  let arguments = !con((ins NN_FloatTensor:$output, NN_IndexTensor:$target),
    NN_LossAttrs);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $kind $output `,` $target attr-dict `:` functional-type(operands, results)
  }];
}

include "ir/nn/NNGradOps.td"

//===----------------------------------------------------------------------===//
// Activations defined with their gradient
//===----------------------------------------------------------------------===//

// An activation whose gradient reads x, and its gradient op, in one row:
// `defm NN_Foo` defines FooOp (`nn.foo`, `formula`) and FooGradOp
// (`nn.foo_grad`: dy and x, `gradient`), both with `attrs`. Its kernels are
// Kernels.def's DPC_INPUT_ACTIVATION(Foo) row (their alpha and beta are
// named by the lowering).
multiclass NN_InputActivation<string mnemonic, string formula,
                              string gradient, dag attrs> {
  def Op : NN_InputActivationOp<mnemonic, formula, attrs>;
  def GradOp : NN_InputActivationGradOp<mnemonic # "_grad",
                                        mnemonic # ": " # gradient, attrs>;
}

defm NN_LeakyRelu : NN_InputActivation<"leaky_relu",
    "x where x > 0, else alpha x", "dy where x > 0, else alpha dy",
    (ins DefaultValuedAttr<F64Attr, "0.01">:$alpha)>;
defm NN_Elu : NN_InputActivation<"elu",
    "x where x > 0, else alpha (exp(x) - 1)",
    "dy where x > 0, else alpha exp(x) dy",
    (ins DefaultValuedAttr<F64Attr, "1.0">:$alpha)>;
// ONNX's defaults: PyTorch's constants rounded to float.
defm NN_Selu : NN_InputActivation<"selu",
    "gamma x where x > 0, else gamma alpha (exp(x) - 1)",
    "gamma dy where x > 0, else gamma alpha exp(x) dy",
    (ins DefaultValuedAttr<F64Attr, "1.67326319217681884765625">:$alpha,
         DefaultValuedAttr<F64Attr, "1.05070102214813232421875">:$gamma)>;
defm NN_Celu : NN_InputActivation<"celu",
    "x where x > 0, else alpha (exp(x / alpha) - 1); alpha not 0",
    "dy where x > 0, else exp(x / alpha) dy",
    (ins DefaultValuedAttr<F64Attr, "1.0">:$alpha)>;
// PyTorch's: x where beta x > threshold; ONNX's Softplus is beta 1 and
// threshold 20 (where log(1 + exp(x)) rounds to x).
defm NN_Softplus : NN_InputActivation<"softplus",
    "log(1 + exp(beta x)) / beta, or x where beta x > threshold; beta not 0",
    "dy sigmoid(beta x), or dy where beta x > threshold",
    (ins DefaultValuedAttr<F64Attr, "1.0">:$beta,
         DefaultValuedAttr<F64Attr, "20.0">:$threshold)>;
defm NN_Mish : NN_InputActivation<"mish", "x tanh(log(1 + exp(x)))",
    "dy (t + x sigmoid(x) (1 - t^2)), t = tanh(log(1 + exp(x)))", (ins)>;
defm NN_Abs : NN_InputActivation<"abs", "|x|", "dy sign(x) (0 at 0)", (ins)>;
defm NN_Log : NN_InputActivation<"log", "log(x)", "dy / x", (ins)>;
// log(sigmoid(x)) without sigmoid's underflow: min(x, 0) - log1p(exp(-|x|)).
defm NN_LogSigmoid : NN_InputActivation<"log_sigmoid", "log(sigmoid(x))",
    "dy (1 - sigmoid(x))", (ins)>;
// ONNX's Shrink: Hardshrink (bias 0) and Softshrink (bias lambd).
defm NN_Shrink : NN_InputActivation<"shrink",
    "x - bias where x > lambd, x + bias where x < -lambd, else 0",
    "dy where |x| > lambd, else 0",
    (ins DefaultValuedAttr<F64Attr, "0.5">:$lambd,
         DefaultValuedAttr<F64Attr, "0.0">:$bias)>;
defm NN_Threshold : NN_InputActivation<"threshold",
    "x where x > threshold, else value", "dy where x > threshold, else 0",
    (ins F64Attr:$threshold, F64Attr:$value)>;


//===----------------------------------------------------------------------===//
// Element-wise math
//===----------------------------------------------------------------------===//

defm NN_Exp : NN_InputActivation<"exp", "exp(x)", "dy exp(x)", (ins)>;
defm NN_Sqrt : NN_InputActivation<"sqrt", "sqrt(x)", "dy / (2 sqrt(x))",
    (ins)>;
// A constant exponent (LRN's 0.75, an LPPool's 1 / p); whole powers up to
// 4 the importer writes as products.
defm NN_Pow : NN_InputActivation<"pow", "x^exponent",
    "dy exponent x^(exponent - 1) (0 for exponent 0)", (ins F64Attr:$exponent)>;
defm NN_Sin : NN_InputActivation<"sin", "sin(x)", "dy cos(x)", (ins)>;
defm NN_Cos : NN_InputActivation<"cos", "cos(x)", "-dy sin(x)", (ins)>;
// Piecewise constant: PyTorch's gradient is 0 everywhere.
defm NN_Sign : NN_InputActivation<"sign", "-1, 0 or 1 as x is < 0, 0 or > 0",
    "0", (ins)>;
defm NN_Floor : NN_InputActivation<"floor", "floor(x)", "0", (ins)>;
defm NN_Ceil : NN_InputActivation<"ceil", "ceil(x)", "0", (ins)>;

// torch.maximum and torch.minimum (ONNX Max and Min of two operands); NaN
// wins. Their gradient op is nn.maximum_grad.
def NN_MaximumOp : NN_BinaryOp<"maximum", "max(lhs, rhs)">;
def NN_MinimumOp : NN_BinaryOp<"minimum", "min(lhs, rhs)">;

class NN_ReduceExtremumOp<string mnemonic, string what>
    : NN_Op<mnemonic, [Pure, InferTypeOpAdaptor]> {
  let summary = what # " over `dims` (strictly increasing), kept as size "
                "1 or not";
  let description = [{
    torch.amax / torch.amin (ONNX ReduceMax / ReduceMin). The gradient
    (nn.reduce_extremum_grad) is shared evenly by the elements equal to the
    result, as PyTorch's.
  }];
  let arguments = (ins NN_FloatTensor:$input, DenseI64ArrayAttr:$dims,
    DefaultValuedAttr<BoolAttr, "false">:$keep_dims);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` functional-type(operands, results)
  }];
}

def NN_ReduceMaxOp : NN_ReduceExtremumOp<"reduce_max", "Maximum">;
def NN_ReduceMinOp : NN_ReduceExtremumOp<"reduce_min", "Minimum">;

#endif // DPC_IR_NN_NNOPS_TD
