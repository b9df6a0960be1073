// RUN: dpc-opt %s -nn-set-batch=batch=8 -nn-build-train-step -dpc-partition-data-parallel="devices=cpu:0,cpu:1 split=3,5 sync-bn=true" | FileCheck %s
// RUN: dpc-opt %s -nn-set-batch=batch=8 -nn-build-train-step -dpc-partition-data-parallel="devices=cpu:0,cpu:1 split=3,5 sync-bn=true" -dpc-bucket-gradients | FileCheck %s --check-prefix=BUCKET

// Conv + batch norm with --sync-bn: every replica's statistics are summed
// over the replicas (dist.statistics) before it normalizes, and the
// gradient sums before it computes the input gradient. The replicas' local
// gradient sums are their scale and shift gradients, summed by the ordinary
// gradient all-reduces.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME: %[[RM:arg7]]: tensor<4xf32> {nn.buffer = "bn.running_mean"}
// CHECK: %[[RMS:.*]]:2 = dist.replicate %[[RM]]
// CHECK: %[[C0:.*]] = nn.conv2d {{.*}} {dist.replica = 0 : i64
// CHECK: %[[C1:.*]] = nn.conv2d {{.*}} {dist.replica = 1 : i64
// CHECK-NOT: nn.batch_norm_train
// CHECK: %[[S0:.*]], %[[Q0:.*]], %[[N0:.*]] = nn.batch_norm_stats %[[C0]] {dist.replica = 0 : i64} : (tensor<3x4x5x5xf32>) -> (tensor<4xf64>, tensor<4xf64>, tensor<1xf64>)
// CHECK-NEXT: %[[S1:.*]], %[[Q1:.*]], %[[N1:.*]] = nn.batch_norm_stats %[[C1]] {dist.replica = 1 : i64} : (tensor<5x4x5x5xf32>) -> (tensor<4xf64>, tensor<4xf64>, tensor<1xf64>)
// CHECK-NEXT: %[[SUM:.*]]:2 = dist.all_reduce %[[S0]], %[[S1]] {dist.statistics, reduction = "sum"} : tensor<4xf64>, tensor<4xf64>
// CHECK-NEXT: %[[SQ:.*]]:2 = dist.all_reduce %[[Q0]], %[[Q1]] {dist.statistics, reduction = "sum"} : tensor<4xf64>, tensor<4xf64>
// CHECK-NEXT: %[[N:.*]]:2 = dist.all_reduce %[[N0]], %[[N1]] {dist.statistics, reduction = "sum"} : tensor<1xf64>, tensor<1xf64>
// CHECK-NEXT: nn.batch_norm_apply %[[C0]], %{{.*}}#0, %{{.*}}#0, %[[RMS]]#0, %{{.*}}#0, %[[SUM]]#0, %[[SQ]]#0, %[[N]]#0 {dist.replica = 0 : i64}
// CHECK-NEXT: nn.batch_norm_apply %[[C1]], %{{.*}}#1, %{{.*}}#1, %[[RMS]]#1, %{{.*}}#1, %[[SUM]]#1, %[[SQ]]#1, %[[N]]#1 {dist.replica = 1 : i64}
// CHECK-NOT: nn.batch_norm_grad {{.*}}:
// CHECK: %[[DY0:.*]], %[[DX0:.*]] = nn.batch_norm_grad_stats %{{.*}}, %[[C0]], %{{.*}}, %{{.*}} {dist.replica = 0 : i64} : (tensor<3x4x5x5xf32>, tensor<3x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT: %[[DY1:.*]], %[[DX1:.*]] = nn.batch_norm_grad_stats %{{.*}}, %[[C1]], %{{.*}}, %{{.*}} {dist.replica = 1 : i64}
// CHECK-NEXT: %[[DY:.*]]:2 = dist.all_reduce %[[DY0]], %[[DY1]] {dist.statistics, reduction = "sum"}
// CHECK-NEXT: %[[DYX:.*]]:2 = dist.all_reduce %[[DX0]], %[[DX1]] {dist.statistics, reduction = "sum"}
// CHECK-NEXT: nn.batch_norm_grad_apply %{{.*}}, %[[C0]], %{{.*}}#0, %{{.*}}, %{{.*}}, %[[DY]]#0, %[[DYX]]#0, %[[N]]#0 {dist.replica = 0 : i64}
// CHECK-NEXT: nn.batch_norm_grad_apply %{{.*}}, %[[C1]], %{{.*}}#1, %{{.*}}, %{{.*}}, %[[DY]]#1, %[[DYX]]#1, %[[N]]#1 {dist.replica = 1 : i64}
// The local sums, once each, as the scale and shift gradients.
// CHECK-NEXT: dist.all_reduce %[[DX0]], %[[DX1]] {reduction = "sum"} : tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT: dist.all_reduce %[[DY0]], %[[DY1]] {reduction = "sum"} : tensor<4xf32>, tensor<4xf32>

// Gradient bucketing leaves the statistics all-reduces alone.
// BUCKET-LABEL: func.func @train_step
// BUCKET-COUNT-5: dist.all_reduce {{.*}} {dist.statistics, reduction = "sum"}
// BUCKET-NOT: dist.statistics
// BUCKET: dist.all_reduce {{.*}} {bucket = 0 : i64, reduction = "sum"}
// BUCKET-NOT: dist.statistics
func.func @forward(%x: tensor<?x2x5x5xf32> {nn.input = "x"},
                   %w: tensor<4x2x3x3xf32> {nn.param = "conv.weight"},
                   %s: tensor<4xf32> {nn.param = "bn.weight"},
                   %b: tensor<4xf32> {nn.param = "bn.bias"},
                   %m: tensor<4xf32> {nn.buffer = "bn.running_mean"},
                   %v: tensor<4xf32> {nn.buffer = "bn.running_var"},
                   %fc: tensor<3x16xf32> {nn.param = "fc.weight"})
    -> (tensor<?x3xf32> {nn.output = "logits"}) {
  %0 = nn.conv2d %x, %w {padding = array<i64: 1, 1, 1, 1>} : (tensor<?x2x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<?x4x5x5xf32>
  %1 = nn.batch_norm %0, %s, %b, %m, %v : (tensor<?x4x5x5xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<?x4x5x5xf32>
  %2 = nn.max_pool2d %1 {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>} : (tensor<?x4x5x5xf32>) -> tensor<?x4x2x2xf32>
  %3 = nn.flatten %2 : (tensor<?x4x2x2xf32>) -> tensor<?x16xf32>
  %4 = nn.linear %3, %fc : (tensor<?x16xf32>, tensor<3x16xf32>) -> tensor<?x3xf32>
  return %4 : tensor<?x3xf32>
}
