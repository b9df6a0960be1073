// RUN: dpc-opt %s -split-input-file -verify-diagnostics

func.func @conv_grad_input_shape(%dy: tensor<1x8x16x16xf32>, %w: tensor<8x3x3x3xf32>) {
  // expected-error @+2 {{result_grad 'tensor<1x8x16x16xf32>' does not match the forward result 'tensor<1x8x30x30xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.conv2d_grad_input %dy, %w {input_size = array<i64: 32, 32>} : (tensor<1x8x16x16xf32>, tensor<8x3x3x3xf32>) -> tensor<1x3x32x32xf32>
  return
}

// -----

func.func @conv_grad_filter_kernel(%dy: tensor<1x8x30x30xf32>, %x: tensor<1x3x32x32xf32>) {
  // expected-error @+2 {{'kernel_size' must have 2 entries, got 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.conv2d_grad_filter %dy, %x {kernel_size = array<i64: 3>} : (tensor<1x8x30x30xf32>, tensor<1x3x32x32xf32>) -> tensor<8x3x3x3xf32>
  return
}

// -----

func.func @batch_norm_train_stats(%x: tensor<4x8x5x5xf32>, %s: tensor<8xf32>, %m: tensor<4xf32>) {
  // expected-error @+2 {{running_mean must have 8 elements, got 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %mean, %invstd, %rm, %rv = nn.batch_norm_train %x, %s, %s, %m, %s : (tensor<4x8x5x5xf32>, tensor<8xf32>, tensor<8xf32>, tensor<4xf32>, tensor<8xf32>) -> (tensor<4x8x5x5xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

func.func @batch_norm_grad_types(%dy: tensor<4x8x5x5xf32>, %x: tensor<4x8x6x6xf32>, %s: tensor<8xf32>) {
  // expected-error @+2 {{result_grad type 'tensor<4x8x5x5xf32>' differs from the input type 'tensor<4x8x6x6xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %dx, %ds, %db = nn.batch_norm_grad %dy, %x, %s, %s, %s : (tensor<4x8x5x5xf32>, tensor<4x8x6x6xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<4x8x6x6xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

// Synchronized batch norm's statistics are f64 sums.
func.func @batch_norm_apply_f32_sums(%x: tensor<4x8x5x5xf32>, %s: tensor<8xf32>, %n: tensor<1xf64>) {
  // expected-error @+2 {{sum element type 'f32' differs from 'f64'}}
  // expected-error @+1 {{failed to infer returned types}}
  %y, %m, %i, %rm, %rv = nn.batch_norm_apply %x, %s, %s, %s, %s, %s, %s, %n : (tensor<4x8x5x5xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<1xf64>) -> (tensor<4x8x5x5xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

func.func @batch_norm_grad_apply_f32_count(%x: tensor<4x8x5x5xf32>, %s: tensor<8xf32>, %n: tensor<1xf32>) {
  // expected-error @+2 {{count must be tensor<1xf64>, got 'tensor<1xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %dx = nn.batch_norm_grad_apply %x, %x, %s, %s, %s, %s, %s, %n : (tensor<4x8x5x5xf32>, tensor<4x8x5x5xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<1xf32>) -> tensor<4x8x5x5xf32>
  return
}

// -----

func.func @max_pool_grad_shape(%dy: tensor<2x4x4x4xf32>, %x: tensor<2x4x7x7xf32>) {
  // expected-error @+2 {{result_grad 'tensor<2x4x4x4xf32>' does not match the forward result 'tensor<2x4x3x3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.max_pool2d_grad %dy, %x {kernel_size = array<i64: 3, 3>, stride = array<i64: 2, 2>} : (tensor<2x4x4x4xf32>, tensor<2x4x7x7xf32>) -> tensor<2x4x7x7xf32>
  return
}

// -----

func.func @global_pool_grad_shape(%dy: tensor<2x4x2x2xf32>) {
  // expected-error @+2 {{result_grad must be N x C x 1 x 1, got 'tensor<2x4x2x2xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.global_avg_pool2d_grad %dy {input_size = array<i64: 7, 7>} : (tensor<2x4x2x2xf32>) -> tensor<2x4x7x7xf32>
  return
}

// -----

func.func @pad_grad_too_much(%dy: tensor<2x3xf32>) {
  // expected-error @+2 {{padding of dim 1 exceeds its size 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.pad_grad %dy {low = array<i64: 0, 2>, high = array<i64: 0, 2>} : (tensor<2x3xf32>) -> tensor<2x0xf32>
  return
}

// -----

func.func @reduce_sum_dims(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{'dims' must be strictly increasing in [0, 2), got [1, 0]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.reduce_sum %x {dims = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<f32>
  return
}

// -----

func.func @transpose_permutation(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{'permutation' [0, 0] is not a permutation of the 2 dims of 'tensor<2x3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.transpose %x {permutation = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<2x2xf32>
  return
}

// -----

func.func @softmax_grad_axis(%dy: tensor<2x3xf32>, %y: tensor<2x3xf32>) {
  // expected-error @+1 {{'axis' must be in [0, 2), got 2}}
  %0 = nn.log_softmax_grad %dy, %y {axis = 2} : tensor<2x3xf32>
  return
}

// -----

func.func @relu_grad_types(%dy: tensor<2x3xf32>, %x: tensor<2x4xf32>) {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %0 = "nn.relu_grad"(%dy, %x) : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @cross_entropy_grad_rows(%logits: tensor<4x10xf32>, %labels: tensor<3xi64>, %dl: tensor<f32>) {
  // expected-error @+2 {{cross_entropy's target 'tensor<3xi64>' must have the logits' shape less the class axis 1: [4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.loss_grad cross_entropy %logits, %labels, %dl : (tensor<4x10xf32>, tensor<3xi64>, tensor<f32>) -> tensor<4x10xf32>
  return
}

// -----

func.func @correct_count_labels(%logits: tensor<4x10xf32>, %labels: tensor<4x1xi64>) {
  // expected-error @+2 {{cross_entropy's target 'tensor<4x1xi64>' must have the logits' shape less the class axis 1: [4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.correct_count %logits, %labels : (tensor<4x10xf32>, tensor<4x1xi64>) -> tensor<i64>
  return
}

// -----

func.func @sgd_missing_buffer(%p: tensor<4xf32>, %lr: tensor<f32>) {
  // expected-error @+2 {{a momentum buffer is needed exactly when momentum is not 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.sgd_update %p, %p, %lr {momentum = 0.9} : (tensor<4xf32>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return
}

// -----

func.func @sgd_nesterov(%p: tensor<4xf32>, %lr: tensor<f32>) {
  // expected-error @+2 {{nesterov needs a momentum > 0 and a dampening of 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.sgd_update %p, %p, %lr {nesterov = true} : (tensor<4xf32>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return
}

// -----

func.func @adamw_beta(%p: tensor<4xf32>, %step: tensor<i64>, %lr: tensor<f32>) {
  // expected-error @+2 {{'beta1' must be in [0.000000e+00, 1.000000e+00), got 1.000000e+00}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:3 = nn.adamw_update %p, %p, %p, %p, %step, %lr {beta1 = 1.0} : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<i64>, tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @adamw_state_type(%p: tensor<4xf32>, %m: tensor<5xf32>, %step: tensor<i64>, %lr: tensor<f32>) {
  // expected-error @+2 {{exp_avg type 'tensor<5xf32>' differs from the param type 'tensor<4xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:3 = nn.adamw_update %p, %p, %m, %p, %step, %lr : (tensor<4xf32>, tensor<4xf32>, tensor<5xf32>, tensor<4xf32>, tensor<i64>, tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @accumulate_types(%acc: tensor<8x4xf32>, %g: tensor<4x8xf32>) {
  // expected-error @+1 {{all of {accumulator, value, result} have same type}}
  %0 = "nn.accumulate"(%acc, %g) : (tensor<8x4xf32>, tensor<4x8xf32>) -> tensor<8x4xf32>
  return
}

// -----

func.func @maximum_grad_shape(%dy: tensor<2x4xf32>, %a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+2 {{result_grad 'tensor<2x4xf32>' is not the broadcast of 'tensor<2x3xf32>' and 'tensor<3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:2 = nn.maximum_grad %dy, %a, %b : (tensor<2x4xf32>, tensor<2x3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>)
  return
}

// -----

func.func @reduce_extremum_grad_shape(%dy: tensor<2xf32>, %x: tensor<2x3xf32>) {
  // expected-error @+2 {{expected 'tensor<2x1xf32>' (the reduced input), got 'tensor<2xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.reduce_extremum_grad %dy, %x, %dy {dims = array<i64: 1>, keep_dims = true} : (tensor<2xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @reduce_max_dims(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{'dims' must be strictly increasing in [0, 2), got [2]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.reduce_max %x {dims = array<i64: 2>} : (tensor<2x3xf32>) -> tensor<2xf32>
  return
}
