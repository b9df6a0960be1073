// RUN: dpc-opt %s -split-input-file -verify-diagnostics

func.func @rows(%x: tensor<4x10xf32>, %l: tensor<5xi64>) {
  // expected-error @+2 {{cross_entropy's target 'tensor<5xi64>' must have the logits' shape less the class axis 1: [4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.loss cross_entropy %x, %l : (tensor<4x10xf32>, tensor<5xi64>) -> tensor<f32>
  return
}

// -----

func.func @float_classes(%x: tensor<4x10xf32>, %l: tensor<4xf32>) {
  // expected-error @+2 {{cross_entropy's target must hold integer classes, got 'tensor<4xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.loss cross_entropy %x, %l : (tensor<4x10xf32>, tensor<4xf32>) -> tensor<f32>
  return
}

// -----

func.func @per_pixel_shape(%x: tensor<2x3x4x4xf32>, %l: tensor<2x4xi64>) {
  // expected-error @+2 {{must have the logits' shape less the class axis 1: [2x4x4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.loss cross_entropy %x, %l : (tensor<2x3x4x4xf32>, tensor<2x4xi64>) -> tensor<f32>
  return
}

// -----

func.func @class_axis(%x: tensor<2x3x4xf32>, %l: tensor<2x3xi64>) {
  // expected-error @+2 {{class_axis 3 is not a dim in 1..2 of 'tensor<2x3x4xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.loss cross_entropy %x, %l {class_axis = 3 : i64} : (tensor<2x3x4xf32>, tensor<2x3xi64>) -> tensor<f32>
  return
}

// -----

func.func @class_weights(%x: tensor<4x3xf32>, %l: tensor<4xi64>, %w: tensor<f32>) {
  // expected-error @+2 {{class_weights has 2 entries for 3 classes}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.loss cross_entropy %x, %l, %w {class_weights = array<f64: 1.0, 2.0>} : (tensor<4x3xf32>, tensor<4xi64>, tensor<f32>) -> tensor<f32>
  return
}

// -----

func.func @smoothing(%x: tensor<4x3xf32>, %l: tensor<4xi64>) {
  // expected-error @+2 {{label_smoothing 1.500000e+00 is outside [0, 1]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.loss cross_entropy %x, %l {label_smoothing = 1.5 : f64} : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
  return
}

// -----

func.func @missing_divisor(%x: tensor<4x3xf32>, %l: tensor<4xi64>) {
  // expected-error @+2 {{a cross_entropy with ignore_index or class_weights needs a divisor (an nn.loss_weight)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.loss cross_entropy %x, %l {ignore_index = -100 : i64} : (tensor<4x3xf32>, tensor<4xi64>) -> tensor<f32>
  return
}

// -----

func.func @stray_divisor(%x: tensor<4x3xf32>, %l: tensor<4x3xf32>, %w: tensor<f32>) {
  // expected-error @+2 {{only a cross_entropy with ignore_index or class_weights takes a divisor}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.loss mse %x, %l, %w : (tensor<4x3xf32>, tensor<4x3xf32>, tensor<f32>) -> tensor<f32>
  return
}

// -----

func.func @regression_shape(%y: tensor<4x3xf32>, %t: tensor<4xf32>) {
  // expected-error @+2 {{mse's target 'tensor<4xf32>' must have the output's shape and type 'tensor<4x3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.loss mse %y, %t : (tensor<4x3xf32>, tensor<4xf32>) -> tensor<f32>
  return
}

// -----

func.func @regression_integer_target(%y: tensor<4xf32>, %t: tensor<4xi64>) {
  // expected-error @+2 {{l1's target 'tensor<4xi64>' must have the output's shape and type 'tensor<4xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.loss l1 %y, %t : (tensor<4xf32>, tensor<4xi64>) -> tensor<f32>
  return
}

// -----

func.func @regression_options(%y: tensor<4xf32>, %t: tensor<4xf32>) {
  // expected-error @+2 {{mse takes no class_axis, ignore_index, label_smoothing or class_weights}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.loss mse %y, %t {ignore_index = 0 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  return
}

// -----

func.func @huber_delta(%y: tensor<4xf32>, %t: tensor<4xf32>) {
  // expected-error @+2 {{huber's delta must be > 0, got 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.loss huber %y, %t {delta = 0.0 : f64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  return
}

// -----

func.func @pos_weight(%y: tensor<4x3xf32>, %t: tensor<4x3xf32>) {
  // expected-error @+2 {{pos_weight has 2 entries, not one per entry of the last dim of 'tensor<4x3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.loss bce_with_logits %y, %t {pos_weight = array<f64: 1.0, 2.0>} : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<f32>
  return
}

// -----

func.func @weight_of_regression(%y: tensor<4xf32>, %t: tensor<4xi64>) {
  // expected-error @+2 {{only a cross_entropy weighs its targets, not mse}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.loss_weight mse %y, %t : (tensor<4xf32>, tensor<4xi64>) -> tensor<f32>
  return
}

// -----

func.func @unknown_kind(%y: tensor<4xf32>, %t: tensor<4xf32>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'kind' [cross_entropy, mse, l1, huber, smooth_l1, bce_with_logits]}}
  %0 = nn.loss nll %y, %t : (tensor<4xf32>, tensor<4xf32>) -> tensor<f32>
  return
}
