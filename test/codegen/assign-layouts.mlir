// RUN: dpc-opt %s -split-input-file -assign-exec-layouts | FileCheck %s

// A convolution, its ReLU and the next convolution share a class that only
// convolutions and a global pooling read: blocked, with no reorder. The
// pooling's [n, c, 1, 1] output has a view (the flatten), so it stays plain.
// CHECK-LABEL: exec.step "eval_step"
// CHECK: %[[A:.*]] = exec.arena[0] {layout = "nChw16c"} : memref<?x16x8x8xf32>
// CHECK-NEXT: exec.kernel "Conv2dForward" ins(%{{.*}}, %{{.*}} : memref<?x3x8x8xf32>, memref<16x3x3x3xf32>) outs(%[[A]] :
// CHECK-NEXT: %[[R:.*]] = exec.arena[4096] {layout = "nChw16c"} : memref<?x16x8x8xf32>
// CHECK-NEXT: exec.kernel "ReluForward" ins(%[[A]] : {{.*}}) outs(%[[R]] :
// CHECK-NEXT: %[[C:.*]] = exec.arena[0] {layout = "nChw16c"} : memref<?x16x8x8xf32>
// CHECK-NEXT: exec.kernel "Conv2dForward" ins(%[[R]], %{{.*}} : {{.*}}) outs(%[[C]] :
// CHECK-NEXT: %[[P:.*]] = exec.arena[4096] : memref<?x16x1x1xf32>
// CHECK-NEXT: exec.kernel "GlobalAvgPool2dForward" ins(%[[C]] : {{.*}}) outs(%[[P]] :
// CHECK-NOT: Reorder
module attributes {exec.devices = ["cpu:0"]} {
  exec.persistent @w1 "parameter" init = "model" {source = "w1"} : tensor<16x3x3x3xf32>
  exec.persistent @w2 "parameter" init = "model" {source = "w2"} : tensor<16x16x3x3xf32>
  exec.step "eval_step" device(0) batch(1) arena(8192) {
    %x = exec.input "images" : memref<?x3x8x8xf32>
    %w1 = exec.state @w1 : memref<16x3x3x3xf32>
    %w2 = exec.state @w2 : memref<16x16x3x3xf32>
    %a = exec.arena[0] : memref<?x16x8x8xf32>
    exec.kernel "Conv2dForward" ins(%x, %w1 : memref<?x3x8x8xf32>, memref<16x3x3x3xf32>) outs(%a : memref<?x16x8x8xf32>) {padding = array<i64: 1, 1, 1, 1>}
    %r = exec.arena[4096] : memref<?x16x8x8xf32>
    exec.kernel "ReluForward" ins(%a : memref<?x16x8x8xf32>) outs(%r : memref<?x16x8x8xf32>)
    %c = exec.arena[0] : memref<?x16x8x8xf32>
    exec.kernel "Conv2dForward" ins(%r, %w2 : memref<?x16x8x8xf32>, memref<16x16x3x3xf32>) outs(%c : memref<?x16x8x8xf32>) {padding = array<i64: 1, 1, 1, 1>}
    %p = exec.arena[4096] : memref<?x16x1x1xf32>
    exec.kernel "GlobalAvgPool2dForward" ins(%c : memref<?x16x8x8xf32>) outs(%p : memref<?x16x1x1xf32>)
    %v = exec.view %p : memref<?x16x1x1xf32> to memref<?x16xf32>
    exec.output "logits", %v : memref<?x16xf32>
  }
}

// -----

// The ReLU's output is also summed per channel (plain only): one reorder
// before the sum, through a plain buffer placed past the bytes alive there
// (the arena grows by it), saves two inside the convolutions. The reorder
// takes over the sum's wait.
// CHECK-LABEL: exec.step "eval_step"
// CHECK-SAME: arena(12352)
// CHECK: %[[R:.*]] = exec.arena[4096] {layout = "nChw16c"} : memref<?x16x8x8xf32>
// CHECK-NEXT: exec.kernel "ReluForward"
// CHECK: exec.kernel "Conv2dForward" ins(%[[R]],
// CHECK-NEXT: %[[S:.*]] = exec.arena[8192] : memref<16xf32>
// CHECK-NEXT: %[[T:.*]] = exec.arena[8256] : memref<?x16x8x8xf32>
// CHECK-NEXT: exec.kernel "Reorder" ins(%[[R]] : memref<?x16x8x8xf32>) outs(%[[T]] : memref<?x16x8x8xf32>) {wait = array<i64: 0>}
// CHECK-NEXT: exec.kernel "ReduceSum" ins(%[[T]] : memref<?x16x8x8xf32>) outs(%[[S]] : memref<16xf32>) {dims = array<i64: 0, 2, 3>}
// CHECK-NOT: Reorder
module attributes {exec.devices = ["cpu:0"]} {
  exec.persistent @w1 "parameter" init = "model" {source = "w1"} : tensor<16x3x3x3xf32>
  exec.persistent @w2 "parameter" init = "model" {source = "w2"} : tensor<16x16x3x3xf32>
  exec.step "eval_step" device(0) batch(1) arena(8256) {
    %x = exec.input "images" : memref<?x3x8x8xf32>
    %w1 = exec.state @w1 : memref<16x3x3x3xf32>
    %w2 = exec.state @w2 : memref<16x16x3x3xf32>
    %a = exec.arena[0] : memref<?x16x8x8xf32>
    exec.kernel "Conv2dForward" ins(%x, %w1 : memref<?x3x8x8xf32>, memref<16x3x3x3xf32>) outs(%a : memref<?x16x8x8xf32>) {padding = array<i64: 1, 1, 1, 1>}
    %r = exec.arena[4096] : memref<?x16x8x8xf32>
    exec.kernel "ReluForward" ins(%a : memref<?x16x8x8xf32>) outs(%r : memref<?x16x8x8xf32>)
    %c = exec.arena[0] : memref<?x16x8x8xf32>
    exec.kernel "Conv2dForward" ins(%r, %w2 : memref<?x16x8x8xf32>, memref<16x16x3x3xf32>) outs(%c : memref<?x16x8x8xf32>) {padding = array<i64: 1, 1, 1, 1>}
    %s = exec.arena[8192] : memref<16xf32>
    exec.kernel "ReduceSum" ins(%r : memref<?x16x8x8xf32>) outs(%s : memref<16xf32>) {dims = array<i64: 0, 2, 3>, wait = array<i64: 0>}
    exec.output "conv", %c : memref<?x16x8x8xf32>
    exec.output "sum", %s : memref<16xf32>
  }
}

