// RUN: dpc-opt %s -nn-set-batch=batch=8 -nn-build-train-step="momentum=0.9" -convert-nn-to-exec | FileCheck %s

// torch.minimum of a learned [4, 1] and [N, 4, 3], then torch.amax: the
// kernels broadcast B to A, so the larger operand goes first and the
// gradients follow it (the tie rule is symmetric); the bound's gradient is
// its share summed in the kernel. ReduceMax's gradient reads x and y.

// CHECK-LABEL: exec.step "train_step"
// CHECK: exec.kernel "MinimumForward" ins(%[[X:.*]], %[[B:.*]] : memref<?x4x3xf32>, memref<4x1xf32>) outs(%[[Y:.*]] : memref<?x4x3xf32>)
// CHECK: exec.kernel "ReduceMax" ins(%[[Y]] : memref<?x4x3xf32>) outs(%[[M:.*]] : memref<?x4xf32>) {dims = array<i64: 2>}
// CHECK: exec.kernel "ReduceExtremumBackward" ins(%[[Y]], %[[M]], %{{.*}} : memref<?x4x3xf32>, memref<?x4xf32>, memref<?x4xf32>) outs(%[[DY:.*]] : memref<?x4x3xf32>) {dims = array<i64: 2>}
// CHECK: exec.kernel "MinimumBackward" ins(%[[X]], %[[B]], %[[DY]] : memref<?x4x3xf32>, memref<4x1xf32>, memref<?x4x3xf32>) outs(%{{.*}}, %{{.*}} : memref<?x4x3xf32>, memref<4x1xf32>)

func.func @forward(%x: tensor<?x12xf32> {nn.input = "x"},
                   %bound: tensor<4x1xf32> {nn.param = "bound"},
                   %w: tensor<3x4xf32> {nn.param = "fc.weight"})
    -> (tensor<?x3xf32> {nn.output = "logits"}) {
  %0 = nn.reshape %x {shape = array<i64: -1, 4, 3>} : (tensor<?x12xf32>) -> tensor<?x4x3xf32>
  %1 = nn.minimum %bound, %0 : (tensor<4x1xf32>, tensor<?x4x3xf32>) -> tensor<?x4x3xf32>
  %2 = nn.reduce_max %1 {dims = array<i64: 2>} : (tensor<?x4x3xf32>) -> tensor<?x4xf32>
  %3 = nn.linear %2, %w : (tensor<?x4xf32>, tensor<3x4xf32>) -> tensor<?x3xf32>
  return %3 : tensor<?x3xf32>
}
