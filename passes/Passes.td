//===- Passes.td - dpc passes ------------------------------*- tablegen -*-===//

#ifndef DPC_PASSES_PASSES_TD
#define DPC_PASSES_PASSES_TD

include "mlir/Pass/PassBase.td"

def NNSetBatch : Pass<"nn-set-batch", "mlir::func::FuncOp"> {
  let summary = "Fix the batch (leading) dimension of the model's data inputs";
  let description = [{
    Sets the leading dimension of every argument marked `nn.input` or
    `nn.labels` to `batch`, then recomputes every nn op's result type and the function's
    result types from there. A data input whose
    leading dimension is already a different static size is rebatched too:
    the batch size a model was exported with is not part of the model.
  }];
  let options = [
    Option<"batch", "batch", "int64_t", /*default=*/"0",
           "The batch size (> 0)">,
  ];
}

def NNBuildTrainStep : Pass<"nn-build-train-step", "mlir::ModuleOp"> {
  let summary = "Differentiate @forward into a training step and an eval step";
  let description = [{
    From `func.func @forward` (arguments marked `nn.input`, `nn.param`,
    `nn.buffer`; first result the logits [N, C]) builds, next to it:

    `@train_step(inputs..., labels {nn.labels}, lr {nn.lr},
    [step {nn.step}, AdamW only,] params..., buffers..., optimizer state...)
    -> (loss {nn.output = "loss"}, correct {nn.output = "correct"},
    new params {nn.param_update}, new buffers {nn.buffer_update},
    new optimizer state {nn.opt_state_update})`: the forward pass with
    batch norm in training mode (`nn.batch_norm_train`, which also gives the
    new running statistics), the loss (the mean over the batch), the reverse
    sweep built by each op's DifferentiableOpInterface (gradients of values
    used more than once summed with `nn.add`), and one optimizer update per
    parameter. `lr` and `step` are fed at run time; optimizer state (named
    `<param>.momentum_buffer`, or `<param>.exp_avg` and `<param>.exp_avg_sq`
    as in PyTorch's state dicts) starts at zero.

    `@eval_step(inputs..., labels, params..., buffers...) -> (loss, correct,
    logits)`: the forward pass with batch norm on the running statistics.
  }];
  let dependentDialects = ["::dpc::nn::NNDialect"];
  let options = [
    Option<"loss", "loss", "std::string", /*default=*/"\"cross-entropy\"",
           "The loss: cross-entropy, mse, l1, huber, smooth-l1 or "
           "bce-with-logits">,
    Option<"classAxis", "class-axis", "int64_t", /*default=*/"1",
           "Cross-entropy: the logits' class dim (PyTorch's 1; -1: the "
           "last, a language model's [N, T, V])">,
    Option<"ignoreIndex", "ignore-index", "int64_t",
           /*default=*/"std::numeric_limits<int64_t>::min()",
           "Cross-entropy: targets of this class count for nothing (unset: "
           "none)">,
    Option<"labelSmoothing", "label-smoothing", "double", /*default=*/"0.0",
           "Cross-entropy: PyTorch's label_smoothing">,
    ListOption<"classWeights", "class-weights", "double",
               "Cross-entropy: a weight per class">,
    Option<"delta", "delta", "double", /*default=*/"1.0",
           "Huber's delta, smooth-l1's beta">,
    ListOption<"posWeight", "pos-weight", "double",
               "bce-with-logits: a weight of the positives per class">,
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"sgd\"",
           "The optimizer: sgd or adamw">,
    Option<"momentum", "momentum", "double", /*default=*/"0.0",
           "SGD momentum">,
    Option<"dampening", "dampening", "double", /*default=*/"0.0",
           "SGD dampening">,
    Option<"nesterov", "nesterov", "bool", /*default=*/"false",
           "SGD Nesterov momentum">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"-1.0",
           "Weight decay; negative: PyTorch's default for the optimizer "
           "(0 for SGD, 0.01 for AdamW)">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9", "AdamW beta1">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999", "AdamW beta2">,
    Option<"eps", "eps", "double", /*default=*/"1e-8", "AdamW epsilon">,
  ];
}

