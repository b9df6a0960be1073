// RUN: dpc-opt %s -report-exec-memory | FileCheck %s

// The input is a planned arena, each exec.arena carrying what the lowering
// recorded it holds (exec.holds, exec.kind). The pass finds where the most
// arena bytes are alive and records there the activation and gradient
// bytes and the largest buffers, largest first; it removes the records.

// CHECK-NOT: exec.holds
// CHECK-NOT: exec.kind

// Evaluation: the peak is at the ReLU, which reads the linear layer's
// output and writes its own: both forward values.
// CHECK-LABEL: exec.step "eval_step" device(0) batch(3) arena(384) attributes
// CHECK-SAME: activation_bytes = 384 : i64, gradient_bytes = 0 : i64
// CHECK-SAME: live_at_peak = [{bytes = 192 : i64, kind = "activation", name = "nn.linear tensor<3x16xf32>"}, {bytes = 192 : i64, kind = "activation", name = "nn.relu tensor<3x16xf32>"}]
// remat_flops is the lowering's.
// CHECK-SAME: remat_flops = 0 : i64
// CHECK-LABEL: exec.step "eval_step" device(1) batch(5) arena(640) attributes
// CHECK-SAME: activation_bytes = 640 : i64

// Training: the peak is while fc1's gradients are computed, with fc2's
// gradient alive (its all-reduce is in flight).
// CHECK-LABEL: exec.step "train_step" device(0) batch(3) arena(1344) attributes
// CHECK-SAME: activation_bytes = 0 : i64, gradient_bytes = 1024 : i64
// CHECK-SAME: live_at_peak = [{bytes = 768 : i64, kind = "gradient", name = "nn.matmul tensor<16x12xf32>"}, {bytes = 192 : i64, kind = "gradient", name = "nn.matmul tensor<3x16xf32>"}, {bytes = 192 : i64, kind = "workspace", name = "nn.relu_grad tensor<3x16xf32>"}, {bytes = 64 : i64, kind = "gradient", name = "nn.reduce_sum tensor<16xf32>"}, {bytes = 8 : i64, kind = "workspace", name = "nn.correct_count tensor<i64>"}, {bytes = 4 : i64, kind = "workspace", name = "nn.loss tensor<f32>"}]
// CHECK-LABEL: exec.step "train_step" device(1) batch(5) arena(1600) attributes
// CHECK-SAME: gradient_bytes = 1024 : i64
// CHECK-SAME: {bytes = 320 : i64, kind = "workspace", name = "nn.relu_grad tensor<5x16xf32>"}

