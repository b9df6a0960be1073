// RUN: dpc-opt %s -split-input-file -fuse-exec-kernels | FileCheck %s

// Planned steps the fusion must leave alone.

// The ReLU's output has the bytes of the convolution's input, which dies
// at the convolution: written by a fused call, it would overwrite what the
// call reads.
// CHECK-LABEL: exec.step "overlap"
// CHECK: exec.kernel "Conv2dForward"
// CHECK: exec.kernel "ReluForward"
module attributes {exec.devices = ["cpu:0"]} {
  exec.persistent @w "parameter" init = "zeros" : tensor<4x4x1x1xf32>
  exec.step "overlap" device(0) batch(2) arena(256) {
    %0 = exec.input "x" : memref<?x4x2x2xf32>
    %1 = exec.state @w : memref<4x4x1x1xf32>
    %2 = exec.arena[0] : memref<?x4x2x2xf32>
    exec.kernel "Copy" ins(%0 : memref<?x4x2x2xf32>) outs(%2 : memref<?x4x2x2xf32>)
    %3 = exec.arena[128] : memref<?x4x2x2xf32>
    exec.kernel "Conv2dForward" ins(%2, %1 : memref<?x4x2x2xf32>, memref<4x4x1x1xf32>) outs(%3 : memref<?x4x2x2xf32>) {algorithm = "direct"}
    %4 = exec.arena[64] : memref<?x4x2x2xf32>
    exec.kernel "ReluForward" ins(%3 : memref<?x4x2x2xf32>) outs(%4 : memref<?x4x2x2xf32>)
    exec.output "y", %4 : memref<?x4x2x2xf32>
  }
}

// -----

// Another kernel runs between the two; and an event: the ReLU waits for
// one. Neither pair fuses.
// CHECK-LABEL: exec.step "apart"
// CHECK: exec.kernel "Conv2dForward"
// CHECK: exec.kernel "Copy"
// CHECK: exec.kernel "ReluForward"
// CHECK: exec.kernel "Conv2dForward"
// CHECK: exec.kernel "ReluForward" {{.*}}wait
// CHECK-NOT: Conv2dReluForward
module attributes {exec.devices = ["cpu:0"]} {
  exec.persistent @w "parameter" init = "zeros" : tensor<4x4x1x1xf32>
  exec.step "apart" device(0) batch(2) arena(1024) {
    %0 = exec.input "x" : memref<?x4x2x2xf32>
    %1 = exec.state @w : memref<4x4x1x1xf32>
    %2 = exec.arena[0] : memref<?x4x2x2xf32>
    exec.kernel "Conv2dForward" ins(%0, %1 : memref<?x4x2x2xf32>, memref<4x4x1x1xf32>) outs(%2 : memref<?x4x2x2xf32>) {algorithm = "direct"}
    %3 = exec.arena[128] : memref<?x4x2x2xf32>
    exec.kernel "Copy" ins(%0 : memref<?x4x2x2xf32>) outs(%3 : memref<?x4x2x2xf32>)
    %4 = exec.arena[256] : memref<?x4x2x2xf32>
    exec.kernel "ReluForward" ins(%2 : memref<?x4x2x2xf32>) outs(%4 : memref<?x4x2x2xf32>)
    %5 = exec.arena[384] : memref<?x4x2x2xf32>
    exec.kernel "Conv2dForward" ins(%0, %1 : memref<?x4x2x2xf32>, memref<4x4x1x1xf32>) outs(%5 : memref<?x4x2x2xf32>) {algorithm = "direct", signal = array<i64: 0>}
    %6 = exec.arena[512] : memref<?x4x2x2xf32>
    exec.kernel "ReluForward" ins(%5 : memref<?x4x2x2xf32>) outs(%6 : memref<?x4x2x2xf32>) {wait = array<i64: 0>}
    exec.output "y", %6 : memref<?x4x2x2xf32>
    exec.output "z", %4 : memref<?x4x2x2xf32>
    exec.output "c", %3 : memref<?x4x2x2xf32>
  }
}

// -----

