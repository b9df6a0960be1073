// RUN: dpc-opt %s -verify-diagnostics -nn-set-batch=batch=4 -nn-build-train-step="momentum=0.9" -dpc-partition-data-parallel="devices=cpu:0,cpu:1" -dpc-shard-optimizer-state -convert-nn-to-exec

// A step with sharded optimizer state (dpc-shard-optimizer-state) is not
// lowered to a plan yet: one diagnostic, no crash.
// expected-error @+1 {{@train_step shards the optimizer state (dist.shard), which the lowering to a plan does not do yet}}
func.func @forward(%x: tensor<?x4xf32> {nn.input = "x"}, %w: tensor<3x4xf32> {nn.param = "w"}) -> tensor<?x3xf32> {
  %0 = nn.linear %x, %w : (tensor<?x4xf32>, tensor<3x4xf32>) -> tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}
