// RUN: dpc-opt %s -nn-set-batch=batch=4 -nn-build-train-step="momentum=0.9" -dpc-partition-data-parallel="devices=cpu:0,cpu:1" -dpc-shard-optimizer-state -dpc-shard-gradients -dpc-bucket-gradients="first-bucket-mb=0.0001 bucket-mb=0.0001" -convert-nn-to-exec -schedule-exec-streams -plan-exec-arena | FileCheck %s

// A step with sharded gradients (dpc-shard-gradients), lowered, scheduled
// and planned: each gradient is reduce-scattered from a flat view of it
// into the device's own buffer of its range, which the update reads. The
// whole gradient is dead after the ReduceScatter, and the arena reuses its
// bytes once the compute stream has waited for it: the first compute
// kernel after the next collective waits (fences) for it, so the next
// gradient lands where the last one was without racing the communication
// stream.

// CHECK-LABEL: exec.step "train_step" device(1)
// CHECK-DAG: %[[W1:.*]] = exec.state @"w1@1" : memref<8x5xf32>
// CHECK-DAG: %[[W2:.*]] = exec.state @"w2@1" : memref<3x8xf32>
// CHECK-DAG: %[[W2M:.*]] = exec.state @"w2.momentum_buffer@1" : memref<12xf32>
// w2's gradient, at arena offset 0, reduce-scattered into its own range.
// CHECK: %[[DW2:.*]] = exec.arena[0] {{.*}}exec.kind = "gradient"{{.*}} : memref<3x8xf32>
// CHECK-NEXT: exec.kernel "MatmulTransposedA" ins({{.*}}) outs(%[[DW2]] : memref<3x8xf32>) {signal = array<i64: 0>}
// CHECK-NEXT: %[[DW2FLAT:.*]] = exec.view %[[DW2]] : memref<3x8xf32> to memref<24xf32>
// CHECK-NEXT: %[[DW2MINE:.*]] = exec.arena[{{[0-9]+}}] {exec.holds = "dist.reduce_scatter tensor<12xf32>", exec.kind = "gradient"} : memref<12xf32>
// CHECK-NEXT: exec.kernel "ReduceScatter" ins(%[[DW2FLAT]] : memref<24xf32>) outs(%[[DW2MINE]] : memref<12xf32>) {op = "sum", signal = array<i64: 1>, sizes = array<i64: 12, 12>, stream = 1 : i64, wait = array<i64: 0>}
// b2's, in the next bucket.
// CHECK: exec.kernel "ReduceScatter" {{.*}} {op = "sum", signal = array<i64: 3>, sizes = array<i64: 2, 1>, stream = 1 : i64, wait = array<i64: 2>}
// The fence: the first compute kernel after that collective waits for
// w2's reduce-scatter, and w1's gradient then takes w2's bytes.
// CHECK-NEXT: exec.arena
// CHECK-NEXT: exec.kernel "ReluBackward" {{.*}} {wait = array<i64: 1>}
// CHECK-NEXT: %[[DW1:.*]] = exec.arena[0] {{.*}}exec.kind = "gradient"{{.*}} : memref<8x5xf32>
// CHECK: exec.kernel "ReduceScatter" ins(%{{.*}} : memref<40xf32>) outs(%[[DW1MINE:.*]] : memref<20xf32>) {op = "sum", signal = array<i64: 5>, sizes = array<i64: 20, 20>, stream = 1 : i64, wait = array<i64: 4>}
// CHECK: exec.kernel "ReduceSum" {{.*}} wait = array<i64: 3>
// The updates read the ranges; the last bucket's waits for its own.
// CHECK: %[[W1FLAT:.*]] = exec.view %[[W1]] : memref<8x5xf32> to memref<40xf32>
// CHECK-NEXT: %[[W1MINE:.*]] = exec.view %[[W1FLAT]] {offset = 20 : i64} : memref<40xf32> to memref<20xf32>
// CHECK-NEXT: exec.kernel "SgdUpdate" ins(%[[W1MINE]], %[[DW1MINE]], {{.*}}wait = array<i64: 5>
// CHECK-NEXT: exec.kernel "AllGather" ins(%[[W1MINE]] : memref<20xf32>) outs(%[[W1FLAT]] : memref<40xf32>)
// CHECK: exec.kernel "SgdUpdate" ins(%{{.*}}, %[[DW2MINE]], %{{.*}}, %[[W2M]] :
// CHECK-NOT: exec.kernel "Copy"
// CHECK-NOT: exec.kernel "AllReduce"
// CHECK: exec.output "loss"
func.func @forward(%x: tensor<?x5xf32> {nn.input = "x"}, %w1: tensor<8x5xf32> {nn.param = "w1"}, %b1: tensor<8xf32> {nn.param = "b1"}, %w2: tensor<3x8xf32> {nn.param = "w2"}, %b2: tensor<3xf32> {nn.param = "b2"}) -> tensor<?x3xf32> {
  %0 = nn.linear %x, %w1, %b1 : (tensor<?x5xf32>, tensor<8x5xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %1 = nn.relu %0 : tensor<?x8xf32>
  %2 = nn.linear %1, %w2, %b2 : (tensor<?x8xf32>, tensor<3x8xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  return %2 : tensor<?x3xf32>
}
