// RUN: dpc-opt %s -split-input-file -nn-set-batch=batch=16 | FileCheck %s
// RUN: not dpc-opt %s -split-input-file -nn-set-batch=batch=0 2>&1 | FileCheck %s --check-prefix=ZERO

// The batch reaches every activation and the function's results; parameters
// keep their shapes.
// CHECK-LABEL: func.func @lenet_head
// CHECK-SAME: (%{{.*}}: tensor<16x16x5x5xf32> {nn.input = "x"}, %{{.*}}: tensor<10x400xf32> {nn.param = "fc.weight"}) -> (tensor<16x10xf32> {nn.output = "logits"})
func.func @lenet_head(%x: tensor<?x16x5x5xf32> {nn.input = "x"},
                      %w: tensor<10x400xf32> {nn.param = "fc.weight"})
    -> (tensor<?x10xf32> {nn.output = "logits"}) {
  // CHECK: nn.reshape %{{.*}} {shape = array<i64: 0, -1>} : (tensor<16x16x5x5xf32>) -> tensor<16x400xf32>
  %0 = nn.reshape %x {shape = array<i64: 0, -1>} : (tensor<?x16x5x5xf32>) -> tensor<?x400xf32>
  // CHECK: nn.linear %{{.*}}, %{{.*}} : (tensor<16x400xf32>, tensor<10x400xf32>) -> tensor<16x10xf32>
  %1 = nn.linear %0, %w : (tensor<?x400xf32>, tensor<10x400xf32>) -> tensor<?x10xf32>
  // CHECK: return %{{.*}} : tensor<16x10xf32>
  return %1 : tensor<?x10xf32>
}

// -----

// A batch the model was traced with is replaced too.
// CHECK-LABEL: func.func @rebatch
// CHECK-SAME: tensor<16x3x4x4xf32>
// CHECK: nn.global_avg_pool2d %{{.*}} : (tensor<16x3x4x4xf32>) -> tensor<16x3x1x1xf32>
func.func @rebatch(%x: tensor<1x3x4x4xf32> {nn.input = "x"}) -> tensor<1x3x1x1xf32> {
  %0 = nn.global_avg_pool2d %x : (tensor<1x3x4x4xf32>) -> tensor<1x3x1x1xf32>
  return %0 : tensor<1x3x1x1xf32>
}

// ZERO: error: batch size must be > 0, got 0