// -----

// A gradient that average pooling writes from a view (so plain there) and
// two convolution gradients read: written plain, reordered once into the
// blocked buffer after the pooling, which hands its signal on. The plain
// buffer takes bytes that are free while the pooling runs. The convolution's
// input gradient is accumulated into a plain input: it stays plain.
// CHECK-LABEL: exec.step "train_step"
// CHECK: %[[DX:.*]] = exec.arena[0] {layout = "nChw16c"} : memref<?x16x8x8xf32>
// CHECK-NEXT: %[[T:.*]] = exec.arena[4096] : memref<?x16x8x8xf32>
// CHECK-NEXT: exec.kernel "AvgPool2dBackward" ins(%{{.*}} : memref<?x16x4x4xf32>) outs(%[[T]] : memref<?x16x8x8xf32>)
// CHECK-NOT: signal
// CHECK-NEXT: exec.kernel "Reorder" ins(%[[T]] : {{.*}}) outs(%[[DX]] : {{.*}}) {signal = array<i64: 1>}
// CHECK-NEXT: exec.arena[4096] : memref<?x16x8x8xf32>
// CHECK-NEXT: exec.kernel "Conv2dBackwardData" ins(%[[DX]],
// CHECK: exec.kernel "Conv2dBackwardWeights" ins(%{{.*}}, %[[DX]] :
module attributes {exec.devices = ["cpu:0"]} {
  exec.persistent @w2 "parameter" init = "model" {source = "w2"} : tensor<16x16x3x3xf32>
  exec.step "train_step" device(0) batch(1) arena(10240) {
    %g = exec.input "grad" : memref<?x256xf32>
    %xin = exec.input "x" : memref<?x16x8x8xf32>
    %w2 = exec.state @w2 : memref<16x16x3x3xf32>
    %dyv = exec.view %g : memref<?x256xf32> to memref<?x16x4x4xf32>
    %dx = exec.arena[0] : memref<?x16x8x8xf32>
    exec.kernel "AvgPool2dBackward" ins(%dyv : memref<?x16x4x4xf32>) outs(%dx : memref<?x16x8x8xf32>) {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>, signal = array<i64: 1>}
    %din = exec.arena[4096] : memref<?x16x8x8xf32>
    exec.kernel "Conv2dBackwardData" ins(%dx, %w2 : memref<?x16x8x8xf32>, memref<16x16x3x3xf32>) outs(%din : memref<?x16x8x8xf32>) {padding = array<i64: 1, 1, 1, 1>}
    %dw = exec.arena[8192] : memref<16x16x3x3xf32>
    exec.kernel "Conv2dBackwardWeights" ins(%xin, %dx : memref<?x16x8x8xf32>, memref<?x16x8x8xf32>) outs(%dw : memref<16x16x3x3xf32>) {padding = array<i64: 1, 1, 1, 1>}
    exec.kernel "Accumulate" ins(%din : memref<?x16x8x8xf32>) outs(%xin : memref<?x16x8x8xf32>)
    exec.output "dw", %dw : memref<16x16x3x3xf32>
  }
}

// -----

