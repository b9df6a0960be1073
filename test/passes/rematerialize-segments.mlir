// RUN: dpc-opt %s -split-input-file -nn-build-train-step -dpc-rematerialize="segments=2" | FileCheck %s
// RUN: dpc-opt %s -split-input-file -nn-set-batch=batch=64 -nn-build-train-step -dpc-partition-data-parallel="devices=cpu:0,cpu:1" -dpc-rematerialize="segments=2" | FileCheck %s --check-prefix=DP

// Seven forward ops in two runs of equal count: fc1, relu, fc2, sigmoid
// (the first), fc3, relu, fc4 (the last, needed at once, kept). a2 crosses
// into the second run: kept. Inside the first, h1 and a1 are recomputed
// from x where the backward pass reaches them, once each; h2 is not
// needed (sigmoid's gradient reads a2), so fc2 is not recomputed.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[A2:.*]] = nn.sigmoid
// CHECK-NOT: nn.remat
// CHECK: nn.sigmoid_grad %{{.*}}, %[[A2]]
// CHECK: %[[H1R:.*]] = nn.linear %arg0, %arg3 {nn.remat}
// CHECK-NEXT: %[[A1R:.*]] = nn.relu %[[H1R]] {nn.remat}
// CHECK-NEXT: nn.matmul %{{.*}}, %[[A1R]]
// CHECK-NEXT: nn.relu_grad %{{.*}}, %[[H1R]]
// CHECK-NOT: nn.remat
// CHECK: return

// Partitioned: each replica recomputes its own values.
// DP-LABEL: func.func @train_step
// DP: %[[H1R0:.*]] = nn.linear %{{.*}}#0, %{{.*}}#0 {dist.replica = 0 : i64, nn.remat}
// DP-NEXT: nn.relu %[[H1R0]] {dist.replica = 0 : i64, nn.remat}
// DP: %[[H1R1:.*]] = nn.linear %{{.*}}#1, %{{.*}}#1 {dist.replica = 1 : i64, nn.remat}
// DP-NEXT: nn.relu %[[H1R1]] {dist.replica = 1 : i64, nn.remat}
// DP: nn.relu_grad %{{.*}}, %[[H1R0]] {dist.replica = 0 : i64}
// DP: nn.relu_grad %{{.*}}, %[[H1R1]] {dist.replica = 1 : i64}
func.func @forward(%x: tensor<64x16xf32> {nn.input = "x"},
                   %w1: tensor<32x16xf32> {nn.param = "fc1.weight"},
                   %w2: tensor<32x32xf32> {nn.param = "fc2.weight"},
                   %w3: tensor<32x32xf32> {nn.param = "fc3.weight"},
                   %w4: tensor<10x32xf32> {nn.param = "fc4.weight"})
    -> (tensor<64x10xf32> {nn.output = "logits"}) {
  %h1 = nn.linear %x, %w1 : (tensor<64x16xf32>, tensor<32x16xf32>) -> tensor<64x32xf32>
  %a1 = nn.relu %h1 : tensor<64x32xf32>
  %h2 = nn.linear %a1, %w2 : (tensor<64x32xf32>, tensor<32x32xf32>) -> tensor<64x32xf32>
  %a2 = nn.sigmoid %h2 : tensor<64x32xf32>
  %h3 = nn.linear %a2, %w3 : (tensor<64x32xf32>, tensor<32x32xf32>) -> tensor<64x32xf32>
  %a3 = nn.relu %h3 : tensor<64x32xf32>
  %h4 = nn.linear %a3, %w4 : (tensor<64x32xf32>, tensor<10x32xf32>) -> tensor<64x10xf32>
  return %h4 : tensor<64x10xf32>
}

// -----

// Batch norm recomputed (with the convolution before it, whose output its
// gradient reads): its running statistics go to scratch zeros, so the
// step's new running statistics are the original's, updated once.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[MEAN:arg7]]: tensor<4xf32> {nn.buffer = "bn.running_mean"}, %[[VAR:arg8]]: tensor<4xf32> {nn.buffer = "bn.running_var"}
// CHECK: %{{.*}}, %{{.*}}, %{{.*}}, %[[NEWMEAN:.*]], %[[NEWVAR:.*]] = nn.batch_norm_train %{{.*}}, %arg4, %arg5, %[[MEAN]], %[[VAR]] :
// CHECK: %[[CR:.*]] = nn.conv2d %arg0, %arg3 {nn.remat
// CHECK-NEXT: %[[Z0:.*]] = nn.constant {nn.remat} dense<0.000000e+00> : tensor<4xf32>
// CHECK-NEXT: %[[Z1:.*]] = nn.constant {nn.remat} dense<0.000000e+00> : tensor<4xf32>
// CHECK-NEXT: %[[YR:.*]], %[[MR:.*]], %[[IR:.*]], %{{.*}}, %{{.*}} = nn.batch_norm_train %[[CR]], %arg4, %arg5, %[[Z0]], %[[Z1]] {nn.remat}
// CHECK-NEXT: nn.relu_grad %{{.*}}, %[[YR]]
// CHECK-NEXT: nn.batch_norm_grad %{{.*}}, %[[CR]], %arg4, %[[MR]], %[[IR]]
// CHECK: return {{.*}}, %[[NEWMEAN]], %[[NEWVAR]] :
func.func @forward(%x: tensor<8x3x8x8xf32> {nn.input = "x"},
                   %w: tensor<4x3x3x3xf32> {nn.param = "conv.weight"},
                   %g: tensor<4xf32> {nn.param = "bn.weight"},
                   %b: tensor<4xf32> {nn.param = "bn.bias"},
                   %m: tensor<4xf32> {nn.buffer = "bn.running_mean"},
                   %v: tensor<4xf32> {nn.buffer = "bn.running_var"},
                   %w2: tensor<10x256xf32> {nn.param = "fc.weight"})
    -> (tensor<8x10xf32> {nn.output = "logits"}) {
  %c = nn.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<8x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<8x4x8x8xf32>
  %y = nn.batch_norm %c, %g, %b, %m, %v : (tensor<8x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<8x4x8x8xf32>
  %r = nn.relu %y : tensor<8x4x8x8xf32>
  %f = nn.flatten %r : (tensor<8x4x8x8xf32>) -> tensor<8x256xf32>
  %o = nn.linear %f, %w2 : (tensor<8x256xf32>, tensor<10x256xf32>) -> tensor<8x10xf32>
  return %o : tensor<8x10xf32>
}
