// RUN: dpc-opt %s -split-input-file | FileCheck %s
// Round trip: the printed form parses back to the same IR.
// RUN: dpc-opt %s -split-input-file | dpc-opt -split-input-file | FileCheck %s

// CHECK-LABEL: func.func @conv2d_grads
func.func @conv2d_grads(%dy: tensor<?x8x16x15xf32>, %w: tensor<8x1x3x3xf32>, %x: tensor<?x8x32x32xf32>) -> (tensor<?x8x32x32xf32>, tensor<8x1x3x3xf32>) {
  // CHECK: nn.conv2d_grad_input %{{.*}}, %{{.*}} {dilation = array<i64: 2, 2>, groups = 8 : i64, input_size = array<i64: 32, 32>, padding = array<i64: 1, 0, 2, 1>, stride = array<i64: 2, 2>} : (tensor<?x8x16x15xf32>, tensor<8x1x3x3xf32>) -> tensor<?x8x32x32xf32>
  %0 = nn.conv2d_grad_input %dy, %w {input_size = array<i64: 32, 32>, stride = array<i64: 2, 2>, padding = array<i64: 1, 0, 2, 1>, dilation = array<i64: 2, 2>, groups = 8} : (tensor<?x8x16x15xf32>, tensor<8x1x3x3xf32>) -> tensor<?x8x32x32xf32>
  // CHECK: nn.conv2d_grad_filter %{{.*}}, %{{.*}} {{.*}}kernel_size = array<i64: 3, 3>{{.*}} : (tensor<?x8x16x15xf32>, tensor<?x8x32x32xf32>) -> tensor<8x1x3x3xf32>
  %1 = nn.conv2d_grad_filter %dy, %x {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 0, 2, 1>, dilation = array<i64: 2, 2>, groups = 8} : (tensor<?x8x16x15xf32>, tensor<?x8x32x32xf32>) -> tensor<8x1x3x3xf32>
  return %0, %1 : tensor<?x8x32x32xf32>, tensor<8x1x3x3xf32>
}

// -----

// CHECK-LABEL: func.func @conv3d_grads
func.func @conv3d_grads(%dy: tensor<?x6x4x4x3xf32>, %w: tensor<6x2x3x3x3xf32>, %x: tensor<?x4x6x8x8xf32>) -> (tensor<?x4x6x8x8xf32>, tensor<6x2x3x3x3xf32>) {
  // CHECK: nn.conv2d_grad_input {{.*}}input_size = array<i64: 6, 8, 8>{{.*}} : (tensor<?x6x4x4x3xf32>, tensor<6x2x3x3x3xf32>) -> tensor<?x4x6x8x8xf32>
  %0 = nn.conv2d_grad_input %dy, %w {input_size = array<i64: 6, 8, 8>, stride = array<i64: 1, 2, 2>, padding = array<i64: 1, 1, 0, 1, 1, 0>, dilation = array<i64: 2, 1, 1>, groups = 2} : (tensor<?x6x4x4x3xf32>, tensor<6x2x3x3x3xf32>) -> tensor<?x4x6x8x8xf32>
  // CHECK: nn.conv2d_grad_filter {{.*}}kernel_size = array<i64: 3, 3, 3>{{.*}} : (tensor<?x6x4x4x3xf32>, tensor<?x4x6x8x8xf32>) -> tensor<6x2x3x3x3xf32>
  %1 = nn.conv2d_grad_filter %dy, %x {kernel_size = array<i64: 3, 3, 3>, stride = array<i64: 1, 2, 2>, padding = array<i64: 1, 1, 0, 1, 1, 0>, dilation = array<i64: 2, 1, 1>, groups = 2} : (tensor<?x6x4x4x3xf32>, tensor<?x4x6x8x8xf32>) -> tensor<6x2x3x3x3xf32>
  return %0, %1 : tensor<?x4x6x8x8xf32>, tensor<6x2x3x3x3xf32>
}

// -----

