// RUN: dpc-opt %s -split-input-file -nn-set-batch=batch=2 -nn-build-train-step -convert-nn-to-exec -schedule-exec-streams -plan-exec-arena -report-exec-memory -fuse-exec-kernels | FileCheck %s

// A convolution followed by a ReLU, lowered and planned, then fused.
// Evaluation: the convolution's output is read by the ReLU alone, so the
// fused call writes the ReLU's buffer (which shares no bytes with the
// convolution's input) and the convolution's buffer is gone.
// CHECK-LABEL: exec.step "eval_step"
// CHECK-NOT: "Conv2dForward"
// CHECK-NOT: "ReluForward"
// CHECK: %[[Y:.*]] = exec.arena[1152] : memref<?x4x6x6xf32>
// CHECK-NEXT: exec.kernel "Conv2dReluForward" ins(%{{.*}}, %{{.*}}, %{{.*}} : memref<?x2x6x6xf32>, memref<4x2x3x3xf32>, memref<4xf32>) outs(%[[Y]] : memref<?x4x6x6xf32>) {algorithm = "direct", dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>}
// CHECK-NEXT: exec.arena
// CHECK-NEXT: exec.kernel "GlobalAvgPool2dForward" ins(%[[Y]] :

// Training: ReluBackward reads the convolution's output as its Y (the same
// signs after the ReLU), alive until then, so the fused call writes there
// and the pooling reads it; the ReLU's own buffer is gone.
// CHECK-LABEL: exec.step "train_step"
// CHECK-NOT: "ReluForward"
// CHECK: %[[C:.*]] = exec.arena[0] : memref<?x4x6x6xf32>
// CHECK-NEXT: exec.kernel "Conv2dReluForward" ins({{.*}}) outs(%[[C]] : memref<?x4x6x6xf32>)
// CHECK-NEXT: exec.arena
// CHECK-NEXT: exec.kernel "GlobalAvgPool2dForward" ins(%[[C]] :
// CHECK: exec.kernel "ReluBackward" ins(%[[C]], %{{.*}} :
// CHECK: exec.kernel "Conv2dBackwardWeights"
func.func @forward(%x: tensor<?x2x6x6xf32> {nn.input = "x"},
                   %w: tensor<4x2x3x3xf32> {nn.param = "conv.weight"},
                   %b: tensor<4xf32> {nn.param = "conv.bias"},
                   %fc: tensor<3x4xf32> {nn.param = "fc.weight"})
    -> (tensor<?x3xf32> {nn.output = "logits"}) {
  %0 = nn.conv2d %x, %w, %b {padding = array<i64: 1, 1, 1, 1>} : (tensor<?x2x6x6xf32>, tensor<4x2x3x3xf32>, tensor<4xf32>) -> tensor<?x4x6x6xf32>
  %1 = nn.relu %0 : tensor<?x4x6x6xf32>
  %2 = nn.global_avg_pool2d %1 : (tensor<?x4x6x6xf32>) -> tensor<?x4x1x1xf32>
  %3 = nn.flatten %2 : (tensor<?x4x1x1xf32>) -> tensor<?x4xf32>
  %4 = nn.linear %3, %fc : (tensor<?x4xf32>, tensor<3x4xf32>) -> tensor<?x3xf32>
  return %4 : tensor<?x3xf32>
}

// -----

