// RUN: dpc-opt %s -split-input-file -verify-diagnostics

func.func @scatter_sum(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{'dist.scatter' op sizes sum to 7, not to dim 0 (8)}}
  %a, %b = dist.scatter %x {sizes = array<i64: 4, 3>} : tensor<8x4xf32> -> tensor<4x4xf32>, tensor<3x4xf32>
  return
}

// -----

func.func @scatter_negative(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{'dist.scatter' op size -1 of device 1 is negative}}
  %a, %b = dist.scatter %x {sizes = array<i64: 9, -1>} : tensor<8x4xf32> -> tensor<9x4xf32>, tensor<4xf32>
  return
}

// -----

func.func @scatter_count(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{'dist.scatter' op has 3 sizes for 2 devices}}
  %a, %b = dist.scatter %x {sizes = array<i64: 4, 2, 2>} : tensor<8x4xf32> -> tensor<4x4xf32>, tensor<4x4xf32>
  return
}

// -----

func.func @scatter_part(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{'dist.scatter' op part 1 has type 'tensor<4x5xf32>', expected 'tensor<4x4xf32>'}}
  %a, %b = dist.scatter %x {sizes = array<i64: 4, 4>} : tensor<8x4xf32> -> tensor<4x4xf32>, tensor<4x5xf32>
  return
}

// -----

func.func @scatter_element(%x: tensor<8x4xf32>) {
  // expected-error @+1 {{'dist.scatter' op part 0 has type 'tensor<4x4xf16>', expected 'tensor<4x4xf32>'}}
  %a, %b = dist.scatter %x {sizes = array<i64: 4, 4>} : tensor<8x4xf32> -> tensor<4x4xf16>, tensor<4x4xf32>
  return
}

// -----

func.func @scatter_scalar(%x: tensor<f32>) {
  // expected-error @+1 {{'dist.scatter' op cannot split a 0-d tensor on dim 0}}
  %a = dist.scatter %x {sizes = array<i64: 1>} : tensor<f32> -> tensor<f32>
  return
}

// -----

func.func @scatter_none(%x: tensor<8xf32>) {
  // expected-error @+1 {{'dist.scatter' op needs at least one result (one per device)}}
  "dist.scatter"(%x) {sizes = array<i64>} : (tensor<8xf32>) -> ()
  return
}

// -----

func.func @replicate_type(%w: tensor<4xf32>) {
  // expected-error @+1 {{'dist.replicate' op result 1 has type 'tensor<5xf32>', but the input has type 'tensor<4xf32>'}}
  %a, %b = dist.replicate %w : tensor<4xf32> -> tensor<4xf32>, tensor<5xf32>
  return
}

// -----

func.func @replicate_none(%w: tensor<4xf32>) {
  // expected-error @+1 {{'dist.replicate' op needs at least one result (one per device)}}
  "dist.replicate"(%w) : (tensor<4xf32>) -> ()
  return
}

// -----

func.func @all_reduce_reduction(%a: tensor<4xf32>) {
  // expected-error @+1 {{'dist.all_reduce' op reduction must be sum, mean or max, got 'prod'}}
  %r = dist.all_reduce %a {reduction = "prod"} : tensor<4xf32>
  return
}

// -----

func.func @all_reduce_types(%a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+1 {{'dist.all_reduce' op operand 1 has type 'tensor<4xf16>', but operand 0 has type 'tensor<4xf32>'}}
  %r:2 = dist.all_reduce %a, %b {reduction = "sum"} : tensor<4xf32>, tensor<4xf16>
  return
}

// -----

func.func @all_reduce_count(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'dist.all_reduce' op has 2 operands but 1 results: one each per device}}
  %r = "dist.all_reduce"(%a, %b) {reduction = "sum"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @all_reduce_result(%a: tensor<4xf32>, %b: tensor<4xf32>) {
  // expected-error @+1 {{'dist.all_reduce' op result 1 has type 'tensor<5xf32>', but the operands have type 'tensor<4xf32>'}}
  %r:2 = "dist.all_reduce"(%a, %b) {reduction = "sum"} : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<5xf32>)
  return
}

// -----

func.func @all_reduce_none() {
  // expected-error @+1 {{'dist.all_reduce' op needs at least one operand (one per device)}}
  "dist.all_reduce"() {reduction = "sum"} : () -> ()
  return
}

// -----

func.func @all_reduce_bucket(%a: tensor<4xf32>) {
  // expected-error @+1 {{'dist.all_reduce' op bucket must be >= 0, got -1}}
  %r = dist.all_reduce %a {reduction = "sum", bucket = -1 : i64} : tensor<4xf32>
  return
}

// -----

func.func @gather_type(%a: tensor<3x4xf32>, %b: tensor<5x4xf32>) {
  // expected-error @+1 {{'dist.gather' op result has type 'tensor<9x4xf32>', expected 'tensor<8x4xf32>'}}
  %x = dist.gather %a, %b : tensor<3x4xf32>, tensor<5x4xf32> -> tensor<9x4xf32>
  return
}

// -----

func.func @gather_parts(%a: tensor<3x4xf32>, %b: tensor<5x3xf32>) {
  // expected-error @+1 {{'dist.gather' op part 1 has type 'tensor<5x3xf32>', which does not concatenate on dim 0 with 'tensor<3x4xf32>'}}
  %x = dist.gather %a, %b : tensor<3x4xf32>, tensor<5x3xf32> -> tensor<8x4xf32>
  return
}

// -----

