//===- NNGradOps.td - nn gradient and optimizer ops --------*- tablegen -*-===//
//
// The ops a training step adds to the forward graph: training-mode batch
// norm, the vector-Jacobian products of the forward ops, the metrics and the
// optimizer updates. Like the forward ops they are value-semantic and infer
// their result types, so a bad gradient graph is a located diagnostic.
//
// Operand naming: `result_grad` is the gradient of the loss with respect to
// the forward op's result; a gradient op's results are the gradients with
// respect to the forward op's operands.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_IR_NN_NNGRADOPS_TD
#define DPC_IR_NN_NNGRADOPS_TD

include "ir/nn/NNDialect.td"
include "ir/nn/NNInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

def NN_Conv2dGradInputOp : NN_Op<"conv2d_grad_input",
    [Pure, InferTypeOpAdaptor]> {
  let summary = "Gradient of conv2d with respect to its input";
  let description = [{
    The attributes are those of the forward `nn.conv2d`. `input_size` is the
    forward input's `[H, W]` (`[D, H, W]` in 3-D): several input sizes give the same output size
    under a stride, so it cannot be recovered from `result_grad`. Batch and
    channels follow from `result_grad` and `filter`, so the forward input
    itself need not stay alive.
  }];
  let arguments = (ins NN_FloatTensor:$result_grad, NN_FloatTensor:$filter,
    DenseI64ArrayAttr:$input_size,
    DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$stride,
    DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$padding,
    DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$dilation,
    DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs NN_FloatTensor:$input_grad);
  let assemblyFormat = [{
    $result_grad `,` $filter attr-dict `:` functional-type(operands, results)
  }];
}

