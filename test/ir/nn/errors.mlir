// RUN: dpc-opt %s -split-input-file -verify-diagnostics

func.func @conv_rank(%x: tensor<3x32x32xf32>, %w: tensor<8x3x3x3xf32>) {
  // expected-error @+2 {{input must have rank 4 or 5 (2 or 3 spatial dims), got 'tensor<3x32x32xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.conv2d %x, %w : (tensor<3x32x32xf32>, tensor<8x3x3x3xf32>) -> tensor<8x30x30xf32>
  return
}

// -----

func.func @conv_channels(%x: tensor<1x4x8x8xf32>, %w: tensor<8x3x3x3xf32>) {
  // expected-error @+2 {{input has 4 channels but the filter expects 3 x 1 groups}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.conv2d %x, %w : (tensor<1x4x8x8xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x6x6xf32>
  return
}

// -----

func.func @conv_groups(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) {
  // expected-error @+2 {{output channels 6 are not divisible by groups 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.conv2d %x, %w {groups = 4} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @conv_zero_groups(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) {
  // expected-error @+2 {{'groups' must be >= 1, got 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.conv2d %x, %w {groups = 0} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  return
}

// -----

func.func @conv_bias(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf32>, %b: tensor<4xf32>) {
  // expected-error @+2 {{bias must have 8 elements, got 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.conv2d %x, %w, %b : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>, tensor<4xf32>) -> tensor<1x8x6x6xf32>
  return
}

// -----

func.func @conv_element_type(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf16>) {
  // expected-error @+2 {{filter element type 'f16' differs from 'f32'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf16>) -> tensor<1x8x6x6xf32>
  return
}

// -----

func.func @conv_stride(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf32>) {
  // expected-error @+2 {{'stride' entries must be >= 1, got 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.conv2d %x, %w {stride = array<i64: 0, 1>} : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x6x6xf32>
  return
}

// -----

func.func @conv_padding(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf32>) {
  // expected-error @+2 {{'padding' must have 4 entries, got 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.conv2d %x, %w {padding = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @conv_negative_padding(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf32>) {
  // expected-error @+2 {{'padding' entries must be >= 0, got -1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.conv2d %x, %w {padding = array<i64: -1, 0, 0, 0>} : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x5x6xf32>
  return
}

// -----

func.func @conv_dilation(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf32>) {
  // expected-error @+2 {{'dilation' entries must be >= 1, got 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.conv2d %x, %w {dilation = array<i64: 0, 0>} : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x6x6xf32>
  return
}

// -----

func.func @conv_padding_out_of_range(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf32>) {
  // expected-error @+2 {{window along the height (extent 8, kernel 3, stride 1, padding 1099511627776+0, dilation 1) is out of range: each must be at most 2147483648, the kernel, stride and dilation positive}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.conv2d %x, %w {padding = array<i64: 1099511627776, 0, 0, 0>} : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x6x6xf32>
  return
}

// -----

func.func @conv_window_too_big(%x: tensor<1x3x2x2xf32>, %w: tensor<8x3x3x3xf32>) {
  // expected-error @+2 {{window of size 3 does not fit the height extent 2 padded by 0+0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.conv2d %x, %w : (tensor<1x3x2x2xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x1x1xf32>
  return
}

// -----

func.func @conv_wrong_result(%x: tensor<1x3x8x8xf32>, %w: tensor<8x3x3x3xf32>) {
  // expected-error @+2 {{'nn.conv2d' op inferred type(s) 'tensor<1x8x6x6xf32>' are incompatible with return type(s) of operation 'tensor<1x8x8x8xf32>'}}
  // expected-error @+1 {{'nn.conv2d' op failed to infer returned types}}
  %0 = nn.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x8x8xf32>
  return
}

// -----

func.func @batch_norm_rank(%x: tensor<8xf32>, %p: tensor<8xf32>) {
  // expected-error @+2 {{input must have rank >= 2, got 'tensor<8xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.batch_norm %x, %p, %p, %p, %p : (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return
}

// -----

func.func @batch_norm_channels(%x: tensor<2x8x4x4xf32>, %p: tensor<8xf32>, %q: tensor<4xf32>) {
  // expected-error @+2 {{running_var must have 8 elements, got 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.batch_norm %x, %p, %p, %p, %q : (tensor<2x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<4xf32>) -> tensor<2x8x4x4xf32>
  return
}

// -----

func.func @batch_norm_param_rank(%x: tensor<2x8x4x4xf32>, %p: tensor<8xf32>, %q: tensor<8x1xf32>) {
  // expected-error @+2 {{scale must have rank 1, got 'tensor<8x1xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.batch_norm %x, %q, %p, %p, %p : (tensor<2x8x4x4xf32>, tensor<8x1xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8x4x4xf32>
  return
}