// The same as the first, with the ReLU's output apart from the input: it
// fuses, into the ReLU's buffer, and the convolution's goes.
// CHECK-LABEL: exec.step "apart_bytes"
// CHECK-NOT: exec.arena[128]
// CHECK: %[[Y:.*]] = exec.arena[256]
// CHECK-NEXT: exec.kernel "Conv2dReluForward" ins(%{{.*}}, %{{.*}} : memref<?x4x2x2xf32>, memref<4x4x1x1xf32>) outs(%[[Y]] : memref<?x4x2x2xf32>) {algorithm = "direct"}
// CHECK-NEXT: exec.output "y", %[[Y]]
module attributes {exec.devices = ["cpu:0"]} {
  exec.persistent @w "parameter" init = "zeros" : tensor<4x4x1x1xf32>
  exec.step "apart_bytes" device(0) batch(2) arena(384) {
    %0 = exec.input "x" : memref<?x4x2x2xf32>
    %1 = exec.state @w : memref<4x4x1x1xf32>
    %2 = exec.arena[0] : memref<?x4x2x2xf32>
    exec.kernel "Copy" ins(%0 : memref<?x4x2x2xf32>) outs(%2 : memref<?x4x2x2xf32>)
    %3 = exec.arena[128] : memref<?x4x2x2xf32>
    exec.kernel "Conv2dForward" ins(%2, %1 : memref<?x4x2x2xf32>, memref<4x4x1x1xf32>) outs(%3 : memref<?x4x2x2xf32>) {algorithm = "direct"}
    %4 = exec.arena[256] : memref<?x4x2x2xf32>
    exec.kernel "ReluForward" ins(%3 : memref<?x4x2x2xf32>) outs(%4 : memref<?x4x2x2xf32>)
    exec.output "y", %4 : memref<?x4x2x2xf32>
  }
}

// -----

// A batch norm whose statistics nothing reads (a recomputed one's, or an
// evaluation's): they die at the batch norm, and the planner gave the
// ReLU's output their bytes. A fused call would write both at once.
// CHECK-LABEL: exec.step "statistics_bytes"
// CHECK: exec.kernel "BatchNormTrainingForward"
// CHECK: exec.kernel "ReluForward"
// CHECK-NOT: BatchNormRelu
module attributes {exec.devices = ["cpu:0"]} {
  exec.persistent @scale "parameter" init = "zeros" : tensor<4xf32>
  exec.persistent @shift "parameter" init = "zeros" : tensor<4xf32>
  exec.step "statistics_bytes" device(0) batch(2) arena(512) {
    %0 = exec.input "x" : memref<?x4x2x2xf32>
    %1 = exec.state @scale : memref<4xf32>
    %2 = exec.state @shift : memref<4xf32>
    %3 = exec.arena[0] : memref<?x4x2x2xf32>
    %4 = exec.arena[128] : memref<4xf32>
    %5 = exec.arena[144] : memref<4xf32>
    exec.kernel "BatchNormTrainingForward" ins(%0, %1, %2 : memref<?x4x2x2xf32>, memref<4xf32>, memref<4xf32>) outs(%3, %4, %5 : memref<?x4x2x2xf32>, memref<4xf32>, memref<4xf32>)
    %6 = exec.arena[128] : memref<?x4x2x2xf32>
    exec.kernel "ReluForward" ins(%3 : memref<?x4x2x2xf32>) outs(%6 : memref<?x4x2x2xf32>)
    exec.output "y", %6 : memref<?x4x2x2xf32>
  }
}

// -----

// A linear layer's weight gradient (MatmulTransposedA of DY and X) and its
// bias gradient (ReduceSum of DY over the rows): one LinearBackwardWeights
// that writes both, with the weight gradient's precision; the event the
// bias gradient signalled is signalled by the fused call.
// CHECK-LABEL: exec.step "linear_bias"
// CHECK: %[[DW:.*]] = exec.arena[64] : memref<3x4xf32>
// CHECK-NEXT: %[[DB:.*]] = exec.arena[128] : memref<3xf32>
// CHECK-NEXT: exec.kernel "LinearBackwardWeights" ins(%[[X:.*]], %[[DY:.*]] : memref<?x4xf32>, memref<?x3xf32>) outs(%[[DW]], %[[DB]] : memref<3x4xf32>, memref<3xf32>) {precision = bf16, signal = array<i64: 0>}
// CHECK-NOT: ReduceSum
// CHECK-NOT: MatmulTransposedA
module attributes {exec.devices = ["cpu:0"]} {
  exec.step "linear_bias" device(0) batch(2) arena(256) {
    %0 = exec.input "x" : memref<?x4xf32>
    %1 = exec.input "dy" : memref<?x3xf32>
    %2 = exec.arena[64] : memref<3x4xf32>
    exec.kernel "MatmulTransposedA" ins(%1, %0 : memref<?x3xf32>, memref<?x4xf32>) outs(%2 : memref<3x4xf32>) {precision = bf16}
    %3 = exec.arena[128] : memref<3xf32>
    exec.kernel "ReduceSum" ins(%1 : memref<?x3xf32>) outs(%3 : memref<3xf32>) {dims = array<i64: 0>, signal = array<i64: 0>}
    exec.output "dw", %2 : memref<3x4xf32>
    exec.output "db", %3 : memref<3xf32>
  }
}