// CHECK-LABEL: func.func @batch_norm_train
func.func @batch_norm_train(%x: tensor<4x8x5x5xf32>, %s: tensor<8xf32>, %b: tensor<8xf32>, %m: tensor<8xf32>, %v: tensor<8xf32>, %dy: tensor<4x8x5x5xf32>) -> (tensor<4x8x5x5xf32>, tensor<8xf32>, tensor<8xf32>) {
  // CHECK: nn.batch_norm_train %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {momentum = 2.000000e-01 : f64} : (tensor<4x8x5x5xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8x5x5xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  %y, %mean, %invstd, %rm, %rv = nn.batch_norm_train %x, %s, %b, %m, %v {momentum = 0.2} : (tensor<4x8x5x5xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8x5x5xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  // CHECK: nn.batch_norm_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<4x8x5x5xf32>, tensor<4x8x5x5xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8x5x5xf32>, tensor<8xf32>, tensor<8xf32>)
  %dx, %ds, %db = nn.batch_norm_grad %dy, %x, %s, %mean, %invstd : (tensor<4x8x5x5xf32>, tensor<4x8x5x5xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8x5x5xf32>, tensor<8xf32>, tensor<8xf32>)
  return %dx, %ds, %db : tensor<4x8x5x5xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

// CHECK-LABEL: func.func @pool_and_pad_grads
func.func @pool_and_pad_grads(%x: tensor<2x4x7x7xf32>, %dmax: tensor<2x4x3x3xf32>, %davg: tensor<2x4x4x4xf32>, %dg: tensor<2x4x1x1xf32>, %dp: tensor<2x4x9x10xf32>) -> (tensor<2x4x7x7xf32>, tensor<2x4x7x7xf32>, tensor<2x4x7x7xf32>, tensor<2x4x7x7xf32>) {
  // CHECK: nn.max_pool2d_grad %{{.*}}, %{{.*}} {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>} : (tensor<2x4x3x3xf32>, tensor<2x4x7x7xf32>) -> tensor<2x4x7x7xf32>
  %0 = nn.max_pool2d_grad %dmax, %x {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>} : (tensor<2x4x3x3xf32>, tensor<2x4x7x7xf32>) -> tensor<2x4x7x7xf32>
  // CHECK: nn.avg_pool2d_grad %{{.*}} {count_include_pad = false, input_size = array<i64: 7, 7>, kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>, stride = array<i64: 2, 2>} : (tensor<2x4x4x4xf32>) -> tensor<2x4x7x7xf32>
  %1 = nn.avg_pool2d_grad %davg {input_size = array<i64: 7, 7>, kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>, count_include_pad = false} : (tensor<2x4x4x4xf32>) -> tensor<2x4x7x7xf32>
  // CHECK: nn.global_avg_pool2d_grad %{{.*}} {input_size = array<i64: 7, 7>} : (tensor<2x4x1x1xf32>) -> tensor<2x4x7x7xf32>
  %2 = nn.global_avg_pool2d_grad %dg {input_size = array<i64: 7, 7>} : (tensor<2x4x1x1xf32>) -> tensor<2x4x7x7xf32>
  // CHECK: nn.pad_grad %{{.*}} {high = array<i64: 0, 0, 1, 2>, low = array<i64: 0, 0, 1, 1>} : (tensor<2x4x9x10xf32>) -> tensor<2x4x7x7xf32>
  %3 = nn.pad_grad %dp {low = array<i64: 0, 0, 1, 1>, high = array<i64: 0, 0, 1, 2>} : (tensor<2x4x9x10xf32>) -> tensor<2x4x7x7xf32>
  return %0, %1, %2, %3 : tensor<2x4x7x7xf32>, tensor<2x4x7x7xf32>, tensor<2x4x7x7xf32>, tensor<2x4x7x7xf32>
}

// -----

// CHECK-LABEL: func.func @elementwise_grads
func.func @elementwise_grads(%dy: tensor<?x8xf32>, %x: tensor<?x8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
  // CHECK: nn.relu_grad %{{.*}}, %{{.*}} : tensor<?x8xf32>
  %0 = nn.relu_grad %dy, %x : tensor<?x8xf32>
  // CHECK: nn.sigmoid_grad %{{.*}}, %{{.*}} : tensor<?x8xf32>
  %1 = nn.sigmoid_grad %dy, %x : tensor<?x8xf32>
  // CHECK: nn.tanh_grad %{{.*}}, %{{.*}} : tensor<?x8xf32>
  %2 = nn.tanh_grad %dy, %x : tensor<?x8xf32>
  // CHECK: nn.softmax_grad %{{.*}}, %{{.*}} {axis = 1 : i64} : tensor<?x8xf32>
  %3 = nn.softmax_grad %dy, %x {axis = 1} : tensor<?x8xf32>
  // CHECK: nn.log_softmax_grad %{{.*}}, %{{.*}} {axis = 1 : i64} : tensor<?x8xf32>
  %4 = nn.log_softmax_grad %dy, %x {axis = 1} : tensor<?x8xf32>
  return %0, %1, %2, %3, %4 : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// CHECK-LABEL: func.func @reduce_and_transpose
func.func @reduce_and_transpose(%x: tensor<?x8x5x5xf32>, %m: tensor<?x3xf32>) -> (tensor<8xf32>, tensor<1x8x1x1xf32>, tensor<3x?xf32>) {
  // CHECK: nn.reduce_sum %{{.*}} {dims = array<i64: 0, 2, 3>} : (tensor<?x8x5x5xf32>) -> tensor<8xf32>
  %0 = nn.reduce_sum %x {dims = array<i64: 0, 2, 3>} : (tensor<?x8x5x5xf32>) -> tensor<8xf32>
  // CHECK: nn.reduce_sum %{{.*}} {dims = array<i64: 0, 2, 3>, keep_dims = true} : (tensor<?x8x5x5xf32>) -> tensor<1x8x1x1xf32>
  %1 = nn.reduce_sum %x {dims = array<i64: 0, 2, 3>, keep_dims = true} : (tensor<?x8x5x5xf32>) -> tensor<1x8x1x1xf32>
  // CHECK: nn.transpose %{{.*}} {permutation = array<i64: 1, 0>} : (tensor<?x3xf32>) -> tensor<3x?xf32>
  %2 = nn.transpose %m {permutation = array<i64: 1, 0>} : (tensor<?x3xf32>) -> tensor<3x?xf32>
  return %0, %1, %2 : tensor<8xf32>, tensor<1x8x1x1xf32>, tensor<3x?xf32>
}

// -----

// CHECK-LABEL: func.func @loss_grad_and_metric
func.func @loss_grad_and_metric(%logits: tensor<?x10xf32>, %labels: tensor<?xi64>, %dl: tensor<f32>) -> (tensor<?x10xf32>, tensor<i64>) {
  // CHECK: nn.loss_grad cross_entropy %{{.*}}, %{{.*}}, %{{.*}} : (tensor<?x10xf32>, tensor<?xi64>, tensor<f32>) -> tensor<?x10xf32>
  %0 = nn.loss_grad cross_entropy %logits, %labels, %dl : (tensor<?x10xf32>, tensor<?xi64>, tensor<f32>) -> tensor<?x10xf32>
  // CHECK: nn.correct_count %{{.*}}, %{{.*}} : (tensor<?x10xf32>, tensor<?xi64>) -> tensor<i64>
  %1 = nn.correct_count %logits, %labels : (tensor<?x10xf32>, tensor<?xi64>) -> tensor<i64>
  return %0, %1 : tensor<?x10xf32>, tensor<i64>
}

// -----

// CHECK-LABEL: func.func @optimizers
func.func @optimizers(%p: tensor<8x4xbf16>, %g: tensor<8x4xbf16>, %buf: tensor<8x4xbf16>, %m: tensor<8x4xbf16>, %v: tensor<8x4xbf16>, %lr: tensor<f32>, %step: tensor<i64>) -> (tensor<8x4xbf16>, tensor<8x4xbf16>, tensor<8x4xbf16>, tensor<8x4xbf16>) {
  // Plain SGD has no momentum buffer.
  // CHECK: nn.sgd_update %{{.*}}, %{{.*}}, %{{.*}} {weight_decay = 5.000000e-04 : f64} : (tensor<8x4xbf16>, tensor<8x4xbf16>, tensor<f32>) -> tensor<8x4xbf16>
  %0 = nn.sgd_update %p, %g, %lr {weight_decay = 5.0e-4} : (tensor<8x4xbf16>, tensor<8x4xbf16>, tensor<f32>) -> tensor<8x4xbf16>
  // CHECK: nn.sgd_update %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {momentum = 9.000000e-01 : f64, nesterov = true} : (tensor<8x4xbf16>, tensor<8x4xbf16>, tensor<f32>, tensor<8x4xbf16>) -> (tensor<8x4xbf16>, tensor<8x4xbf16>)
  %1, %2 = nn.sgd_update %p, %g, %lr, %buf {momentum = 0.9, nesterov = true} : (tensor<8x4xbf16>, tensor<8x4xbf16>, tensor<f32>, tensor<8x4xbf16>) -> (tensor<8x4xbf16>, tensor<8x4xbf16>)
  // CHECK: nn.adamw_update %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {beta2 = 5.000000e-01 : f64} : (tensor<8x4xbf16>, tensor<8x4xbf16>, tensor<8x4xbf16>, tensor<8x4xbf16>, tensor<i64>, tensor<f32>) -> (tensor<8x4xbf16>, tensor<8x4xbf16>, tensor<8x4xbf16>)
  %3, %4, %5 = nn.adamw_update %p, %g, %m, %v, %step, %lr {beta2 = 0.5} : (tensor<8x4xbf16>, tensor<8x4xbf16>, tensor<8x4xbf16>, tensor<8x4xbf16>, tensor<i64>, tensor<f32>) -> (tensor<8x4xbf16>, tensor<8x4xbf16>, tensor<8x4xbf16>)
  return %0, %1, %3, %4 : tensor<8x4xbf16>, tensor<8x4xbf16>, tensor<8x4xbf16>, tensor<8x4xbf16>
}

// CHECK-LABEL: func.func @accumulate
func.func @accumulate(%acc: tensor<8x4xf32>, %g: tensor<8x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  // CHECK: nn.accumulate %{{.*}}, %{{.*}} {first} : tensor<8x4xf32>
  %0 = nn.accumulate %acc, %g {first} : tensor<8x4xf32>
  // CHECK: nn.accumulate %{{.*}}, %{{.*}} : tensor<8x4xf32>
  %1 = nn.accumulate %0, %g : tensor<8x4xf32>
  return %0, %1 : tensor<8x4xf32>, tensor<8x4xf32>
}

// CHECK-LABEL: func.func @extremum_grads
func.func @extremum_grads(%dy: tensor<?x4x3xf32>, %x: tensor<?x4x3xf32>, %b: tensor<4x1xf32>, %y: tensor<?x4x1xf32>) -> (tensor<?x4x3xf32>, tensor<4x1xf32>, tensor<?x4x3xf32>) {
  // CHECK: nn.maximum_grad %{{.*}}, %{{.*}}, %{{.*}} : (tensor<?x4x3xf32>, tensor<?x4x3xf32>, tensor<4x1xf32>) -> (tensor<?x4x3xf32>, tensor<4x1xf32>)
  %0:2 = nn.maximum_grad %dy, %x, %b : (tensor<?x4x3xf32>, tensor<?x4x3xf32>, tensor<4x1xf32>) -> (tensor<?x4x3xf32>, tensor<4x1xf32>)
  // CHECK: nn.minimum_grad
  %1:2 = nn.minimum_grad %dy, %x, %b : (tensor<?x4x3xf32>, tensor<?x4x3xf32>, tensor<4x1xf32>) -> (tensor<?x4x3xf32>, tensor<4x1xf32>)
  // CHECK: nn.reduce_extremum_grad %{{.*}}, %{{.*}}, %{{.*}} {dims = array<i64: 2>, keep_dims = true} : (tensor<?x4x1xf32>, tensor<?x4x3xf32>, tensor<?x4x1xf32>) -> tensor<?x4x3xf32>
  %2 = nn.reduce_extremum_grad %y, %x, %y {dims = array<i64: 2>, keep_dims = true} : (tensor<?x4x1xf32>, tensor<?x4x3xf32>, tensor<?x4x1xf32>) -> tensor<?x4x3xf32>
  return %0#0, %1#1, %2 : tensor<?x4x3xf32>, tensor<4x1xf32>, tensor<?x4x3xf32>
}
