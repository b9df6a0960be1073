// RUN: dpc-opt %s -split-input-file | FileCheck %s
// Round trip: the printed form parses back to the same IR.
// RUN: dpc-opt %s -split-input-file | dpc-opt -split-input-file | FileCheck %s

// The result has the input size of the convolution whose input gradient the
// transposed convolution is: conv2d_grad_input with that input size has the
// same type. Along the height (16 - 1) * 2 - 1 - 2 + 2 * (3 - 1) + 1 + 1 = 33,
// along the width (15 - 1) * 2 - 0 - 1 + 2 * (3 - 1) + 1 + 0 = 32.
// CHECK-LABEL: func.func @conv_transpose2d
func.func @conv_transpose2d(%x: tensor<?x8x16x15xf32>, %w: tensor<8x2x3x3xf32>) -> (tensor<?x8x33x32xf32>, tensor<?x8x33x32xf32>) {
  // CHECK: nn.conv_transpose2d %{{.*}}, %{{.*}} {dilation = array<i64: 2, 2>, groups = 4 : i64, output_padding = array<i64: 1, 0>, padding = array<i64: 1, 0, 2, 1>, stride = array<i64: 2, 2>} : (tensor<?x8x16x15xf32>, tensor<8x2x3x3xf32>) -> tensor<?x8x33x32xf32>
  %0 = nn.conv_transpose2d %x, %w {stride = array<i64: 2, 2>, padding = array<i64: 1, 0, 2, 1>, output_padding = array<i64: 1, 0>, dilation = array<i64: 2, 2>, groups = 4} : (tensor<?x8x16x15xf32>, tensor<8x2x3x3xf32>) -> tensor<?x8x33x32xf32>
  // CHECK: nn.conv2d_grad_input {{.*}} -> tensor<?x8x33x32xf32>
  %1 = nn.conv2d_grad_input %x, %w {input_size = array<i64: 33, 32>, stride = array<i64: 2, 2>, padding = array<i64: 1, 0, 2, 1>, dilation = array<i64: 2, 2>, groups = 4} : (tensor<?x8x16x15xf32>, tensor<8x2x3x3xf32>) -> tensor<?x8x33x32xf32>
  return %0, %1 : tensor<?x8x33x32xf32>, tensor<?x8x33x32xf32>
}

// -----

// Defaults: stride 1, no padding; the output channels are the filter's
// dim 1 times the groups.
// CHECK-LABEL: func.func @conv_transpose2d_defaults
func.func @conv_transpose2d_defaults(%x: tensor<2x3x4x4xf32>, %w: tensor<3x5x2x3xf32>) -> tensor<2x5x5x6xf32> {
  // CHECK: nn.conv_transpose2d %{{.*}}, %{{.*}} : (tensor<2x3x4x4xf32>, tensor<3x5x2x3xf32>) -> tensor<2x5x5x6xf32>
  %0 = nn.conv_transpose2d %x, %w : (tensor<2x3x4x4xf32>, tensor<3x5x2x3xf32>) -> tensor<2x5x5x6xf32>
  return %0 : tensor<2x5x5x6xf32>
}