// -----

// A convolution's weight gradient and its bias gradient, DY summed over
// all but the channels: Conv2dBackwardWeights writes both.
// CHECK-LABEL: exec.step "conv_bias"
// CHECK: exec.kernel "Conv2dBackwardWeights" ins(%{{.*}}, %{{.*}} : memref<?x2x3x3xf32>, memref<?x4x3x3xf32>) outs(%{{.*}}, %{{.*}} : memref<4x2x1x1xf32>, memref<4xf32>) {algorithm = "direct"}
// CHECK-NOT: ReduceSum
module attributes {exec.devices = ["cpu:0"]} {
  exec.step "conv_bias" device(0) batch(2) arena(512) {
    %0 = exec.input "x" : memref<?x2x3x3xf32>
    %1 = exec.input "dy" : memref<?x4x3x3xf32>
    %2 = exec.arena[0] : memref<4x2x1x1xf32>
    exec.kernel "Conv2dBackwardWeights" ins(%0, %1 : memref<?x2x3x3xf32>, memref<?x4x3x3xf32>) outs(%2 : memref<4x2x1x1xf32>) {algorithm = "direct"}
    %3 = exec.arena[64] : memref<4xf32>
    exec.kernel "ReduceSum" ins(%1 : memref<?x4x3x3xf32>) outs(%3 : memref<4xf32>) {dims = array<i64: 0, 2, 3>}
    exec.output "dw", %2 : memref<4x2x1x1xf32>
    exec.output "db", %3 : memref<4xf32>
  }
}

// -----

// Left alone: the bias gradient has the bytes of X, which dies at the
// weight gradient (written one call earlier it would overwrite what that
// call reads); a sum over other dims than a bias's; a sum of another
// tensor than DY.
// CHECK-LABEL: exec.step "bias_apart"
// CHECK-COUNT-3: exec.kernel "MatmulTransposedA"
// CHECK-NOT: LinearBackwardWeights
module attributes {exec.devices = ["cpu:0"]} {
  exec.step "bias_apart" device(0) batch(2) arena(512) {
    %0 = exec.input "x" : memref<?x4xf32>
    %1 = exec.input "dy" : memref<?x3xf32>
    %2 = exec.arena[0] : memref<?x4xf32>
    exec.kernel "Copy" ins(%0 : memref<?x4xf32>) outs(%2 : memref<?x4xf32>)
    %3 = exec.arena[64] : memref<3x4xf32>
    exec.kernel "MatmulTransposedA" ins(%1, %2 : memref<?x3xf32>, memref<?x4xf32>) outs(%3 : memref<3x4xf32>)
    %4 = exec.arena[0] : memref<3xf32>
    exec.kernel "ReduceSum" ins(%1 : memref<?x3xf32>) outs(%4 : memref<3xf32>) {dims = array<i64: 0>}
    %5 = exec.arena[128] : memref<3x4xf32>
    exec.kernel "MatmulTransposedA" ins(%1, %0 : memref<?x3xf32>, memref<?x4xf32>) outs(%5 : memref<3x4xf32>)
    %6 = exec.arena[192] : memref<?xf32>
    exec.kernel "ReduceSum" ins(%1 : memref<?x3xf32>) outs(%6 : memref<?xf32>) {dims = array<i64: 1>}
    %7 = exec.arena[256] : memref<3x4xf32>
    exec.kernel "MatmulTransposedA" ins(%1, %0 : memref<?x3xf32>, memref<?x4xf32>) outs(%7 : memref<3x4xf32>)
    %8 = exec.arena[320] : memref<4xf32>
    exec.kernel "ReduceSum" ins(%0 : memref<?x4xf32>) outs(%8 : memref<4xf32>) {dims = array<i64: 0>}
    exec.output "a", %3 : memref<3x4xf32>
    exec.output "b", %4 : memref<3xf32>
    exec.output "c", %5 : memref<3x4xf32>
    exec.output "d", %6 : memref<?xf32>
    exec.output "e", %7 : memref<3x4xf32>
    exec.output "f", %8 : memref<4xf32>
  }
}

// -----

