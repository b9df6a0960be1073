// ZeRO-1 on the partitioned step: each replica keeps one element range of
// every optimizer state tensor, updates that range of its parameter, and
// all-gathers the new parameter.

// Three devices, SGD with momentum: fc1.weight (30 elements) splits 10, 10,
// 10; fc1.bias (5) 2, 2, 1 -- an uneven split.
// RUN: dpc-opt %s -split-input-file -nn-set-batch=batch=6 -nn-build-train-step="momentum=0.9" -dpc-partition-data-parallel="devices=cpu:0,cpu:1,cpu:2" -dpc-shard-optimizer-state | FileCheck %s

// AdamW on two devices: both moments are sharded, the step is replicated.
// RUN: dpc-opt %s -split-input-file -nn-set-batch=batch=6 -nn-build-train-step="optimizer=adamw" -dpc-partition-data-parallel="devices=cpu:0,cpu:1" -dpc-shard-optimizer-state | FileCheck %s --check-prefix=ADAMW

// SGD without momentum has no state: nothing changes but the mark.
// RUN: dpc-opt %s -split-input-file -nn-set-batch=batch=6 -nn-build-train-step -dpc-partition-data-parallel="devices=cpu:0,cpu:1" -dpc-shard-optimizer-state | FileCheck %s --check-prefix=PLAIN

// One device keeps the whole state: the step is left as it is.
// RUN: dpc-opt %s -split-input-file -nn-set-batch=batch=6 -nn-build-train-step="momentum=0.9" -dpc-partition-data-parallel="devices=cpu:0" -dpc-shard-optimizer-state | FileCheck %s --check-prefix=ONE

// The all-gathers are bucketed like the gradient all-reduces, with numbers
// of their own: two tiny parameters share the first bucket.
// RUN: dpc-opt %s -split-input-file -nn-set-batch=batch=6 -nn-build-train-step="momentum=0.9" -dpc-partition-data-parallel="devices=cpu:0,cpu:1,cpu:2" -dpc-shard-optimizer-state -dpc-bucket-gradients | FileCheck %s --check-prefix=BUCKET

// CHECK-LABEL: func.func @eval_step
// CHECK-NOT: dist.all_gather
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[W:arg3]]: tensor<5x6xf32> {nn.param = "fc1.weight"}
// CHECK-SAME: %[[MW:arg5]]: tensor<5x6xf32> {nn.opt_state = "fc1.weight.momentum_buffer"}
// CHECK-SAME: %[[MB:arg6]]: tensor<5xf32> {nn.opt_state = "fc1.bias.momentum_buffer"}
// The state updates are each replica's range:
// CHECK-SAME: tensor<10xf32> {dist.replica = 0 : i64, nn.opt_state_update = "fc1.weight.momentum_buffer"}
// CHECK-SAME: tensor<10xf32> {dist.replica = 2 : i64, nn.opt_state_update = "fc1.weight.momentum_buffer"}
// CHECK-SAME: tensor<2xf32> {dist.replica = 0 : i64, nn.opt_state_update = "fc1.bias.momentum_buffer"}
// CHECK-SAME: tensor<1xf32> {dist.replica = 2 : i64, nn.opt_state_update = "fc1.bias.momentum_buffer"}
// CHECK-SAME: dist.shard = "optimizer"
// CHECK: %[[WS:.*]]:3 = dist.replicate %[[W]]
// CHECK: %[[MWF:.*]] = nn.reshape %[[MW]] {shape = array<i64: 30>} : (tensor<5x6xf32>) -> tensor<30xf32>
// CHECK: %[[MWS:.*]]:3 = dist.scatter %[[MWF]] {sizes = array<i64: 10, 10, 10>} : tensor<30xf32> -> tensor<10xf32>, tensor<10xf32>, tensor<10xf32>
// A 1-D tensor needs no reshape.
// CHECK-NEXT: %[[MBS:.*]]:3 = dist.scatter %[[MB]] {sizes = array<i64: 2, 2, 1>} : tensor<5xf32> -> tensor<2xf32>, tensor<2xf32>, tensor<1xf32>
// CHECK-NOT: dist.replicate %[[MW]]
// The gradient is still all-reduced whole; replica 1 takes its range of it
// and of its copy of the parameter.
// CHECK: %[[GW:.*]]:3 = dist.all_reduce
// CHECK: %[[PF1:.*]] = nn.reshape %[[WS]]#1 {dist.replica = 1 : i64, shape = array<i64: 30>}
// CHECK: %[[PP1:.*]]:3 = nn.split %[[PF1]] {axis = 0 : i64, dist.replica = 1 : i64, sizes = array<i64: 10, 10, 10>}
// CHECK: %[[GF1:.*]] = nn.reshape %[[GW]]#1 {dist.replica = 1 : i64, shape = array<i64: 30>}
// CHECK: %[[GP1:.*]]:3 = nn.split %[[GF1]] {axis = 0 : i64, dist.replica = 1 : i64, sizes = array<i64: 10, 10, 10>}
// CHECK: %[[NEW1:.*]], %[[M1:.*]] = nn.sgd_update %[[PP1]]#1, %[[GP1]]#1, %{{.*}}#1, %[[MWS]]#1 {dist.replica = 1 : i64, momentum = 9.000000e-01 : f64} : (tensor<10xf32>, tensor<10xf32>, tensor<f32>, tensor<10xf32>) -> (tensor<10xf32>, tensor<10xf32>)
// CHECK: %[[NEW2:.*]], %[[M2:.*]] = nn.sgd_update %{{.*}}#2, %{{.*}}#2, %{{.*}}#2, %[[MWS]]#2 {dist.replica = 2 : i64
// CHECK: %[[ALL:.*]]:3 = dist.all_gather %{{.*}}, %[[NEW1]], %[[NEW2]] : tensor<10xf32>, tensor<10xf32>, tensor<10xf32> -> tensor<30xf32>, tensor<30xf32>, tensor<30xf32>
// CHECK: %[[W0:.*]] = nn.reshape %[[ALL]]#0 {dist.replica = 0 : i64, shape = array<i64: 5, 6>} : (tensor<30xf32>) -> tensor<5x6xf32>
// The bias: replica 2's range is one element.
// CHECK: nn.sgd_update %{{.*}}#2, %{{.*}}#2, %{{.*}}#2, %[[MBS]]#2 {dist.replica = 2 : i64, momentum = 9.000000e-01 : f64} : (tensor<1xf32>, tensor<1xf32>, tensor<f32>, tensor<1xf32>) -> (tensor<1xf32>, tensor<1xf32>)
// CHECK: dist.all_gather {{.*}} : tensor<2xf32>, tensor<2xf32>, tensor<1xf32> -> tensor<5xf32>, tensor<5xf32>, tensor<5xf32>
// CHECK: return {{.*}}%[[W0]], {{.*}}%[[M1]], %[[M2]]

