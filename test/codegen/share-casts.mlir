// RUN: dpc-opt %s -split-input-file -share-exec-casts | FileCheck %s

// The MLP's first layer in bf16: the forward and the weight gradient read
// the same input batch, which nothing writes between them. The forward
// keeps its bf16 copy in slot 1, the weight gradient reads it there. The
// f32 call of the same X and the bf16 call of another X (the hidden
// activation, read once) name no slot.
// CHECK-LABEL: exec.step "mlp"
// CHECK: exec.kernel "LinearReluForward" ins(%[[X:[0-9]+]], {{.*}} {cast_slot = 1 : i64, precision = bf16}
// CHECK: exec.kernel "LinearForward" ins(%[[H:[0-9]+]], {{.*}} {precision = bf16}
// CHECK: exec.kernel "LinearForward" ins(%[[X]], {{.*}} {precision = f32}
// CHECK: exec.kernel "LinearBackwardWeights" ins(%[[X]], {{.*}} {cast_reuse, cast_slot = 1 : i64, precision = bf16}
module attributes {exec.devices = ["cpu:0"]} {
  exec.persistent @w1 "parameter" init = "zeros" : tensor<8x16xf32>
  exec.persistent @w2 "parameter" init = "zeros" : tensor<4x8xf32>
  exec.persistent @w3 "parameter" init = "zeros" : tensor<4x16xf32>
  exec.step "mlp" device(0) batch(2) arena(4096) {
    %0 = exec.input "x" : memref<?x1x4x4xf32>
    %1 = exec.state @w1 : memref<8x16xf32>
    %2 = exec.state @w2 : memref<4x8xf32>
    %3 = exec.state @w3 : memref<4x16xf32>
    %4 = exec.view %0 : memref<?x1x4x4xf32> to memref<?x16xf32>
    %5 = exec.arena[0] : memref<?x8xf32>
    exec.kernel "LinearReluForward" ins(%4, %1 : memref<?x16xf32>, memref<8x16xf32>) outs(%5 : memref<?x8xf32>) {precision = bf16}
    %6 = exec.arena[64] : memref<?x4xf32>
    exec.kernel "LinearForward" ins(%5, %2 : memref<?x8xf32>, memref<4x8xf32>) outs(%6 : memref<?x4xf32>) {precision = bf16}
    %7 = exec.arena[128] : memref<?x4xf32>
    exec.kernel "LinearForward" ins(%4, %3 : memref<?x16xf32>, memref<4x16xf32>) outs(%7 : memref<?x4xf32>) {precision = f32}
    %8 = exec.arena[256] : memref<8x16xf32>
    exec.kernel "LinearBackwardWeights" ins(%4, %5 : memref<?x16xf32>, memref<?x8xf32>) outs(%8 : memref<8x16xf32>) {precision = bf16}
    exec.output "y", %6 : memref<?x4xf32>
    exec.output "z", %7 : memref<?x4xf32>
    exec.output "dw", %8 : memref<8x16xf32>
  }
}

// -----

