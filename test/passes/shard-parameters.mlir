// ZeRO-3 after ZeRO-2: the parameters stay cut into the ranges of their
// updates between steps. Each parameter argument is flattened and
// scattered instead of replicated, the updates write the ranges the
// replicas keep, and each pass that reads a parameter reads an all-gather
// of the ranges, issued one group (the parameters an op reads first) ahead.

// Three devices, SGD with momentum: w1 (40 elements) cut 14, 13, 13, b1
// (8) 3, 3, 2, w2 (48) 16, 16, 16, w3 (18) 6, 6, 6, b3 (3) 1, 1, 1.
// RUN: dpc-opt %s -nn-set-batch=batch=6 -nn-build-train-step="momentum=0.9" -dpc-partition-data-parallel="devices=cpu:0,cpu:1,cpu:2" -dpc-shard-optimizer-state="stateless=true" -dpc-shard-gradients -dpc-shard-parameters | FileCheck %s

// The reduce-scatters are bucketed as before; the gathers keep the buckets
// this pass gave them.
// RUN: dpc-opt %s -nn-set-batch=batch=6 -nn-build-train-step="momentum=0.9" -dpc-partition-data-parallel="devices=cpu:0,cpu:1,cpu:2" -dpc-shard-optimizer-state="stateless=true" -dpc-shard-gradients -dpc-shard-parameters -dpc-bucket-gradients="first-bucket-mb=0.0002 bucket-mb=0.00015" | FileCheck %s --check-prefix=BUCKET

// With --grad-accum the accumulation steps gather the parameters too, and
// keep their whole gradient accumulators.
// RUN: dpc-opt %s -nn-build-train-step="momentum=0.9" -dpc-accumulate-gradients=grad-accum=2 -nn-set-batch=batch=6 -dpc-partition-data-parallel="devices=cpu:0,cpu:1" -dpc-shard-optimizer-state="stateless=true" -dpc-shard-gradients -dpc-shard-parameters | FileCheck %s --check-prefix=ACCUM

// One device keeps the whole parameters: the step is left as it is.
// RUN: dpc-opt %s -nn-set-batch=batch=6 -nn-build-train-step="momentum=0.9" -dpc-partition-data-parallel="devices=cpu:0" -dpc-shard-optimizer-state -dpc-shard-gradients -dpc-shard-parameters | FileCheck %s --check-prefix=ONE

// Only after dpc-shard-gradients, and once.
// RUN: not dpc-opt %s -nn-set-batch=batch=6 -nn-build-train-step="momentum=0.9" -dpc-partition-data-parallel="devices=cpu:0,cpu:1" -dpc-shard-optimizer-state -dpc-shard-parameters 2>&1 | FileCheck %s --check-prefix=FIRST
// RUN: not dpc-opt %s -nn-set-batch=batch=6 -nn-build-train-step="momentum=0.9" -dpc-partition-data-parallel="devices=cpu:0,cpu:1" -dpc-shard-optimizer-state -dpc-shard-gradients -dpc-shard-parameters -dpc-shard-parameters 2>&1 | FileCheck %s --check-prefix=TWICE

// CHECK-LABEL: func.func @eval_step
// CHECK-SAME: dist.shard = "parameters"
// CHECK-NOT: dist.replicate
// CHECK: %[[W1FLAT:.*]] = nn.reshape %arg2 {shape = array<i64: 40>} : (tensor<8x5xf32>) -> tensor<40xf32>
// CHECK-NEXT: %[[W1:.*]]:3 = dist.scatter %[[W1FLAT]] {sizes = array<i64: 14, 13, 13>}
// CHECK: %[[B1:.*]]:3 = dist.scatter %arg3 {sizes = array<i64: 3, 3, 2>}
// CHECK: %[[G:.*]]:3 = dist.all_gather %[[W1]]#0, %[[W1]]#1, %[[W1]]#2 {bucket = 0 : i64} : tensor<14xf32>, tensor<13xf32>, tensor<13xf32> -> tensor<40xf32>, tensor<40xf32>, tensor<40xf32>
// CHECK-NEXT: %[[W1R0:.*]] = nn.reshape %[[G]]#0 {dist.replica = 0 : i64, shape = array<i64: 8, 5>}
// CHECK: dist.all_gather %[[B1]]#0, %[[B1]]#1, %[[B1]]#2 {bucket = 0 : i64}
// CHECK: nn.linear %{{.*}}, %[[W1R0]], %{{.*}} {dist.replica = 0 : i64}
// CHECK: dist.all_gather {{.*}} {bucket = 2 : i64}
// CHECK: dist.all_gather {{.*}} {bucket = 2 : i64}
// CHECK-NOT: dist.all_gather
// CHECK: return

