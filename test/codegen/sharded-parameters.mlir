// RUN: dpc-opt %s -nn-set-batch=batch=4 -nn-build-train-step="momentum=0.9" -dpc-partition-data-parallel="devices=cpu:0,cpu:1" -dpc-shard-optimizer-state="stateless=true" -dpc-shard-gradients -dpc-shard-parameters -dpc-bucket-gradients="first-bucket-mb=0.0001 bucket-mb=0.0001" -convert-nn-to-exec -schedule-exec-streams -plan-exec-arena | FileCheck %s

// A step with sharded parameters (dpc-shard-parameters), lowered,
// scheduled and planned: each device holds its range of every parameter as
// a persistent shard (the logical shape and the range's offset recorded),
// all-gathers the wholes into arena buffers before the passes that read
// them, and updates its range in place.

// CHECK-DAG: exec.persistent @"w1@1" "parameter" init = "model" {device = 1 : i64, logical_shape = array<i64: 8, 5>, name = "w1", shard_offset = 20 : i64, source = "w1"} : tensor<20xf32>
// CHECK-DAG: exec.persistent @"b2@1" "parameter" init = "model" {device = 1 : i64, logical_shape = array<i64: 3>, name = "b2", shard_offset = 2 : i64, source = "b2"} : tensor<1xf32>

// CHECK-LABEL: exec.step "train_step" device(1)
// CHECK: %[[W1:.*]] = exec.state @"w1@1" : memref<20xf32>
// CHECK: %[[B1:.*]] = exec.state @"b1@1" : memref<4xf32>
// CHECK: %[[W2:.*]] = exec.state @"w2@1" : memref<12xf32>
// The first bucket (w1 and b1, read first by the first linear) before any
// compute kernel: it reads only training state, so it waits for nothing.
// CHECK: %[[W1WHOLE:.*]] = exec.arena[{{[0-9]+}}] {exec.holds = "dist.all_gather w1 tensor<40xf32>", exec.kind = "parameter"} : memref<40xf32>
// CHECK-NEXT: %[[W1VIEW:.*]] = exec.view %[[W1WHOLE]] : memref<40xf32> to memref<8x5xf32>
// CHECK-NEXT: %[[B1WHOLE:.*]] = exec.arena
// CHECK-NEXT: exec.kernel "AllGather" ins(%[[W1]], %[[B1]] : memref<20xf32>, memref<4xf32>) outs(%[[W1WHOLE]], %[[B1WHOLE]] : memref<40xf32>, memref<8xf32>) {signal = array<i64: 0>, sizes = array<i64: 20, 20, 4, 4>, stream = 1 : i64}
// The next layer's bucket, a layer ahead: also before the first linear.
// CHECK: exec.kernel "AllGather" ins(%[[W2]], %{{.*}} : memref<12xf32>, memref<1xf32>) {{.*}} {signal = array<i64: 1>, sizes = array<i64: 12, 12, 2, 1>, stream = 1 : i64}
// CHECK-NEXT: %{{.*}} = exec.arena
// CHECK-NEXT: exec.kernel "LinearForward" ins(%{{.*}}, %[[W1VIEW]], %[[B1WHOLE]] : {{.*}}) outs({{.*}}) {wait = array<i64: 0>}
// CHECK: exec.kernel "LinearForward" {{.*}} {wait = array<i64: 1>}
// The backward pass gathers w2 again once the loss gradient exists.
// CHECK: exec.kernel "CrossEntropyBackward" {{.*}} {signal = array<i64: 2>}
// CHECK-NEXT: %[[W2AGAIN:.*]] = exec.arena[{{[0-9]+}}] {exec.holds = "dist.all_gather w2 tensor<24xf32>", exec.kind = "parameter"}
// CHECK-NEXT: exec.kernel "AllGather" ins(%[[W2]] : memref<12xf32>) outs(%[[W2AGAIN]] : memref<24xf32>) {signal = array<i64: 3>, sizes = array<i64: 12, 12>, stream = 1 : i64, wait = array<i64: 2>}
// The updates write the shards in place, and nothing copies them back.
// CHECK: exec.kernel "SgdUpdate" ins(%[[W1]], {{.*}})
// CHECK-NOT: exec.kernel "Copy"
// CHECK: exec.output "loss"

func.func @forward(%x: tensor<?x5xf32> {nn.input = "x"}, %w1: tensor<8x5xf32> {nn.param = "w1"}, %b1: tensor<8xf32> {nn.param = "b1"}, %w2: tensor<3x8xf32> {nn.param = "w2"}, %b2: tensor<3xf32> {nn.param = "b2"}) -> tensor<?x3xf32> {
  %0 = nn.linear %x, %w1, %b1 : (tensor<?x5xf32>, tensor<8x5xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %1 = nn.relu %0 : tensor<?x8xf32>
  %2 = nn.linear %1, %w2, %b2 : (tensor<?x8xf32>, tensor<3x8xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  return %2 : tensor<?x3xf32>
}
