// RUN: dpc-opt %s -split-input-file -nn-build-train-step="momentum=0.9" | FileCheck %s
// RUN: dpc-opt %s -split-input-file -nn-build-train-step="optimizer=adamw" | FileCheck %s --check-prefix=ADAMW

// An MLP: linear + relu + linear. @forward stays; @eval_step and @train_step
// follow it.
// CHECK-LABEL: func.func @forward
// CHECK-LABEL: func.func @eval_step
// CHECK-SAME: (%{{.*}}: tensor<?x4xf32> {nn.input = "x"}, %[[LABELS:arg[0-9]+]]: tensor<?xi64> {nn.labels}, %{{.*}}: tensor<8x4xf32> {nn.param = "fc1.weight"}, %{{.*}}: tensor<8xf32> {nn.param = "fc1.bias"}, %{{.*}}: tensor<3x8xf32> {nn.param = "fc2.weight"})
// CHECK-SAME: -> (tensor<f32> {nn.output = "loss"}, tensor<i64> {nn.output = "correct"}, tensor<?x3xf32> {nn.output = "logits"})
// CHECK: nn.linear
// CHECK: %[[LOGITS:.*]] = nn.linear
// CHECK: nn.loss cross_entropy %[[LOGITS]], %[[LABELS]]
// CHECK: nn.correct_count %[[LOGITS]], %[[LABELS]]
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: (%[[X:arg[0-9]+]]: tensor<?x4xf32> {nn.input = "x"}, %[[Y:arg[0-9]+]]: tensor<?xi64> {nn.labels}, %[[LR:arg[0-9]+]]: tensor<f32> {nn.lr}, %[[W1:arg[0-9]+]]: tensor<8x4xf32> {nn.param = "fc1.weight"}, %[[B1:arg[0-9]+]]: tensor<8xf32> {nn.param = "fc1.bias"}, %[[W2:arg[0-9]+]]: tensor<3x8xf32> {nn.param = "fc2.weight"}, %[[M1:arg[0-9]+]]: tensor<8x4xf32> {nn.opt_state = "fc1.weight.momentum_buffer"}, %[[M2:arg[0-9]+]]: tensor<8xf32> {nn.opt_state = "fc1.bias.momentum_buffer"}, %[[M3:arg[0-9]+]]: tensor<3x8xf32> {nn.opt_state = "fc2.weight.momentum_buffer"})
// CHECK-SAME: -> (tensor<f32> {nn.output = "loss"}, tensor<i64> {nn.output = "correct"}, tensor<8x4xf32> {nn.param_update = "fc1.weight"}, tensor<8xf32> {nn.param_update = "fc1.bias"}, tensor<3x8xf32> {nn.param_update = "fc2.weight"}, tensor<8x4xf32> {nn.opt_state_update = "fc1.weight.momentum_buffer"}, tensor<8xf32> {nn.opt_state_update = "fc1.bias.momentum_buffer"}, tensor<3x8xf32> {nn.opt_state_update = "fc2.weight.momentum_buffer"})
// CHECK: %[[H:.*]] = nn.linear %[[X]], %[[W1]], %[[B1]]
// CHECK: %[[A:.*]] = nn.relu %[[H]]
// CHECK: %[[LOGITS:.*]] = nn.linear %[[A]], %[[W2]]
// CHECK: %[[LOSS:.*]] = nn.loss cross_entropy %[[LOGITS]], %[[Y]]
// CHECK: %[[CORRECT:.*]] = nn.correct_count %[[LOGITS]], %[[Y]]
// CHECK: %[[ONE:.*]] = nn.constant dense<1.000000e+00> : tensor<f32>
// CHECK: %[[DLOGITS:.*]] = nn.loss_grad cross_entropy %[[LOGITS]], %[[Y]], %[[ONE]]
// CHECK: %[[DA:.*]] = nn.matmul %[[DLOGITS]], %[[W2]]
// CHECK: %[[DLT:.*]] = nn.transpose %[[DLOGITS]] {permutation = array<i64: 1, 0>}
// CHECK: %[[DW2:.*]] = nn.matmul %[[DLT]], %[[A]]
// CHECK: %[[DH:.*]] = nn.relu_grad %[[DA]], %[[H]]
// CHECK: %[[DHT:.*]] = nn.transpose %[[DH]]
// CHECK: %[[DW1:.*]] = nn.matmul %[[DHT]], %[[X]]
// CHECK: %[[DB1:.*]] = nn.reduce_sum %[[DH]] {dims = array<i64: 0>}
// The gradient of the data input is not needed and not built.
// CHECK-NOT: nn.matmul %[[DH]], %[[W1]]
// CHECK: %[[NW1:.*]], %[[NM1:.*]] = nn.sgd_update %[[W1]], %[[DW1]], %[[LR]], %[[M1]] {momentum = 9.000000e-01 : f64}
// CHECK: %[[NB1:.*]], %[[NM2:.*]] = nn.sgd_update %[[B1]], %[[DB1]], %[[LR]], %[[M2]]
// CHECK: %[[NW2:.*]], %[[NM3:.*]] = nn.sgd_update %[[W2]], %[[DW2]], %[[LR]], %[[M3]]
// CHECK: return %[[LOSS]], %[[CORRECT]], %[[NW1]], %[[NB1]], %[[NW2]], %[[NM1]], %[[NM2]], %[[NM3]]