// The convolution's output is also added to the ReLU's (a residual that
// needs the pre-activation): nothing fuses.
// CHECK-LABEL: exec.step "eval_step"
// CHECK: exec.kernel "Conv2dForward"
// CHECK-NEXT: exec.arena
// CHECK-NEXT: exec.kernel "ReluForward"
// CHECK-LABEL: exec.step "train_step"
// CHECK: exec.kernel "Conv2dForward"
// CHECK-NEXT: exec.arena
// CHECK-NEXT: exec.kernel "ReluForward"
// CHECK-NOT: Conv2dReluForward
func.func @forward(%x: tensor<?x2x6x6xf32> {nn.input = "x"},
                   %w: tensor<4x2x3x3xf32> {nn.param = "conv.weight"},
                   %fc: tensor<3x4xf32> {nn.param = "fc.weight"})
    -> (tensor<?x3xf32> {nn.output = "logits"}) {
  %0 = nn.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<?x2x6x6xf32>, tensor<4x2x3x3xf32>) -> tensor<?x4x6x6xf32>
  %1 = nn.relu %0 : tensor<?x4x6x6xf32>
  %2 = nn.add %0, %1 : (tensor<?x4x6x6xf32>, tensor<?x4x6x6xf32>) -> tensor<?x4x6x6xf32>
  %3 = nn.global_avg_pool2d %2 : (tensor<?x4x6x6xf32>) -> tensor<?x4x1x1xf32>
  %4 = nn.flatten %3 : (tensor<?x4x1x1xf32>) -> tensor<?x4xf32>
  %5 = nn.linear %4, %fc : (tensor<?x4xf32>, tensor<3x4xf32>) -> tensor<?x3xf32>
  return %5 : tensor<?x3xf32>
}

// -----

// Batch norm + ReLU. Training: the fused forward writes the batch norm's
// output, which ReluBackward read, and the ReluBackward + BatchNormBackward
// pair becomes one call reading that output's signs; its DX takes exactly
// the bytes of that output (read element by element before each write).
// CHECK-LABEL: exec.step "train_step"
// CHECK-NOT: "ReluForward"
// CHECK: %[[Y:.*]] = exec.arena[1152] : memref<?x4x6x6xf32>
// CHECK: exec.kernel "BatchNormReluTrainingForward" ins(%[[X:[0-9]+]], {{.*}}) outs(%[[Y]], %[[MEAN:[0-9]+]], %[[INVSTD:[0-9]+]] :
// CHECK-NEXT: exec.arena
// CHECK-NEXT: exec.kernel "Conv2dForward" ins(%[[Y]],
// CHECK-NOT: "ReluBackward"
// CHECK: %[[DZ:.*]] = exec.arena[4608] : memref<?x4x6x6xf32>
// CHECK-NEXT: exec.kernel "Conv2dBackwardData" {{.*}} outs(%[[DZ]] :
// CHECK: %[[DX:.*]] = exec.arena[1152] : memref<?x4x6x6xf32>
// CHECK: exec.kernel "BatchNormReluBackward" ins(%[[X]], %[[Y]], %[[DZ]], %{{.*}}, %[[MEAN]], %[[INVSTD]] : {{.*}}) outs(%[[DX]],
// CHECK-NOT: "BatchNormBackward"
// CHECK: exec.kernel "Conv2dBackwardWeights" ins(%{{.*}}, %[[DX]] :
func.func @forward(%x: tensor<?x2x6x6xf32> {nn.input = "x"},
                   %w: tensor<4x2x3x3xf32> {nn.param = "conv.weight"},
                   %g: tensor<4xf32> {nn.param = "bn.weight"},
                   %b: tensor<4xf32> {nn.param = "bn.bias"},
                   %m: tensor<4xf32> {nn.buffer = "bn.running_mean"},
                   %v: tensor<4xf32> {nn.buffer = "bn.running_var"},
                   %w2: tensor<4x4x3x3xf32> {nn.param = "conv2.weight"},
                   %fc: tensor<3x4xf32> {nn.param = "fc.weight"})
    -> (tensor<?x3xf32> {nn.output = "logits"}) {
  %0 = nn.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<?x2x6x6xf32>, tensor<4x2x3x3xf32>) -> tensor<?x4x6x6xf32>
  %1 = nn.batch_norm %0, %g, %b, %m, %v : (tensor<?x4x6x6xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4x6x6xf32>
  %2 = nn.relu %1 : tensor<?x4x6x6xf32>
  %3 = nn.conv2d %2, %w2 {padding = array<i64: 1, 1, 1, 1>} : (tensor<?x4x6x6xf32>, tensor<4x4x3x3xf32>) -> tensor<?x4x6x6xf32>
  %4 = nn.global_avg_pool2d %3 : (tensor<?x4x6x6xf32>) -> tensor<?x4x1x1xf32>
  %5 = nn.flatten %4 : (tensor<?x4x1x1xf32>) -> tensor<?x4xf32>
  %6 = nn.linear %5, %fc : (tensor<?x4xf32>, tensor<3x4xf32>) -> tensor<?x3xf32>
  return %6 : tensor<?x3xf32>
}

