// RUN: split-file %s %t
// RUN: dpc-opt %t/sum.mlir -verify-diagnostics -nn-build-train-step -dpc-partition-data-parallel="devices=cpu:0,cpu:1 split=3,4"
// RUN: dpc-opt %t/negative.mlir -verify-diagnostics -nn-build-train-step -dpc-partition-data-parallel="devices=cpu:0,cpu:1 split=9,-1"
// RUN: dpc-opt %t/count.mlir -verify-diagnostics -nn-build-train-step -dpc-partition-data-parallel="devices=cpu:0,cpu:1 split=2,2,4"
// RUN: dpc-opt %t/dynamic.mlir -verify-diagnostics -nn-build-train-step -dpc-partition-data-parallel="devices=cpu:0,cpu:1"
// RUN: dpc-opt %t/device.mlir -verify-diagnostics -dpc-partition-data-parallel="devices=cpu:0,gpu:1"
// RUN: dpc-opt %t/twice.mlir -verify-diagnostics -dpc-partition-data-parallel="devices=cuda:0,cuda:0"
// RUN: dpc-opt %t/no-step.mlir -verify-diagnostics -dpc-partition-data-parallel="devices=cpu:0,cpu:1"
// RUN: dpc-opt %t/not-batch-major.mlir -verify-diagnostics -dpc-partition-data-parallel="devices=cpu:0,cpu:1"

//--- sum.mlir
// expected-error @+1 {{split sums to 7, but the batch of @train_step is 8}}
func.func @forward(%x: tensor<8x4xf32> {nn.input = "x"}, %w: tensor<3x4xf32> {nn.param = "w"}) -> tensor<8x3xf32> {
  %0 = nn.linear %x, %w : (tensor<8x4xf32>, tensor<3x4xf32>) -> tensor<8x3xf32>
  return %0 : tensor<8x3xf32>
}

//--- negative.mlir
// expected-error @+1 {{split size -1 is negative}}
func.func @forward(%x: tensor<8x4xf32> {nn.input = "x"}, %w: tensor<3x4xf32> {nn.param = "w"}) -> tensor<8x3xf32> {
  %0 = nn.linear %x, %w : (tensor<8x4xf32>, tensor<3x4xf32>) -> tensor<8x3xf32>
  return %0 : tensor<8x3xf32>
}

//--- count.mlir
// expected-error @+1 {{split has 3 sizes for 2 devices}}
func.func @forward(%x: tensor<8x4xf32> {nn.input = "x"}, %w: tensor<3x4xf32> {nn.param = "w"}) -> tensor<8x3xf32> {
  %0 = nn.linear %x, %w : (tensor<8x4xf32>, tensor<3x4xf32>) -> tensor<8x3xf32>
  return %0 : tensor<8x3xf32>
}

//--- dynamic.mlir
// expected-error @+1 {{@train_step has a dynamic batch (argument 0: 'tensor<?x4xf32>'); fix it with nn-set-batch before partitioning}}
func.func @forward(%x: tensor<?x4xf32> {nn.input = "x"}, %w: tensor<3x4xf32> {nn.param = "w"}) -> tensor<?x3xf32> {
  %0 = nn.linear %x, %w : (tensor<?x4xf32>, tensor<3x4xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

//--- device.mlir
// expected-error @+1 {{bad device 'gpu:1': expected cpu:K or cuda:K}}
module {
}

//--- twice.mlir
// expected-error @+1 {{device 'cuda:0' is listed twice}}
module {
}

//--- no-step.mlir
// expected-error @+1 {{no @train_step or @eval_step to partition; run nn-build-train-step first}}
module {
  func.func @forward(%x: tensor<8x4xf32> {nn.input = "x"}) -> tensor<8x4xf32> {
    return %x : tensor<8x4xf32>
  }
}

//--- not-batch-major.mlir
// An output that is neither a scalar nor batch-major cannot be gathered.
// expected-error @+1 {{output 'bias' is neither a scalar nor batch-major, so it cannot be gathered}}
func.func @eval_step(%x: tensor<8x4xf32> {nn.input = "x"}, %b: tensor<3xf32> {nn.param = "b"}) -> (tensor<3xf32> {nn.output = "bias"}) {
  %0 = nn.relu %b : tensor<3xf32>
  return %0 : tensor<3xf32>
}
