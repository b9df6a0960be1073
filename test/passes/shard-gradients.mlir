// ZeRO-2 after ZeRO-1: the all-reduce of a gradient each replica reads only
// its range of becomes a reduce-scatter of the flattened gradients into
// those ranges; nothing reads the whole reduced gradient any more.

// Three devices, SGD with momentum: w1 (40 elements) cut 14, 13, 13, b1
// (8) 3, 3, 2, w2 (24) 8, 8, 8, b2 (3) 1, 1, 1.
// RUN: dpc-opt %s -nn-set-batch=batch=6 -nn-build-train-step="momentum=0.9" -dpc-partition-data-parallel="devices=cpu:0,cpu:1,cpu:2" -dpc-shard-optimizer-state -dpc-shard-gradients | FileCheck %s

// SGD without momentum: with `stateless`, its updates are cut too and its
// gradients sharded; without, they stay all-reduced (nothing reads a range).
// RUN: dpc-opt %s -nn-set-batch=batch=6 -nn-build-train-step -dpc-partition-data-parallel="devices=cpu:0,cpu:1" -dpc-shard-optimizer-state="stateless=true" -dpc-shard-gradients | FileCheck %s --check-prefix=STATELESS
// RUN: dpc-opt %s -nn-set-batch=batch=6 -nn-build-train-step -dpc-partition-data-parallel="devices=cpu:0,cpu:1" -dpc-shard-optimizer-state -dpc-shard-gradients | FileCheck %s --check-prefix=PLAIN

// One device keeps the whole gradient: the step is left as it is.
// RUN: dpc-opt %s -nn-set-batch=batch=6 -nn-build-train-step="momentum=0.9" -dpc-partition-data-parallel="devices=cpu:0" -dpc-shard-optimizer-state -dpc-shard-gradients | FileCheck %s --check-prefix=ONE

// The reduce-scatters are bucketed like the all-reduces, with numbers of
// their own: w2 and b2 (108 bytes) in a first bucket of 209, w1 (160) alone
// in one of 157, b1 in the next.
// RUN: dpc-opt %s -nn-set-batch=batch=6 -nn-build-train-step="momentum=0.9" -dpc-partition-data-parallel="devices=cpu:0,cpu:1,cpu:2" -dpc-shard-optimizer-state -dpc-shard-gradients -dpc-bucket-gradients="first-bucket-mb=0.0002 bucket-mb=0.00015" | FileCheck %s --check-prefix=BUCKET

// Only after dpc-shard-optimizer-state, and once.
// RUN: not dpc-opt %s -nn-set-batch=batch=6 -nn-build-train-step="momentum=0.9" -dpc-partition-data-parallel="devices=cpu:0,cpu:1" -dpc-shard-gradients 2>&1 | FileCheck %s --check-prefix=FIRST
// RUN: not dpc-opt %s -nn-set-batch=batch=6 -nn-build-train-step="momentum=0.9" -dpc-partition-data-parallel="devices=cpu:0,cpu:1" -dpc-shard-optimizer-state -dpc-shard-gradients -dpc-shard-gradients 2>&1 | FileCheck %s --check-prefix=TWICE

