// RUN: dpc-opt %s -nn-build-train-step | FileCheck %s

// A transposed convolution's gradients are convolution ops: its input's is
// the nn.conv2d of the result gradient with the same filter and attributes,
// its filter's the conv2d filter gradient with its input in the role of the
// result gradient and the result gradient in that of the input.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[W:arg[0-9]+]]: tensor<2x3x3x3xf32> {nn.param = "up.weight"}
// CHECK: %[[X:.*]] = nn.reshape %{{.*}} {shape = array<i64: -1, 2, 2, 2>}
// CHECK: nn.conv_transpose2d %[[X]], %[[W]] {output_padding = array<i64: 1, 1>, padding = array<i64: 1, 1, 1, 1>, stride = array<i64: 2, 2>} : (tensor<?x2x2x2xf32>, tensor<2x3x3x3xf32>) -> tensor<?x3x4x4xf32>
// CHECK: %[[DY:.*]] = nn.reshape %{{.*}} {shape = array<i64: -1, 3, 4, 4>}
// CHECK: %[[DX:.*]] = nn.conv2d %[[DY]], %[[W]] {padding = array<i64: 1, 1, 1, 1>, stride = array<i64: 2, 2>} : (tensor<?x3x4x4xf32>, tensor<2x3x3x3xf32>) -> tensor<?x2x2x2xf32>
// CHECK: %[[DW:.*]] = nn.conv2d_grad_filter %[[X]], %[[DY]] {kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, stride = array<i64: 2, 2>} : (tensor<?x2x2x2xf32>, tensor<?x3x4x4xf32>) -> tensor<2x3x3x3xf32>
// CHECK: nn.reshape %[[DX]]
// CHECK: nn.sgd_update %[[W]], %[[DW]]

func.func @forward(%x: tensor<?x6xf32> {nn.input = "x"},
                   %w1: tensor<8x6xf32> {nn.param = "fc_in.weight"},
                   %w: tensor<2x3x3x3xf32> {nn.param = "up.weight"},
                   %w2: tensor<10x48xf32> {nn.param = "fc_out.weight"})
    -> (tensor<?x10xf32> {nn.output = "logits"}) {
  %0 = nn.linear %x, %w1 : (tensor<?x6xf32>, tensor<8x6xf32>) -> tensor<?x8xf32>
  %1 = nn.reshape %0 {shape = array<i64: -1, 2, 2, 2>} : (tensor<?x8xf32>) -> tensor<?x2x2x2xf32>
  %2 = nn.conv_transpose2d %1, %w {stride = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, output_padding = array<i64: 1, 1>} : (tensor<?x2x2x2xf32>, tensor<2x3x3x3xf32>) -> tensor<?x3x4x4xf32>
  %3 = nn.flatten %2 : (tensor<?x3x4x4xf32>) -> tensor<?x48xf32>
  %4 = nn.linear %3, %w2 : (tensor<?x48xf32>, tensor<10x48xf32>) -> tensor<?x10xf32>
  return %4 : tensor<?x10xf32>
}
