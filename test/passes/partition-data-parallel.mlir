// RUN: dpc-opt %s -split-input-file -nn-set-batch=batch=8 -nn-build-train-step="momentum=0.9" -dpc-partition-data-parallel="devices=cpu:0,cpu:1" | FileCheck %s
// RUN: dpc-opt %s -split-input-file -nn-set-batch=batch=8 -nn-build-train-step -dpc-partition-data-parallel="devices=cpu:0,cuda:1 split=3,5" | FileCheck %s --check-prefix=SPLIT
// RUN: dpc-opt %s -split-input-file -nn-set-batch=batch=10 -nn-build-train-step -dpc-partition-data-parallel="devices=cpu:0,cpu:1,cpu:2,cpu:3" | FileCheck %s --check-prefix=FOUR
// RUN: dpc-opt %s -split-input-file -nn-set-batch=batch=3 -nn-build-train-step -dpc-partition-data-parallel="devices=cpu:0,cpu:1,cpu:2,cpu:3" | FileCheck %s --check-prefix=EMPTY

// One device: nothing is split or cloned; the steps only record where they
// run (and the batch, all of it), for codegen and the plan.
// RUN: dpc-opt %s -split-input-file -nn-set-batch=batch=8 -nn-build-train-step -dpc-partition-data-parallel="devices=cuda:0" | FileCheck %s --check-prefix=ONE
// ONE-LABEL: func.func @eval_step
// ONE-SAME: attributes {dist.devices = ["cuda:0"], dist.split = array<i64: 8>}
// ONE-NOT: dist.scatter
// ONE-NOT: dist.replica
// ONE-LABEL: func.func @train_step
// ONE-SAME: attributes {dist.devices = ["cuda:0"], dist.split = array<i64: 8>}
// ONE-NOT: dist.all_reduce

// An MLP. @forward is left alone; @eval_step keeps its arguments and gathers
// its outputs: scalars into one entry per device, logits into the batch.
// CHECK-LABEL: func.func @forward
// CHECK-NOT: dist.
// CHECK-LABEL: func.func @eval_step
// CHECK-SAME: (%[[X:arg0]]: tensor<8x3x2x2xf32> {nn.input = "x"}, %[[Y:arg1]]: tensor<8xi64> {nn.labels}, %[[W1:arg2]]: tensor<16x12xf32> {nn.param = "fc1.weight"}
// CHECK-SAME: -> (tensor<2xf32> {nn.output = "loss"}, tensor<2xi64> {nn.output = "correct"}, tensor<8x3xf32> {nn.output = "logits"})
// CHECK-SAME: attributes {dist.devices = ["cpu:0", "cpu:1"], dist.split = array<i64: 4, 4>}
// CHECK: %[[XS:.*]]:2 = dist.scatter %[[X]] {sizes = array<i64: 4, 4>} : tensor<8x3x2x2xf32> -> tensor<4x3x2x2xf32>, tensor<4x3x2x2xf32>
// CHECK: %[[YS:.*]]:2 = dist.scatter %[[Y]] {sizes = array<i64: 4, 4>} : tensor<8xi64> -> tensor<4xi64>, tensor<4xi64>
// CHECK: %[[W1S:.*]]:2 = dist.replicate %[[W1]] : tensor<16x12xf32> -> tensor<16x12xf32>, tensor<16x12xf32>
// CHECK: nn.flatten %[[XS]]#0 {dist.replica = 0 : i64} : (tensor<4x3x2x2xf32>) -> tensor<4x12xf32>
// CHECK: nn.flatten %[[XS]]#1 {dist.replica = 1 : i64}
// CHECK: %[[L0:.*]] = nn.linear %{{.*}}, %{{.*}}#0 {dist.replica = 0 : i64} : (tensor<4x16xf32>, tensor<3x16xf32>) -> tensor<4x3xf32>
// CHECK: %[[L1:.*]] = nn.linear %{{.*}}, %{{.*}}#1 {dist.replica = 1 : i64}
// CHECK: %[[CE0:.*]] = nn.loss cross_entropy %[[L0]], %[[YS]]#0 {dist.replica = 0 : i64}
// CHECK: %[[CE1:.*]] = nn.loss cross_entropy %[[L1]], %[[YS]]#1 {dist.replica = 1 : i64}
// CHECK: %[[C0:.*]] = nn.correct_count %[[L0]], %[[YS]]#0
// CHECK: %[[C1:.*]] = nn.correct_count %[[L1]], %[[YS]]#1
// No reweighting: a replica's loss averages over the global batch (see the
// dist dialect), so the gathered entries sum to the global mean.
// CHECK-NOT: nn.mul
// CHECK: %[[LOSS:.*]] = dist.gather %[[CE0]], %[[CE1]] : tensor<f32>, tensor<f32> -> tensor<2xf32>
// CHECK: %[[CORRECT:.*]] = dist.gather %[[C0]], %[[C1]] : tensor<i64>, tensor<i64> -> tensor<2xi64>
// CHECK: %[[LOGITS:.*]] = dist.gather %[[L0]], %[[L1]] : tensor<4x3xf32>, tensor<4x3xf32> -> tensor<8x3xf32>
// CHECK: return %[[LOSS]], %[[CORRECT]], %[[LOGITS]]

