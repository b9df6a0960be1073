// RUN: dpc-opt %s -split-input-file | FileCheck %s
// Round trip: the printed form parses back to the same IR.
// RUN: dpc-opt %s -split-input-file | dpc-opt -split-input-file | FileCheck %s

// The loss kind is a keyword; the options print as attributes.
// CHECK-LABEL: func.func @per_token_cross_entropy
func.func @per_token_cross_entropy(%logits: tensor<?x5x7xf32>, %t: tensor<?x5xi64>, %dl: tensor<f32>) -> (tensor<f32>, tensor<?x5x7xf32>, tensor<i64>) {
  // CHECK: %[[W:.*]] = nn.loss_weight cross_entropy %{{.*}}, %{{.*}} {class_axis = 2 : i64, class_weights = array<f64: 1.000000e+00, 2.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00, 1.000000e+00, 5.000000e-01>, ignore_index = -100 : i64} : (tensor<?x5x7xf32>, tensor<?x5xi64>) -> tensor<f32>
  %w = nn.loss_weight cross_entropy %logits, %t {class_axis = 2 : i64, ignore_index = -100 : i64, class_weights = array<f64: 1.0, 2.0, 1.0, 1.0, 1.0, 1.0, 0.5>} : (tensor<?x5x7xf32>, tensor<?x5xi64>) -> tensor<f32>
  // CHECK: nn.loss cross_entropy %{{.*}}, %{{.*}}, %[[W]] {{{.*}}label_smoothing = 1.000000e-01 : f64} : (tensor<?x5x7xf32>, tensor<?x5xi64>, tensor<f32>) -> tensor<f32>
  %0 = nn.loss cross_entropy %logits, %t, %w {class_axis = 2 : i64, ignore_index = -100 : i64, class_weights = array<f64: 1.0, 2.0, 1.0, 1.0, 1.0, 1.0, 0.5>, label_smoothing = 0.1 : f64} : (tensor<?x5x7xf32>, tensor<?x5xi64>, tensor<f32>) -> tensor<f32>
  // CHECK: nn.loss_grad cross_entropy %{{.*}}, %{{.*}}, %{{.*}}, %[[W]] {class_axis = 2 : i64, ignore_index = -100 : i64} : (tensor<?x5x7xf32>, tensor<?x5xi64>, tensor<f32>, tensor<f32>) -> tensor<?x5x7xf32>
  %1 = nn.loss_grad cross_entropy %logits, %t, %dl, %w {class_axis = 2 : i64, ignore_index = -100 : i64} : (tensor<?x5x7xf32>, tensor<?x5xi64>, tensor<f32>, tensor<f32>) -> tensor<?x5x7xf32>
  // CHECK: nn.correct_count %{{.*}}, %{{.*}} {class_axis = 2 : i64, ignore_index = -100 : i64} : (tensor<?x5x7xf32>, tensor<?x5xi64>) -> tensor<i64>
  %2 = nn.correct_count %logits, %t {class_axis = 2 : i64, ignore_index = -100 : i64} : (tensor<?x5x7xf32>, tensor<?x5xi64>) -> tensor<i64>
  return %0, %1, %2 : tensor<f32>, tensor<?x5x7xf32>, tensor<i64>
}

// -----

// Segmentation: logits [N, C, H, W], targets [N, H, W] (PyTorch's layout).
// CHECK-LABEL: func.func @per_pixel_cross_entropy
func.func @per_pixel_cross_entropy(%logits: tensor<2x3x4x4xf32>, %t: tensor<2x4x4xi64>) -> tensor<f32> {
  // CHECK: nn.loss cross_entropy %{{.*}}, %{{.*}} : (tensor<2x3x4x4xf32>, tensor<2x4x4xi64>) -> tensor<f32>
  %0 = nn.loss cross_entropy %logits, %t : (tensor<2x3x4x4xf32>, tensor<2x4x4xi64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @regression
func.func @regression(%y: tensor<?x3xf32>, %t: tensor<?x3xf32>) -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) {
  // CHECK: nn.loss mse %{{.*}}, %{{.*}} : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<f32>
  %0 = nn.loss mse %y, %t : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<f32>
  // CHECK: nn.loss l1
  %1 = nn.loss l1 %y, %t : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<f32>
  // CHECK: nn.loss huber %{{.*}}, %{{.*}} {delta = 5.000000e-01 : f64}
  %2 = nn.loss huber %y, %t {delta = 0.5 : f64} : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<f32>
  // CHECK: nn.loss smooth_l1
  %3 = nn.loss smooth_l1 %y, %t {delta = 0.0 : f64} : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<f32>
  // CHECK: nn.loss bce_with_logits %{{.*}}, %{{.*}} {pos_weight = array<f64: 1.000000e+00, 2.000000e+00, 3.000000e+00>}
  %4 = nn.loss bce_with_logits %y, %t {pos_weight = array<f64: 1.0, 2.0, 3.0>} : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<f32>
  return %0, %1, %2, %3, %4 : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>
}
