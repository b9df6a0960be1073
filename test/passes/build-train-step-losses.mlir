// The loss chosen at compile time: its kind, its options and the target
// type it asks the step for.
// RUN: dpc-opt %s -split-input-file -nn-build-train-step="loss=mse" | FileCheck %s --check-prefix=MSE
// RUN: dpc-opt %s -split-input-file -nn-build-train-step="loss=huber delta=0.5" | FileCheck %s --check-prefix=HUBER
// RUN: dpc-opt %s -split-input-file -nn-build-train-step="loss=bce-with-logits pos-weight=1,2,3" | FileCheck %s --check-prefix=BCE
// RUN: dpc-opt %s -split-input-file -nn-build-train-step="loss=cross-entropy class-axis=-1 ignore-index=-100 label-smoothing=0.1 class-weights=1,1,2" | FileCheck %s --check-prefix=TOKENS
// RUN: not dpc-opt %s -split-input-file -nn-build-train-step="loss=nll" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not dpc-opt %s -split-input-file -nn-build-train-step="loss=mse ignore-index=0" 2>&1 | FileCheck %s --check-prefix=MISPLACED
// RUN: not dpc-opt %s -split-input-file -nn-build-train-step="class-weights=1,2" 2>&1 | FileCheck %s --check-prefix=WEIGHTS

// A model with outputs [N, 4, 3]: regression targets of that shape, or a
// class per position with the classes last (a language model's layout).
func.func @forward(%x: tensor<?x2xf32> {nn.input = "x"}, %w: tensor<12x2xf32> {nn.param = "w"}) -> (tensor<?x4x3xf32> {nn.output = "y"}) {
  %h = nn.linear %x, %w : (tensor<?x2xf32>, tensor<12x2xf32>) -> tensor<?x12xf32>
  %y = nn.reshape %h {shape = array<i64: 0, 4, 3>} : (tensor<?x12xf32>) -> tensor<?x4x3xf32>
  return %y : tensor<?x4x3xf32>
}

// MSE-LABEL: func.func @eval_step
// MSE-SAME: -> (tensor<f32> {nn.output = "loss"}, tensor<?x4x3xf32> {nn.output = "logits"})
// MSE-LABEL: func.func @train_step
// MSE-SAME: %[[T:arg[0-9]+]]: tensor<?x4x3xf32> {nn.labels}
// MSE-SAME: -> (tensor<f32> {nn.output = "loss"}, tensor<12x2xf32> {nn.param_update = "w"})
// MSE: %[[Y:.*]] = nn.reshape
// MSE: nn.loss mse %[[Y]], %[[T]] : (tensor<?x4x3xf32>, tensor<?x4x3xf32>) -> tensor<f32>
// MSE: nn.loss_grad mse %[[Y]], %[[T]], %{{.*}} : (tensor<?x4x3xf32>, tensor<?x4x3xf32>, tensor<f32>) -> tensor<?x4x3xf32>

// HUBER: nn.loss huber %{{.*}}, %{{.*}} {delta = 5.000000e-01 : f64}
// HUBER: nn.loss_grad huber %{{.*}}, %{{.*}}, %{{.*}} {delta = 5.000000e-01 : f64}

// BCE: nn.loss bce_with_logits %{{.*}}, %{{.*}} {pos_weight = array<f64: 1.000000e+00, 2.000000e+00, 3.000000e+00>}

// The targets are the logits' shape less the class axis (the last); the
// mean divides by the weight of the valid targets.
// TOKENS-LABEL: func.func @train_step
// TOKENS-SAME: %[[T:arg[0-9]+]]: tensor<?x4xi64> {nn.labels}
// TOKENS-SAME: -> (tensor<f32> {nn.output = "loss"}, tensor<i64> {nn.output = "correct"}, tensor<12x2xf32> {nn.param_update = "w"})
// TOKENS: %[[Y:.*]] = nn.reshape
// TOKENS: %[[W:.*]] = nn.loss_weight cross_entropy %[[Y]], %[[T]] {class_axis = 2 : i64, class_weights = array<f64: 1.000000e+00, 1.000000e+00, 2.000000e+00>, ignore_index = -100 : i64, label_smoothing = 1.000000e-01 : f64}
// TOKENS: nn.loss cross_entropy %[[Y]], %[[T]], %[[W]] {class_axis = 2 : i64
// TOKENS: nn.correct_count %[[Y]], %[[T]] {class_axis = 2 : i64, ignore_index = -100 : i64}
// TOKENS: nn.loss_grad cross_entropy %[[Y]], %[[T]], %{{.*}}, %[[W]] {class_axis = 2 : i64

// UNKNOWN: unknown loss 'nll'; supported: cross-entropy, mse, l1, huber, smooth-l1, bce-with-logits
// MISPLACED: --ignore-index, --label-smoothing, --class-weights and --class-axis are cross-entropy options, not mse's
// WEIGHTS: --class-weights has 2 entries for 4 classes