// @train_step: same arguments; each state update is returned per replica.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: (%[[X:arg0]]: tensor<8x3x2x2xf32> {nn.input = "x"}, %[[Y:arg1]]: tensor<8xi64> {nn.labels}, %[[LR:arg2]]: tensor<f32> {nn.lr}, %[[W1:arg3]]: tensor<16x12xf32> {nn.param = "fc1.weight"}, %{{.*}}: tensor<16xf32> {nn.param = "fc1.bias"}, %{{.*}}: tensor<3x16xf32> {nn.param = "fc2.weight"}, %[[M1:arg6]]: tensor<16x12xf32> {nn.opt_state = "fc1.weight.momentum_buffer"}
// CHECK-SAME: -> (tensor<2xf32> {nn.output = "loss"}, tensor<2xi64> {nn.output = "correct"},
// CHECK-SAME: tensor<16x12xf32> {dist.replica = 0 : i64, nn.param_update = "fc1.weight"}, tensor<16x12xf32> {dist.replica = 1 : i64, nn.param_update = "fc1.weight"},
// CHECK-SAME: tensor<3x16xf32> {dist.replica = 1 : i64, nn.opt_state_update = "fc2.weight.momentum_buffer"})
// CHECK-SAME: attributes {dist.devices = ["cpu:0", "cpu:1"], dist.split = array<i64: 4, 4>}
// CHECK: %[[XS:.*]]:2 = dist.scatter %[[X]] {sizes = array<i64: 4, 4>}
// CHECK: dist.scatter %[[Y]] {sizes = array<i64: 4, 4>}
// CHECK: %[[LRS:.*]]:2 = dist.replicate %[[LR]] : tensor<f32> -> tensor<f32>, tensor<f32>
// CHECK: %[[W1S:.*]]:2 = dist.replicate %[[W1]]
// CHECK: %[[M1S:.*]]:2 = dist.replicate %[[M1]]
// CHECK-NOT: dist.all_reduce
// Each replica seeds its loss gradient with 1, as one device would.
// CHECK: %[[SEED0:.*]] = nn.constant {dist.replica = 0 : i64} dense<1.000000e+00> : tensor<f32>
// CHECK: %[[SEED1:.*]] = nn.constant {dist.replica = 1 : i64} dense<1.000000e+00> : tensor<f32>
// CHECK: nn.loss_grad cross_entropy %{{.*}}, %{{.*}}, %[[SEED0]] {dist.replica = 0 : i64} : (tensor<4x3xf32>, tensor<4xi64>, tensor<f32>) -> tensor<4x3xf32>
// CHECK: nn.loss_grad cross_entropy %{{.*}}, %{{.*}}, %[[SEED1]] {dist.replica = 1 : i64}
// One sum per parameter gradient, right after its last replica computes it.
// CHECK: %[[DW2_0:.*]] = nn.matmul %{{.*}}, %{{.*}} {dist.replica = 0 : i64} : (tensor<3x4xf32>, tensor<4x16xf32>) -> tensor<3x16xf32>
// CHECK-NEXT: %[[DW2_1:.*]] = nn.matmul %{{.*}}, %{{.*}} {dist.replica = 1 : i64} : (tensor<3x4xf32>, tensor<4x16xf32>) -> tensor<3x16xf32>
// CHECK-NEXT: %[[DW2:.*]]:2 = dist.all_reduce %[[DW2_0]], %[[DW2_1]] {reduction = "sum"} : tensor<3x16xf32>, tensor<3x16xf32>
// CHECK: %[[DW1_1:.*]] = nn.matmul %{{.*}}, %{{.*}} {dist.replica = 1 : i64} : (tensor<16x4xf32>, tensor<4x12xf32>) -> tensor<16x12xf32>
// CHECK-NEXT: %[[DW1:.*]]:2 = dist.all_reduce %{{.*}}, %[[DW1_1]] {reduction = "sum"} : tensor<16x12xf32>, tensor<16x12xf32>
// CHECK: nn.reduce_sum {{.*}} {dims = array<i64: 0>, dist.replica = 1 : i64}
// CHECK-NEXT: %[[DB1:.*]]:2 = dist.all_reduce %{{.*}}, %{{.*}} {reduction = "sum"} : tensor<16xf32>, tensor<16xf32>
// CHECK-NOT: dist.all_reduce
// Every replica updates from the summed gradient.
// CHECK: %[[NW1_0:.*]], %[[NM1_0:.*]] = nn.sgd_update %[[W1S]]#0, %[[DW1]]#0, %[[LRS]]#0, %[[M1S]]#0 {dist.replica = 0 : i64, momentum = 9.000000e-01 : f64}
// CHECK: %[[NW1_1:.*]], %[[NM1_1:.*]] = nn.sgd_update %[[W1S]]#1, %[[DW1]]#1, %[[LRS]]#1, %[[M1S]]#1 {dist.replica = 1 : i64, momentum = 9.000000e-01 : f64}
// CHECK: nn.sgd_update %{{.*}}#0, %[[DB1]]#0
// CHECK: nn.sgd_update %{{.*}}#1, %[[DB1]]#1
// CHECK: nn.sgd_update %{{.*}}#0, %[[DW2]]#0
// CHECK: nn.sgd_update %{{.*}}#1, %[[DW2]]#1
// CHECK: %[[LOSS:.*]] = dist.gather %{{.*}}, %{{.*}} : tensor<f32>, tensor<f32> -> tensor<2xf32>
// CHECK: %[[CORRECT:.*]] = dist.gather %{{.*}}, %{{.*}} : tensor<i64>, tensor<i64> -> tensor<2xi64>
// CHECK: return %[[LOSS]], %[[CORRECT]], %[[NW1_0]], %[[NW1_1]], {{.*}}, %[[NM1_0]], %[[NM1_1]],

