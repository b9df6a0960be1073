// RUN: dpc-opt %s -nn-set-batch=batch=8 -nn-build-train-step="momentum=0.9" -dpc-partition-data-parallel="devices=cpu:0,cpu:1 split=3,5" -dpc-bucket-gradients="first-bucket-mb=0.0001 bucket-mb=0.001" -convert-nn-to-exec -schedule-exec-streams -plan-exec-arena -report-exec-memory | FileCheck %s

// Each device keeps its own copy of the training state, under the plan
// name; device 1's symbol carries its index.
// CHECK-LABEL: module attributes {exec.devices = ["cpu:0", "cpu:1"]}
// CHECK: exec.persistent @fc1.weight "parameter" init = "model" {source = "fc1.weight"} : tensor<16x12xf32>
// CHECK: exec.persistent @"fc1.weight@1" "parameter" init = "model" {device = 1 : i64, name = "fc1.weight", source = "fc1.weight"} : tensor<16x12xf32>
// CHECK: exec.persistent @"fc1.weight.momentum_buffer@1" "optimizer_state" init = "zeros" {device = 1 : i64, name = "fc1.weight.momentum_buffer", parameter = "fc1.weight"}

// One step per device, compiled for its share of the batch.
// CHECK: exec.step "eval_step" device(0) batch(3)
// CHECK: exec.step "eval_step" device(1) batch(5)
// CHECK: exec.output "logits", %{{.*}} : memref<?x3xf32>

// CHECK: exec.step "train_step" device(0) batch(3)
// CHECK: %[[W1:.*]] = exec.state @fc1.weight : memref<16x12xf32>
// CHECK: exec.kernel "CrossEntropyBackward"
// Buckets of ~100 B, then ~1 KiB: fc2.weight alone, then fc1.weight with
// fc1.bias. The compute stream signals when a bucket's last gradient exists; the
// all-reduce runs on stream 1 meanwhile; the update waits for it.
// CHECK: exec.kernel "MatmulTransposedA" ins({{.*}}) outs(%[[DW2:.*]] : memref<3x16xf32>) {signal = array<i64: 0>}
// CHECK: exec.kernel "AllReduce" ins(%[[DW2]] : memref<3x16xf32>) {op = "sum", signal = array<i64: 1>, stream = 1 : i64, wait = array<i64: 0>}
// CHECK: exec.kernel "ReluBackward"
// CHECK: exec.kernel "AllReduce" ins(%[[DW1:.*]], %[[DB1:.*]] : memref<16x12xf32>, memref<16xf32>) {op = "sum", signal = array<i64: 3>, stream = 1 : i64, wait = array<i64: 2>}
// CHECK: exec.kernel "SgdUpdate" ins(%[[W1]], %[[DW1]], {{.*}}) {{.*}}wait = array<i64: 3>
// CHECK: exec.output "loss"

// Device 1: the same collectives in the same order, its own state.
// CHECK: exec.step "train_step" device(1) batch(5)
// CHECK: exec.state @"fc1.weight@1" : memref<16x12xf32>
// CHECK: exec.kernel "AllReduce" ins(%{{.*}} : memref<3x16xf32>) {op = "sum", signal = array<i64: 1>, stream = 1 : i64, wait = array<i64: 0>}
// CHECK: exec.kernel "AllReduce" ins(%{{.*}}, %{{.*}} : memref<16x12xf32>, memref<16xf32>)
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