def AccumulateGradients : Pass<"dpc-accumulate-gradients",
                               "mlir::ModuleOp"> {
  let summary = "Split a training step into K micro-batch steps";
  let description = [{
    Gradient accumulation, as PyTorch users write it by hand (K backward
    passes, then one optimizer step; DDP's `no_sync` for all but the last),
    with the batch of the steps being one micro-batch (set it to B / K
    before this pass). Next to `@train_step` it builds:

    - `@accum_first`: the forward and backward pass whose parameter
      gradients start an accumulator per parameter (`nn.accumulate {first}`,
      optimizer state `<param>.grad_accum`, zero-initialized), instead of
      updating the parameter;
    - `@accum_step`: the same, adding to the accumulators;

    and `@train_step` updates each parameter with `accumulator + gradient`.
    A step of K micro-batches runs `@accum_first`, K - 2 `@accum_step` and
    `@train_step`; the runtime splits the global batch and normalizes every
    micro-batch's loss by the global batch, so the update is that of the
    whole batch. Only `@train_step` has optimizer updates, so data
    parallelism all-reduces the gradients once per K micro-batches. Batch
    norm normalizes each micro-batch by its own statistics and updates the
    running statistics once per micro-batch, as in PyTorch.

    The module gets `dpc.grad_accum = K`. K = 1 leaves it unchanged.
  }];
  let dependentDialects = ["::dpc::nn::NNDialect"];
  let options = [
    Option<"gradAccum", "grad-accum", "int64_t", /*default=*/"1",
           "The number of micro-batches per optimizer step (>= 1)">,
  ];
}

def PartitionDataParallel : Pass<"dpc-partition-data-parallel",
                                 "mlir::ModuleOp"> {
  let summary = "Partition @train_step and @eval_step over devices";
  let description = [{
    Rewrites `@train_step` and `@eval_step` (built by nn-build-train-step,
    with a static batch B) in place into one replica of their body per
    device, keeping their arguments. Batch-major arguments (`nn.input`,
    `nn.labels`) are split with `dist.scatter` into `split`; every other
    argument is copied with `dist.replicate`. Each parameter gradient is
    summed over the replicas with `dist.all_reduce`, right after the last
    replica computes it; each replica's loss is weighted by its share
    `split[d] / B`, so that the summed gradients are those of the mean loss
    over the global batch, whatever the split. Scalar outputs gather into a
    vector with one entry per device (whose sum is the global loss), logits
    into the full batch, and every state update is returned once per replica
    (result attribute `dist.replica`). The steps get `dist.devices` and
    `dist.split`. With one device the module is left unchanged.

    With `sync-bn`, every replica's `nn.batch_norm_train` becomes
    `nn.batch_norm_stats`, a `dist.all_reduce` (marked `dist.statistics`) of
    its sums and count, and `nn.batch_norm_apply` of the global sums; every
    `nn.batch_norm_grad` becomes `nn.batch_norm_grad_stats`, an all-reduce
    of its sums and `nn.batch_norm_grad_apply`. The replica's local sums are
    its scale and shift gradients, which the gradient all-reduce then sums.
  }];
  let dependentDialects = ["::dpc::dist::DistDialect",
                           "::dpc::nn::NNDialect"];
  let options = [
    Option<"devices", "devices", "std::string", /*default=*/"\"cpu:0\"",
           "The devices, comma-separated: cpu:K or cuda:K">,
    ListOption<"split", "split", "int64_t",
               "Each device's share of the batch (summing to it); default: "
               "torch.chunk's, ceil(B / N) each, the last ones smaller">,
    Option<"syncBn", "sync-bn", "bool", /*default=*/"false",
           "Synchronize batch-norm statistics over the replicas "
           "(SyncBatchNorm)">,
  ];
}

def ShardOptimizerState : Pass<"dpc-shard-optimizer-state",
                               "mlir::ModuleOp"> {
  let summary = "ZeRO-1: each replica keeps and updates 1/N of the optimizer "
                "state";
  let description = [{
    On `@train_step` partitioned over N > 1 devices: every parameter with
    optimizer state (SGD's momentum buffer, AdamW's exp_avg and exp_avg_sq)
    is cut, flattened, into N contiguous element ranges of balanced sizes
    (differing by at most one element). Each state argument, still the
    whole tensor, is `nn.reshape`d flat and `dist.scatter`ed into the
    ranges instead of replicated; replica d updates range d of the
    parameter from range d of its copy of the parameter and of the
    all-reduced gradient (`nn.reshape` + `nn.split`), and returns its range
    of the state; a `dist.all_gather` of the updated ranges, reshaped,
    gives every replica the whole new parameter, which it returns as
    before. The step gets `dist.shard = "optimizer"`. With one device
    nothing changes, nor for parameters without state unless `stateless`
    is set: then their updates are cut into ranges too (no state to
    scatter), for dpc-shard-gradients to shard their gradients. The
    updates compute the same values, bit for bit, as the replicated step.
  }];
  let dependentDialects = ["::dpc::dist::DistDialect",
                           "::dpc::nn::NNDialect"];
  let options = [
    Option<"stateless", "stateless", "bool", /*default=*/"false",
           "Also cut the updates of parameters without optimizer state">,
  ];
}

def ShardGradients : Pass<"dpc-shard-gradients", "mlir::ModuleOp"> {
  let summary = "ZeRO-2: each replica reduces and keeps only its range of "
                "the gradients it updates";
  let description = [{
    On `@train_step` after dpc-shard-optimizer-state (over N > 1 devices):
    a gradient `dist.all_reduce` of which each replica d reads only range d
    (the `nn.split` of its flattening that the sharded update reads)
    becomes a `dist.reduce_scatter` of the flattened gradients into those
    ranges, so no replica holds the whole reduced gradient. Gradients read
    otherwise (parameters without optimizer state, batch-norm statistics)
    stay all-reduced. The step's `dist.shard` becomes "gradients". The
    reduce-scatter sums every element as the all-reduce did: the step
    computes the same bits.
  }];
  let dependentDialects = ["::dpc::dist::DistDialect",
                           "::dpc::nn::NNDialect"];
}

def ShardParameters : Pass<"dpc-shard-parameters", "mlir::ModuleOp"> {
  let summary = "ZeRO-3: parameters live sharded and are all-gathered "
                "before each pass that reads them";
  let description = [{
    After dpc-shard-gradients (over N > 1 devices): every parameter whose
    update @train_step cuts into ranges stays cut between steps. In every
    partitioned step that reads it (@train_step, @accum_first,
    @accum_step, @eval_step) its argument is flattened and `dist.scatter`ed
    into those ranges instead of replicated; @train_step returns each
    replica's updated range instead of all-gathering it. Each pass that
    reads the parameter (the forward pass, up to the replica's `nn.loss`,
    and the backward pass after it) reads a `dist.all_gather` of the
    ranges, reshaped, issued one group ahead: the gathers whose first read
    is the same op form one bucket, placed before the previous bucket's
    first read. The step's `dist.shard` becomes "parameters"; it computes
    the same bits as before.
  }];
  let dependentDialects = ["::dpc::dist::DistDialect",
                           "::dpc::nn::NNDialect"];
}

def BucketGradients : Pass<"dpc-bucket-gradients", "mlir::func::FuncOp"> {
  let summary = "Group gradient all-reduces into buckets, in backward order";
  let description = [{
    Sets `bucket = N` on every gradient `dist.all_reduce` of a partitioned
    step (not on those marked `dist.statistics`, which batch norm waits
    for): in
    program order (the order the backward pass produces gradients), the
    first bucket holds up to `first-bucket-mb` MiB, the others up to
    `bucket-mb` MiB (a larger gradient gets a bucket of its own). Codegen
    reduces each bucket with one collective on the communication stream as
    soon as its last gradient exists.

    The parameter `dist.all_gather`s of a sharded step (after the updates,
    dpc-shard-optimizer-state) and its gradient `dist.reduce_scatter`s
    (dpc-shard-gradients) are bucketed the same way, in program order,
    with bucket numbers of their own (a bucket holds one kind of
    collective). A collective that has a bucket already keeps it (the
    parameter gathers of dpc-shard-parameters, grouped by the op that
    reads them first); the others are numbered after it.
  }];
  let options = [
    Option<"firstBucketMb", "first-bucket-mb", "double", /*default=*/"1.0",
           "The first bucket's size (MiB)">,
    Option<"bucketMb", "bucket-mb", "double", /*default=*/"25.0",
           "Every other bucket's size (MiB)">,
  ];
}

def Rematerialize : Pass<"dpc-rematerialize", "mlir::ModuleOp"> {
  let summary = "Recompute forward values in the backward pass to save memory";
  let description = [{
    Gradient checkpointing, planned statically, on `@train_step` (and
    `@accum_first` and `@accum_step`, each on its own, with gradient
    accumulation: a device's steps share its arena), after the
    data-parallel partition (each replica is planned on its own, for its
    device's share of the batch) and before the lowering. A forward op
    chosen for recomputation gets a clone (unit attribute `nn.remat`) right
    before the first backward op that reads it; the backward ops read the
    clone, so the original is freed after its last forward use. Clones read
    kept values or other clones; a recomputed batch norm writes its running
    statistics to a scratch zero tensor (also `nn.remat`), so the step
    updates them once. Collectives are never recomputed: their results are
    kept.

    With `segments=K`, each replica's forward ops are cut into K runs of
    equal op count; the values that cross from one run into a later one are
    kept and every other forward value of the first K - 1 runs is recomputed
    (the last run's are needed at once, as in torch's
    `checkpoint_sequential`), so the backward pass holds one run's values
    at a time.

    With `budget=SIZE` ("1.5GiB", "300MiB", bytes; or `auto`: the
    `DPC_DEVICE_MEMORY` environment variable if set, else 75% of the
    physical memory shared by the CPU devices), every replica's planned peak
    (training state plus its largest arena, as the lowering plans it) must
    fit. Greedy: while a replica's peak is over, among the forward values
    alive at its peak that the backward pass reads, recompute those with the
    most bytes freed per recomputed FLOP (a value's FLOPs include those of
    the unkept values it needs), until the bytes freed cover the excess;
    plan again and repeat; what a recomputation reads is kept from then on,
    so recomputation chains stay short (in practice: cheap values such as
    batch norm, relu and additions, recomputed from kept convolution
    outputs). If that cannot fit, the segment schemes (K = 2 to 32) are tried and the one
    that fits with the fewest recomputed FLOPs wins. If none fits, the pass
    fails with the smallest peak any of them reached, or with `best-effort`
    applies the recomputation that reached it (for a search over plans,
    such as dpc compile --memory-budget, to compare).
  }];
  // Trial plans build exec ops in a scratch module.
  let dependentDialects = ["::dpc::nn::NNDialect", "::dpc::exec::ExecDialect",
                           "::mlir::memref::MemRefDialect"];
  let options = [
    Option<"segments", "segments", "int64_t", /*default=*/"0",
           "Checkpoint this many evenly spaced segments (> 1)">,
    Option<"budget", "budget", "std::string", /*default=*/"\"\"",
           "The per-device memory budget: SIZE (1.5GiB, 300MiB, bytes) "
           "or auto">,
    Option<"bestEffort", "best-effort", "bool", /*default=*/"false",
           "With budget, when nothing fits, recompute what reached the "
           "smallest peak instead of failing">,
  ];
}

#endif // DPC_PASSES_PASSES_TD