// AdamW adds the run-time step and two state tensors per parameter.
// ADAMW-LABEL: func.func @train_step
// ADAMW-SAME: %[[LR:arg[0-9]+]]: tensor<f32> {nn.lr}, %[[STEP:arg[0-9]+]]: tensor<i64> {nn.step}, %[[W1:arg[0-9]+]]: tensor<8x4xf32> {nn.param = "fc1.weight"}
// ADAMW-SAME: %[[M:arg[0-9]+]]: tensor<8x4xf32> {nn.opt_state = "fc1.weight.exp_avg"}, %[[V:arg[0-9]+]]: tensor<8x4xf32> {nn.opt_state = "fc1.weight.exp_avg_sq"}
// ADAMW-SAME: tensor<8x4xf32> {nn.opt_state_update = "fc1.weight.exp_avg"}, tensor<8x4xf32> {nn.opt_state_update = "fc1.weight.exp_avg_sq"}
// ADAMW: nn.adamw_update %[[W1]], %{{.*}}, %[[M]], %[[V]], %[[STEP]], %[[LR]] :
// ADAMW-COUNT-2: nn.adamw_update

func.func @forward(%x: tensor<?x4xf32> {nn.input = "x"},
                   %w1: tensor<8x4xf32> {nn.param = "fc1.weight"},
                   %b1: tensor<8xf32> {nn.param = "fc1.bias"},
                   %w2: tensor<3x8xf32> {nn.param = "fc2.weight"})
    -> (tensor<?x3xf32> {nn.output = "logits"}) {
  %0 = nn.linear %x, %w1, %b1 : (tensor<?x4xf32>, tensor<8x4xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %1 = nn.relu %0 : tensor<?x8xf32>
  %2 = nn.linear %1, %w2 : (tensor<?x8xf32>, tensor<3x8xf32>) -> tensor<?x3xf32>
  return %2 : tensor<?x3xf32>
}

// -----

// conv + batch_norm + relu + residual add + max_pool: batch norm trains on
// batch statistics and its running statistics come back as buffer updates.
// CHECK-LABEL: func.func @eval_step
// CHECK: nn.batch_norm %
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[RM:arg[0-9]+]]: tensor<4xf32> {nn.buffer = "bn.running_mean"}, %[[RV:arg[0-9]+]]: tensor<4xf32> {nn.buffer = "bn.running_var"}
// CHECK-SAME: tensor<4xf32> {nn.buffer_update = "bn.running_mean"}, tensor<4xf32> {nn.buffer_update = "bn.running_var"}
// CHECK-NOT: nn.batch_norm %
// CHECK: %[[Y:.*]], %[[MEAN:.*]], %[[INVSTD:.*]], %[[NRM:.*]], %[[NRV:.*]] = nn.batch_norm_train %{{.*}}, %{{.*}}, %{{.*}}, %[[RM]], %[[RV]]
// CHECK: nn.max_pool2d_grad
// CHECK: nn.relu_grad
// CHECK: nn.batch_norm_grad %{{.*}}, %{{.*}}, %{{.*}}, %[[MEAN]], %[[INVSTD]]
// CHECK: nn.conv2d_grad_filter %{{.*}}, %{{.*}} {kernel_size = array<i64: 3, 3>, padding = array<i64: 1, 1, 1, 1>}
// The input's gradients (conv2d_grad_input, the residual branch) are dropped.
// CHECK-NOT: nn.conv2d_grad_input
// CHECK: return {{.*}}, %[[NRM]], %[[NRV]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} :