// The loss and the count of correct rows over the same logits and labels:
// one CrossEntropyForward with its Correct result. Not where the count
// takes bytes the loss reads.
// CHECK-LABEL: exec.step "loss_count"
// CHECK: %[[LOSS:.*]] = exec.arena[64] : memref<f32>
// CHECK-NEXT: %[[COUNT:.*]] = exec.arena[72] : memref<i64>
// CHECK-NEXT: exec.kernel "CrossEntropyForward" ins(%[[LOGITS:.*]], %[[LABELS:.*]] : memref<?x3xf32>, memref<?xi32>) outs(%[[LOSS]], %[[COUNT]] : memref<f32>, memref<i64>)
// CHECK: exec.kernel "CrossEntropyForward" ins(%{{.*}}) outs(%{{[0-9]+}} : memref<f32>)
// CHECK-NEXT: exec.arena[0] : memref<i64>
// CHECK-NEXT: exec.kernel "CorrectCount"
module attributes {exec.devices = ["cpu:0"]} {
  exec.step "loss_count" device(0) batch(2) arena(256) {
    %0 = exec.input "logits" : memref<?x3xf32>
    %1 = exec.input "labels" : memref<?xi32>
    %2 = exec.arena[64] : memref<f32>
    exec.kernel "CrossEntropyForward" ins(%0, %1 : memref<?x3xf32>, memref<?xi32>) outs(%2 : memref<f32>)
    %3 = exec.arena[72] : memref<i64>
    exec.kernel "CorrectCount" ins(%0, %1 : memref<?x3xf32>, memref<?xi32>) outs(%3 : memref<i64>)
    %4 = exec.arena[0] : memref<?x3xf32>
    exec.kernel "Copy" ins(%0 : memref<?x3xf32>) outs(%4 : memref<?x3xf32>)
    %5 = exec.arena[128] : memref<f32>
    exec.kernel "CrossEntropyForward" ins(%4, %1 : memref<?x3xf32>, memref<?xi32>) outs(%5 : memref<f32>)
    %6 = exec.arena[0] : memref<i64>
    exec.kernel "CorrectCount" ins(%4, %1 : memref<?x3xf32>, memref<?xi32>) outs(%6 : memref<i64>)
    exec.output "loss", %2 : memref<f32>
    exec.output "correct", %3 : memref<i64>
    exec.output "loss2", %5 : memref<f32>
    exec.output "correct2", %6 : memref<i64>
  }
}

// -----

// A linear layer followed by a ReLU, as the MLP trains it: ReluBackward
// reads the linear layer's output, so the fused LinearReluForward writes
// there (with the linear layer's precision) and the ReLU's reader reads it.
// CHECK-LABEL: exec.step "linear_relu"
// CHECK: %[[Y:.*]] = exec.arena[0] : memref<?x3xf32>
// CHECK-NEXT: exec.kernel "LinearReluForward" ins(%{{.*}}, %{{.*}}, %{{.*}} : memref<?x4xf32>, memref<3x4xf32>, memref<3xf32>) outs(%[[Y]] : memref<?x3xf32>) {precision = bf16}
// CHECK-NOT: ReluForward
// CHECK: exec.kernel "Copy" ins(%[[Y]] :
// CHECK: exec.kernel "ReluBackward" ins(%[[Y]],
module attributes {exec.devices = ["cpu:0"]} {
  exec.persistent @w "parameter" init = "zeros" : tensor<3x4xf32>
  exec.persistent @b "parameter" init = "zeros" : tensor<3xf32>
  exec.step "linear_relu" device(0) batch(2) arena(512) {
    %0 = exec.input "x" : memref<?x4xf32>
    %1 = exec.state @w : memref<3x4xf32>
    %2 = exec.state @b : memref<3xf32>
    %3 = exec.arena[0] : memref<?x3xf32>
    exec.kernel "LinearForward" ins(%0, %1, %2 : memref<?x4xf32>, memref<3x4xf32>, memref<3xf32>) outs(%3 : memref<?x3xf32>) {precision = bf16}
    %4 = exec.arena[64] : memref<?x3xf32>
    exec.kernel "ReluForward" ins(%3 : memref<?x3xf32>) outs(%4 : memref<?x3xf32>)
    %5 = exec.arena[128] : memref<?x3xf32>
    exec.kernel "Copy" ins(%4 : memref<?x3xf32>) outs(%5 : memref<?x3xf32>)
    %6 = exec.arena[192] : memref<?x3xf32>
    exec.kernel "ReluBackward" ins(%3, %5 : memref<?x3xf32>, memref<?x3xf32>) outs(%6 : memref<?x3xf32>)
    exec.output "dx", %6 : memref<?x3xf32>
  }
}

