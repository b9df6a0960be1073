// RUN: dpc-opt %s -nn-set-batch=batch=8 -nn-build-train-step -dpc-partition-data-parallel="devices=cpu:0,cpu:1" -dpc-bucket-gradients | FileCheck %s
// RUN: dpc-opt %s -nn-set-batch=batch=8 -nn-build-train-step -dpc-partition-data-parallel="devices=cpu:0,cpu:1" -dpc-bucket-gradients="first-bucket-mb=0.5 bucket-mb=1" | FileCheck %s --check-prefix=SMALL
// RUN: not dpc-opt %s -nn-set-batch=batch=8 -nn-build-train-step -dpc-partition-data-parallel="devices=cpu:0,cpu:1" -dpc-bucket-gradients="bucket-mb=0" 2>&1 | FileCheck %s --check-prefix=ZERO

// Gradients in backward order: fc2.weight (10 KiB), fc1.weight (1 MiB),
// fc1.bias (1 KiB). With the default sizes the first bucket (1 MiB) takes
// fc2.weight and no more; fc1.weight and fc1.bias share the next (25 MiB).
// CHECK-LABEL: func.func @train_step
// CHECK: dist.all_reduce {{.*}} {bucket = 0 : i64, reduction = "sum"} : tensor<10x256xf32>
// CHECK: dist.all_reduce {{.*}} {bucket = 1 : i64, reduction = "sum"} : tensor<256x1024xf32>
// CHECK: dist.all_reduce {{.*}} {bucket = 1 : i64, reduction = "sum"} : tensor<256xf32>

// Half a MiB, then 1 MiB buckets: the 1 MiB gradient fills a bucket alone.
// SMALL: dist.all_reduce {{.*}} {bucket = 0 : i64, reduction = "sum"} : tensor<10x256xf32>
// SMALL: dist.all_reduce {{.*}} {bucket = 1 : i64, reduction = "sum"} : tensor<256x1024xf32>
// SMALL: dist.all_reduce {{.*}} {bucket = 2 : i64, reduction = "sum"} : tensor<256xf32>

// ZERO: error: bucket sizes must be > 0 MB
func.func @forward(%x: tensor<?x1024xf32> {nn.input = "x"},
                   %w1: tensor<256x1024xf32> {nn.param = "fc1.weight"},
                   %b1: tensor<256xf32> {nn.param = "fc1.bias"},
                   %w2: tensor<10x256xf32> {nn.param = "fc2.weight"})
    -> (tensor<?x10xf32> {nn.output = "logits"}) {
  %0 = nn.linear %x, %w1, %b1 : (tensor<?x1024xf32>, tensor<256x1024xf32>, tensor<256xf32>) -> tensor<?x256xf32>
  %1 = nn.relu %0 : tensor<?x256xf32>
  %2 = nn.linear %1, %w2 : (tensor<?x256xf32>, tensor<10x256xf32>) -> tensor<?x10xf32>
  return %2 : tensor<?x10xf32>
}
