// RUN: dpc-opt %s -nn-set-batch=batch=8 -nn-build-train-step="class-axis=-1 ignore-index=-100" -dpc-partition-data-parallel="devices=cpu:0,cpu:1 split=3,5" | FileCheck %s

// A cross-entropy that ignores targets divides by the global count of valid
// ones: each replica counts its own, one all-reduce (on the critical path,
// like synchronized batch-norm statistics) sums them, and every replica's
// loss and gradient divides by the sum.
func.func @forward(%x: tensor<?x2xf32> {nn.input = "x"}, %w: tensor<12x2xf32> {nn.param = "w"}) -> (tensor<?x4x3xf32> {nn.output = "y"}) {
  %h = nn.linear %x, %w : (tensor<?x2xf32>, tensor<12x2xf32>) -> tensor<?x12xf32>
  %y = nn.reshape %h {shape = array<i64: 0, 4, 3>} : (tensor<?x12xf32>) -> tensor<?x4x3xf32>
  return %y : tensor<?x4x3xf32>
}

// CHECK-LABEL: func.func @train_step
// CHECK: %[[W0:.*]] = nn.loss_weight cross_entropy %{{.*}}, %{{.*}}#0 {class_axis = 2 : i64, dist.replica = 0 : i64, ignore_index = -100 : i64} : (tensor<3x4x3xf32>, tensor<3x4xi64>) -> tensor<f32>
// CHECK: %[[W1:.*]] = nn.loss_weight cross_entropy %{{.*}}, %{{.*}}#1 {{.*}}dist.replica = 1 : i64{{.*}} : (tensor<5x4x3xf32>, tensor<5x4xi64>) -> tensor<f32>
// CHECK: %[[W:.*]]:2 = dist.all_reduce %[[W0]], %[[W1]] {dist.statistics, reduction = "sum"} : tensor<f32>, tensor<f32>
// CHECK: nn.loss cross_entropy %{{.*}}, %{{.*}}#0, %[[W]]#0 {{.*}}dist.replica = 0
// CHECK: nn.loss cross_entropy %{{.*}}, %{{.*}}#1, %[[W]]#1 {{.*}}dist.replica = 1
// CHECK: nn.loss_grad cross_entropy %{{.*}}, %{{.*}}#0, %{{.*}}, %[[W]]#0 {{.*}}dist.replica = 0
// CHECK: nn.loss_grad cross_entropy %{{.*}}, %{{.*}}#1, %{{.*}}, %[[W]]#1 {{.*}}dist.replica = 1
