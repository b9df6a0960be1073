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