// An arena X that a call between the two readers overwrites (a Copy into
// a view of it): the readers after it must cast the new values, so the
// reader before it keeps no copy, and the three after it share slot 1.
// CHECK-LABEL: exec.step "written"
// CHECK: exec.kernel "LinearForward" {{.*}} {precision = bf16}
// CHECK: exec.kernel "Copy"
// CHECK: exec.kernel "LinearForward" {{.*}} {cast_slot = 1 : i64, precision = bf16}
// CHECK: exec.kernel "LinearForward" {{.*}} {cast_reuse, cast_slot = 1 : i64, precision = bf16}
// CHECK: exec.kernel "LinearForward" {{.*}} {cast_reuse, cast_slot = 1 : i64, precision = bf16}
module attributes {exec.devices = ["cpu:0"]} {
  exec.persistent @w "parameter" init = "zeros" : tensor<4x16xf32>
  exec.step "written" device(0) batch(2) arena(4096) {
    %0 = exec.input "x" : memref<?x16xf32>
    %1 = exec.state @w : memref<4x16xf32>
    %2 = exec.arena[0] : memref<?x16xf32>
    exec.kernel "Copy" ins(%0 : memref<?x16xf32>) outs(%2 : memref<?x16xf32>)
    %3 = exec.arena[256] : memref<?x4xf32>
    exec.kernel "LinearForward" ins(%2, %1 : memref<?x16xf32>, memref<4x16xf32>) outs(%3 : memref<?x4xf32>) {precision = bf16}
    %4 = exec.view %2 : memref<?x16xf32> to memref<?x1x16xf32>
    exec.kernel "Copy" ins(%0 : memref<?x16xf32>) outs(%4 : memref<?x1x16xf32>)
    %5 = exec.arena[512] : memref<?x4xf32>
    exec.kernel "LinearForward" ins(%2, %1 : memref<?x16xf32>, memref<4x16xf32>) outs(%5 : memref<?x4xf32>) {precision = bf16}
    %6 = exec.arena[768] : memref<?x4xf32>
    exec.kernel "LinearForward" ins(%2, %1 : memref<?x16xf32>, memref<4x16xf32>) outs(%6 : memref<?x4xf32>) {precision = bf16}
    %7 = exec.arena[1024] : memref<?x4xf32>
    exec.kernel "LinearForward" ins(%2, %1 : memref<?x16xf32>, memref<4x16xf32>) outs(%7 : memref<?x4xf32>) {precision = bf16}
    exec.output "a", %3 : memref<?x4xf32>
    exec.output "b", %5 : memref<?x4xf32>
    exec.output "c", %6 : memref<?x4xf32>
    exec.output "d", %7 : memref<?x4xf32>
  }
}

// -----

// Training state as X (an optimizer may update it in place), readers on
// two streams, and a kernel that cannot share its X (a bf16 matmul): no
// slot anywhere.
// CHECK-LABEL: exec.step "apart"
// CHECK-NOT: cast_slot
module attributes {exec.devices = ["cpu:0"]} {
  exec.persistent @s "parameter" init = "zeros" : tensor<2x16xf32>
  exec.persistent @w "parameter" init = "zeros" : tensor<4x16xf32>
  exec.step "apart" device(0) batch(2) arena(4096) {
    %0 = exec.input "x" : memref<?x16xf32>
    %1 = exec.state @s : memref<2x16xf32>
    %2 = exec.state @w : memref<4x16xf32>
    %3 = exec.arena[0] : memref<2x4xf32>
    exec.kernel "LinearForward" ins(%1, %2 : memref<2x16xf32>, memref<4x16xf32>) outs(%3 : memref<2x4xf32>) {precision = bf16}
    %4 = exec.arena[64] : memref<2x4xf32>
    exec.kernel "LinearForward" ins(%1, %2 : memref<2x16xf32>, memref<4x16xf32>) outs(%4 : memref<2x4xf32>) {precision = bf16}
    %5 = exec.arena[128] : memref<?x4xf32>
    exec.kernel "LinearForward" ins(%0, %2 : memref<?x16xf32>, memref<4x16xf32>) outs(%5 : memref<?x4xf32>) {precision = bf16}
    %6 = exec.arena[256] : memref<?x4xf32>
    exec.kernel "LinearForward" ins(%0, %2 : memref<?x16xf32>, memref<4x16xf32>) outs(%6 : memref<?x4xf32>) {precision = bf16, stream = 1 : i64}
    %7 = exec.arena[512] : memref<?x4xf32>
    %8 = exec.arena[768] : memref<16x4xf32>
    exec.kernel "MatmulForward" ins(%0, %8 : memref<?x16xf32>, memref<16x4xf32>) outs(%7 : memref<?x4xf32>) {precision = bf16}
    exec.output "a", %3 : memref<2x4xf32>
    exec.output "b", %4 : memref<2x4xf32>
    exec.output "c", %5 : memref<?x4xf32>
    exec.output "d", %6 : memref<?x4xf32>
    exec.output "e", %7 : memref<?x4xf32>
  }
}

// -----

