// RUN: dpc-opt %s | dpc-opt | FileCheck %s

// CHECK-LABEL: func.func @scatter
func.func @scatter(%x: tensor<8x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>, tensor<2x4xf32>, tensor<0x4xf32>) {
  // CHECK: dist.scatter %{{.*}} {sizes = array<i64: 3, 3, 2, 0>} : tensor<8x4xf32> -> tensor<3x4xf32>, tensor<3x4xf32>, tensor<2x4xf32>, tensor<0x4xf32>
  %a, %b, %c, %d = dist.scatter %x {sizes = array<i64: 3, 3, 2, 0>} : tensor<8x4xf32> -> tensor<3x4xf32>, tensor<3x4xf32>, tensor<2x4xf32>, tensor<0x4xf32>
  return %a, %b, %c, %d : tensor<3x4xf32>, tensor<3x4xf32>, tensor<2x4xf32>, tensor<0x4xf32>
}

// CHECK-LABEL: func.func @replicate
func.func @replicate(%w: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  // CHECK: dist.replicate %{{.*}} : tensor<4x4xf32> -> tensor<4x4xf32>, tensor<4x4xf32>
  %a, %b = dist.replicate %w : tensor<4x4xf32> -> tensor<4x4xf32>, tensor<4x4xf32>
  return %a, %b : tensor<4x4xf32>, tensor<4x4xf32>
}

// CHECK-LABEL: func.func @all_reduce
func.func @all_reduce(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // CHECK: %[[S:.*]]:2 = dist.all_reduce %{{.*}}, %{{.*}} {reduction = "sum"} : tensor<4xf32>, tensor<4xf32>
  %s:2 = dist.all_reduce %a, %b {reduction = "sum"} : tensor<4xf32>, tensor<4xf32>
  // CHECK: dist.all_reduce %[[S]]#0, %[[S]]#1 {bucket = 3 : i64, reduction = "mean"} : tensor<4xf32>, tensor<4xf32>
  %m:2 = dist.all_reduce %s#0, %s#1 {reduction = "mean", bucket = 3 : i64} : tensor<4xf32>, tensor<4xf32>
  // CHECK: dist.all_reduce %{{.*}}, %{{.*}} {reduction = "max"}
  %x:2 = dist.all_reduce %m#0, %m#1 {reduction = "max"} : tensor<4xf32>, tensor<4xf32>
  return %x#0, %x#1 : tensor<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: func.func @gather
func.func @gather(%a: tensor<3x4xf32>, %b: tensor<5x4xf32>, %la: tensor<f32>, %lb: tensor<f32>) -> (tensor<8x4xf32>, tensor<2xf32>) {
  // CHECK: dist.gather %{{.*}}, %{{.*}} : tensor<3x4xf32>, tensor<5x4xf32> -> tensor<8x4xf32>
  %x = dist.gather %a, %b : tensor<3x4xf32>, tensor<5x4xf32> -> tensor<8x4xf32>
  // Scalars gather into a vector, one entry per device.
  // CHECK: dist.gather %{{.*}}, %{{.*}} : tensor<f32>, tensor<f32> -> tensor<2xf32>
  %l = dist.gather %la, %lb : tensor<f32>, tensor<f32> -> tensor<2xf32>
  return %x, %l : tensor<8x4xf32>, tensor<2xf32>
}

// CHECK-LABEL: func.func @reduce_scatter_all_gather
func.func @reduce_scatter_all_gather(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  // CHECK: dist.reduce_scatter %{{.*}}, %{{.*}} {reduction = "sum", sizes = array<i64: 3, 1>} : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<3x4xf32>, tensor<1x4xf32>
  %ra, %rb = dist.reduce_scatter %a, %b {reduction = "sum", sizes = array<i64: 3, 1>} : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<3x4xf32>, tensor<1x4xf32>
  // CHECK: dist.all_gather %{{.*}}, %{{.*}} : tensor<3x4xf32>, tensor<1x4xf32> -> tensor<4x4xf32>, tensor<4x4xf32>
  %ga, %gb = dist.all_gather %ra, %rb : tensor<3x4xf32>, tensor<1x4xf32> -> tensor<4x4xf32>, tensor<4x4xf32>
  return %ga, %gb : tensor<4x4xf32>, tensor<4x4xf32>
}

// Sharded training buckets them like the gradient all-reduces, and marks
// the step that keeps each replica's range of the optimizer state.
// CHECK-LABEL: func.func @bucketed
// CHECK-SAME: attributes {dist.devices = ["cpu:0", "cpu:1"], dist.shard = "optimizer"}
func.func @bucketed(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) attributes {dist.devices = ["cpu:0", "cpu:1"], dist.shard = "optimizer"} {
  // CHECK: dist.reduce_scatter {{.*}} {bucket = 1 : i64, reduction = "sum", sizes = array<i64: 2, 2>}
  %ra, %rb = dist.reduce_scatter %a, %b {bucket = 1 : i64, reduction = "sum", sizes = array<i64: 2, 2>} : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>, tensor<2x4xf32>
  // CHECK: dist.all_gather {{.*}} {bucket = 0 : i64} : tensor<2x4xf32>, tensor<2x4xf32>
  %ga, %gb = dist.all_gather %ra, %rb {bucket = 0 : i64} : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<4x4xf32>, tensor<4x4xf32>
  return %ga, %gb : tensor<4x4xf32>, tensor<4x4xf32>
}

// The attributes of a partitioned step.
// CHECK-LABEL: func.func @step
// CHECK-SAME: -> (tensor<4xf32> {dist.replica = 0 : i64}, tensor<4xf32> {dist.replica = 1 : i64})
// CHECK-SAME: attributes {dist.devices = ["cpu:0", "cuda:1"], dist.split = array<i64: 1, 3>}
func.func @step(%w: tensor<4xf32>) -> (tensor<4xf32> {dist.replica = 0 : i64}, tensor<4xf32> {dist.replica = 1 : i64})
    attributes {dist.devices = ["cpu:0", "cuda:1"], dist.split = array<i64: 1, 3>} {
  %a, %b = dist.replicate %w : tensor<4xf32> -> tensor<4xf32>, tensor<4xf32>
  // CHECK: nn.relu %{{.*}} {dist.replica = 1 : i64}
  %r = nn.relu %b {dist.replica = 1 : i64} : tensor<4xf32>
  return %a, %r : tensor<4xf32>, tensor<4xf32>
}
