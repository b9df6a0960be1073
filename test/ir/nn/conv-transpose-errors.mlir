// RUN: dpc-opt %s -split-input-file -verify-diagnostics

func.func @rank(%x: tensor<3x4x4xf32>, %w: tensor<3x5x3x3xf32>) {
  // expected-error @+2 {{input must have rank 4 or 5 (2 or 3 spatial dims), got 'tensor<3x4x4xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.conv_transpose2d %x, %w : (tensor<3x4x4xf32>, tensor<3x5x3x3xf32>) -> tensor<2x5x6x6xf32>
  return
}

// -----

func.func @channels(%x: tensor<2x4x4x4xf32>, %w: tensor<3x5x3x3xf32>) {
  // expected-error @+2 {{input has 4 channels but the filter expects 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.conv_transpose2d %x, %w : (tensor<2x4x4x4xf32>, tensor<3x5x3x3xf32>) -> tensor<2x5x6x6xf32>
  return
}

// -----

func.func @groups(%x: tensor<2x3x4x4xf32>, %w: tensor<3x5x3x3xf32>) {
  // expected-error @+2 {{input channels 3 are not divisible by groups 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.conv_transpose2d %x, %w {groups = 2} : (tensor<2x3x4x4xf32>, tensor<3x5x3x3xf32>) -> tensor<2x10x6x6xf32>
  return
}

// -----

func.func @zero_groups(%x: tensor<2x3x4x4xf32>, %w: tensor<3x5x3x3xf32>) {
  // expected-error @+2 {{'groups' must be >= 1, got 0}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.conv_transpose2d %x, %w {groups = 0} : (tensor<2x3x4x4xf32>, tensor<3x5x3x3xf32>) -> tensor<2x5x6x6xf32>
  return
}

// -----

func.func @element_type(%x: tensor<2x3x4x4xf32>, %w: tensor<3x5x3x3xf16>) {
  // expected-error @+2 {{filter element type 'f16' differs from 'f32'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.conv_transpose2d %x, %w : (tensor<2x3x4x4xf32>, tensor<3x5x3x3xf16>) -> tensor<2x5x6x6xf32>
  return
}

// -----

// Several output sizes give the same forward convolution only below the
// stride: an output padding of the stride or more is not a gradient.
func.func @output_padding_stride(%x: tensor<2x3x4x4xf32>, %w: tensor<3x5x3x3xf32>) {
  // expected-error @+2 {{'output_padding' 2 along the height must be smaller than the stride 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.conv_transpose2d %x, %w {stride = array<i64: 2, 2>, output_padding = array<i64: 2, 0>} : (tensor<2x3x4x4xf32>, tensor<3x5x3x3xf32>) -> tensor<2x5x11x9xf32>
  return
}

// -----

func.func @output_padding_count(%x: tensor<2x3x4x4xf32>, %w: tensor<3x5x3x3xf32>) {
  // expected-error @+2 {{'output_padding' must have 2 entries, got 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.conv_transpose2d %x, %w {output_padding = array<i64: 0>} : (tensor<2x3x4x4xf32>, tensor<3x5x3x3xf32>) -> tensor<2x5x6x6xf32>
  return
}

// -----

func.func @negative_padding(%x: tensor<2x3x4x4xf32>, %w: tensor<3x5x3x3xf32>) {
  // expected-error @+2 {{'padding' entries must be >= 0, got -1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.conv_transpose2d %x, %w {padding = array<i64: -1, 0, 0, 0>} : (tensor<2x3x4x4xf32>, tensor<3x5x3x3xf32>) -> tensor<2x5x7x6xf32>
  return
}

// -----

func.func @empty_output(%x: tensor<2x3x1x1xf32>, %w: tensor<3x5x1x1xf32>) {
  // expected-error @+2 {{transposed convolution output along the height would have extent 0 (input 1, kernel 1, stride 1, padding 1+0, dilation 1): it must be in [1, 2147483648]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = nn.conv_transpose2d %x, %w {padding = array<i64: 1, 0, 0, 0>} : (tensor<2x3x1x1xf32>, tensor<3x5x1x1xf32>) -> tensor<2x5x1x1xf32>
  return
}

// -----

func.func @wrong_result(%x: tensor<2x3x4x4xf32>, %w: tensor<3x5x3x3xf32>) {
  // expected-error @+2 {{'nn.conv_transpose2d' op inferred type(s) 'tensor<2x5x6x6xf32>' are incompatible with return type(s) of operation 'tensor<2x5x4x4xf32>'}}
  // expected-error @+1 {{'nn.conv_transpose2d' op failed to infer returned types}}
  %0 = nn.conv_transpose2d %x, %w : (tensor<2x3x4x4xf32>, tensor<3x5x3x3xf32>) -> tensor<2x5x4x4xf32>
  return
}
