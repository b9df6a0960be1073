// RUN: dpc-opt %s -nn-set-batch=batch=4 -nn-build-train-step="momentum=0.9" -dpc-partition-data-parallel="devices=cpu:0,cpu:1" -dpc-shard-optimizer-state -convert-nn-to-exec -schedule-exec-streams | FileCheck %s

// A step with sharded optimizer state (dpc-shard-optimizer-state), lowered:
// each device keeps its element range of every momentum buffer as its own
// persistent shard (w's 15 elements cut 8, 7; b's 3 cut 2, 1), updates its
// range of the parameter and of the all-reduced gradient through views,
// in place, and all-gathers the ranges into the whole parameter, in place,
// on the communication stream: no copy of the parameter. The update waits
// for the gradient's all-reduce through the views of it.

// CHECK-DAG: exec.persistent @w.momentum_buffer "optimizer_state" init = "zeros" {logical_shape = array<i64: 3, 5>, parameter = "w", shard_offset = 0 : i64} : tensor<8xf32>
// CHECK-DAG: exec.persistent @"w.momentum_buffer@1" "optimizer_state" init = "zeros" {device = 1 : i64, logical_shape = array<i64: 3, 5>, name = "w.momentum_buffer", parameter = "w", shard_offset = 8 : i64} : tensor<7xf32>
// CHECK-DAG: exec.persistent @"b.momentum_buffer@1" "optimizer_state" init = "zeros" {device = 1 : i64, logical_shape = array<i64: 3>, name = "b.momentum_buffer", parameter = "b", shard_offset = 2 : i64} : tensor<1xf32>

// CHECK-LABEL: exec.step "train_step" device(1)
// CHECK-DAG: %[[W:.*]] = exec.state @"w@1" : memref<3x5xf32>
// CHECK-DAG: %[[B:.*]] = exec.state @"b@1" : memref<3xf32>
// CHECK-DAG: %[[WM:.*]] = exec.state @"w.momentum_buffer@1" : memref<7xf32>
// CHECK-DAG: %[[BM:.*]] = exec.state @"b.momentum_buffer@1" : memref<1xf32>
// CHECK: %[[DW:.*]] = exec.arena{{.*}}exec.kind = "gradient"{{.*}} : memref<3x5xf32>
// CHECK: exec.kernel "AllReduce" ins(%[[DW]] :
// CHECK-SAME: stream = 1
// CHECK: %[[WFLAT:.*]] = exec.view %[[W]] : memref<3x5xf32> to memref<15xf32>
// CHECK-NEXT: %[[WMINE:.*]] = exec.view %[[WFLAT]] {offset = 8 : i64} : memref<15xf32> to memref<7xf32>
// CHECK-NEXT: %[[DWFLAT:.*]] = exec.view %[[DW]] : memref<3x5xf32> to memref<15xf32>
// CHECK-NEXT: %[[DWMINE:.*]] = exec.view %[[DWFLAT]] {offset = 8 : i64} : memref<15xf32> to memref<7xf32>
// CHECK-NEXT: exec.kernel "SgdUpdate" ins(%[[WMINE]], %[[DWMINE]], %{{.*}}, %[[WM]] : {{.*}}) {{.*}}wait = array<i64: 1>
// CHECK-NEXT: exec.kernel "AllGather" ins(%[[WMINE]] : memref<7xf32>) outs(%[[WFLAT]] : memref<15xf32>)
// CHECK-SAME: sizes = array<i64: 8, 7>, stream = 1
// CHECK: %[[BMINE:.*]] = exec.view %[[B]] {offset = 2 : i64} : memref<3xf32> to memref<1xf32>
// CHECK: exec.kernel "SgdUpdate" ins(%[[BMINE]], %{{.*}}, %{{.*}}, %[[BM]] :
// CHECK-NEXT: exec.kernel "AllGather" ins(%[[BMINE]] : memref<1xf32>) outs(%[[B]] : memref<3xf32>)
// CHECK-SAME: sizes = array<i64: 2, 1>, stream = 1
// CHECK-NOT: exec.kernel "Copy"
// CHECK: exec.output "loss"
func.func @forward(%x: tensor<?x5xf32> {nn.input = "x"}, %w: tensor<3x5xf32> {nn.param = "w"}, %b: tensor<3xf32> {nn.param = "b"}) -> tensor<?x3xf32> {
  %0 = nn.linear %x, %w, %b : (tensor<?x5xf32>, tensor<3x5xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}