// CHECK-LABEL: func.func @train_step
// CHECK-SAME: -> (tensor<3xf32> {nn.output = "loss"}, tensor<3xi64> {nn.output = "correct"}, tensor<14xf32> {dist.replica = 0 : i64, nn.param_update = "w1"}, tensor<13xf32> {dist.replica = 1 : i64, nn.param_update = "w1"}
// CHECK-SAME: dist.shard = "parameters"
// CHECK: %[[LR:.*]]:3 = dist.replicate %arg2 : tensor<f32>
// CHECK-NOT: dist.replicate
// CHECK: %[[W1:.*]]:3 = dist.scatter %{{.*}} {sizes = array<i64: 14, 13, 13>}
// CHECK: %[[W2:.*]]:3 = dist.scatter %{{.*}} {sizes = array<i64: 16, 16, 16>}
// CHECK: %[[W3:.*]]:3 = dist.scatter %{{.*}} {sizes = array<i64: 6, 6, 6>}
// CHECK: %[[B3:.*]]:3 = dist.scatter %arg7 {sizes = array<i64: 1, 1, 1>}
// The forward pass: w1 and b1 (read first by the first linear) in bucket 0,
// w2 in bucket 1, both before the first linear; w3 and b3 a layer ahead,
// after it and before w2's matmul.
// CHECK: dist.all_gather %[[W1]]#0, {{.*}} {bucket = 0 : i64}
// CHECK: dist.all_gather {{.*}} {bucket = 0 : i64}
// CHECK: %[[W2F:.*]]:3 = dist.all_gather %[[W2]]#0, %[[W2]]#1, %[[W2]]#2 {bucket = 1 : i64}
// CHECK-NOT: dist.all_gather
// CHECK: nn.linear {{.*}} {dist.replica = 2 : i64}
// CHECK: dist.all_gather %[[W3]]#0, {{.*}} {bucket = 2 : i64}
// CHECK: dist.all_gather %[[B3]]#0, {{.*}} {bucket = 2 : i64}
// CHECK-NOT: dist.all_gather
// CHECK: nn.matmul
// CHECK: %[[LOSS:.*]] = nn.loss cross_entropy
// The backward pass gathers again, last layer first: w3 (b3's gradient
// needs no b3), and w2 a layer ahead; w1 not at all (x has no gradient).
// CHECK: nn.loss_grad
// CHECK: dist.all_gather %[[W3]]#0, {{.*}} {bucket = 3 : i64}
// CHECK: dist.all_gather %[[W2]]#0, {{.*}} {bucket = 4 : i64}
// CHECK-NOT: dist.all_gather
// The updates write each replica's range of the parameter, which the step
// returns: no gather after them.
// CHECK: %[[NEW_W1:.*]], %{{.*}} = nn.sgd_update %[[W1]]#0, %{{.*}}, %[[LR]]#0, %{{.*}} {dist.replica = 0 : i64, momentum = 9.000000e-01 : f64} : (tensor<14xf32>
// CHECK-NOT: dist.all_gather
// CHECK: return %{{.*}}, %{{.*}}, %[[NEW_W1]],

// BUCKET-LABEL: func.func @train_step
// BUCKET: dist.all_gather {{.*}} {bucket = 0 : i64}
// BUCKET: dist.all_gather {{.*}} {bucket = 4 : i64}
// BUCKET: dist.reduce_scatter {{.*}} {bucket = 0 : i64, reduction = "sum", sizes = array<i64: 6, 6, 6>}
// BUCKET: dist.reduce_scatter {{.*}} {bucket = 0 : i64, reduction = "sum", sizes = array<i64: 1, 1, 1>}

// ACCUM-LABEL: func.func @train_step
// ACCUM-SAME: dist.shard = "parameters"
// ACCUM: dist.reduce_scatter
// ACCUM-LABEL: func.func @accum_first
// ACCUM-SAME: dist.shard = "parameters"
// ACCUM: dist.scatter %{{.*}} {sizes = array<i64: 20, 20>}
// ACCUM: dist.all_gather {{.*}} {bucket = 0 : i64}
// ACCUM: nn.loss_grad
// ACCUM: dist.all_gather
// ACCUM-NOT: dist.reduce_scatter
// ACCUM: return
// ACCUM-LABEL: func.func @accum_step
// ACCUM-SAME: dist.shard = "parameters"

// ONE-LABEL: func.func @train_step
// ONE-NOT: dist.shard
// ONE-NOT: dist.all_gather
// ONE: return

// FIRST: error: @train_step's gradients are not sharded: run dpc-shard-gradients first
// TWICE: error: @train_step's parameters are sharded already

func.func @forward(%x: tensor<?x5xf32> {nn.input = "x"}, %w1: tensor<8x5xf32> {nn.param = "w1"}, %b1: tensor<8xf32> {nn.param = "b1"}, %w2: tensor<8x6xf32> {nn.param = "w2"}, %w3: tensor<3x6xf32> {nn.param = "w3"}, %b3: tensor<3xf32> {nn.param = "b3"}) -> tensor<?x3xf32> {
  %0 = nn.linear %x, %w1, %b1 : (tensor<?x5xf32>, tensor<8x5xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %1 = nn.relu %0 : tensor<?x8xf32>
  %2 = nn.matmul %1, %w2 : (tensor<?x8xf32>, tensor<8x6xf32>) -> tensor<?x6xf32>
  %3 = nn.relu %2 : tensor<?x6xf32>
  %4 = nn.linear %3, %w3, %b3 : (tensor<?x6xf32>, tensor<3x6xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  return %4 : tensor<?x3xf32>
}
