// RUN: dpc-opt %s -nn-set-batch=batch=4 -nn-build-train-step="momentum=0.9" -dpc-accumulate-gradients=grad-accum=2 | FileCheck %s
// RUN: dpc-opt %s -nn-set-batch=batch=4 -nn-build-train-step -dpc-accumulate-gradients=grad-accum=3 -dpc-partition-data-parallel="devices=cpu:0,cpu:1" | FileCheck %s --check-prefix=DIST
// RUN: dpc-opt %s -nn-set-batch=batch=4 -nn-build-train-step -dpc-accumulate-gradients=grad-accum=1 | FileCheck %s --check-prefix=ONE

func.func @forward(%x: tensor<?x12xf32> {nn.input = "x"},
                   %w1: tensor<16x12xf32> {nn.param = "fc1.weight"},
                   %w2: tensor<3x16xf32> {nn.param = "fc2.weight"})
    -> (tensor<?x3xf32> {nn.output = "logits"}) {
  %1 = nn.linear %x, %w1 : (tensor<?x12xf32>, tensor<16x12xf32>) -> tensor<?x16xf32>
  %2 = nn.relu %1 : tensor<?x16xf32>
  %3 = nn.linear %2, %w2 : (tensor<?x16xf32>, tensor<3x16xf32>) -> tensor<?x3xf32>
  return %3 : tensor<?x3xf32>
}

// CHECK: module attributes {dpc.grad_accum = 2 : i64}

// The last micro-batch updates with accumulator + its own gradient, added
// where the gradient is complete (before the next layer's backward).
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[W1:arg[0-9]+]]: tensor<16x12xf32> {nn.param = "fc1.weight"}, %[[W2:arg[0-9]+]]: tensor<3x16xf32> {nn.param = "fc2.weight"}
// CHECK-SAME: %[[A1:arg[0-9]+]]: tensor<16x12xf32> {nn.opt_state = "fc1.weight.grad_accum"}, %[[A2:arg[0-9]+]]: tensor<3x16xf32> {nn.opt_state = "fc2.weight.grad_accum"}
// CHECK-SAME: -> (tensor<f32> {nn.output = "loss"}, tensor<i64> {nn.output = "correct"}, tensor<16x12xf32> {nn.param_update = "fc1.weight"}, tensor<3x16xf32> {nn.param_update = "fc2.weight"}, tensor<16x12xf32> {nn.opt_state_update = "fc1.weight.momentum_buffer"}, tensor<3x16xf32> {nn.opt_state_update = "fc2.weight.momentum_buffer"})
// CHECK: %[[DW2:.*]] = nn.matmul {{.*}} : (tensor<3x4xf32>, tensor<4x16xf32>)
// CHECK-NEXT: %[[G2:.*]] = nn.add %[[A2]], %[[DW2]]
// CHECK-NEXT: nn.relu_grad
// CHECK: %[[DW1:.*]] = nn.matmul {{.*}} : (tensor<16x4xf32>, tensor<4x12xf32>)
// CHECK-NEXT: %[[G1:.*]] = nn.add %[[A1]], %[[DW1]]
// CHECK-NEXT: nn.sgd_update %[[W1]], %[[G1]]
// CHECK-NEXT: nn.sgd_update %[[W2]], %[[G2]]

// The other micro-batches: no lr, no optimizer state but the accumulators,
// no updates; the first restarts the sums.
// CHECK-LABEL: func.func @accum_first
// CHECK-SAME: (%{{.*}}: tensor<4x12xf32> {nn.input = "x"}, %{{.*}}: tensor<4xi64> {nn.labels}, %{{.*}}: tensor<16x12xf32> {nn.param = "fc1.weight"}, %{{.*}}: tensor<3x16xf32> {nn.param = "fc2.weight"}, %[[F1:arg[0-9]+]]: tensor<16x12xf32> {nn.opt_state = "fc1.weight.grad_accum"}, %[[F2:arg[0-9]+]]: tensor<3x16xf32> {nn.opt_state = "fc2.weight.grad_accum"})
// CHECK-SAME: -> (tensor<f32> {nn.output = "loss"}, tensor<i64> {nn.output = "correct"}, tensor<16x12xf32> {nn.opt_state_update = "fc1.weight.grad_accum"}, tensor<3x16xf32> {nn.opt_state_update = "fc2.weight.grad_accum"})
// CHECK-NOT: nn.sgd_update
// CHECK: %[[S1:.*]] = nn.accumulate %[[F1]], %{{.*}} {first} : tensor<16x12xf32>
// CHECK-NEXT: %[[S2:.*]] = nn.accumulate %[[F2]], %{{.*}} {first} : tensor<3x16xf32>
// CHECK-NEXT: return %{{.*}}, %{{.*}}, %[[S1]], %[[S2]]
// CHECK-LABEL: func.func @accum_step
// CHECK-NOT: nn.sgd_update
// CHECK: nn.accumulate %{{.*}}, %{{.*}} : tensor<16x12xf32>
// CHECK-NEXT: nn.accumulate %{{.*}}, %{{.*}} : tensor<3x16xf32>

// Partitioned: only @train_step all-reduces (its summed gradients, once per
// step); the accumulation steps stay on their own devices.
// DIST-LABEL: func.func @train_step
// DIST: %[[S:.*]] = nn.add {{.*}} {dist.replica = 0 : i64}
// DIST-NEXT: %[[T:.*]] = nn.add {{.*}} {dist.replica = 1 : i64}
// DIST-NEXT: dist.all_reduce %[[S]], %[[T]] {reduction = "sum"}
// DIST-LABEL: func.func @accum_first
// DIST-NOT: dist.all_reduce
// DIST: nn.accumulate {{.*}} {dist.replica = 0 : i64, first}
// DIST-LABEL: func.func @accum_step
// DIST-NOT: dist.all_reduce
// DIST: return

// ONE-NOT: accum
// ONE-NOT: dpc.grad_accum