// -----

func.func @batch_norm_epsilon(%x: tensor<2x8x4x4xf32>, %p: tensor<8xf32>) {
  // expected-error @+2 {{'epsilon' must be > 0, got 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.batch_norm %x, %p, %p, %p, %p {epsilon = 0.0} : (tensor<2x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8x4x4xf32>
  return
}

// -----

func.func @batch_norm_momentum(%x: tensor<2x8x4x4xf32>, %p: tensor<8xf32>) {
  // expected-error @+2 {{'momentum' must be in [0, 1], got 1.5}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.batch_norm %x, %p, %p, %p, %p {momentum = 1.5} : (tensor<2x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8x4x4xf32>
  return
}

// -----

func.func @pool_kernel(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+2 {{'kernel_size' must have 2 entries, got 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.max_pool2d %x {kernel_size = array<i64: 2>, stride = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  return
}

// -----

func.func @pool_padding_too_big(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+2 {{padding 2 exceeds half the kernel size 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.avg_pool2d %x {kernel_size = array<i64: 3, 3>, stride = array<i64: 1, 1>, padding = array<i64: 2, 0, 0, 0>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x6xf32>
  return
}

// -----

func.func @conv3d_stride(%x: tensor<1x2x4x4x4xf32>, %w: tensor<2x2x3x3x3xf32>) {
  // expected-error @+2 {{'stride' must have 3 entries, got 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.conv2d %x, %w {stride = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0, 0, 0>, dilation = array<i64: 1, 1, 1>} : (tensor<1x2x4x4x4xf32>, tensor<2x2x3x3x3xf32>) -> tensor<1x2x2x2x2xf32>
  return
}

// -----

func.func @conv3d_filter_rank(%x: tensor<1x2x4x4x4xf32>, %w: tensor<2x2x3x3xf32>) {
  // expected-error @+2 {{filter must have rank 5, got 'tensor<2x2x3x3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.conv2d %x, %w : (tensor<1x2x4x4x4xf32>, tensor<2x2x3x3xf32>) -> tensor<1x2x2x2xf32>
  return
}

// -----

func.func @pool_rank(%x: tensor<3x8x8xf32>) {
  // expected-error @+2 {{input must have rank 4, got 'tensor<3x8x8xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.max_pool2d %x {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>} : (tensor<3x8x8xf32>) -> tensor<3x4x4xf32>
  return
}

// -----

func.func @pool_missing_stride(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+1 {{'nn.max_pool2d' op requires attribute 'stride'}}
  %0 = nn.max_pool2d %x {kernel_size = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  return
}

// -----

func.func @global_pool_rank(%x: tensor<3x8xf32>) {
  // expected-error @+2 {{input must have rank 4, got 'tensor<3x8xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.global_avg_pool2d %x : (tensor<3x8xf32>) -> tensor<3x8x1x1xf32>
  return
}

// -----

func.func @pad_entries(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+2 {{'low' must have 4 entries, got 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.pad %x {low = array<i64: 1, 1>, high = array<i64: 0, 0, 1, 1>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x9x9xf32>
  return
}

// -----

func.func @pad_negative(%x: tensor<1x3x8x8xf32>) {
  // expected-error @+2 {{'high' entries must be >= 0, got -1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.pad %x {low = array<i64: 0, 0, 0, 0>, high = array<i64: 0, 0, -1, 0>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x7x8xf32>
  return
}

// -----

func.func @unary_type(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'nn.relu' op requires the same type for all operands and results}}
  %0 = "nn.relu"(%x) : (tensor<4x8xf32>) -> tensor<4x9xf32>
  return
}

// -----

func.func @unary_integer(%x: tensor<4x8xi32>) {
  // expected-error @+1 {{'nn.sigmoid' op operand #0 must be ranked tensor of floating-point values, but got 'tensor<4x8xi32>'}}
  %0 = nn.sigmoid %x : tensor<4x8xi32>
  return
}

// -----

func.func @broadcast(%x: tensor<4x8xf32>, %y: tensor<4x3xf32>) {
  // expected-error @+2 {{shapes 'tensor<4x8xf32>' and 'tensor<4x3xf32>' do not broadcast}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.add %x, %y : (tensor<4x8xf32>, tensor<4x3xf32>) -> tensor<4x8xf32>
  return
}

// -----

// The batch dim against a static dim: a model for one batch size only
// (found by fuzzing dpc compile: its gradient could not be built).
func.func @broadcast_batch(%x: tensor<?x8xf32>, %y: tensor<?xf32>) {
  // expected-error @+2 {{shapes 'tensor<?x8xf32>' and 'tensor<?xf32>' broadcast the batch dim against 8}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.add %x, %y : (tensor<?x8xf32>, tensor<?xf32>) -> tensor<?x8xf32>
  return
}

// -----

func.func @binary_element_type(%x: tensor<4x8xf32>, %y: tensor<4x8xf64>) {
  // expected-error @+2 {{rhs element type 'f64' differs from 'f32'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.mul %x, %y : (tensor<4x8xf32>, tensor<4x8xf64>) -> tensor<4x8xf32>
  return
}

// -----

func.func @flatten_axis(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{'axis' must be in [0, 2], got 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.flatten %x {axis = 3} : (tensor<4x8xf32>) -> tensor<32x1xf32>
  return
}

// -----

func.func @reshape_count(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{cannot reshape 'tensor<4x8xf32>' to [5, 6]: element counts differ}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.reshape %x {shape = array<i64: 5, 6>} : (tensor<4x8xf32>) -> tensor<5x6xf32>
  return
}

// -----

func.func @reshape_divide(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{cannot reshape 'tensor<4x8xf32>' to [5, -1]: element counts do not divide}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.reshape %x {shape = array<i64: 5, -1>} : (tensor<4x8xf32>) -> tensor<5x6xf32>
  return
}

// -----

func.func @reshape_count_overflows(%x: tensor<4x8xf32>) {
  // 8 * (2^61 + 4) wraps around to 32, the input's count.
  // expected-error @+2 {{cannot reshape 'tensor<4x8xf32>' to [8, 2305843009213693956]: an element count overflows 64 bits}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.reshape %x {shape = array<i64: 8, 2305843009213693956>} : (tensor<4x8xf32>) -> tensor<8x2305843009213693956xf32>
  return
}

// -----

func.func @flatten_count_overflows(%x: tensor<4294967296x4294967296x4xf32>) {
  // expected-error @+2 {{the element count of 'tensor<4294967296x4294967296x4xf32>' overflows 64 bits}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.flatten %x {axis = 0} : (tensor<4294967296x4294967296x4xf32>) -> tensor<1x4xf32>
  return
}

// -----

func.func @reshape_two_inferred(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{shape has more than one -1 entry}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.reshape %x {shape = array<i64: -1, -1>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @reshape_bad_entry(%x: tensor<4x8xf32>) {
  // expected-error @+2 {{shape entry 1 is -2; must be > 0, 0 (copy) or -1 (infer)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.reshape %x {shape = array<i64: 4, -2>} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return
}

// -----

func.func @reshape_copy_missing(%x: tensor<32xf32>) {
  // expected-error @+2 {{shape entry 1 copies a dimension the input lacks}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.reshape %x {shape = array<i64: 0, 0>} : (tensor<32xf32>) -> tensor<32x1xf32>
  return
}

// -----

func.func @linear_features(%x: tensor<4x8xf32>, %w: tensor<10x9xf32>) {
  // expected-error @+2 {{input has 8 features but the weight expects 9}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.linear %x, %w : (tensor<4x8xf32>, tensor<10x9xf32>) -> tensor<4x10xf32>
  return
}

// -----

func.func @linear_rank(%x: tensor<4x2x8xf32>, %w: tensor<10x8xf32>) {
  // expected-error @+2 {{input must have rank 2, got 'tensor<4x2x8xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.linear %x, %w : (tensor<4x2x8xf32>, tensor<10x8xf32>) -> tensor<4x2x10xf32>
  return
}

// -----

func.func @linear_bias(%x: tensor<4x8xf32>, %w: tensor<10x8xf32>, %b: tensor<8xf32>) {
  // expected-error @+2 {{bias must have 10 elements, got 8}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.linear %x, %w, %b : (tensor<4x8xf32>, tensor<10x8xf32>, tensor<8xf32>) -> tensor<4x10xf32>
  return
}

// -----

func.func @matmul_contract(%x: tensor<4x8xf32>, %w: tensor<9x10xf32>) {
  // expected-error @+2 {{contracted dimensions differ: 8 vs 9}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.matmul %x, %w : (tensor<4x8xf32>, tensor<9x10xf32>) -> tensor<4x10xf32>
  return
}

// -----

func.func @matmul_rank(%x: tensor<8xf32>, %w: tensor<8x10xf32>) {
  // expected-error @+2 {{lhs must have rank >= 2, got 'tensor<8xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.matmul %x, %w : (tensor<8xf32>, tensor<8x10xf32>) -> tensor<10xf32>
  return
}

// -----

func.func @softmax_axis(%x: tensor<4x10xf32>) {
  // expected-error @+1 {{'nn.softmax' op 'axis' must be in [0, 2), got 2}}
  %0 = nn.softmax %x {axis = 2} : tensor<4x10xf32>
  return
}

// -----

func.func @log_softmax_axis(%x: tensor<4x10xf32>) {
  // expected-error @+1 {{'nn.log_softmax' op 'axis' must be in [0, 2), got -1}}
  %0 = nn.log_softmax %x {axis = -1} : tensor<4x10xf32>
  return
}

// -----

// expected-error @+1 {{'nn.param' must be a non-empty string}}
func.func @param_name(%w: tensor<4xf32> {nn.param = 3 : i64}) {
  return
}

// -----

// expected-error @+1 {{unknown nn attribute 'nn.parameter'}}
func.func @param_typo(%w: tensor<4xf32> {nn.parameter = "w"}) {
  return
}

// -----

// expected-error @+1 {{'nn.output' must be a non-empty string}}
func.func @output_name(%w: tensor<4xf32>) -> (tensor<4xf32> {nn.output = ""}) {
  return %w : tensor<4xf32>
}

// -----

func.func @clip_bounds(%x: tensor<4xf32>) {
  // expected-error @+1 {{'nn.clip' op bounds [6.000000e+00, 0.000000e+00] are not a finite interval}}
  %0 = nn.clip %x {min = 6.0 : f64, max = 0.0 : f64} : tensor<4xf32>
  return
}

// -----

func.func @concat_batch(%a: tensor<?x4xf32>, %b: tensor<?x4xf32>) {
  // expected-error @+2 {{'axis' must be a static dim of 'tensor<?x4xf32>', got 0 (the batch's is open)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.concat %a, %b {axis = 0 : i64} : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  return
}

// -----

func.func @split_sizes(%x: tensor<?x4xf32>) {
  // expected-error @+2 {{'sizes' add up to 5, but dim 1 of 'tensor<?x4xf32>' is 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:2 = nn.split %x {axis = 1 : i64, sizes = array<i64: 2, 3>} : (tensor<?x4xf32>) -> (tensor<?x2xf32>, tensor<?x3xf32>)
  return
}

// -----

func.func @dropout_ratio(%x: tensor<4x3xf32>) {
  // expected-error @+1 {{'nn.dropout' op ratio 1.500000e+00 is not in [0, 1]}}
  %0 = nn.dropout %x {ratio = 1.5 : f64, key = 0 : i64} : tensor<4x3xf32>
  return
}

// -----

func.func @dropout_span(%x: tensor<?x3x4xf32>) {
  // expected-error @+1 {{'nn.dropout' op span 5 does not divide a row of 12 elements}}
  %0 = nn.dropout %x {ratio = 0.5 : f64, key = 0 : i64, span = 5 : i64} : tensor<?x3x4xf32>
  return
}

// -----

func.func @random_scale_interval(%x: tensor<?x3xf32>) {
  // expected-error @+1 {{'nn.random_scale' op factors [3.000000e-01, 1.000000e-01) are not a finite interval}}
  %0 = nn.random_scale %x {low = 0.3 : f64, high = 0.1 : f64, key = 0 : i64} : tensor<?x3xf32>
  return
}

// -----

func.func @batch_matmul_leading(%a: tensor<2x4x8xf32>, %b: tensor<3x8x4xf32>) {
  // expected-error @+2 {{leading dim 0 differs: 2 vs 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.batch_matmul %a, %b : (tensor<2x4x8xf32>, tensor<3x8x4xf32>) -> tensor<2x4x4xf32>
  return
}

// -----

func.func @batch_matmul_contracted(%a: tensor<2x4x8xf32>, %b: tensor<2x8x4xf32>) {
  // expected-error @+2 {{contracted dimensions differ: 4 vs 8}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.batch_matmul %a, %b {transpose_lhs = true} : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  return
}

// -----

func.func @batch_matmul_rank(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) {
  // expected-error @+2 {{operands must have the same rank >= 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.batch_matmul %a, %b : (tensor<4x8xf32>, tensor<8x4xf32>) -> tensor<4x4xf32>
  return
}

// -----

func.func @broadcast_rows_not_one(%token: tensor<2x8xf32>, %x: tensor<?x8xf32>) {
  // expected-error @+2 {{input must have a dim 0 of 1, got 'tensor<2x8xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.broadcast_rows %token, %x : (tensor<2x8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return
}