// ---- input: make-inputs.sh, the output of the passes before ----
module attributes {exec.devices = ["cpu:0", "cpu:1"]} {
  exec.persistent @fc1.weight "parameter" init = "model" {source = "fc1.weight"} : tensor<16x12xf32>
  exec.persistent @fc1.bias "parameter" init = "model" {source = "fc1.bias"} : tensor<16xf32>
  exec.persistent @fc2.weight "parameter" init = "model" {source = "fc2.weight"} : tensor<3x16xf32>
  exec.persistent @"fc1.weight@1" "parameter" init = "model" {device = 1 : i64, name = "fc1.weight", source = "fc1.weight"} : tensor<16x12xf32>
  exec.persistent @"fc1.bias@1" "parameter" init = "model" {device = 1 : i64, name = "fc1.bias", source = "fc1.bias"} : tensor<16xf32>
  exec.persistent @"fc2.weight@1" "parameter" init = "model" {device = 1 : i64, name = "fc2.weight", source = "fc2.weight"} : tensor<3x16xf32>
  exec.persistent @fc1.weight.momentum_buffer "optimizer_state" init = "zeros" {parameter = "fc1.weight"} : tensor<16x12xf32>
  exec.persistent @fc1.bias.momentum_buffer "optimizer_state" init = "zeros" {parameter = "fc1.bias"} : tensor<16xf32>
  exec.persistent @fc2.weight.momentum_buffer "optimizer_state" init = "zeros" {parameter = "fc2.weight"} : tensor<3x16xf32>
  exec.persistent @"fc1.weight.momentum_buffer@1" "optimizer_state" init = "zeros" {device = 1 : i64, name = "fc1.weight.momentum_buffer", parameter = "fc1.weight"} : tensor<16x12xf32>
  exec.persistent @"fc1.bias.momentum_buffer@1" "optimizer_state" init = "zeros" {device = 1 : i64, name = "fc1.bias.momentum_buffer", parameter = "fc1.bias"} : tensor<16xf32>
  exec.persistent @"fc2.weight.momentum_buffer@1" "optimizer_state" init = "zeros" {device = 1 : i64, name = "fc2.weight.momentum_buffer", parameter = "fc2.weight"} : tensor<3x16xf32>
  exec.step "eval_step" device(0) batch(3) arena(384) attributes {remat_flops = 0 : i64} {
    %0 = exec.input "images" : memref<?x3x2x2xf32>
    %1 = exec.input "labels" : memref<?xi32>
    %2 = exec.state @fc1.weight : memref<16x12xf32>
    %3 = exec.state @fc1.bias : memref<16xf32>
    %4 = exec.state @fc2.weight : memref<3x16xf32>
    %5 = exec.view %0 : memref<?x3x2x2xf32> to memref<?x12xf32>
    %6 = exec.arena[0] {exec.holds = "nn.linear tensor<3x16xf32>", exec.kind = "activation"} : memref<?x16xf32>
    exec.kernel "LinearForward" ins(%5, %2, %3 : memref<?x12xf32>, memref<16x12xf32>, memref<16xf32>) outs(%6 : memref<?x16xf32>)
    %7 = exec.arena[192] {exec.holds = "nn.relu tensor<3x16xf32>", exec.kind = "activation"} : memref<?x16xf32>
    exec.kernel "ReluForward" ins(%6 : memref<?x16xf32>) outs(%7 : memref<?x16xf32>)
    %8 = exec.arena[0] {exec.holds = "nn.linear tensor<3x3xf32>", exec.kind = "activation"} : memref<?x3xf32>
    exec.kernel "LinearForward" ins(%7, %4 : memref<?x16xf32>, memref<3x16xf32>) outs(%8 : memref<?x3xf32>)
    %9 = exec.arena[64] {exec.holds = "nn.loss tensor<f32>", exec.kind = "workspace"} : memref<f32>
    exec.kernel "CrossEntropyForward" ins(%8, %1 : memref<?x3xf32>, memref<?xi32>) outs(%9 : memref<f32>)
    %10 = exec.arena[128] {exec.holds = "nn.correct_count tensor<i64>", exec.kind = "workspace"} : memref<i64>
    exec.kernel "CorrectCount" ins(%8, %1 : memref<?x3xf32>, memref<?xi32>) outs(%10 : memref<i64>)
    exec.output "loss", %9 : memref<f32>
    exec.output "correct", %10 : memref<i64>
    exec.output "logits", %8 : memref<?x3xf32>
  }
  exec.step "eval_step" device(1) batch(5) arena(640) attributes {remat_flops = 0 : i64} {
    %0 = exec.input "images" : memref<?x3x2x2xf32>
    %1 = exec.input "labels" : memref<?xi32>
    %2 = exec.state @"fc1.weight@1" : memref<16x12xf32>
    %3 = exec.state @"fc1.bias@1" : memref<16xf32>
    %4 = exec.state @"fc2.weight@1" : memref<3x16xf32>
    %5 = exec.view %0 : memref<?x3x2x2xf32> to memref<?x12xf32>
    %6 = exec.arena[0] {exec.holds = "nn.linear tensor<5x16xf32>", exec.kind = "activation"} : memref<?x16xf32>
    exec.kernel "LinearForward" ins(%5, %2, %3 : memref<?x12xf32>, memref<16x12xf32>, memref<16xf32>) outs(%6 : memref<?x16xf32>)
    %7 = exec.arena[320] {exec.holds = "nn.relu tensor<5x16xf32>", exec.kind = "activation"} : memref<?x16xf32>
    exec.kernel "ReluForward" ins(%6 : memref<?x16xf32>) outs(%7 : memref<?x16xf32>)
    %8 = exec.arena[0] {exec.holds = "nn.linear tensor<5x3xf32>", exec.kind = "activation"} : memref<?x3xf32>
    exec.kernel "LinearForward" ins(%7, %4 : memref<?x16xf32>, memref<3x16xf32>) outs(%8 : memref<?x3xf32>)
    %9 = exec.arena[64] {exec.holds = "nn.loss tensor<f32>", exec.kind = "workspace"} : memref<f32>
    exec.kernel "CrossEntropyForward" ins(%8, %1 : memref<?x3xf32>, memref<?xi32>) outs(%9 : memref<f32>)
    %10 = exec.arena[128] {exec.holds = "nn.correct_count tensor<i64>", exec.kind = "workspace"} : memref<i64>
    exec.kernel "CorrectCount" ins(%8, %1 : memref<?x3xf32>, memref<?xi32>) outs(%10 : memref<i64>)
    exec.output "loss", %9 : memref<f32>
    exec.output "correct", %10 : memref<i64>
    exec.output "logits", %8 : memref<?x3xf32>
  }
  exec.step "train_step" device(0) batch(3) arena(1344) attributes {remat_flops = 0 : i64} {
    %0 = exec.input "images" : memref<?x3x2x2xf32>
    %1 = exec.input "labels" : memref<?xi32>
    %2 = exec.input "lr" : memref<f32>
    %3 = exec.state @fc1.weight : memref<16x12xf32>
    %4 = exec.state @fc1.bias : memref<16xf32>
    %5 = exec.state @fc2.weight : memref<3x16xf32>
    %6 = exec.state @fc1.weight.momentum_buffer : memref<16x12xf32>
    %7 = exec.state @fc1.bias.momentum_buffer : memref<16xf32>
    %8 = exec.state @fc2.weight.momentum_buffer : memref<3x16xf32>
    %9 = exec.view %0 : memref<?x3x2x2xf32> to memref<?x12xf32>
    %10 = exec.arena[0] {exec.holds = "nn.linear tensor<3x16xf32>", exec.kind = "activation"} : memref<?x16xf32>
    exec.kernel "LinearForward" ins(%9, %3, %4 : memref<?x12xf32>, memref<16x12xf32>, memref<16xf32>) outs(%10 : memref<?x16xf32>)
    %11 = exec.arena[192] {exec.holds = "nn.relu tensor<3x16xf32>", exec.kind = "activation"} : memref<?x16xf32>
    exec.kernel "ReluForward" ins(%10 : memref<?x16xf32>) outs(%11 : memref<?x16xf32>)
    %12 = exec.arena[384] {exec.holds = "nn.linear tensor<3x3xf32>", exec.kind = "activation"} : memref<?x3xf32>
    exec.kernel "LinearForward" ins(%11, %5 : memref<?x16xf32>, memref<3x16xf32>) outs(%12 : memref<?x3xf32>)
    %13 = exec.arena[1280] {exec.holds = "nn.loss tensor<f32>", exec.kind = "workspace"} : memref<f32>
    exec.kernel "CrossEntropyForward" ins(%12, %1 : memref<?x3xf32>, memref<?xi32>) outs(%13 : memref<f32>)
    %14 = exec.arena[1216] {exec.holds = "nn.correct_count tensor<i64>", exec.kind = "workspace"} : memref<i64>
    exec.kernel "CorrectCount" ins(%12, %1 : memref<?x3xf32>, memref<?xi32>) outs(%14 : memref<i64>)
    %15 = exec.arena[448] {exec.holds = "nn.constant tensor<f32>", exec.kind = "workspace"} : memref<f32>
    exec.kernel "Fill" outs(%15 : memref<f32>) {value = 1.000000e+00 : f64}
    %16 = exec.arena[576] {exec.holds = "nn.loss_grad tensor<3x3xf32>", exec.kind = "workspace"} : memref<?x3xf32>
    exec.kernel "CrossEntropyBackward" ins(%12, %1, %15 : memref<?x3xf32>, memref<?xi32>, memref<f32>) outs(%16 : memref<?x3xf32>)
    %17 = exec.arena[384] {exec.holds = "nn.matmul tensor<3x16xf32>", exec.kind = "workspace"} : memref<?x16xf32>
    exec.kernel "MatmulForward" ins(%16, %5 : memref<?x3xf32>, memref<3x16xf32>) outs(%17 : memref<?x16xf32>)
    %18 = exec.arena[768] {exec.holds = "nn.matmul tensor<3x16xf32>", exec.kind = "gradient"} : memref<3x16xf32>
    exec.kernel "MatmulTransposedA" ins(%16, %11 : memref<?x3xf32>, memref<?x16xf32>) outs(%18 : memref<3x16xf32>) {signal = array<i64: 0>}
    exec.kernel "AllReduce" ins(%18 : memref<3x16xf32>) {op = "sum", signal = array<i64: 1>, stream = 1 : i64, wait = array<i64: 0>}
    %19 = exec.arena[960] {exec.holds = "nn.relu_grad tensor<3x16xf32>", exec.kind = "workspace"} : memref<?x16xf32>
    exec.kernel "ReluBackward" ins(%10, %17 : memref<?x16xf32>, memref<?x16xf32>) outs(%19 : memref<?x16xf32>)
    %20 = exec.arena[0] {exec.holds = "nn.matmul tensor<16x12xf32>", exec.kind = "gradient"} : memref<16x12xf32>
    exec.kernel "MatmulTransposedA" ins(%19, %9 : memref<?x16xf32>, memref<?x12xf32>) outs(%20 : memref<16x12xf32>)
    %21 = exec.arena[1152] {exec.holds = "nn.reduce_sum tensor<16xf32>", exec.kind = "gradient"} : memref<16xf32>
    exec.kernel "ReduceSum" ins(%19 : memref<?x16xf32>) outs(%21 : memref<16xf32>) {dims = array<i64: 0>, signal = array<i64: 2>}
    exec.kernel "AllReduce" ins(%20, %21 : memref<16x12xf32>, memref<16xf32>) {op = "sum", signal = array<i64: 3>, stream = 1 : i64, wait = array<i64: 2>}
    exec.kernel "SgdUpdate" ins(%3, %20, %2, %6 : memref<16x12xf32>, memref<16x12xf32>, memref<f32>, memref<16x12xf32>) {dampening = 0.000000e+00 : f64, momentum = 9.000000e-01 : f64, nesterov = false, wait = array<i64: 3>, weight_decay = 0.000000e+00 : f64}
    exec.kernel "SgdUpdate" ins(%4, %21, %2, %7 : memref<16xf32>, memref<16xf32>, memref<f32>, memref<16xf32>) {dampening = 0.000000e+00 : f64, momentum = 9.000000e-01 : f64, nesterov = false, weight_decay = 0.000000e+00 : f64}
    exec.kernel "SgdUpdate" ins(%5, %18, %2, %8 : memref<3x16xf32>, memref<3x16xf32>, memref<f32>, memref<3x16xf32>) {dampening = 0.000000e+00 : f64, momentum = 9.000000e-01 : f64, nesterov = false, wait = array<i64: 1>, weight_decay = 0.000000e+00 : f64}
    exec.output "loss", %13 : memref<f32>
    exec.output "correct", %14 : memref<i64>
  }
  exec.step "train_step" device(1) batch(5) arena(1600) attributes {remat_flops = 0 : i64} {
    %0 = exec.input "images" : memref<?x3x2x2xf32>
    %1 = exec.input "labels" : memref<?xi32>
    %2 = exec.input "lr" : memref<f32>
    %3 = exec.state @"fc1.weight@1" : memref<16x12xf32>
    %4 = exec.state @"fc1.bias@1" : memref<16xf32>
    %5 = exec.state @"fc2.weight@1" : memref<3x16xf32>
    %6 = exec.state @"fc1.weight.momentum_buffer@1" : memref<16x12xf32>
    %7 = exec.state @"fc1.bias.momentum_buffer@1" : memref<16xf32>
    %8 = exec.state @"fc2.weight.momentum_buffer@1" : memref<3x16xf32>
    %9 = exec.view %0 : memref<?x3x2x2xf32> to memref<?x12xf32>
    %10 = exec.arena[0] {exec.holds = "nn.linear tensor<5x16xf32>", exec.kind = "activation"} : memref<?x16xf32>
    exec.kernel "LinearForward" ins(%9, %3, %4 : memref<?x12xf32>, memref<16x12xf32>, memref<16xf32>) outs(%10 : memref<?x16xf32>)
    %11 = exec.arena[320] {exec.holds = "nn.relu tensor<5x16xf32>", exec.kind = "activation"} : memref<?x16xf32>
    exec.kernel "ReluForward" ins(%10 : memref<?x16xf32>) outs(%11 : memref<?x16xf32>)
    %12 = exec.arena[640] {exec.holds = "nn.linear tensor<5x3xf32>", exec.kind = "activation"} : memref<?x3xf32>
    exec.kernel "LinearForward" ins(%11, %5 : memref<?x16xf32>, memref<3x16xf32>) outs(%12 : memref<?x3xf32>)
    %13 = exec.arena[1536] {exec.holds = "nn.loss tensor<f32>", exec.kind = "workspace"} : memref<f32>
    exec.kernel "CrossEntropyForward" ins(%12, %1 : memref<?x3xf32>, memref<?xi32>) outs(%13 : memref<f32>)
    %14 = exec.arena[1472] {exec.holds = "nn.correct_count tensor<i64>", exec.kind = "workspace"} : memref<i64>
    exec.kernel "CorrectCount" ins(%12, %1 : memref<?x3xf32>, memref<?xi32>) outs(%14 : memref<i64>)
    %15 = exec.arena[704] {exec.holds = "nn.constant tensor<f32>", exec.kind = "workspace"} : memref<f32>
    exec.kernel "Fill" outs(%15 : memref<f32>) {value = 1.000000e+00 : f64}
    %16 = exec.arena[960] {exec.holds = "nn.loss_grad tensor<5x3xf32>", exec.kind = "workspace"} : memref<?x3xf32>
    exec.kernel "CrossEntropyBackward" ins(%12, %1, %15 : memref<?x3xf32>, memref<?xi32>, memref<f32>) outs(%16 : memref<?x3xf32>)
    %17 = exec.arena[640] {exec.holds = "nn.matmul tensor<5x16xf32>", exec.kind = "workspace"} : memref<?x16xf32>
    exec.kernel "MatmulForward" ins(%16, %5 : memref<?x3xf32>, memref<3x16xf32>) outs(%17 : memref<?x16xf32>)
    %18 = exec.arena[1280] {exec.holds = "nn.matmul tensor<3x16xf32>", exec.kind = "gradient"} : memref<3x16xf32>
    exec.kernel "MatmulTransposedA" ins(%16, %11 : memref<?x3xf32>, memref<?x16xf32>) outs(%18 : memref<3x16xf32>) {signal = array<i64: 0>}
    exec.kernel "AllReduce" ins(%18 : memref<3x16xf32>) {op = "sum", signal = array<i64: 1>, stream = 1 : i64, wait = array<i64: 0>}
    %19 = exec.arena[960] {exec.holds = "nn.relu_grad tensor<5x16xf32>", exec.kind = "workspace"} : memref<?x16xf32>
    exec.kernel "ReluBackward" ins(%10, %17 : memref<?x16xf32>, memref<?x16xf32>) outs(%19 : memref<?x16xf32>)
    %20 = exec.arena[0] {exec.holds = "nn.matmul tensor<16x12xf32>", exec.kind = "gradient"} : memref<16x12xf32>
    exec.kernel "MatmulTransposedA" ins(%19, %9 : memref<?x16xf32>, memref<?x12xf32>) outs(%20 : memref<16x12xf32>)
    %21 = exec.arena[768] {exec.holds = "nn.reduce_sum tensor<16xf32>", exec.kind = "gradient"} : memref<16xf32>
    exec.kernel "ReduceSum" ins(%19 : memref<?x16xf32>) outs(%21 : memref<16xf32>) {dims = array<i64: 0>, signal = array<i64: 2>}
    exec.kernel "AllReduce" ins(%20, %21 : memref<16x12xf32>, memref<16xf32>) {op = "sum", signal = array<i64: 3>, stream = 1 : i64, wait = array<i64: 2>}
    exec.kernel "SgdUpdate" ins(%3, %20, %2, %6 : memref<16x12xf32>, memref<16x12xf32>, memref<f32>, memref<16x12xf32>) {dampening = 0.000000e+00 : f64, momentum = 9.000000e-01 : f64, nesterov = false, wait = array<i64: 3>, weight_decay = 0.000000e+00 : f64}
    exec.kernel "SgdUpdate" ins(%4, %21, %2, %7 : memref<16xf32>, memref<16xf32>, memref<f32>, memref<16xf32>) {dampening = 0.000000e+00 : f64, momentum = 9.000000e-01 : f64, nesterov = false, weight_decay = 0.000000e+00 : f64}
    exec.kernel "SgdUpdate" ins(%5, %18, %2, %8 : memref<3x16xf32>, memref<3x16xf32>, memref<f32>, memref<3x16xf32>) {dampening = 0.000000e+00 : f64, momentum = 9.000000e-01 : f64, nesterov = false, wait = array<i64: 1>, weight_decay = 0.000000e+00 : f64}
    exec.output "loss", %13 : memref<f32>
    exec.output "correct", %14 : memref<i64>
  }
}