func.func @forward(%x: tensor<2x4x8x8xf32> {nn.input = "x"},
                   %w: tensor<4x4x3x3xf32> {nn.param = "conv.weight"},
                   %s: tensor<4xf32> {nn.param = "bn.weight"},
                   %t: tensor<4xf32> {nn.param = "bn.bias"},
                   %m: tensor<4xf32> {nn.buffer = "bn.running_mean"},
                   %v: tensor<4xf32> {nn.buffer = "bn.running_var"},
                   %fw: tensor<10x64xf32> {nn.param = "fc.weight"})
    -> (tensor<2x10xf32> {nn.output = "logits"}) {
  %0 = nn.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<2x4x8x8xf32>, tensor<4x4x3x3xf32>) -> tensor<2x4x8x8xf32>
  %1 = nn.batch_norm %0, %s, %t, %m, %v : (tensor<2x4x8x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x8x8xf32>
  %2 = nn.relu %1 : tensor<2x4x8x8xf32>
  %3 = nn.add %2, %x : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %4 = nn.max_pool2d %3 {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>} : (tensor<2x4x8x8xf32>) -> tensor<2x4x4x4xf32>
  %5 = nn.flatten %4 : (tensor<2x4x4x4xf32>) -> tensor<2x64xf32>
  %6 = nn.linear %5, %fw : (tensor<2x64xf32>, tensor<10x64xf32>) -> tensor<2x10xf32>
  return %6 : tensor<2x10xf32>
}

// -----

// %1 feeds both the mul and the add: its gradients are summed before
// tanh_grad; the broadcast `scale` gets its gradient summed over the batch.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[T:.*]] = nn.tanh
// CHECK: %[[DY:.*]] = nn.loss_grad cross_entropy
// CHECK: %[[DT1:.*]] = nn.mul %[[DY]], %{{.*}} : (tensor<?x4xf32>, tensor<4xf32>)
// CHECK: %[[PROD:.*]] = nn.mul %[[DY]], %[[T]]
// CHECK: %[[DS:.*]] = nn.reduce_sum %[[PROD]] {dims = array<i64: 0>} : (tensor<?x4xf32>) -> tensor<4xf32>
// CHECK: %[[SUM:.*]] = nn.add %[[DY]], %[[DT1]]
// CHECK: nn.tanh_grad %[[SUM]], %[[T]]