// -----

// The loss (with its count), the Fill of its seed gradient and its
// backward: one CrossEntropyForwardBackward in the backward's place, with
// no seed (1 is its default). A seed of another value stays, as DLoss; a
// kernel between the loss and its backward keeps them apart.
// CHECK-LABEL: exec.step "loss_gradient"
// CHECK: %[[LOSS:.*]] = exec.arena[0] : memref<f32>
// CHECK-NEXT: %[[COUNT:.*]] = exec.arena[8] : memref<i64>
// CHECK-NOT: exec.kernel
// CHECK: %[[DX:.*]] = exec.arena[64] : memref<?x3xf32>
// CHECK-NEXT: exec.kernel "CrossEntropyForwardBackward" ins(%[[X:.*]], %[[L:.*]] : memref<?x3xf32>, memref<?xi32>) outs(%[[LOSS]], %[[DX]], %[[COUNT]] : memref<f32>, memref<?x3xf32>, memref<i64>)
// CHECK: %[[SEED:.*]] = exec.arena[32] : memref<f32>
// CHECK-NEXT: exec.kernel "Fill" outs(%[[SEED]] : memref<f32>) {value = 5.000000e-01 : f64}
// CHECK: exec.kernel "CrossEntropyForwardBackward" ins(%[[X]], %[[L]], %[[SEED]] : memref<?x3xf32>, memref<?xi32>, memref<f32>) outs(%{{[0-9]+}}, %{{[0-9]+}} : memref<f32>, memref<?x3xf32>)
// CHECK: exec.kernel "CrossEntropyForward"
// CHECK: exec.kernel "Copy"
// CHECK: exec.kernel "CrossEntropyBackward"
module attributes {exec.devices = ["cpu:0"]} {
  exec.step "loss_gradient" device(0) batch(2) arena(512) {
    %0 = exec.input "logits" : memref<?x3xf32>
    %1 = exec.input "labels" : memref<?xi32>
    %2 = exec.arena[0] : memref<f32>
    %3 = exec.arena[8] : memref<i64>
    exec.kernel "CrossEntropyForward" ins(%0, %1 : memref<?x3xf32>, memref<?xi32>) outs(%2, %3 : memref<f32>, memref<i64>)
    %4 = exec.arena[16] : memref<f32>
    exec.kernel "Fill" outs(%4 : memref<f32>) {value = 1.000000e+00 : f64}
    %5 = exec.arena[64] : memref<?x3xf32>
    exec.kernel "CrossEntropyBackward" ins(%0, %1, %4 : memref<?x3xf32>, memref<?xi32>, memref<f32>) outs(%5 : memref<?x3xf32>)
    %6 = exec.arena[24] : memref<f32>
    exec.kernel "CrossEntropyForward" ins(%0, %1 : memref<?x3xf32>, memref<?xi32>) outs(%6 : memref<f32>)
    %7 = exec.arena[32] : memref<f32>
    exec.kernel "Fill" outs(%7 : memref<f32>) {value = 5.000000e-01 : f64}
    %8 = exec.arena[128] : memref<?x3xf32>
    exec.kernel "CrossEntropyBackward" ins(%0, %1, %7 : memref<?x3xf32>, memref<?xi32>, memref<f32>) outs(%8 : memref<?x3xf32>)
    %9 = exec.arena[40] : memref<f32>
    exec.kernel "CrossEntropyForward" ins(%0, %1 : memref<?x3xf32>, memref<?xi32>) outs(%9 : memref<f32>)
    %10 = exec.arena[192] : memref<?x3xf32>
    exec.kernel "Copy" ins(%0 : memref<?x3xf32>) outs(%10 : memref<?x3xf32>)
    %11 = exec.arena[256] : memref<?x3xf32>
    exec.kernel "CrossEntropyBackward" ins(%0, %1 : memref<?x3xf32>, memref<?xi32>) outs(%11 : memref<?x3xf32>)
    exec.output "loss", %2 : memref<f32>
    exec.output "correct", %3 : memref<i64>
    exec.output "dx", %5 : memref<?x3xf32>
    exec.output "loss2", %6 : memref<f32>
    exec.output "dx2", %8 : memref<?x3xf32>
    exec.output "loss3", %9 : memref<f32>
    exec.output "copy", %10 : memref<?x3xf32>
    exec.output "dx3", %11 : memref<?x3xf32>
  }
}