def NN_Conv2dGradFilterOp : NN_Op<"conv2d_grad_filter",
    [Pure, InferTypeOpAdaptor]> {
  let summary = "Gradient of conv2d with respect to its filter";
  let description = [{
    The attributes are those of the forward `nn.conv2d`; `kernel_size` is the
    filter's `[kH, kW]` (`[kD, kH, kW]` in 3-D). The bias gradient is an
    `nn.reduce_sum` of `result_grad` over every dim but 1.
  }];
  let arguments = (ins NN_FloatTensor:$result_grad, NN_FloatTensor:$input,
    DenseI64ArrayAttr:$kernel_size,
    DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$stride,
    DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$padding,
    DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$dilation,
    DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs NN_FloatTensor:$filter_grad);
  let assemblyFormat = [{
    $result_grad `,` $input attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Batch normalization
//===----------------------------------------------------------------------===//

def NN_BatchNormTrainOp : NN_Op<"batch_norm_train",
    [Pure, InferTypeOpAdaptor]> {
  let summary = "Training-mode batch normalization over dim 1";
  let description = [{
    PyTorch's `BatchNorm` in training mode. Normalizes with the batch's
    statistics over every dim but 1: `mean` and the biased variance `var`,
    `y = (x - mean) * invstd * scale + shift` with
    `invstd = 1 / sqrt(var + epsilon)`. Also returns `batch_mean` and
    `batch_invstd` (saved for `nn.batch_norm_grad`) and the running
    statistics updated with `momentum`:
    `new_running_mean = (1 - momentum) * running_mean + momentum * mean`,
    `new_running_var = (1 - momentum) * running_var + momentum * var * n / (n - 1)`
    (the unbiased variance), `n` being the count per channel.
  }];
  let arguments = (ins NN_FloatTensor:$input, NN_FloatTensor:$scale,
    NN_FloatTensor:$shift, NN_FloatTensor:$running_mean,
    NN_FloatTensor:$running_var,
    DefaultValuedAttr<F64Attr, "1e-5">:$epsilon,
    DefaultValuedAttr<F64Attr, "0.1">:$momentum);
  let results = (outs NN_FloatTensor:$result, NN_FloatTensor:$batch_mean,
    NN_FloatTensor:$batch_invstd, NN_FloatTensor:$new_running_mean,
    NN_FloatTensor:$new_running_var);
  let assemblyFormat = [{
    $input `,` $scale `,` $shift `,` $running_mean `,` $running_var attr-dict
    `:` functional-type(operands, results)
  }];
}

def NN_BatchNormGradOp : NN_Op<"batch_norm_grad", [Pure, InferTypeOpAdaptor]> {
  let summary = "Gradient of training-mode batch normalization";
  let description = [{
    From the saved `batch_mean` and `batch_invstd` of `nn.batch_norm_train`:
    with `xhat = (x - mean) * invstd` and sums over every dim but 1,
    `shift_grad = sum(dy)`, `scale_grad = sum(dy * xhat)`,
    `input_grad = scale * invstd / n * (n * dy - shift_grad - xhat * scale_grad)`.
  }];
  let arguments = (ins NN_FloatTensor:$result_grad, NN_FloatTensor:$input,
    NN_FloatTensor:$scale, NN_FloatTensor:$batch_mean,
    NN_FloatTensor:$batch_invstd);
  let results = (outs NN_FloatTensor:$input_grad, NN_FloatTensor:$scale_grad,
    NN_FloatTensor:$shift_grad);
  let assemblyFormat = [{
    $result_grad `,` $input `,` $scale `,` $batch_mean `,` $batch_invstd
    attr-dict `:` functional-type(operands, results)
  }];
}

// Synchronized batch norm (--sync-bn): the statistics of the training-mode
// ops above, split into per-replica sums, which an all-reduce makes global,
// and their application. Sums rather than means, so that replicas of any
// size (empty included) combine by plain addition.

def NN_BatchNormStatsOp : NN_Op<"batch_norm_stats",
    [Pure, InferTypeOpAdaptor]> {
  let summary = "Per-channel sums of x and x^2, and the count per channel";
  let description = [{
    Over every dim but 1: `sum = sum(x)`, `sum_sq = sum(x * x)` and
    `count` (a 1-element tensor) the number of values summed per channel,
    computed from the run-time shape, so a short or empty batch is counted
    right. All three are f64 whatever the input's type: the mean and
    variance derived from the global sums then round to the same values as
    one device's, so that the forward pass of a synchronized replica is
    what one device computes on the whole batch.
  }];
  let arguments = (ins NN_FloatTensor:$input);
  let results = (outs NN_FloatTensor:$sum, NN_FloatTensor:$sum_sq,
    NN_FloatTensor:$count);
  let assemblyFormat = [{
    $input attr-dict `:` functional-type(operands, results)
  }];
}

def NN_BatchNormApplyOp : NN_Op<"batch_norm_apply",
    [Pure, InferTypeOpAdaptor]> {
  let summary = "Training-mode batch norm from (global) statistics sums";
  let description = [{
    `nn.batch_norm_train` with the statistics given as the sums of
    `nn.batch_norm_stats` (all-reduced over the replicas):
    `mean = sum / count`, the biased `var = sum_sq / count - mean^2`
    normalizes, and the running variance is updated with the unbiased
    `var * count / (count - 1)`, as PyTorch's SyncBatchNorm does.
  }];
  let arguments = (ins NN_FloatTensor:$input, NN_FloatTensor:$scale,
    NN_FloatTensor:$shift, NN_FloatTensor:$running_mean,
    NN_FloatTensor:$running_var, NN_FloatTensor:$sum,
    NN_FloatTensor:$sum_sq, NN_FloatTensor:$count,
    DefaultValuedAttr<F64Attr, "1e-5">:$epsilon,
    DefaultValuedAttr<F64Attr, "0.1">:$momentum);
  let results = (outs NN_FloatTensor:$result, NN_FloatTensor:$batch_mean,
    NN_FloatTensor:$batch_invstd, NN_FloatTensor:$new_running_mean,
    NN_FloatTensor:$new_running_var);
  let assemblyFormat = [{
    $input `,` $scale `,` $shift `,` $running_mean `,` $running_var `,` $sum
    `,` $sum_sq `,` $count attr-dict `:` functional-type(operands, results)
  }];
}

def NN_BatchNormGradStatsOp : NN_Op<"batch_norm_grad_stats",
    [Pure, InferTypeOpAdaptor]> {
  let summary = "Per-channel sums of dy and dy * xhat";
  let description = [{
    With `xhat = (x - batch_mean) * batch_invstd` and sums over every dim
    but 1: `sum_dy = sum(dy)` and `sum_dy_xhat = sum(dy * xhat)`. Over the
    replica's rows these are its shift and scale gradients; all-reduced
    they feed `nn.batch_norm_grad_apply`.
  }];
  let arguments = (ins NN_FloatTensor:$result_grad, NN_FloatTensor:$input,
    NN_FloatTensor:$batch_mean, NN_FloatTensor:$batch_invstd);
  let results = (outs NN_FloatTensor:$sum_dy, NN_FloatTensor:$sum_dy_xhat);
  let assemblyFormat = [{
    $result_grad `,` $input `,` $batch_mean `,` $batch_invstd attr-dict `:`
    functional-type(operands, results)
  }];
}

def NN_BatchNormGradApplyOp : NN_Op<"batch_norm_grad_apply",
    [Pure, InferTypeOpAdaptor]> {
  let summary = "Input gradient of batch norm from (global) gradient sums";
  let description = [{
    `input_grad = scale * invstd / count *
    (count * dy - sum_dy - xhat * sum_dy_xhat)`, from the sums of
    `nn.batch_norm_grad_stats` and the count of `nn.batch_norm_stats`
    (both all-reduced over the replicas).
  }];
  let arguments = (ins NN_FloatTensor:$result_grad, NN_FloatTensor:$input,
    NN_FloatTensor:$scale, NN_FloatTensor:$batch_mean,
    NN_FloatTensor:$batch_invstd, NN_FloatTensor:$sum_dy,
    NN_FloatTensor:$sum_dy_xhat, NN_FloatTensor:$count);
  let results = (outs NN_FloatTensor:$input_grad);
  let assemblyFormat = [{
    $result_grad `,` $input `,` $scale `,` $batch_mean `,` $batch_invstd `,`
    $sum_dy `,` $sum_dy_xhat `,` $count attr-dict `:`
    functional-type(operands, results)
  }];
}

def NN_LayerNormGradOp : NN_Op<"layer_norm_grad", [Pure, InferTypeOpAdaptor]> {
  let summary = "Gradient of layer_norm";
  let description = [{
    The attributes are those of the forward `nn.layer_norm`. Each row's
    statistics are recomputed from `input` (exactly as the forward computed
    them) rather than saved. With `xhat = (x - mean) * invstd`, `g = dy *
    scale` and means over the row, `input_grad = invstd * (g - mean(g) -
    xhat * mean(g * xhat))`; summed over the rows, `scale_grad = dy * xhat`
    and `bias_grad = dy`.
  }];
  let arguments = (ins NN_FloatTensor:$result_grad, NN_FloatTensor:$input,
    NN_FloatTensor:$scale, I64Attr:$axis,
    DefaultValuedAttr<F64Attr, "1e-5">:$epsilon);
  let results = (outs NN_FloatTensor:$input_grad, NN_FloatTensor:$scale_grad,
    NN_FloatTensor:$bias_grad);
  let assemblyFormat = [{
    $result_grad `,` $input `,` $scale attr-dict `:`
    functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Pooling and padding
//===----------------------------------------------------------------------===//

def NN_MaxPool2dGradOp : NN_Op<"max_pool2d_grad", [Pure, InferTypeOpAdaptor]> {
  let summary = "Gradient of max_pool2d: each window's gradient to its argmax";
  let description = [{
    The attributes are those of the forward `nn.max_pool2d`; the forward
    input locates each window's maximum (the first one, in row-major order,
    on ties, as PyTorch does).
  }];
  let arguments = (ins NN_FloatTensor:$result_grad, NN_FloatTensor:$input,
    DenseI64ArrayAttr:$kernel_size,
    DenseI64ArrayAttr:$stride,
    DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$padding,
    DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$dilation,
    DefaultValuedAttr<BoolAttr, "false">:$ceil_mode);
  let results = (outs NN_FloatTensor:$input_grad);
  let assemblyFormat = [{
    $result_grad `,` $input attr-dict `:` functional-type(operands, results)
  }];
}

def NN_AvgPool2dGradOp : NN_Op<"avg_pool2d_grad", [Pure, InferTypeOpAdaptor]> {
  let summary = "Gradient of avg_pool2d: each window's gradient spread evenly";
  let description = [{
    The attributes are those of the forward `nn.avg_pool2d`; `input_size` is
    the forward input's `[H, W]` (not recoverable under a stride).
  }];
  let arguments = (ins NN_FloatTensor:$result_grad,
    DenseI64ArrayAttr:$input_size,
    DenseI64ArrayAttr:$kernel_size,
    DenseI64ArrayAttr:$stride,
    DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0, 0, 0}">:$padding,
    DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
    DefaultValuedAttr<BoolAttr, "true">:$count_include_pad);
  let results = (outs NN_FloatTensor:$input_grad);
  let assemblyFormat = [{
    $result_grad attr-dict `:` functional-type(operands, results)
  }];
}

def NN_GlobalAvgPool2dGradOp : NN_Op<"global_avg_pool2d_grad",
    [Pure, InferTypeOpAdaptor]> {
  let summary = "Gradient of global_avg_pool2d: dy / (H * W) over H x W";
  let description = [{
    `input_size` is the forward input's `[H, W]`.
  }];
  let arguments = (ins NN_FloatTensor:$result_grad,
    DenseI64ArrayAttr:$input_size);
  let results = (outs NN_FloatTensor:$input_grad);
  let assemblyFormat = [{
    $result_grad attr-dict `:` functional-type(operands, results)
  }];
}

def NN_PadGradOp : NN_Op<"pad_grad", [Pure, InferTypeOpAdaptor]> {
  let summary = "Gradient of pad: the slice that drops `low` and `high`";
  let arguments = (ins NN_FloatTensor:$result_grad,
    DenseI64ArrayAttr:$low, DenseI64ArrayAttr:$high);
  let results = (outs NN_FloatTensor:$input_grad);
  let assemblyFormat = [{
    $result_grad attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class NN_ElementwiseGradOp<string mnemonic, string saved, string formula>
    : NN_Op<mnemonic,
            [Pure, SameOperandsAndResultType, InferTypeOpInterface]> {
  let summary = "Gradient of " # formula;
  let arguments = !con((ins NN_FloatTensor:$result_grad),
                       !dag(ins, [NN_FloatTensor], [saved]));
  let results = (outs NN_FloatTensor:$input_grad);
  let assemblyFormat = "operands attr-dict `:` type($input_grad)";
}

def NN_ReluGradOp
    : NN_ElementwiseGradOp<"relu_grad", "input", "relu: dy * (x > 0)">;
def NN_SigmoidGradOp
    : NN_ElementwiseGradOp<"sigmoid_grad", "result",
                           "sigmoid from its result: dy * y * (1 - y)">;
def NN_TanhGradOp
    : NN_ElementwiseGradOp<"tanh_grad", "result",
                           "tanh from its result: dy * (1 - y * y)">;
def NN_ReciprocalGradOp
    : NN_ElementwiseGradOp<"reciprocal_grad", "result",
                           "reciprocal from its result: -dy * (y * y)">;

// The gradients of the activations whose gradient reads the input x, with
// the forward op's attributes.
class NN_InputActivationGradOp<string mnemonic, string formula, dag attrs>
    : NN_Op<mnemonic,
            [Pure, SameOperandsAndResultType, InferTypeOpInterface]> {
  let summary = "Gradient of " # formula;
  let arguments =
      !con((ins NN_FloatTensor:$result_grad, NN_FloatTensor:$input), attrs);
  let results = (outs NN_FloatTensor:$input_grad);
  let assemblyFormat = "operands attr-dict `:` type($input_grad)";
}

def NN_ClipGradOp : NN_InputActivationGradOp<"clip_grad",
    "clip: dy where min < x < max, else 0", (ins F64Attr:$min, F64Attr:$max)>;
def NN_HardSigmoidGradOp : NN_InputActivationGradOp<"hard_sigmoid_grad",
    "hard_sigmoid: alpha dy where 0 < alpha x + beta < 1, else 0",
    (ins F64Attr:$alpha, F64Attr:$beta)>;
def NN_HardSwishGradOp : NN_InputActivationGradOp<"hard_swish_grad",
    "hard_swish: 0 below -3, dy (x / 3 + 1/2) to 3, dy above", (ins)>;
def NN_ErfGradOp : NN_InputActivationGradOp<"erf_grad",
    "erf: dy 2 / sqrt(pi) exp(-x^2)", (ins)>;
def NN_GeluGradOp : NN_InputActivationGradOp<"gelu_grad",
    "gelu: dy (Phi(x) + x phi(x)), or the tanh approximation's",
    (ins BoolAttr:$tanh_approximation)>;

// The gradients of nn.maximum and nn.minimum for both operands: dy to the
// larger (smaller), half of it to each on a tie (PyTorch's rule), summed
// over the dims an operand was broadcast along.
class NN_ExtremumGradOp<string mnemonic, string forward>
    : NN_Op<mnemonic, [Pure, InferTypeOpAdaptor]> {
  let summary = "Gradient of " # forward # " for both operands";
  let arguments = (ins NN_FloatTensor:$result_grad, NN_FloatTensor:$lhs,
    NN_FloatTensor:$rhs);
  let results = (outs NN_FloatTensor:$lhs_grad, NN_FloatTensor:$rhs_grad);
  let assemblyFormat = [{
    operands attr-dict `:` functional-type(operands, results)
  }];
}

def NN_MaximumGradOp : NN_ExtremumGradOp<"maximum_grad", "nn.maximum">;
def NN_MinimumGradOp : NN_ExtremumGradOp<"minimum_grad", "nn.minimum">;

def NN_ReduceExtremumGradOp : NN_Op<"reduce_extremum_grad",
    [Pure, InferTypeOpAdaptor]> {
  let summary = "Gradient of nn.reduce_max or nn.reduce_min";
  let description = [{
    Each element of `input` equal to its group's `result` gets the group's
    `result_grad` divided by how many do; the others 0 (PyTorch's amax and
    amin). `dims` and `keep_dims` are the forward's.
  }];
  let arguments = (ins NN_FloatTensor:$result_grad, NN_FloatTensor:$input,
    NN_FloatTensor:$result, DenseI64ArrayAttr:$dims,
    DefaultValuedAttr<BoolAttr, "false">:$keep_dims);
  let results = (outs NN_FloatTensor:$input_grad);
  let assemblyFormat = [{
    operands attr-dict `:` functional-type(operands, results)
  }];
}

def NN_DropoutGradOp : NN_Op<"dropout_grad",
    [Pure, SameOperandsAndResultType, InferTypeOpInterface]> {
  let summary = "Gradient of dropout: dy times the forward's regenerated mask "
                "and scale";
  let arguments = (ins NN_FloatTensor:$result_grad, F64Attr:$ratio,
    I64Attr:$key, UnitAttr:$rowwise, DefaultValuedAttr<I64Attr, "1">:$span,
    OptionalAttr<F64Attr>:$scale);
  let results = (outs NN_FloatTensor:$input_grad);
  let assemblyFormat = "operands attr-dict `:` type($input_grad)";
}

def NN_EmbeddingGradOp : NN_Op<"embedding_grad", [Pure, InferTypeOpAdaptor]> {
  let summary = "Gradient of embedding: result_grad's rows added into a "
                "zero table at their indices";
  let description = [{
    A dense `[num_embeddings, D]` gradient (rows no index picks are 0), so
    that data parallelism all-reduces it like any other.
  }];
  let arguments = (ins NN_FloatTensor:$result_grad, NN_IndexTensor:$indices,
    I64Attr:$num_embeddings);
  let results = (outs NN_FloatTensor:$table_grad);
  let assemblyFormat = [{
    $result_grad `,` $indices attr-dict `:` functional-type(operands, results)
  }];
}

def NN_ZerosLikeOp : NN_Op<"zeros_like",
    [Pure, SameOperandsAndResultType, InferTypeOpInterface]> {
  let summary = "Zeros of the operand's type (its run-time rows included)";
  let description = [{
    The gradient of a value nothing reads (a part of a split that the model
    drops, as a slice does). The operand only gives the shape, so that a
    batch-major zero follows the run-time batch as a constant cannot.
  }];
  let arguments = (ins NN_FloatTensor:$input);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

//===----------------------------------------------------------------------===//
// Reductions and layout
//===----------------------------------------------------------------------===//

def NN_ReduceSumOp : NN_Op<"reduce_sum", [Pure, InferTypeOpAdaptor]> {
  let summary = "Sum over `dims` (strictly increasing), kept as size 1 or not";
  let description = [{
    Undoes broadcasting in gradients and gives bias gradients.
  }];
  let arguments = (ins NN_FloatTensor:$input, DenseI64ArrayAttr:$dims,
    DefaultValuedAttr<BoolAttr, "false">:$keep_dims);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` functional-type(operands, results)
  }];
}

def NN_TransposeOp : NN_Op<"transpose", [Pure, InferTypeOpAdaptor]> {
  let summary = "Permute dims: result dim i is input dim `permutation[i]`";
  let description = [{
    With `nn.matmul`, gives the gradients of `nn.linear` and `nn.matmul`.
  }];
  let arguments = (ins AnyRankedTensor:$input,
    DenseI64ArrayAttr:$permutation);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Softmax and loss
//===----------------------------------------------------------------------===//

def NN_SoftmaxGradOp : NN_Op<"softmax_grad",
    [Pure, SameOperandsAndResultType, InferTypeOpInterface]> {
  let summary = "Gradient of softmax from its result: y * (dy - sum(dy * y))";
  let arguments = (ins NN_FloatTensor:$result_grad, NN_FloatTensor:$result,
    I64Attr:$axis);
  let results = (outs NN_FloatTensor:$input_grad);
  let assemblyFormat = "operands attr-dict `:` type($input_grad)";
  let hasVerifier = 1;
}

def NN_LogSoftmaxGradOp : NN_Op<"log_softmax_grad",
    [Pure, SameOperandsAndResultType, InferTypeOpInterface]> {
  let summary = "Gradient of log_softmax from its result: "
                "dy - exp(y) * sum(dy)";
  let arguments = (ins NN_FloatTensor:$result_grad, NN_FloatTensor:$result,
    I64Attr:$axis);
  let results = (outs NN_FloatTensor:$input_grad);
  let assemblyFormat = "operands attr-dict `:` type($input_grad)";
  let hasVerifier = 1;
}

def NN_LossGradOp : NN_Op<"loss_grad", [Pure, InferTypeOpAdaptor]> {
  let summary = "Gradient of nn.loss with respect to its output";
  let description = [{
    The gradient of the loss of the same attributes and operands, times
    `loss_grad`: cross-entropy's `(softmax(logits) - smoothed one-hot) *
    weight / divisor`, MSE's `2 (output - target) / count`, and so on.
  }];
  let arguments = !con((ins NN_FloatTensor:$output, NN_AnyTensor:$target,
    NN_FloatTensor:$loss_grad, Optional<NN_FloatTensor>:$divisor),
    NN_LossAttrs);
  let results = (outs NN_FloatTensor:$output_grad);
  let assemblyFormat = [{
    $kind $output `,` $target `,` $loss_grad (`,` $divisor^)? attr-dict `:`
    functional-type(operands, results)
  }];
}

def NN_CorrectCountOp : NN_Op<"correct_count", [Pure, InferTypeOpAdaptor]> {
  let summary = "How many targets the logits' argmax along the class axis "
                "hits";
  let description = [{
    Logits with the classes along `class_axis`, integer targets of their
    shape less that axis (a sample's label, or a token's or a pixel's).
    A 0-d i64 tensor counting the targets, other than `ignore_index`, that
    are the argmax of their logits; ties go to the first maximum (PyTorch's
    argmax).
  }];
  let arguments = (ins NN_FloatTensor:$logits, NN_IndexTensor:$labels,
    DefaultValuedAttr<I64Attr, "1">:$class_axis,
    OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs TensorOf<[I64]>:$result);
  let assemblyFormat = [{
    $logits `,` $labels attr-dict `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Optimizers
//===----------------------------------------------------------------------===//

def NN_AccumulateOp : NN_Op<"accumulate",
    [Pure, AllTypesMatch<["accumulator", "value", "result"]>]> {
  let summary = "Gradient accumulation: accumulator + value";
  let description = [{
    `result = accumulator + value`, or `value` alone with `first` (the
    first micro-batch of a step starts the sum afresh). It lowers to a
    kernel that updates the accumulator's buffer in place, so `accumulator`
    must have no later reader.
  }];
  let arguments = (ins NN_FloatTensor:$accumulator, NN_FloatTensor:$value,
    UnitAttr:$first);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $accumulator `,` $value attr-dict `:` type($result)
  }];
}

def NN_SgdUpdateOp : NN_Op<"sgd_update",
    [Pure, InferTypeOpAdaptor]> {
  let summary = "One torch.optim.SGD step for one parameter";
  let description = [{
    With `g = grad + weight_decay * param`: if `momentum` is 0, `new_param =
    param - lr * g` and there is no momentum buffer. Otherwise
    `buf = momentum * momentum_buffer + (1 - dampening) * g`,
    `new_param = param - lr * (nesterov ? g + momentum * buf : buf)`, and
    `buf` is the second result. The buffer starts at zero, so the first step
    matches PyTorch (which starts it at `g`) exactly when `dampening` is 0.
    `lr` is a 0-d tensor fed at run time, for learning-rate schedules.
  }];
  let arguments = (ins NN_FloatTensor:$param, NN_FloatTensor:$grad,
    NN_FloatTensor:$lr, Optional<NN_FloatTensor>:$momentum_buffer,
    DefaultValuedAttr<F64Attr, "0.0">:$momentum,
    DefaultValuedAttr<F64Attr, "0.0">:$dampening,
    DefaultValuedAttr<BoolAttr, "false">:$nesterov,
    DefaultValuedAttr<F64Attr, "0.0">:$weight_decay);
  let results = (outs NN_FloatTensor:$new_param,
    Optional<NN_FloatTensor>:$new_momentum_buffer);
  let assemblyFormat = [{
    $param `,` $grad `,` $lr (`,` $momentum_buffer^)? attr-dict `:`
    functional-type(operands, results)
  }];
}

def NN_AdamWUpdateOp : NN_Op<"adamw_update", [Pure, InferTypeOpAdaptor]> {
  let summary = "One torch.optim.AdamW step for one parameter";
  let description = [{
    `step` is the 1-based number of this update (a 0-d tensor, as is `lr`,
    both fed at run time):
    `p = param * (1 - lr * weight_decay)`,
    `m = beta1 * exp_avg + (1 - beta1) * grad`,
    `v = beta2 * exp_avg_sq + (1 - beta2) * grad * grad`,
    `new_param = p - lr / (1 - beta1^step) * m /
                 (sqrt(v) / sqrt(1 - beta2^step) + eps)`;
    the results are `new_param`, `m` and `v`.
  }];
  let arguments = (ins NN_FloatTensor:$param, NN_FloatTensor:$grad,
    NN_FloatTensor:$exp_avg, NN_FloatTensor:$exp_avg_sq,
    RankedTensorOf<[AnySignlessInteger, AnyFloat]>:$step, NN_FloatTensor:$lr,
    DefaultValuedAttr<F64Attr, "0.9">:$beta1,
    DefaultValuedAttr<F64Attr, "0.999">:$beta2,
    DefaultValuedAttr<F64Attr, "1e-8">:$eps,
    DefaultValuedAttr<F64Attr, "0.01">:$weight_decay);
  let results = (outs NN_FloatTensor:$new_param, NN_FloatTensor:$new_exp_avg,
    NN_FloatTensor:$new_exp_avg_sq);
  let assemblyFormat = [{
    $param `,` $grad `,` $exp_avg `,` $exp_avg_sq `,` $step `,` $lr attr-dict
    `:` functional-type(operands, results)
  }];
}

#endif // DPC_IR_NN_NNGRADOPS_TD