// ADAMW-LABEL: func.func @train_step
// ADAMW: nn.reshape %{{.*}} {shape = array<i64: 30>}
// ADAMW-NEXT: %[[AVG:.*]]:2 = dist.scatter {{.*}} {sizes = array<i64: 15, 15>}
// ADAMW-NEXT: nn.reshape %{{.*}} {shape = array<i64: 30>}
// ADAMW-NEXT: %[[SQ:.*]]:2 = dist.scatter {{.*}} {sizes = array<i64: 15, 15>}
// ADAMW: nn.adamw_update %{{.*}}#0, %{{.*}}#0, %[[AVG]]#0, %[[SQ]]#0, {{.*}} {dist.replica = 0 : i64} : (tensor<15xf32>, tensor<15xf32>, tensor<15xf32>, tensor<15xf32>, tensor<i64>, tensor<f32>) -> (tensor<15xf32>, tensor<15xf32>, tensor<15xf32>)
// ADAMW: nn.adamw_update {{.*}} {dist.replica = 1 : i64}
// ADAMW: dist.all_gather {{.*}} : tensor<15xf32>, tensor<15xf32> -> tensor<30xf32>, tensor<30xf32>

// PLAIN-LABEL: func.func @train_step
// PLAIN-SAME: dist.shard = "optimizer"
// PLAIN-NOT: dist.all_gather
// PLAIN: nn.sgd_update {{.*}} : (tensor<5x6xf32>, tensor<5x6xf32>, tensor<f32>) -> tensor<5x6xf32>

// ONE-LABEL: func.func @train_step
// ONE-NOT: dist.shard
// ONE-NOT: dist.all_gather
// ONE: nn.sgd_update {{.*}} : (tensor<5x6xf32>, tensor<5x6xf32>, tensor<f32>, tensor<5x6xf32>) -> (tensor<5x6xf32>, tensor<5x6xf32>)

// BUCKET-LABEL: func.func @train_step
// BUCKET: dist.all_reduce {{.*}} {bucket = 0 : i64, reduction = "sum"}
// BUCKET: dist.all_gather {{.*}} {bucket = 0 : i64} : tensor<10xf32>
// BUCKET: dist.all_gather {{.*}} {bucket = 0 : i64} : tensor<2xf32>
func.func @forward(%x: tensor<?x6xf32> {nn.input = "x"},
                   %w1: tensor<5x6xf32> {nn.param = "fc1.weight"},
                   %b1: tensor<5xf32> {nn.param = "fc1.bias"})
    -> (tensor<?x5xf32> {nn.output = "logits"}) {
  %0 = nn.linear %x, %w1, %b1 : (tensor<?x6xf32>, tensor<5x6xf32>, tensor<5xf32>) -> tensor<?x5xf32>
  return %0 : tensor<?x5xf32>
}