func.func @forward(%x: tensor<?x4xf32> {nn.input = "x"},
                   %w: tensor<4x4xf32> {nn.param = "fc.weight"},
                   %b: tensor<4xf32> {nn.param = "scale"})
    -> (tensor<?x4xf32> {nn.output = "logits"}) {
  %0 = nn.linear %x, %w : (tensor<?x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
  %1 = nn.tanh %0 : tensor<?x4xf32>
  %2 = nn.mul %1, %b : (tensor<?x4xf32>, tensor<4xf32>) -> tensor<?x4xf32>
  %3 = nn.add %2, %1 : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return %3 : tensor<?x4xf32>
}

// -----

// The activations whose gradient reads the input: each gradient op gets
// the forward op's input and attributes.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[C:.*]] = nn.clip %[[X:.*]] {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64}
// CHECK: %[[S:.*]] = nn.hard_swish %[[C]]
// CHECK: %[[H:.*]] = nn.hard_sigmoid %[[S]] {alpha = 0.16666666666666666 : f64}
// CHECK: %[[G:.*]] = nn.gelu %[[H]] {tanh_approximation = true}
// CHECK: nn.gelu_grad %{{.*}}, %[[H]] {tanh_approximation = true}
// CHECK: nn.hard_sigmoid_grad %{{.*}}, %[[S]] {alpha = 0.16666666666666666 : f64, beta = 5.000000e-01 : f64}
// CHECK: nn.hard_swish_grad %{{.*}}, %[[C]]
// CHECK: nn.clip_grad %{{.*}}, %[[X]] {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64}

func.func @forward(%x: tensor<?x4xf32> {nn.input = "x"},
                   %w: tensor<4x4xf32> {nn.param = "fc.weight"})
    -> (tensor<?x4xf32> {nn.output = "logits"}) {
  %0 = nn.linear %x, %w : (tensor<?x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
  %1 = nn.clip %0 {min = 0.0 : f64, max = 6.0 : f64} : tensor<?x4xf32>
  %2 = nn.hard_swish %1 : tensor<?x4xf32>
  %3 = nn.hard_sigmoid %2 {alpha = 0.16666666666666666 : f64} : tensor<?x4xf32>
  %4 = nn.gelu %3 {tanh_approximation = true} : tensor<?x4xf32>
  return %4 : tensor<?x4xf32>
}

// -----

// The activations defined with their gradient op (NNOps.td's
// NN_InputActivation): the gradient op gets dy, the forward op's input and
// the attributes it has.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[L:.*]] = nn.leaky_relu %[[X:.*]] {alpha = 2.000000e-01 : f64}
// CHECK: %[[S:.*]] = nn.selu %[[L]] : tensor<?x4xf32>
// CHECK: %[[T:.*]] = nn.threshold %[[S]] {threshold = 1.000000e-01 : f64, value = -1.000000e+00 : f64}
// CHECK: nn.threshold_grad %{{.*}}, %[[S]] {threshold = 1.000000e-01 : f64, value = -1.000000e+00 : f64}
// CHECK: nn.selu_grad %{{.*}}, %[[L]] : tensor<?x4xf32>
// CHECK: nn.leaky_relu_grad %{{.*}}, %[[X]] {alpha = 2.000000e-01 : f64}

func.func @forward(%x: tensor<?x4xf32> {nn.input = "x"},
                   %w: tensor<4x4xf32> {nn.param = "fc.weight"})
    -> (tensor<?x4xf32> {nn.output = "logits"}) {
  %0 = nn.linear %x, %w : (tensor<?x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
  %1 = nn.leaky_relu %0 {alpha = 0.2 : f64} : tensor<?x4xf32>
  %2 = nn.selu %1 : tensor<?x4xf32>
  %3 = nn.threshold %2 {threshold = 0.1 : f64, value = -1.0 : f64} : tensor<?x4xf32>
  return %3 : tensor<?x4xf32>
}

// -----

// Dropout: the identity in @eval_step; in @train_step its gradient redraws
// the same mask (same ratio and key) instead of saving it.
// CHECK-LABEL: func.func @eval_step
// CHECK-SAME: (%[[X:arg[0-9]+]]: tensor<?x4xf32> {nn.input = "x"}
// CHECK-NOT: nn.dropout
// CHECK: %[[H:.*]] = nn.linear %[[X]]
// CHECK-NOT: nn.dropout
// CHECK: nn.loss cross_entropy %[[H]]
// CHECK-LABEL: func.func @train_step
// CHECK: %[[H:.*]] = nn.linear
// CHECK: %[[D:.*]] = nn.dropout %[[H]] {key = 3 : i64, ratio = 2.500000e-01 : f64}
// CHECK: nn.loss cross_entropy %[[D]]
// CHECK: %[[DD:.*]] = nn.loss_grad cross_entropy
// CHECK: nn.dropout_grad %[[DD]] {key = 3 : i64, ratio = 2.500000e-01 : f64} : tensor<?x4xf32>

func.func @forward(%x: tensor<?x4xf32> {nn.input = "x"},
                   %w: tensor<4x4xf32> {nn.param = "fc.weight"})
    -> (tensor<?x4xf32> {nn.output = "logits"}) {
  %0 = nn.linear %x, %w : (tensor<?x4xf32>, tensor<4x4xf32>) -> tensor<?x4xf32>
  %1 = nn.dropout %0 {ratio = 0.25 : f64, key = 3 : i64} : tensor<?x4xf32>
  return %1 : tensor<?x4xf32>
}

// -----

// Attention's shapes: the batch leaves dim 0 ([T, N, E]) and merges with
// the heads ([N*H, T, d]); the gradients of its reshapes follow it (-1
// where it is, 0 where a dim is copied) and batch_matmul's are products
// with transposed operands (dS Q, and dS^T Q for the transposed rhs).
// CHECK-LABEL: func.func @train_step
// CHECK: %[[Q:.*]] = nn.transpose %{{.*}} {permutation = array<i64: 1, 0, 2>} : (tensor<4x?x4xf32>) -> tensor<?x4x4xf32>
// CHECK: nn.batch_matmul %[[Q]], %[[Q]] {transpose_rhs = true}
// CHECK: %[[DS:.*]] = nn.reshape %{{.*}} {shape = array<i64: -1, 4, 4>} : (tensor<?x32xf32>) -> tensor<?x4x4xf32>
// CHECK: %[[DLHS:.*]] = nn.batch_matmul %[[DS]], %[[Q]] : (tensor<?x4x4xf32>, tensor<?x4x4xf32>) -> tensor<?x4x4xf32>
// CHECK: %[[DRHS:.*]] = nn.batch_matmul %[[DS]], %[[Q]] {transpose_lhs = true}
// CHECK: %[[DQ:.*]] = nn.add %[[DLHS]], %[[DRHS]]
// CHECK: %[[DH:.*]] = nn.transpose %[[DQ]] {permutation = array<i64: 1, 0, 2>} : (tensor<?x4x4xf32>) -> tensor<4x?x4xf32>
// CHECK: nn.reshape %[[DH]] {shape = array<i64: 0, -1, 8>} : (tensor<4x?x4xf32>) -> tensor<4x?x8xf32>
func.func @forward(%x: tensor<?x4x8xf32> {nn.input = "x"},
                   %pos: tensor<1x4x8xf32> {nn.param = "position"},
                   %w: tensor<3x32xf32> {nn.param = "fc.weight"})
    -> (tensor<?x3xf32> {nn.output = "logits"}) {
  %a = nn.add %x, %pos : (tensor<?x4x8xf32>, tensor<1x4x8xf32>) -> tensor<?x4x8xf32>
  %t = nn.transpose %a {permutation = array<i64: 1, 0, 2>} : (tensor<?x4x8xf32>) -> tensor<4x?x8xf32>
  %h = nn.reshape %t {shape = array<i64: 4, -1, 4>} : (tensor<4x?x8xf32>) -> tensor<4x?x4xf32>
  %q = nn.transpose %h {permutation = array<i64: 1, 0, 2>} : (tensor<4x?x4xf32>) -> tensor<?x4x4xf32>
  %s = nn.batch_matmul %q, %q {transpose_rhs = true} : (tensor<?x4x4xf32>, tensor<?x4x4xf32>) -> tensor<?x4x4xf32>
  %f = nn.reshape %s {shape = array<i64: -1, 32>} : (tensor<?x4x4xf32>) -> tensor<?x32xf32>
  %y = nn.linear %f, %w : (tensor<?x32xf32>, tensor<3x32xf32>) -> tensor<?x3xf32>
  return %y : tensor<?x3xf32>
}

// -----

// A class token expanded to the batch: its gradient sums over the rows.
// CHECK-LABEL: func.func @train_step
// CHECK: %[[T:.*]] = nn.broadcast_rows %[[TOKEN:arg[0-9]+]], %arg0 : (tensor<1x1x4xf32>, tensor<?x3x4xf32>) -> tensor<?x1x4xf32>
// CHECK: %[[PARTS:.*]]:2 = nn.split %{{.*}} {axis = 1 : i64, sizes = array<i64: 1, 3>}
// CHECK: %[[DT:.*]] = nn.reduce_sum %[[PARTS]]#0 {dims = array<i64: 0>, keep_dims = true} : (tensor<?x1x4xf32>) -> tensor<1x1x4xf32>
// CHECK: nn.sgd_update %[[TOKEN]], %[[DT]]
func.func @forward(%x: tensor<?x3x4xf32> {nn.input = "x"},
                   %token: tensor<1x1x4xf32> {nn.param = "token"},
                   %w: tensor<2x16xf32> {nn.param = "fc.weight"})
    -> (tensor<?x2xf32> {nn.output = "logits"}) {
  %t = nn.broadcast_rows %token, %x : (tensor<1x1x4xf32>, tensor<?x3x4xf32>) -> tensor<?x1x4xf32>
  %c = nn.concat %t, %x {axis = 1 : i64} : (tensor<?x1x4xf32>, tensor<?x3x4xf32>) -> tensor<?x4x4xf32>
  %f = nn.reshape %c {shape = array<i64: -1, 16>} : (tensor<?x4x4xf32>) -> tensor<?x16xf32>
  %y = nn.linear %f, %w : (tensor<?x16xf32>, tensor<2x16xf32>) -> tensor<?x2xf32>
  return %y : tensor<?x2xf32>
}