// -----

// A residual join, relu(conv(r) + r), where r is itself a ReLU's output.
// Forward: the add and its ReLU are one AddReluForward; in evaluation it
// writes exactly over the convolution's output (each element read before
// it is written). Training: ReluBackward reads the fused output as its Y,
// and r's gradient -- the sum of the join's and the convolution's, masked
// by r's signs -- is one AddReluBackward.
// CHECK-LABEL: exec.step "eval_step"
// CHECK: %[[R:.*]] = exec.arena[1152] : memref<?x4x6x6xf32>
// CHECK-NEXT: exec.kernel "Conv2dReluForward" {{.*}} outs(%[[R]] :
// CHECK-NEXT: %[[C:.*]] = exec.arena[0] : memref<?x4x6x6xf32>
// CHECK-NEXT: exec.kernel "Conv2dForward" ins(%[[R]], {{.*}} outs(%[[C]] :
// CHECK-NEXT: %[[O:.*]] = exec.arena[0] : memref<?x4x6x6xf32>
// CHECK-NEXT: exec.kernel "AddReluForward" ins(%[[C]], %[[R]] : {{.*}}) outs(%[[O]] :
// CHECK-NOT: "ReluForward"
// CHECK-LABEL: exec.step "train_step"
// CHECK: exec.kernel "Conv2dReluForward" {{.*}} outs(%[[TR:[0-9]+]] :
// CHECK: exec.kernel "Conv2dForward" ins(%[[TR]], {{.*}} outs(%[[TC:[0-9]+]] :
// CHECK: exec.kernel "AddReluForward" ins(%[[TC]], %[[TR]] : {{.*}}) outs(%[[TO:[0-9]+]] :
// CHECK-NOT: "ReluForward"
// CHECK-NOT: "AddForward"
// CHECK: exec.kernel "ReluBackward" ins(%[[TO]], %{{.*}}) outs(%[[DS:[0-9]+]] :
// CHECK-NEXT: arena
// CHECK-NEXT: exec.kernel "Conv2dBackwardData" ins(%[[DS]], {{.*}} outs(%[[DC:[0-9]+]] :
// CHECK: exec.kernel "AddReluBackward" ins(%[[TR]], %[[DS]], %[[DC]] : {{.*}}) outs(%[[DR:[0-9]+]] :
// CHECK-NOT: "ReluBackward"
// CHECK: exec.kernel "Conv2dBackwardWeights" ins(%{{.*}}, %[[DR]] :
func.func @forward(%x: tensor<?x2x6x6xf32> {nn.input = "x"},
                   %w0: tensor<4x2x3x3xf32> {nn.param = "conv0.weight"},
                   %w1: tensor<4x4x3x3xf32> {nn.param = "conv1.weight"},
                   %fc: tensor<3x4xf32> {nn.param = "fc.weight"})
    -> (tensor<?x3xf32> {nn.output = "logits"}) {
  %a = nn.conv2d %x, %w0 {padding = array<i64: 1, 1, 1, 1>} : (tensor<?x2x6x6xf32>, tensor<4x2x3x3xf32>) -> tensor<?x4x6x6xf32>
  %r = nn.relu %a : tensor<?x4x6x6xf32>
  %c = nn.conv2d %r, %w1 {padding = array<i64: 1, 1, 1, 1>} : (tensor<?x4x6x6xf32>, tensor<4x4x3x3xf32>) -> tensor<?x4x6x6xf32>
  %s = nn.add %c, %r : (tensor<?x4x6x6xf32>, tensor<?x4x6x6xf32>) -> tensor<?x4x6x6xf32>
  %o = nn.relu %s : tensor<?x4x6x6xf32>
  %p = nn.global_avg_pool2d %o : (tensor<?x4x6x6xf32>) -> tensor<?x4x1x1xf32>
  %f = nn.flatten %p : (tensor<?x4x1x1xf32>) -> tensor<?x4xf32>
  %l = nn.linear %f, %fc : (tensor<?x4xf32>, tensor<3x4xf32>) -> tensor<?x3xf32>
  return %l : tensor<?x3xf32>
}
