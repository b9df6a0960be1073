// RUN: dpc-opt %s -nn-set-batch=batch=16 -nn-build-train-step -dpc-partition-data-parallel="devices=cuda:0,cuda:1 split=6,10" -convert-nn-to-exec -schedule-exec-streams -plan-exec-arena -report-exec-memory | FileCheck %s
// RUN: dpc-opt %s -nn-set-batch=batch=16 -nn-build-train-step -dpc-partition-data-parallel="devices=cpu:0,cpu:1 split=6,10" -convert-nn-to-exec -schedule-exec-streams -plan-exec-arena -report-exec-memory | FileCheck %s --check-prefix=CPU

// On a GPU every convolution kernel gets cuDNN's workspace in the arena:
// eight times the call's largest tensor at the replica's batch, at least
// 16 MiB. Replica 0 (6 rows): y is 6x16x128x128 f32 = 6291456 bytes, so
// 50331648; replica 1 (10 rows): 83886080. The backward-weights call reads
// x and dy (dy as large as y); its workspace is as large.
// CHECK-LABEL: exec.step "train_step" device(0) batch(6)
// CHECK: %[[WS0:.*]] = exec.arena[{{[0-9]+}}] : memref<50331648xi8>
// CHECK-NEXT: exec.kernel "Conv2dForward" ins({{.*}}) outs({{.*}}) workspace(%[[WS0]] : memref<50331648xi8>) {algorithm = "cudnn_heuristic
// CHECK: %[[WS1:.*]] = exec.arena[{{[0-9]+}}] : memref<50331648xi8>
// CHECK-NEXT: exec.kernel "Conv2dBackwardWeights" ins({{.*}}) outs({{.*}}) workspace(%[[WS1]] : memref<50331648xi8>)
// CHECK-LABEL: exec.step "train_step" device(1) batch(10)
// CHECK: exec.kernel "Conv2dForward" {{.*}} workspace(%{{.*}} : memref<83886080xi8>)
// CHECK: exec.kernel "Conv2dBackwardWeights" {{.*}} workspace(%{{.*}} : memref<83886080xi8>)

// The CPU's convolutions (oneDNN's direct algorithm) take none.
// CPU-LABEL: exec.step "train_step" device(0)
// CPU-NOT: workspace(
// CPU: exec.kernel "Conv2dForward" {{.*}} {algorithm = "direct"
// CPU-NOT: xi8>
func.func @forward(%x: tensor<?x4x128x128xf32> {nn.input = "x"},
                   %w: tensor<16x4x3x3xf32> {nn.param = "conv.weight"},
                   %fc: tensor<3x16xf32> {nn.param = "fc.weight"})
    -> (tensor<?x3xf32> {nn.output = "logits"}) {
  %0 = nn.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<?x4x128x128xf32>, tensor<16x4x3x3xf32>) -> tensor<?x16x128x128xf32>
  %1 = nn.global_avg_pool2d %0 : (tensor<?x16x128x128xf32>) -> tensor<?x16x1x1xf32>
  %2 = nn.flatten %1 : (tensor<?x16x1x1xf32>) -> tensor<?x16xf32>
  %3 = nn.linear %2, %fc : (tensor<?x16xf32>, tensor<3x16xf32>) -> tensor<?x3xf32>
  return %3 : tensor<?x3xf32>
}