// LeNet's backward in bf16 (what `dpc compile --precision bf16` emits,
// trimmed): each convolution's backward-data and backward-weights read the
// same DY (operand 0 of the one, operand 1 of the other), so the first
// keeps its bf16 copy and the second reads it. fc1's X is held in slot 1
// from its forward to its weight gradient, after the first convolution
// pair: that pair takes slot 2, and the second pair, which starts after the
// first pair's last call, takes slot 2 again. conv1's weight gradient,
// the only reader of its DY, keeps none.
// CHECK-LABEL: exec.step "lenet"
// CHECK: exec.kernel "LinearForward" ins(%[[X:[0-9]+]], {{.*}} {cast_slot = 1 : i64, precision = bf16}
// CHECK: exec.kernel "Conv2dBackwardData" ins(%[[DY2:[0-9]+]], {{.*}} {algorithm = "direct", cast_slot = 2 : i64, {{.*}}precision = bf16
// CHECK: exec.kernel "Conv2dBackwardWeights" ins(%{{[0-9]+}}, %[[DY2]] : {{.*}} {algorithm = "direct", cast_reuse, cast_slot = 2 : i64, {{.*}}precision = bf16
// CHECK: exec.kernel "Conv2dBackwardData" ins(%[[DY1:[0-9]+]], {{.*}} {algorithm = "direct", cast_slot = 2 : i64, {{.*}}precision = bf16
// CHECK: exec.kernel "Conv2dBackwardWeights" ins(%{{[0-9]+}}, %[[DY1]] : {{.*}} {algorithm = "direct", cast_reuse, cast_slot = 2 : i64, {{.*}}precision = bf16
// CHECK: exec.kernel "LinearBackwardWeights" ins(%[[X]], {{.*}} {cast_reuse, cast_slot = 1 : i64, precision = bf16}
// CHECK: exec.kernel "Conv2dBackwardWeights"
// CHECK-NOT: cast_slot
// CHECK-SAME: precision = bf16
module attributes {exec.devices = ["cpu:0"]} {
  exec.persistent @conv1.weight "parameter" init = "zeros" : tensor<6x1x5x5xf32>
  exec.persistent @conv2.weight "parameter" init = "zeros" : tensor<16x6x5x5xf32>
  exec.persistent @conv3.weight "parameter" init = "zeros" : tensor<6x6x5x5xf32>
  exec.persistent @fc1.weight "parameter" init = "zeros" : tensor<120x400xf32>
  exec.step "lenet" device(0) batch(2) arena(200000) {
    %0 = exec.input "images" : memref<?x1x28x28xf32>
    %1 = exec.state @conv1.weight : memref<6x1x5x5xf32>
    %2 = exec.state @conv2.weight : memref<16x6x5x5xf32>
    %3 = exec.state @conv3.weight : memref<6x6x5x5xf32>
    %4 = exec.state @fc1.weight : memref<120x400xf32>
    %5 = exec.input "x" : memref<?x400xf32>
    %6 = exec.arena[0] : memref<?x120xf32>
    exec.kernel "LinearForward" ins(%5, %4 : memref<?x400xf32>, memref<120x400xf32>) outs(%6 : memref<?x120xf32>) {precision = bf16}
    %7 = exec.input "dy2" : memref<?x16x10x10xf32>
    %8 = exec.arena[1024] : memref<?x6x14x14xf32>
    exec.kernel "Conv2dBackwardData" ins(%7, %2 : memref<?x16x10x10xf32>, memref<16x6x5x5xf32>) outs(%8 : memref<?x6x14x14xf32>) {algorithm = "direct", dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>, precision = bf16, stride = array<i64: 1, 1>}
    %9 = exec.input "x2" : memref<?x6x14x14xf32>
    %10 = exec.arena[16384] : memref<16x6x5x5xf32>
    %11 = exec.arena[32768] : memref<16xf32>
    exec.kernel "Conv2dBackwardWeights" ins(%9, %7 : memref<?x6x14x14xf32>, memref<?x16x10x10xf32>) outs(%10, %11 : memref<16x6x5x5xf32>, memref<16xf32>) {algorithm = "direct", dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>, precision = bf16, stride = array<i64: 1, 1>}
    %12 = exec.arena[1024] : memref<?x6x14x14xf32>
    %13 = exec.arena[40960] : memref<?x6x18x18xf32>
    exec.kernel "Conv2dBackwardData" ins(%12, %3 : memref<?x6x14x14xf32>, memref<6x6x5x5xf32>) outs(%13 : memref<?x6x18x18xf32>) {algorithm = "direct", dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>, precision = bf16, stride = array<i64: 1, 1>}
    %14 = exec.input "x3" : memref<?x6x18x18xf32>
    %15 = exec.arena[65536] : memref<6x6x5x5xf32>
    exec.kernel "Conv2dBackwardWeights" ins(%14, %12 : memref<?x6x18x18xf32>, memref<?x6x14x14xf32>) outs(%15 : memref<6x6x5x5xf32>) {algorithm = "direct", dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>, precision = bf16, stride = array<i64: 1, 1>}
    %16 = exec.input "dfc1" : memref<?x120xf32>
    %17 = exec.arena[81920] : memref<120x400xf32>
    exec.kernel "LinearBackwardWeights" ins(%5, %16 : memref<?x400xf32>, memref<?x120xf32>) outs(%17 : memref<120x400xf32>) {precision = bf16}
    %18 = exec.input "dy1" : memref<?x6x28x28xf32>
    %19 = exec.arena[8192] : memref<6x1x5x5xf32>
    exec.kernel "Conv2dBackwardWeights" ins(%0, %18 : memref<?x1x28x28xf32>, memref<?x6x28x28xf32>) outs(%19 : memref<6x1x5x5xf32>) {algorithm = "direct", dilation = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 2, 2, 2, 2>, precision = bf16, stride = array<i64: 1, 1>}
    exec.output "y", %6 : memref<?x120xf32>
    exec.output "dw1", %19 : memref<6x1x5x5xf32>
    exec.output "dw2", %10 : memref<16x6x5x5xf32>
    exec.output "db2", %11 : memref<16xf32>
    exec.output "dw3", %15 : memref<6x6x5x5xf32>
    exec.output "dfc1w", %17 : memref<120x400xf32>
    exec.output "dx", %13 : memref<?x6x18x18xf32>
  }
}

