// RUN: dpc-opt %s -split-input-file -canonicalize | FileCheck %s

// CHECK-LABEL: func.func @zero_pad_folds
// CHECK-NOT: nn.pad
// CHECK: nn.avg_pool2d %arg0
func.func @zero_pad_folds(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  %0 = nn.pad %x {low = array<i64: 0, 0, 0, 0>, high = array<i64: 0, 0, 0, 0>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>
  %1 = nn.avg_pool2d %0 {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  return %1 : tensor<1x3x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @nonzero_pad_stays
// CHECK: nn.pad
func.func @nonzero_pad_stays(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x9x8xf32> {
  %0 = nn.pad %x {low = array<i64: 0, 0, 1, 0>, high = array<i64: 0, 0, 0, 0>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x9x8xf32>
  return %0 : tensor<1x3x9x8xf32>
}

// -----

// Identical constants are uniqued; unused ones disappear.
// CHECK-LABEL: func.func @constants
// CHECK-COUNT-1: nn.constant
// CHECK-NOT: nn.constant
func.func @constants(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = nn.constant dense<2.0> : tensor<4xf32>
  %b = nn.constant dense<2.0> : tensor<4xf32>
  %c = nn.constant dense<3.0> : tensor<4xf32>
  %0 = nn.mul %x, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = nn.mul %0, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
