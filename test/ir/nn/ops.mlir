// RUN: dpc-opt %s -split-input-file | FileCheck %s
// Round trip: the printed form parses back to the same IR.
// RUN: dpc-opt %s -split-input-file | dpc-opt -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @conv2d
func.func @conv2d(%x: tensor<?x3x32x32xf32> {nn.input = "x"},
                  %w: tensor<8x3x3x3xf32> {nn.param = "conv.weight"},
                  %b: tensor<8xf32> {nn.param = "conv.bias"},
                  %g: tensor<8x1x3x3xf32> {nn.param = "dw.weight"})
    -> (tensor<?x8x16x15xf32> {nn.output = "y"}) {
  // CHECK: nn.conv2d %{{.*}}, %{{.*}}, %{{.*}} {padding = array<i64: 1, 1, 1, 1>} : (tensor<?x3x32x32xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<?x8x32x32xf32>
  %0 = nn.conv2d %x, %w, %b {padding = array<i64: 1, 1, 1, 1>} : (tensor<?x3x32x32xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<?x8x32x32xf32>
  // Depthwise, strided, dilated, asymmetric padding, no bias.
  // CHECK: nn.conv2d %{{.*}}, %{{.*}} {dilation = array<i64: 2, 2>, groups = 8 : i64, padding = array<i64: 1, 0, 2, 1>, stride = array<i64: 2, 2>} : (tensor<?x8x32x32xf32>, tensor<8x1x3x3xf32>) -> tensor<?x8x16x15xf32>
  %1 = nn.conv2d %0, %g {stride = array<i64: 2, 2>, padding = array<i64: 1, 0, 2, 1>, dilation = array<i64: 2, 2>, groups = 8} : (tensor<?x8x32x32xf32>, tensor<8x1x3x3xf32>) -> tensor<?x8x16x15xf32>
  return %1 : tensor<?x8x16x15xf32>
}

// -----

// A 3-D convolution: NCDHW, the depth first in every attribute (padding:
// every axis's start, then its end).
// CHECK-LABEL: func.func @conv3d
func.func @conv3d(%x: tensor<?x4x6x8x8xf32>, %w: tensor<6x2x3x3x3xf32>,
                  %b: tensor<6xf32>) -> tensor<?x6x4x4x3xf32> {
  // CHECK: nn.conv2d %{{.*}}, %{{.*}}, %{{.*}} {dilation = array<i64: 2, 1, 1>, groups = 2 : i64, padding = array<i64: 1, 1, 0, 1, 1, 0>, stride = array<i64: 1, 2, 2>} : (tensor<?x4x6x8x8xf32>, tensor<6x2x3x3x3xf32>, tensor<6xf32>) -> tensor<?x6x4x4x3xf32>
  %0 = nn.conv2d %x, %w, %b {stride = array<i64: 1, 2, 2>, padding = array<i64: 1, 1, 0, 1, 1, 0>, dilation = array<i64: 2, 1, 1>, groups = 2} : (tensor<?x4x6x8x8xf32>, tensor<6x2x3x3x3xf32>, tensor<6xf32>) -> tensor<?x6x4x4x3xf32>
  return %0 : tensor<?x6x4x4x3xf32>
}

// -----

// CHECK-LABEL: func.func @batch_norm
func.func @batch_norm(%x: tensor<4x8x5x5xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>,
                      %m: tensor<8xf32> {nn.buffer = "bn.running_mean"},
                      %v: tensor<8xf32> {nn.buffer = "bn.running_var", nn.init_from = "bn.weight"})
    -> tensor<4x8x5x5xf32> {
  // Defaults (epsilon 1e-5, momentum 0.1) are elided.
  // CHECK: nn.batch_norm %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<4x8x5x5xf32>
  %0 = nn.batch_norm %x, %s, %b, %m, %v : (tensor<4x8x5x5xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8x5x5xf32>
  // CHECK: nn.batch_norm {{.*}} {epsilon = 1.000000e-03 : f64, momentum = 2.000000e-01 : f64}
  %1 = nn.batch_norm %0, %s, %b, %m, %v {epsilon = 1.0e-3, momentum = 0.2} : (tensor<4x8x5x5xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8x5x5xf32>
  return %1 : tensor<4x8x5x5xf32>
}

// -----

// CHECK-LABEL: func.func @pooling
func.func @pooling(%x: tensor<2x4x7x7xf32>) -> (tensor<2x4x3x3xf32>, tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32>, tensor<2x4x1x1xf32>) {
  // CHECK: nn.max_pool2d %{{.*}} {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>} : (tensor<2x4x7x7xf32>) -> tensor<2x4x3x3xf32>
  %0 = nn.max_pool2d %x {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>} : (tensor<2x4x7x7xf32>) -> tensor<2x4x3x3xf32>
  // ceil_mode rounds 3.5 windows up to 4, padding 1 adds one more window.
  // CHECK: nn.max_pool2d %{{.*}} {ceil_mode = true, kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>} : (tensor<2x4x7x7xf32>) -> tensor<2x4x4x4xf32>
  %1 = nn.max_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, ceil_mode = true} : (tensor<2x4x7x7xf32>) -> tensor<2x4x4x4xf32>
  // CHECK: nn.avg_pool2d %{{.*}} {count_include_pad = false, kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, stride = array<i64: 2, 2>} : (tensor<2x4x7x7xf32>) -> tensor<2x4x4x4xf32>
  %2 = nn.avg_pool2d %x {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, count_include_pad = false} : (tensor<2x4x7x7xf32>) -> tensor<2x4x4x4xf32>
  // CHECK: nn.global_avg_pool2d %{{.*}} : (tensor<2x4x7x7xf32>) -> tensor<2x4x1x1xf32>
  %3 = nn.global_avg_pool2d %x : (tensor<2x4x7x7xf32>) -> tensor<2x4x1x1xf32>
  return %0, %1, %2, %3 : tensor<2x4x3x3xf32>, tensor<2x4x4x4xf32>, tensor<2x4x4x4xf32>, tensor<2x4x1x1xf32>
}

// -----

// CHECK-LABEL: func.func @ceil_mode_window_in_padding
func.func @ceil_mode_window_in_padding(%x: tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32> {
  // (5 + 1 + 1 - 3) / 2 rounds up to 2, + 1 = 3; the 4th window would start
  // in the trailing padding, so PyTorch's rule drops it.
  // CHECK: -> tensor<1x1x3x3xf32>
  %0 = nn.avg_pool2d %x {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, ceil_mode = true} : (tensor<1x1x5x5xf32>) -> tensor<1x1x3x3xf32>
  return %0 : tensor<1x1x3x3xf32>
}

// -----

// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%x: tensor<?x8x4x4xf32>, %c: tensor<8x1x1xf32>) -> tensor<?x8x4x4xf32> {
  // CHECK: nn.relu %{{.*}} : tensor<?x8x4x4xf32>
  %0 = nn.relu %x : tensor<?x8x4x4xf32>
  // CHECK: nn.sigmoid %{{.*}} : tensor<?x8x4x4xf32>
  %1 = nn.sigmoid %0 : tensor<?x8x4x4xf32>
  // CHECK: nn.tanh %{{.*}} : tensor<?x8x4x4xf32>
  %2 = nn.tanh %1 : tensor<?x8x4x4xf32>
  // CHECK: nn.add %{{.*}}, %{{.*}} : (tensor<?x8x4x4xf32>, tensor<?x8x4x4xf32>) -> tensor<?x8x4x4xf32>
  %3 = nn.add %2, %x : (tensor<?x8x4x4xf32>, tensor<?x8x4x4xf32>) -> tensor<?x8x4x4xf32>
  // Broadcasting a per-channel constant.
  // CHECK: nn.mul %{{.*}}, %{{.*}} : (tensor<?x8x4x4xf32>, tensor<8x1x1xf32>) -> tensor<?x8x4x4xf32>
  %4 = nn.mul %3, %c : (tensor<?x8x4x4xf32>, tensor<8x1x1xf32>) -> tensor<?x8x4x4xf32>
  return %4 : tensor<?x8x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @shapes
func.func @shapes(%x: tensor<?x16x5x5xf32>) -> (tensor<?x400xf32>, tensor<?x400xf32>, tensor<?x16x25xf32>, tensor<?x6x7x7xf32>) {
  // CHECK: nn.flatten %{{.*}} : (tensor<?x16x5x5xf32>) -> tensor<?x400xf32>
  %0 = nn.flatten %x : (tensor<?x16x5x5xf32>) -> tensor<?x400xf32>
  // 0 copies the (dynamic) batch dim, -1 takes the rest.
  // CHECK: nn.reshape %{{.*}} {shape = array<i64: 0, -1>} : (tensor<?x16x5x5xf32>) -> tensor<?x400xf32>
  %1 = nn.reshape %x {shape = array<i64: 0, -1>} : (tensor<?x16x5x5xf32>) -> tensor<?x400xf32>
  // CHECK: nn.reshape %{{.*}} {shape = array<i64: 0, 16, 25>} : (tensor<?x16x5x5xf32>) -> tensor<?x16x25xf32>
  %2 = nn.reshape %x {shape = array<i64: 0, 16, 25>} : (tensor<?x16x5x5xf32>) -> tensor<?x16x25xf32>
  // CHECK: nn.pad %{{.*}} {high = array<i64: 0, 0, 1, 1>, low = array<i64: 0, 0, 1, 1>, value = -1.000000e+00 : f64} : (tensor<?x16x5x5xf32>) -> tensor<?x16x7x7xf32>
  %3 = nn.pad %x {low = array<i64: 0, 0, 1, 1>, high = array<i64: 0, 0, 1, 1>, value = -1.0} : (tensor<?x16x5x5xf32>) -> tensor<?x16x7x7xf32>
  %c = nn.constant dense<0.5> : tensor<6x16x1x1xf32>
  // CHECK: nn.constant dense<5.000000e-01> : tensor<6x16x1x1xf32>
  %4 = nn.conv2d %3, %c : (tensor<?x16x7x7xf32>, tensor<6x16x1x1xf32>) -> tensor<?x6x7x7xf32>
  return %0, %1, %2, %4 : tensor<?x400xf32>, tensor<?x400xf32>, tensor<?x16x25xf32>, tensor<?x6x7x7xf32>
}

// -----

// CHECK-LABEL: func.func @classifier
func.func @classifier(%x: tensor<32x784xf32>, %w: tensor<10x784xf32>, %b: tensor<10xf32>,
                      %m: tensor<784x10xf32>, %labels: tensor<32xi64>)
    -> (tensor<32x10xf32>, tensor<32x10xf32>, tensor<f32>) {
  // CHECK: nn.linear %{{.*}}, %{{.*}}, %{{.*}} : (tensor<32x784xf32>, tensor<10x784xf32>, tensor<10xf32>) -> tensor<32x10xf32>
  %0 = nn.linear %x, %w, %b : (tensor<32x784xf32>, tensor<10x784xf32>, tensor<10xf32>) -> tensor<32x10xf32>
  // CHECK: nn.linear %{{.*}}, %{{.*}} : (tensor<32x784xf32>, tensor<10x784xf32>) -> tensor<32x10xf32>
  %1 = nn.linear %x, %w : (tensor<32x784xf32>, tensor<10x784xf32>) -> tensor<32x10xf32>
  // CHECK: nn.matmul %{{.*}}, %{{.*}} : (tensor<32x784xf32>, tensor<784x10xf32>) -> tensor<32x10xf32>
  %2 = nn.matmul %x, %m : (tensor<32x784xf32>, tensor<784x10xf32>) -> tensor<32x10xf32>
  // CHECK: nn.softmax %{{.*}} {axis = 1 : i64} : tensor<32x10xf32>
  %3 = nn.softmax %0 {axis = 1} : tensor<32x10xf32>
  // CHECK: nn.log_softmax %{{.*}} {axis = 1 : i64} : tensor<32x10xf32>
  %4 = nn.log_softmax %1 {axis = 1} : tensor<32x10xf32>
  // CHECK: nn.loss cross_entropy %{{.*}}, %{{.*}} : (tensor<32x10xf32>, tensor<32xi64>) -> tensor<f32>
  %5 = nn.loss cross_entropy %2, %labels : (tensor<32x10xf32>, tensor<32xi64>) -> tensor<f32>
  return %3, %4, %5 : tensor<32x10xf32>, tensor<32x10xf32>, tensor<f32>
}

// -----

// CHECK-LABEL: func.func @batch_matmul
func.func @batch_matmul(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x8xf32>,
                        %q3: tensor<?x16x8xf32>) {
  // CHECK: nn.batch_matmul %{{.*}}, %{{.*}} {transpose_rhs = true} : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x16xf32>
  %0 = nn.batch_matmul %q, %k {transpose_rhs = true} : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x16xf32>
  // CHECK: nn.batch_matmul %{{.*}}, %{{.*}} : (tensor<2x4x16x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
  %1 = nn.batch_matmul %0, %q : (tensor<2x4x16x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
  // CHECK: nn.batch_matmul %{{.*}}, %{{.*}} {transpose_lhs = true} : (tensor<?x16x8xf32>, tensor<?x16x8xf32>) -> tensor<?x8x8xf32>
  %2 = nn.batch_matmul %q3, %q3 {transpose_lhs = true} : (tensor<?x16x8xf32>, tensor<?x16x8xf32>) -> tensor<?x8x8xf32>
  return
}

// -----

// CHECK-LABEL: func.func @broadcast_rows
func.func @broadcast_rows(%token: tensor<1x1x8xf32>, %x: tensor<?x3x8xf32>) {
  // CHECK: nn.broadcast_rows %{{.*}}, %{{.*}} : (tensor<1x1x8xf32>, tensor<?x3x8xf32>) -> tensor<?x1x8xf32>
  %0 = nn.broadcast_rows %token, %x : (tensor<1x1x8xf32>, tensor<?x3x8xf32>) -> tensor<?x1x8xf32>
  return
}

// -----

// CHECK-LABEL: func.func @elementwise_math
func.func @elementwise_math(%x: tensor<?x4x3xf32>, %b: tensor<4x1xf32>) {
  // CHECK: nn.pow %{{.*}} {exponent = 7.500000e-01 : f64} : tensor<?x4x3xf32>
  %0 = nn.pow %x {exponent = 0.75} : tensor<?x4x3xf32>
  // CHECK: nn.maximum %{{.*}}, %{{.*}} : (tensor<?x4x3xf32>, tensor<4x1xf32>) -> tensor<?x4x3xf32>
  %1 = nn.maximum %0, %b : (tensor<?x4x3xf32>, tensor<4x1xf32>) -> tensor<?x4x3xf32>
  // CHECK: nn.reduce_min %{{.*}} {dims = array<i64: 1, 2>} : (tensor<?x4x3xf32>) -> tensor<?xf32>
  %2 = nn.reduce_min %1 {dims = array<i64: 1, 2>} : (tensor<?x4x3xf32>) -> tensor<?xf32>
  return
}
