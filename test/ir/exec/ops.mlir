// RUN: dpc-opt %s | dpc-opt | FileCheck %s

// CHECK: exec.persistent @w "parameter" init = "model" {source = "fc.weight"} : tensor<4x6xf32>
exec.persistent @w "parameter" init = "model" {source = "fc.weight"} : tensor<4x6xf32>
// CHECK: exec.persistent @constant.2x2.c "buffer" init = "constant" {value = dense<{{.*}}0.000000e+00, 1.000000e+00], [2.000000e+00, 3.000000e+00{{.*}}> : tensor<2x2xf32>} : tensor<2x2xf32>
exec.persistent @constant.2x2.c "buffer" init = "constant" {value = dense<[[0.0, 1.0], [2.0, 3.0]]> : tensor<2x2xf32>} : tensor<2x2xf32>
// CHECK: exec.persistent @w.momentum_buffer "optimizer_state" init = "zeros" {parameter = "w"} : tensor<4x6xf32>
exec.persistent @w.momentum_buffer "optimizer_state" init = "zeros" {parameter = "w"} : tensor<4x6xf32>

// CHECK-LABEL: exec.step "train_step" device(0) batch(8) arena(256)
exec.step "train_step" device(0) batch(8) arena(256) {
  // CHECK: %[[X:.*]] = exec.input "images" : memref<?x2x3xf32>
  %x = exec.input "images" : memref<?x2x3xf32>
  %lr = exec.input "lr" : memref<f32>
  // CHECK: %[[W:.*]] = exec.state @w : memref<4x6xf32>
  %w = exec.state @w : memref<4x6xf32>
  %m = exec.state @w.momentum_buffer : memref<4x6xf32>
  // CHECK: exec.view %[[X]] : memref<?x2x3xf32> to memref<?x6xf32>
  %flat = exec.view %x : memref<?x2x3xf32> to memref<?x6xf32>
  // CHECK: exec.arena[0] : memref<?x4xf32>
  %y = exec.arena[0] : memref<?x4xf32>
  %g = exec.arena[128] : memref<4x6xf32>
  // CHECK: exec.kernel "LinearForward" ins(%{{.*}}, %[[W]] : memref<?x6xf32>, memref<4x6xf32>) outs(%{{.*}} : memref<?x4xf32>)
  exec.kernel "LinearForward" ins(%flat, %w : memref<?x6xf32>, memref<4x6xf32>) outs(%y : memref<?x4xf32>)
  // CHECK: exec.kernel "Fill" outs(%{{.*}} : memref<4x6xf32>) {value = 0.000000e+00 : f64}
  exec.kernel "Fill" outs(%g : memref<4x6xf32>) {value = 0.0 : f64}
  // CHECK: exec.kernel "SgdUpdate" ins({{.*}}) {momentum = 9.000000e-01 : f64}
  exec.kernel "SgdUpdate" ins(%w, %g, %lr, %m : memref<4x6xf32>, memref<4x6xf32>, memref<f32>, memref<4x6xf32>) {momentum = 0.9 : f64}
  // CHECK: exec.output "logits", %{{.*}} : memref<?x4xf32>
  exec.output "logits", %y : memref<?x4xf32>
}

// A convolution with its workspace (cuDNN's scratch) in the arena.
// CHECK-LABEL: exec.step "conv_step" device(0) batch(2) arena(4096)
exec.step "conv_step" device(0) batch(2) arena(4096) {
  %x = exec.input "images" : memref<?x1x4x4xf32>
  %w = exec.arena[0] : memref<2x1x3x3xf32>
  %y = exec.arena[128] : memref<?x2x2x2xf32>
  // CHECK: %[[WS:.*]] = exec.arena[1024] : memref<2048xi8>
  %ws = exec.arena[1024] : memref<2048xi8>
  // CHECK: exec.kernel "Conv2dForward" ins(%{{.*}}, %{{.*}} : memref<?x1x4x4xf32>, memref<2x1x3x3xf32>) outs(%{{.*}} : memref<?x2x2x2xf32>) workspace(%[[WS]] : memref<2048xi8>) {algorithm = "direct"}
  exec.kernel "Conv2dForward" ins(%x, %w : memref<?x1x4x4xf32>, memref<2x1x3x3xf32>) outs(%y : memref<?x2x2x2xf32>) workspace(%ws : memref<2048xi8>) {algorithm = "direct"}
}

// The scheduling attributes (declared) print among the kernel's own, in
// name order, as before they were declared.
// CHECK-LABEL: exec.step "scheduled"
exec.step "scheduled" device(0) batch(2) arena(1024) {
  %x = exec.arena[0] : memref<?x16xf32>
  %w = exec.arena[256] : memref<4x16xf32>
  %y = exec.arena[512] : memref<?x4xf32>
  // CHECK: exec.kernel "LinearForward" {{.*}} {cast_reuse, cast_slot = 1 : i64, precision = bf16, remat, signal = array<i64: 0>}
  exec.kernel "LinearForward" ins(%x, %w : memref<?x16xf32>, memref<4x16xf32>) outs(%y : memref<?x4xf32>) {signal = array<i64: 0>, precision = bf16, remat, cast_slot = 1 : i64, cast_reuse}
  // CHECK: exec.kernel "AllReduce" {{.*}} {op = "sum", signal = array<i64: 1>, stream = 1 : i64, wait = array<i64: 0>}
  exec.kernel "AllReduce" ins(%w : memref<4x16xf32>) {wait = array<i64: 0>, stream = 1 : i64, op = "sum", signal = array<i64: 1>}
}
