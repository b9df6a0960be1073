// RUN: dpc-opt %s -split-input-file -nn-set-batch=batch=8 -nn-build-train-step="momentum=0.9" -convert-nn-to-exec -schedule-exec-streams -plan-exec-arena -report-exec-memory | FileCheck %s

// An MLP: the forward graph goes through differentiation and lowering.
// Training state is declared once, before the steps.
// CHECK-LABEL: module
// CHECK: exec.persistent @fc1.weight "parameter" init = "model" {source = "fc1.weight"} : tensor<16x12xf32>
// CHECK: exec.persistent @fc1.bias "parameter"
// CHECK: exec.persistent @fc2.weight "parameter"
// CHECK: exec.persistent @fc1.weight.momentum_buffer "optimizer_state" init = "zeros" {parameter = "fc1.weight"}
// CHECK-NOT: func.func

// CHECK: exec.step "eval_step" device(0) batch(8) arena({{[0-9]+}})
// Batch-major buffers have a `?` batch; labels travel as i32.
// CHECK: %[[X:.*]] = exec.input "images" : memref<?x3x2x2xf32>
// CHECK: %[[Y:.*]] = exec.input "labels" : memref<?xi32>
// CHECK: %[[W1:.*]] = exec.state @fc1.weight : memref<16x12xf32>
// The flatten is a view of the input, not a copy.
// CHECK: %[[FLAT:.*]] = exec.view %[[X]] : memref<?x3x2x2xf32> to memref<?x12xf32>
// CHECK: %[[H:.*]] = exec.arena[0] : memref<?x16xf32>
// CHECK: exec.kernel "LinearForward" ins(%[[FLAT]], %[[W1]], %{{.*}} : {{.*}}) outs(%[[H]] : memref<?x16xf32>)
// CHECK: exec.kernel "ReluForward"
// CHECK: exec.kernel "LinearForward"
// CHECK: exec.kernel "CrossEntropyForward"
// CHECK: exec.kernel "CorrectCount"
// CHECK: exec.output "loss"
// CHECK: exec.output "correct"
// CHECK: exec.output "logits"

// CHECK: exec.step "train_step" device(0) batch(8)
// CHECK: %[[LR:.*]] = exec.input "lr" : memref<f32>
// CHECK: %[[TW1:.*]] = exec.state @fc1.weight : memref<16x12xf32>
// CHECK: %[[M1:.*]] = exec.state @fc1.weight.momentum_buffer : memref<16x12xf32>
// CHECK: exec.kernel "CrossEntropyBackward"
// The weight gradient contracts the batch: no transpose is materialized.
// CHECK-NOT: Transpose2d
// CHECK: exec.kernel "MatmulTransposedA" ins({{.*}} : memref<?x3xf32>, memref<?x16xf32>) outs({{.*}} : memref<3x16xf32>)
// CHECK: exec.kernel "ReluBackward"
// CHECK: exec.kernel "MatmulTransposedA"
// CHECK: exec.kernel "ReduceSum" ins({{.*}} : memref<?x16xf32>) outs({{.*}} : memref<16xf32>) {dims = array<i64: 0>}
// The update writes the parameter and its momentum in place.
// CHECK: exec.kernel "SgdUpdate" ins(%[[TW1]], %{{.*}}, %[[LR]], %[[M1]] : {{.*}}) {dampening = 0.000000e+00 : f64, momentum = 9.000000e-01 : f64, nesterov = false, weight_decay = 0.000000e+00 : f64}
// CHECK: exec.output "loss"
// CHECK-NEXT: exec.output "correct"
// CHECK-NEXT: }
func.func @forward(%x: tensor<?x3x2x2xf32> {nn.input = "x"},
                   %w1: tensor<16x12xf32> {nn.param = "fc1.weight"},
                   %b1: tensor<16xf32> {nn.param = "fc1.bias"},
                   %w2: tensor<3x16xf32> {nn.param = "fc2.weight"})
    -> (tensor<?x3xf32> {nn.output = "logits"}) {
  %0 = nn.flatten %x : (tensor<?x3x2x2xf32>) -> tensor<?x12xf32>
  %1 = nn.linear %0, %w1, %b1 : (tensor<?x12xf32>, tensor<16x12xf32>, tensor<16xf32>) -> tensor<?x16xf32>
  %2 = nn.relu %1 : tensor<?x16xf32>
  %3 = nn.linear %2, %w2 : (tensor<?x16xf32>, tensor<3x16xf32>) -> tensor<?x3xf32>
  return %3 : tensor<?x3xf32>
}

// -----

// Batch norm: training updates the running statistics in place; the eval
// step uses them.
// CHECK-LABEL: module
// CHECK: exec.persistent @bn.running_mean "buffer" init = "model"
// CHECK: exec.step "eval_step"
// CHECK: exec.kernel "BatchNormInferenceForward"
// CHECK: exec.step "train_step"
// CHECK: %[[RM:.*]] = exec.state @bn.running_mean
// CHECK: %[[RV:.*]] = exec.state @bn.running_var
// CHECK: exec.kernel "Conv2dForward" {{.*}} {algorithm = "direct", dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>}
// CHECK: exec.kernel "BatchNormTrainingForward" ins(%{{.*}}, %{{.*}}, %{{.*}}, %[[RM]], %[[RV]] : {{.*}}) outs(%{{.*}}, %{{.*}}, %{{.*}} : memref<?x4x5x5xf32>, memref<4xf32>, memref<4xf32>)
// CHECK: exec.kernel "MaxPool2dForward"
// CHECK: exec.kernel "MaxPool2dBackward"
// CHECK: exec.kernel "BatchNormBackward"
// CHECK: exec.kernel "Conv2dBackwardWeights"
// No gradient is computed for the data input.
// CHECK-NOT: Conv2dBackwardData
// CHECK: exec.output "loss"
func.func @forward(%x: tensor<?x2x5x5xf32> {nn.input = "x"},
                   %w: tensor<4x2x3x3xf32> {nn.param = "conv.weight"},
                   %s: tensor<4xf32> {nn.param = "bn.weight"},
                   %b: tensor<4xf32> {nn.param = "bn.bias"},
                   %m: tensor<4xf32> {nn.buffer = "bn.running_mean"},
                   %v: tensor<4xf32> {nn.buffer = "bn.running_var"},
                   %fc: tensor<3x16xf32> {nn.param = "fc.weight"})
    -> (tensor<?x3xf32> {nn.output = "logits"}) {
  %0 = nn.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<?x2x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<?x4x5x5xf32>
  %1 = nn.batch_norm %0, %s, %b, %m, %v : (tensor<?x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4x5x5xf32>
  %2 = nn.max_pool2d %1 {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>} : (tensor<?x4x5x5xf32>) -> tensor<?x4x2x2xf32>
  %3 = nn.flatten %2 : (tensor<?x4x2x2xf32>) -> tensor<?x16xf32>
  %4 = nn.linear %3, %fc : (tensor<?x16xf32>, tensor<3x16xf32>) -> tensor<?x3xf32>
  return %4 : tensor<?x3xf32>
}