func.func @gather_element(%a: tensor<f32>, %b: tensor<f16>) {
  // expected-error @+1 {{'dist.gather' op part 1 has type 'tensor<f16>', which does not concatenate on dim 0 with 'tensor<f32>'}}
  %x = dist.gather %a, %b : tensor<f32>, tensor<f16> -> tensor<2xf32>
  return
}

// -----

func.func @gather_scalars(%a: tensor<f32>, %b: tensor<f32>) {
  // expected-error @+1 {{'dist.gather' op result has type 'tensor<f32>', expected 'tensor<2xf32>'}}
  %x = dist.gather %a, %b : tensor<f32>, tensor<f32> -> tensor<f32>
  return
}

// -----

func.func @gather_none() {
  // expected-error @+1 {{'dist.gather' op needs at least one operand (one per device)}}
  %x = "dist.gather"() : () -> tensor<2xf32>
  return
}

// -----

func.func @reduce_scatter_types(%a: tensor<4x4xf32>, %b: tensor<4x2xf32>) {
  // expected-error @+1 {{'dist.reduce_scatter' op operand 1 has type 'tensor<4x2xf32>', but operand 0 has type 'tensor<4x4xf32>'}}
  %ra, %rb = dist.reduce_scatter %a, %b {reduction = "sum", sizes = array<i64: 2, 2>} : tensor<4x4xf32>, tensor<4x2xf32> -> tensor<2x4xf32>, tensor<2x4xf32>
  return
}

// -----

func.func @reduce_scatter_sizes(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) {
  // expected-error @+1 {{'dist.reduce_scatter' op sizes sum to 3, not to dim 0 (4)}}
  %ra, %rb = dist.reduce_scatter %a, %b {reduction = "sum", sizes = array<i64: 2, 1>} : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>, tensor<1x4xf32>
  return
}

// -----

func.func @reduce_scatter_count(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) {
  // expected-error @+1 {{'dist.reduce_scatter' op has 2 operands but 1 results: one each per device}}
  %ra = dist.reduce_scatter %a, %b {reduction = "sum", sizes = array<i64: 4>} : tensor<4x4xf32>, tensor<4x4xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @reduce_scatter_reduction(%a: tensor<4x4xf32>) {
  // expected-error @+1 {{'dist.reduce_scatter' op reduction must be sum, mean or max, got 'min'}}
  %ra = dist.reduce_scatter %a {reduction = "min", sizes = array<i64: 4>} : tensor<4x4xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @all_gather_count(%a: tensor<2x4xf32>, %b: tensor<2x4xf32>) {
  // expected-error @+1 {{'dist.all_gather' op has 2 operands but 1 results: one each per device}}
  %ga = dist.all_gather %a, %b : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<4x4xf32>
  return
}

// -----

func.func @all_gather_type(%a: tensor<2x4xf32>, %b: tensor<2x4xf32>) {
  // expected-error @+1 {{'dist.all_gather' op result 1 has type 'tensor<2x4xf32>', expected 'tensor<4x4xf32>'}}
  %ga, %gb = dist.all_gather %a, %b : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<4x4xf32>, tensor<2x4xf32>
  return
}

// -----

func.func @all_gather_none() {
  // expected-error @+1 {{'dist.all_gather' op needs at least one operand (one per device)}}
  "dist.all_gather"() : () -> ()
  return
}

// -----

// expected-error @+1 {{bad device "gpu:0": expected "cpu:K" or "cuda:K"}}
func.func @bad_device() attributes {dist.devices = ["cpu:0", "gpu:0"]} {
  return
}

// -----

// expected-error @+1 {{device "cpu:0" is listed twice}}
func.func @twice() attributes {dist.devices = ["cpu:0", "cpu:0"]} {
  return
}

// -----

// expected-error @+1 {{'dist.devices' must be a non-empty array of device names}}
func.func @no_devices() attributes {dist.devices = []} {
  return
}

// -----

// expected-error @+1 {{'dist.split' has 3 sizes for 2 devices}}
func.func @split_count() attributes {dist.split = array<i64: 1, 2, 3>, dist.devices = ["cpu:0", "cpu:1"]} {
  return
}

// -----

// expected-error @+1 {{'dist.split' must be an array<i64> of sizes >= 0}}
func.func @split_negative() attributes {dist.split = array<i64: 4, -1>} {
  return
}

// -----

func.func @replica_range(%x: tensor<4xf32>) attributes {dist.devices = ["cpu:0", "cpu:1"]} {
  // expected-error @+1 {{replica 2 is out of range for 2 devices}}
  %r = nn.relu %x {dist.replica = 2 : i64} : tensor<4xf32>
  return
}

// -----

func.func @replica_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{'dist.replica' must be a non-negative i64, got "0"}}
  %r = nn.relu %x {dist.replica = "0"} : tensor<4xf32>
  return
}

// -----

// expected-error @+1 {{unknown dist result attribute 'dist.device'}}
func.func @result_attr(%x: tensor<4xf32>) -> (tensor<4xf32> {dist.device = 0 : i64}) {
  return %x : tensor<4xf32>
}

// -----

// expected-error @+1 {{unknown dist attribute 'dist.split_sizes'}}
func.func @unknown() attributes {dist.split_sizes = array<i64: 4>} {
  return
}

// -----

// expected-error @+1 {{'dist.shard' must be "optimizer", "gradients" or "parameters", on a partitioned step (with 'dist.devices')}}
func.func @shard_stage() attributes {dist.devices = ["cpu:0", "cpu:1"], dist.shard = "everything"} {
  return
}

// -----

// expected-error @+1 {{'dist.shard' must be "optimizer", "gradients" or "parameters", on a partitioned step (with 'dist.devices')}}
func.func @shard_unpartitioned() attributes {dist.shard = "optimizer"} {
  return
}
