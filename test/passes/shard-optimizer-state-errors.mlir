// RUN: split-file %s %t
// RUN: dpc-opt %t/unpartitioned.mlir -verify-diagnostics -nn-set-batch=batch=4 -nn-build-train-step="momentum=0.9" -dpc-shard-optimizer-state
// RUN: dpc-opt %t/twice.mlir -verify-diagnostics -nn-set-batch=batch=4 -nn-build-train-step="momentum=0.9" -dpc-partition-data-parallel="devices=cpu:0,cpu:1" -dpc-shard-optimizer-state -dpc-shard-optimizer-state
// RUN: dpc-opt %t/state-read.mlir -verify-diagnostics -dpc-shard-optimizer-state
// RUN: dpc-opt %t/one-replica.mlir -verify-diagnostics -dpc-shard-optimizer-state

//--- unpartitioned.mlir
// expected-error @+1 {{@train_step is not partitioned: run dpc-partition-data-parallel first}}
func.func @forward(%x: tensor<?x4xf32> {nn.input = "x"}, %w: tensor<3x4xf32> {nn.param = "w"}) -> tensor<?x3xf32> {
  %0 = nn.linear %x, %w : (tensor<?x4xf32>, tensor<3x4xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

//--- twice.mlir
// expected-error @+1 {{@train_step is sharded already}}
func.func @forward(%x: tensor<?x4xf32> {nn.input = "x"}, %w: tensor<3x4xf32> {nn.param = "w"}) -> tensor<?x3xf32> {
  %0 = nn.linear %x, %w : (tensor<?x4xf32>, tensor<3x4xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

//--- state-read.mlir
// Sharded state exists only as ranges: nothing but the update may read it.
func.func @train_step(%p: tensor<4xf32> {nn.param = "w"}, %g: tensor<4xf32>,
                      %lr: tensor<f32> {nn.lr},
                      %m: tensor<4xf32> {nn.opt_state = "w.momentum_buffer"})
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
    attributes {dist.devices = ["cpu:0", "cpu:1"], dist.split = array<i64: 1, 1>} {
  %ps:2 = dist.replicate %p : tensor<4xf32> -> tensor<4xf32>, tensor<4xf32>
  %gs:2 = dist.replicate %g : tensor<4xf32> -> tensor<4xf32>, tensor<4xf32>
  %ls:2 = dist.replicate %lr : tensor<f32> -> tensor<f32>, tensor<f32>
  %ms:2 = dist.replicate %m : tensor<4xf32> -> tensor<4xf32>, tensor<4xf32>
  %n0, %b0 = nn.sgd_update %ps#0, %gs#0, %ls#0, %ms#0 {dist.replica = 0 : i64, momentum = 0.9 : f64} : (tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  %n1, %b1 = nn.sgd_update %ps#1, %gs#1, %ls#1, %ms#1 {dist.replica = 1 : i64, momentum = 0.9 : f64} : (tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  // expected-error @+1 {{'nn.add' op reads optimizer state argument 3, which is sharded: only optimizer updates may}}
  %x = nn.add %ms#0, %gs#0 {dist.replica = 0 : i64} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %n0, %b0, %x : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

//--- one-replica.mlir
func.func @train_step(%p: tensor<4xf32> {nn.param = "w"}, %g: tensor<4xf32>,
                      %lr: tensor<f32> {nn.lr},
                      %m: tensor<4xf32> {nn.opt_state = "w.momentum_buffer"})
    -> (tensor<4xf32>, tensor<4xf32>)
    attributes {dist.devices = ["cpu:0", "cpu:1"], dist.split = array<i64: 1, 1>} {
  // expected-error @+1 {{parameter argument 0 is updated in 1 of 2 replicas: cannot shard its state}}
  %ps:2 = dist.replicate %p : tensor<4xf32> -> tensor<4xf32>, tensor<4xf32>
  %gs:2 = dist.replicate %g : tensor<4xf32> -> tensor<4xf32>, tensor<4xf32>
  %ls:2 = dist.replicate %lr : tensor<f32> -> tensor<f32>, tensor<f32>
  %ms:2 = dist.replicate %m : tensor<4xf32> -> tensor<4xf32>, tensor<4xf32>
  %n0, %b0 = nn.sgd_update %ps#0, %gs#0, %ls#0, %ms#0 {dist.replica = 0 : i64, momentum = 0.9 : f64} : (tensor<4xf32>, tensor<4xf32>, tensor<f32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return %n0, %b0 : tensor<4xf32>, tensor<4xf32>
}