// An explicit uneven split.
// SPLIT-LABEL: func.func @eval_step
// SPLIT-SAME: attributes {dist.devices = ["cpu:0", "cuda:1"], dist.split = array<i64: 3, 5>}
// SPLIT: dist.scatter %arg0 {sizes = array<i64: 3, 5>} : tensor<8x3x2x2xf32> -> tensor<3x3x2x2xf32>, tensor<5x3x2x2xf32>
// SPLIT: dist.gather %{{.*}}, %{{.*}} : tensor<3x3xf32>, tensor<5x3xf32> -> tensor<8x3xf32>
// SPLIT-LABEL: func.func @train_step
// SPLIT: dist.scatter %arg0 {sizes = array<i64: 3, 5>}
// SPLIT: nn.loss_grad cross_entropy %{{.*}}, %{{.*}}, %{{.*}} {dist.replica = 0 : i64} : (tensor<3x3xf32>, tensor<3xi64>, tensor<f32>) -> tensor<3x3xf32>
// SPLIT: nn.loss_grad cross_entropy %{{.*}}, %{{.*}}, %{{.*}} {dist.replica = 1 : i64} : (tensor<5x3xf32>, tensor<5xi64>, tensor<f32>) -> tensor<5x3xf32>
// SPLIT-COUNT-3: dist.all_reduce

// torch.chunk's split of 10 over 4 devices.
// FOUR-LABEL: func.func @train_step
// FOUR-SAME: attributes {dist.devices = ["cpu:0", "cpu:1", "cpu:2", "cpu:3"], dist.split = array<i64: 3, 3, 3, 1>}
// FOUR: dist.scatter %arg0 {sizes = array<i64: 3, 3, 3, 1>} : tensor<10x3x2x2xf32> -> tensor<3x3x2x2xf32>, tensor<3x3x2x2xf32>, tensor<3x3x2x2xf32>, tensor<1x3x2x2xf32>
// FOUR: dist.all_reduce %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {reduction = "sum"} : tensor<3x16xf32>, tensor<3x16xf32>, tensor<3x16xf32>, tensor<3x16xf32>
// FOUR: dist.gather %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32> -> tensor<4xf32>