// Where blocking would need as many reorders as it saves, the class stays
// plain: one convolution writes what only a per-channel sum reads.
// CHECK-LABEL: exec.step "eval_step"
// CHECK-NOT: layout
// CHECK-NOT: Reorder
module attributes {exec.devices = ["cpu:0"]} {
  exec.persistent @w1 "parameter" init = "model" {source = "w1"} : tensor<16x3x3x3xf32>
  exec.step "eval_step" device(0) batch(1) arena(4160) {
    %x = exec.input "images" : memref<?x3x8x8xf32>
    %w1 = exec.state @w1 : memref<16x3x3x3xf32>
    %a = exec.arena[0] : memref<?x16x8x8xf32>
    exec.kernel "Conv2dForward" ins(%x, %w1 : memref<?x3x8x8xf32>, memref<16x3x3x3xf32>) outs(%a : memref<?x16x8x8xf32>) {padding = array<i64: 1, 1, 1, 1>}
    %s = exec.arena[4096] : memref<16xf32>
    exec.kernel "ReduceSum" ins(%a : memref<?x16x8x8xf32>) outs(%s : memref<16xf32>) {dims = array<i64: 0, 2, 3>}
    exec.output "sum", %s : memref<16xf32>
  }
}

// -----

// cuDNN's kernels take NCHW: a GPU's step stays plain.
// CHECK-LABEL: exec.step "eval_step"
// CHECK-NOT: layout
module attributes {exec.devices = ["cuda:0"]} {
  exec.persistent @w1 "parameter" init = "model" {source = "w1"} : tensor<16x3x3x3xf32>
  exec.persistent @w2 "parameter" init = "model" {source = "w2"} : tensor<16x16x3x3xf32>
  exec.step "eval_step" device(0) batch(1) arena(8192) {
    %x = exec.input "images" : memref<?x3x8x8xf32>
    %w1 = exec.state @w1 : memref<16x3x3x3xf32>
    %w2 = exec.state @w2 : memref<16x16x3x3xf32>
    %a = exec.arena[0] : memref<?x16x8x8xf32>
    exec.kernel "Conv2dForward" ins(%x, %w1 : memref<?x3x8x8xf32>, memref<16x3x3x3xf32>) outs(%a : memref<?x16x8x8xf32>) {padding = array<i64: 1, 1, 1, 1>}
    %c = exec.arena[4096] : memref<?x16x8x8xf32>
    exec.kernel "Conv2dForward" ins(%a, %w2 : memref<?x16x8x8xf32>, memref<16x16x3x3xf32>) outs(%c : memref<?x16x8x8xf32>) {padding = array<i64: 1, 1, 1, 1>}
    exec.output "conv", %c : memref<?x16x8x8xf32>
  }
}

// -----

// Accumulate adds into its result: where it must run plain on a blocked
// gradient (its other operand is a plain input), the gradient is reordered
// into the plain buffer before the call and back after it.
// CHECK-LABEL: exec.step "train_step"
// CHECK: %[[G:.*]] = exec.arena[0] {layout = "nChw16c"} : memref<?x16x8x8xf32>
// CHECK-NEXT: exec.kernel "Conv2dBackwardData" {{.*}} outs(%[[G]] :
// CHECK-NEXT: %[[T:.*]] = exec.arena[4096] : memref<?x16x8x8xf32>
// CHECK-NEXT: exec.kernel "Reorder" ins(%[[G]] : {{.*}}) outs(%[[T]] :
// CHECK-NEXT: exec.kernel "Accumulate" ins(%{{.*}} : {{.*}}) outs(%[[T]] :
// CHECK-NEXT: exec.kernel "Reorder" ins(%[[T]] : {{.*}}) outs(%[[G]] :
// CHECK-NEXT: exec.arena
// CHECK-NEXT: exec.kernel "Conv2dBackwardData" ins(%[[G]],
module attributes {exec.devices = ["cpu:0"]} {
  exec.persistent @w "parameter" init = "model" {source = "w"} : tensor<16x16x3x3xf32>
  exec.step "train_step" device(0) batch(1) arena(12288) {
    %dy = exec.input "dy" : memref<?x16x8x8xf32>
    %other = exec.input "other" : memref<?x16x8x8xf32>
    %w = exec.state @w : memref<16x16x3x3xf32>
    %g = exec.arena[0] : memref<?x16x8x8xf32>
    exec.kernel "Conv2dBackwardData" ins(%dy, %w : memref<?x16x8x8xf32>, memref<16x16x3x3xf32>) outs(%g : memref<?x16x8x8xf32>) {padding = array<i64: 1, 1, 1, 1>}
    exec.kernel "Accumulate" ins(%other : memref<?x16x8x8xf32>) outs(%g : memref<?x16x8x8xf32>)
    %dx = exec.arena[4096] : memref<?x16x8x8xf32>
    exec.kernel "Conv2dBackwardData" ins(%g, %w : memref<?x16x8x8xf32>, memref<16x16x3x3xf32>) outs(%dx : memref<?x16x8x8xf32>) {padding = array<i64: 1, 1, 1, 1>}
    %dw = exec.arena[8192] : memref<16x16x3x3xf32>
    exec.kernel "Conv2dBackwardWeights" ins(%other, %g : memref<?x16x8x8xf32>, memref<?x16x8x8xf32>) outs(%dw : memref<16x16x3x3xf32>) {padding = array<i64: 1, 1, 1, 1>}
    exec.output "dx", %dx : memref<?x16x8x8xf32>
    exec.output "dw", %dw : memref<16x16x3x3xf32>
  }
}