// -----

// What --precision auto may choose: an f32 backward-data beside a bf16
// backward-weights (nothing to share), and a bf16 pair whose DY a call
// between them overwrites (the backward-weights must cast the new
// values): no slot.
// CHECK-LABEL: exec.step "mixed"
// CHECK-NOT: cast_slot
module attributes {exec.devices = ["cpu:0"]} {
  exec.persistent @w "parameter" init = "zeros" : tensor<16x6x5x5xf32>
  exec.step "mixed" device(0) batch(2) arena(200000) {
    %0 = exec.state @w : memref<16x6x5x5xf32>
    %1 = exec.input "dy" : memref<?x16x10x10xf32>
    %2 = exec.input "x" : memref<?x6x14x14xf32>
    %3 = exec.arena[0] : memref<?x6x14x14xf32>
    exec.kernel "Conv2dBackwardData" ins(%1, %0 : memref<?x16x10x10xf32>, memref<16x6x5x5xf32>) outs(%3 : memref<?x6x14x14xf32>) {algorithm = "direct", precision = f32}
    %4 = exec.arena[16384] : memref<16x6x5x5xf32>
    exec.kernel "Conv2dBackwardWeights" ins(%2, %1 : memref<?x6x14x14xf32>, memref<?x16x10x10xf32>) outs(%4 : memref<16x6x5x5xf32>) {algorithm = "direct", precision = bf16}
    %5 = exec.arena[32768] : memref<?x16x10x10xf32>
    exec.kernel "Copy" ins(%1 : memref<?x16x10x10xf32>) outs(%5 : memref<?x16x10x10xf32>)
    %6 = exec.arena[65536] : memref<?x6x14x14xf32>
    exec.kernel "Conv2dBackwardData" ins(%5, %0 : memref<?x16x10x10xf32>, memref<16x6x5x5xf32>) outs(%6 : memref<?x6x14x14xf32>) {algorithm = "direct", precision = bf16}
    %7 = exec.arena[32768] : memref<?x1600xf32>
    exec.kernel "Copy" ins(%7 : memref<?x1600xf32>) outs(%7 : memref<?x1600xf32>)
    %8 = exec.arena[81920] : memref<16x6x5x5xf32>
    exec.kernel "Conv2dBackwardWeights" ins(%2, %5 : memref<?x6x14x14xf32>, memref<?x16x10x10xf32>) outs(%8 : memref<16x6x5x5xf32>) {algorithm = "direct", precision = bf16}
    exec.output "dx", %3 : memref<?x6x14x14xf32>
    exec.output "dw", %4 : memref<16x6x5x5xf32>
    exec.output "dx2", %6 : memref<?x6x14x14xf32>
    exec.output "dw2", %8 : memref<16x6x5x5xf32>
  }
}