// CHECK-LABEL: func.func @train_step
// CHECK-SAME: dist.shard = "gradients"
// CHECK-NOT: dist.all_reduce
// w2's gradient, the first the backward pass computes: each replica's,
// flattened, reduced and scattered in one collective.
// CHECK: %[[G0:.*]] = nn.reshape %{{.*}} {dist.replica = 0 : i64, shape = array<i64: 24>} : (tensor<3x8xf32>) -> tensor<24xf32>
// CHECK-NEXT: %[[G1:.*]] = nn.reshape %{{.*}} {dist.replica = 1 : i64, shape = array<i64: 24>}
// CHECK-NEXT: %[[G2:.*]] = nn.reshape %{{.*}} {dist.replica = 2 : i64, shape = array<i64: 24>}
// CHECK-NEXT: %[[W2G:.*]]:3 = dist.reduce_scatter %[[G0]], %[[G1]], %[[G2]] {reduction = "sum", sizes = array<i64: 8, 8, 8>} : tensor<24xf32>, tensor<24xf32>, tensor<24xf32> -> tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
// A 1-D gradient needs no reshape.
// CHECK: dist.reduce_scatter %{{.*}}, %{{.*}}, %{{.*}} {reduction = "sum", sizes = array<i64: 1, 1, 1>} : tensor<3xf32>, tensor<3xf32>, tensor<3xf32> -> tensor<1xf32>, tensor<1xf32>, tensor<1xf32>
// CHECK: %[[W1G:.*]]:3 = dist.reduce_scatter {{.*}} {reduction = "sum", sizes = array<i64: 14, 13, 13>} : tensor<40xf32>, tensor<40xf32>, tensor<40xf32> -> tensor<14xf32>, tensor<13xf32>, tensor<13xf32>
// CHECK: dist.reduce_scatter {{.*}} {reduction = "sum", sizes = array<i64: 3, 3, 2>}
// The updates read their ranges straight from the reduce-scatter.
// CHECK-NOT: nn.split %[[W1G]]
// CHECK: nn.sgd_update %{{.*}}#0, %[[W1G]]#0, {{.*}} {dist.replica = 0 : i64, momentum = 9.000000e-01 : f64} : (tensor<14xf32>, tensor<14xf32>, tensor<f32>, tensor<14xf32>)
// CHECK: nn.sgd_update %{{.*}}#2, %[[W1G]]#2, {{.*}} {dist.replica = 2 : i64, momentum = 9.000000e-01 : f64} : (tensor<13xf32>, tensor<13xf32>, tensor<f32>, tensor<13xf32>)
// CHECK: dist.all_gather
// CHECK: nn.sgd_update %{{.*}}#1, %[[W2G]]#1, {{.*}} {dist.replica = 1 : i64
// CHECK: return

// STATELESS-LABEL: func.func @train_step
// STATELESS-SAME: dist.shard = "gradients"
// STATELESS-NOT: dist.all_reduce
// STATELESS: dist.reduce_scatter {{.*}} sizes = array<i64: 12, 12>
// STATELESS: nn.sgd_update {{.*}} : (tensor<20xf32>, tensor<20xf32>, tensor<f32>) -> tensor<20xf32>
// STATELESS: dist.all_gather

// PLAIN-LABEL: func.func @train_step
// PLAIN-SAME: dist.shard = "gradients"
// PLAIN-COUNT-4: dist.all_reduce
// PLAIN-NOT: dist.reduce_scatter

// ONE-LABEL: func.func @train_step
// ONE-NOT: dist.shard
// ONE-NOT: dist.reduce_scatter
// ONE: return

// BUCKET-LABEL: func.func @train_step
// BUCKET: dist.reduce_scatter {{.*}} {bucket = 0 : i64, reduction = "sum", sizes = array<i64: 8, 8, 8>}
// BUCKET: dist.reduce_scatter {{.*}} {bucket = 0 : i64, reduction = "sum", sizes = array<i64: 1, 1, 1>}
// BUCKET: dist.reduce_scatter {{.*}} {bucket = 1 : i64, reduction = "sum", sizes = array<i64: 14, 13, 13>}
// BUCKET: dist.reduce_scatter {{.*}} {bucket = 2 : i64, reduction = "sum", sizes = array<i64: 3, 3, 2>}
// BUCKET: dist.all_gather {{.*}} {bucket = 0 : i64}

// FIRST: error: @train_step's optimizer state is not sharded: run dpc-shard-optimizer-state first
// TWICE: error: @train_step's gradients are sharded already

func.func @forward(%x: tensor<?x5xf32> {nn.input = "x"}, %w1: tensor<8x5xf32> {nn.param = "w1"}, %b1: tensor<8xf32> {nn.param = "b1"}, %w2: tensor<3x8xf32> {nn.param = "w2"}, %b2: tensor<3xf32> {nn.param = "b2"}) -> tensor<?x3xf32> {
  %0 = nn.linear %x, %w1, %b1 : (tensor<?x5xf32>, tensor<8x5xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  %1 = nn.relu %0 : tensor<?x8xf32>
  %2 = nn.linear %1, %w2, %b2 : (tensor<?x8xf32>, tensor<3x8xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  return %2 : tensor<?x3xf32>
}