// 3 over 4 devices leaves the last one empty: it still takes part in every
// all-reduce (its loss over no rows, divided by the global batch, is 0).
// EMPTY-LABEL: func.func @train_step
// EMPTY-SAME: dist.split = array<i64: 1, 1, 1, 0>
// EMPTY: nn.flatten %{{.*}}#3 {dist.replica = 3 : i64} : (tensor<0x3x2x2xf32>) -> tensor<0x12xf32>
// EMPTY: nn.loss_grad cross_entropy %{{.*}}, %{{.*}}, %{{.*}} {dist.replica = 3 : i64} : (tensor<0x3xf32>, tensor<0xi64>, tensor<f32>) -> tensor<0x3xf32>
// EMPTY-COUNT-3: dist.all_reduce %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {reduction = "sum"}
// EMPTY: dist.gather %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32> -> tensor<4xf32>
func.func @forward(%x: tensor<?x3x2x2xf32> {nn.input = "x"},
                   %w1: tensor<16x12xf32> {nn.param = "fc1.weight"},
                   %b1: tensor<16xf32> {nn.param = "fc1.bias"},
                   %w2: tensor<3x16xf32> {nn.param = "fc2.weight"})
    -> (tensor<?x3xf32> {nn.output = "logits"}) {
  %0 = nn.flatten %x : (tensor<?x3x2x2xf32>) -> tensor<?x12xf32>
  %1 = nn.linear %0, %w1, %b1 : (tensor<?x12xf32>, tensor<16x12xf32>, tensor<16xf32>) -> tensor<?x16xf32>
  %2 = nn.relu %1 : tensor<?x16xf32>
  %3 = nn.linear %2, %w2 : (tensor<?x16xf32>, tensor<3x16xf32>) -> tensor<?x3xf32>
  return %3 : tensor<?x3xf32>
}

// -----

// Conv + batch norm: statistics stay per replica (no --sync-bn), so each
// replica returns its own running statistics; the scale and shift gradients
// are summed like any other.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[RM:arg7]]: tensor<4xf32> {nn.buffer = "bn.running_mean"}
// CHECK-SAME: tensor<4xf32> {dist.replica = 0 : i64, nn.buffer_update = "bn.running_mean"}, tensor<4xf32> {dist.replica = 1 : i64, nn.buffer_update = "bn.running_mean"}
// CHECK: %[[RMS:.*]]:2 = dist.replicate %[[RM]] : tensor<4xf32> -> tensor<4xf32>, tensor<4xf32>
// CHECK: %[[C0:.*]] = nn.conv2d %{{.*}}#0, %{{.*}}#0 {dist.replica = 0 : i64, padding = array<i64: 1, 1, 1, 1>} : (tensor<4x2x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<4x4x5x5xf32>
// CHECK: %{{.*}}, %{{.*}}, %{{.*}}, %[[NRM0:.*]], %{{.*}} = nn.batch_norm_train %[[C0]], %{{.*}}#0, %{{.*}}#0, %[[RMS]]#0, %{{.*}}#0 {dist.replica = 0 : i64}
// CHECK: %{{.*}}, %{{.*}}, %{{.*}}, %[[NRM1:.*]], %{{.*}} = nn.batch_norm_train %{{.*}}, %{{.*}}#1, %{{.*}}#1, %[[RMS]]#1, %{{.*}}#1 {dist.replica = 1 : i64}
// CHECK: %{{.*}}, %[[DS1:.*]], %[[DB1:.*]] = nn.batch_norm_grad {{.*}} {dist.replica = 1 : i64}
// CHECK-NEXT: dist.all_reduce %{{.*}}, %[[DS1]] {reduction = "sum"} : tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT: dist.all_reduce %{{.*}}, %[[DB1]] {reduction = "sum"} : tensor<4xf32>, tensor<4xf32>
// CHECK: nn.conv2d_grad_filter {{.*}} {dist.replica = 1 : i64
// CHECK-NEXT: dist.all_reduce {{.*}} : tensor<4x2x3x3xf32>, tensor<4x2x3x3xf32>
// CHECK: return {{.*}}, %[[NRM0]], %[[NRM1]],
func.func @forward(%x: tensor<?x2x5x5xf32> {nn.input = "x"},
                   %w: tensor<4x2x3x3xf32> {nn.param = "conv.weight"},
                   %s: tensor<4xf32> {nn.param = "bn.weight"},
                   %b: tensor<4xf32> {nn.param = "bn.bias"},
                   %m: tensor<4xf32> {nn.buffer = "bn.running_mean"},
                   %v: tensor<4xf32> {nn.buffer = "bn.running_var"},
                   %fc: tensor<3x16xf32> {nn.param = "fc.weight"})
    -> (tensor<?x3xf32> {nn.output = "logits"}) {
  %0 = nn.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<?x2x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<?x4x5x5xf32>
  %1 = nn.batch_norm %0, %s, %b, %m, %v : (tensor<?x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4x5x5xf32>
  %2 = nn.max_pool2d %1 {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>} : (tensor<?x4x5x5xf32>) -> tensor<?x4x2x2xf32>
  %3 = nn.flatten %2 : (tensor<?x4x2x2xf32>) -> tensor<?x16xf32>
  %4 = nn.linear %3, %fc : (tensor<?x16xf32>, tensor<3x16xf32>) -> tensor<?x3xf32>
  return %4 : tensor<?x3xf32>
}
