// RUN: dpc-opt %s -split-input-file -canonicalize | FileCheck %s

// CHECK-LABEL: func.func @zero_pad_folds
// CHECK-NOT: nn.pad
// CHECK: nn.avg_pool2d %arg0
func.func @zero_pad_folds(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32> {
  %0 = nn.pad %x {low = array<i64: 0, 0, 0, 0>, high = array<i64: 0, 0, 0, 0>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x8x8xf32>
  %1 = nn.avg_pool2d %0 {kernel_size = array<i64: 2, 2>, stride = array<i64: 2, 2>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x4x4xf32>
  return %1 : tensor<1x3x4x4xf32>
}

// -----

// CHECK-LABEL: func.func @nonzero_pad_stays
// CHECK: nn.pad
func.func @nonzero_pad_stays(%x: tensor<1x3x8x8xf32>) -> tensor<1x3x9x8xf32> {
  %0 = nn.pad %x {low = array<i64: 0, 0, 1, 0>, high = array<i64: 0, 0, 0, 0>} : (tensor<1x3x8x8xf32>) -> tensor<1x3x9x8xf32>
  return %0 : tensor<1x3x9x8xf32>
}

// -----

// Identical constants are uniqued; unused ones disappear.
// CHECK-LABEL: func.func @constants
// CHECK-COUNT-1: nn.constant
// CHECK-NOT: nn.constant
func.func @constants(%x: tensor<4xf32>) -> tensor<4xf32> {
  %a = nn.constant dense<2.0> : tensor<4xf32>
  %b = nn.constant dense<2.0> : tensor<4xf32>
  %c = nn.constant dense<3.0> : tensor<4xf32>
  %0 = nn.mul %x, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = nn.mul %0, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}

// -----

// GELU as the legacy exporter writes it, with x / sqrt 2 imported as a
// product with the reciprocal, becomes nn.gelu.
// CHECK-LABEL: func.func @gelu_from_erf
// CHECK-SAME: (%[[X:.*]]: tensor<?x4xf32>)
// CHECK-NEXT: %[[G:.*]] = nn.gelu %[[X]] : tensor<?x4xf32>
// CHECK-NEXT: return %[[G]]
func.func @gelu_from_erf(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %r = nn.constant dense<0.707106769> : tensor<f32>
  %one = nn.constant dense<1.0> : tensor<f32>
  %half = nn.constant dense<0.5> : tensor<f32>
  %0 = nn.mul %x, %r : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
  %1 = nn.erf %0 : tensor<?x4xf32>
  %2 = nn.add %1, %one : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
  %3 = nn.mul %x, %2 : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %4 = nn.mul %3, %half : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
  return %4 : tensor<?x4xf32>
}

// -----

// Another constant is not GELU, and an intermediate read elsewhere stays.
// CHECK-LABEL: func.func @not_gelu
// CHECK: nn.erf
// CHECK-NOT: nn.gelu
func.func @not_gelu(%x: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x4xf32>) {
  %r = nn.constant dense<0.707106769> : tensor<f32>
  %one = nn.constant dense<1.0> : tensor<f32>
  %half = nn.constant dense<0.5> : tensor<f32>
  %0 = nn.mul %x, %r : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
  %1 = nn.erf %0 : tensor<?x4xf32>
  %2 = nn.add %1, %one : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
  %3 = nn.mul %x, %2 : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %4 = nn.mul %3, %half : (tensor<?x4xf32>, tensor<f32>) -> tensor<?x4xf32>
  return %4, %2 : tensor<?x4xf32>, tensor<?x4xf32>
}

// -----

// The larger operand first: bias + x is x + bias.
// CHECK-LABEL: func.func @larger_first
// CHECK-SAME: (%[[X:.*]]: tensor<?x8xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK: nn.add %[[X]], %[[B]]
func.func @larger_first(%x: tensor<?x8xf32>, %b: tensor<8xf32>) -> tensor<?x8xf32> {
  %0 = nn.add %b, %x : (tensor<8xf32>, tensor<?x8xf32>) -> tensor<?x8xf32>
  return %0 : tensor<?x8xf32>
}

// -----

// A view and its inverse fold away (x.view(n, c, 1, 1).flatten(1)).
// CHECK-LABEL: func.func @view_roundtrip
// CHECK-SAME: (%[[X:.*]]: tensor<?x8xf32>)
// CHECK-NEXT: return %[[X]]
func.func @view_roundtrip(%x: tensor<?x8xf32>) -> tensor<?x8xf32> {
  %0 = nn.reshape %x {shape = array<i64: 0, 8, 1, 1>} : (tensor<?x8xf32>) -> tensor<?x8x1x1xf32>
  %1 = nn.flatten %0 : (tensor<?x8x1x1xf32>) -> tensor<?x8xf32>
  return %1 : tensor<?x8xf32>
}

// -----

// A swap of the last two dims feeding batch_matmul becomes its flag (or
// cancels one); a permutation of the leading dims stays.
// CHECK-LABEL: func.func @batch_matmul_transpose
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x16x8xf32>, %[[K:.*]]: tensor<2x4x16x8xf32>)
// CHECK-NEXT: %[[S:.*]] = nn.batch_matmul %[[Q]], %[[K]] {transpose_rhs = true}
// CHECK-NEXT: %[[R:.*]] = nn.batch_matmul %[[S]], %[[Q]] {transpose_lhs = true} : (tensor<2x4x16x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
// CHECK-NEXT: nn.transpose %[[R]] {permutation = array<i64: 1, 0, 2, 3>}
func.func @batch_matmul_transpose(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x8xf32>) -> tensor<4x2x16x8xf32> {
  %kt = nn.transpose %k {permutation = array<i64: 0, 1, 3, 2>} : (tensor<2x4x16x8xf32>) -> tensor<2x4x8x16xf32>
  %s = nn.batch_matmul %q, %kt : (tensor<2x4x16x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x16x16xf32>
  %st = nn.transpose %s {permutation = array<i64: 0, 1, 3, 2>} : (tensor<2x4x16x16xf32>) -> tensor<2x4x16x16xf32>
  %r = nn.batch_matmul %st, %q : (tensor<2x4x16x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
  %t = nn.transpose %r {permutation = array<i64: 1, 0, 2, 3>} : (tensor<2x4x16x8xf32>) -> tensor<4x2x16x8xf32>
  return %t : tensor<4x2x16x8xf32>
}

// -----

// Attention scales k^T before q k^T: the scale goes first, and the swap
// becomes the product's flag.
// CHECK-LABEL: func.func @scaled_keys
// CHECK-SAME: (%[[Q:.*]]: tensor<2x16x8xf32>, %[[K:.*]]: tensor<2x16x8xf32>, %[[C:.*]]: tensor<1xf32>)
// CHECK-NEXT: %[[KS:.*]] = nn.mul %[[K]], %[[C]]
// CHECK-NEXT: nn.batch_matmul %[[Q]], %[[KS]] {transpose_rhs = true}
func.func @scaled_keys(%q: tensor<2x16x8xf32>, %k: tensor<2x16x8xf32>, %c: tensor<1xf32>) -> tensor<2x16x16xf32> {
  %kt = nn.transpose %k {permutation = array<i64: 0, 2, 1>} : (tensor<2x16x8xf32>) -> tensor<2x8x16xf32>
  %ks = nn.mul %kt, %c : (tensor<2x8x16xf32>, tensor<1xf32>) -> tensor<2x8x16xf32>
  %s = nn.batch_matmul %q, %ks : (tensor<2x16x8xf32>, tensor<2x8x16xf32>) -> tensor<2x16x16xf32>
  return %s : tensor<2x16x16xf32>
}

// -----

// x W^T with a 2-D weight (the dynamo exporter's linear layer: MatMul of a
// transposed weight, then Add of the bias) is one nn.linear with its bias;
// a 3-D x's leading dims merge into rows around it.
// CHECK-LABEL: func.func @matmul_of_transpose_is_linear
// CHECK-NOT: nn.transpose
// CHECK-NOT: nn.matmul
// CHECK: %[[ROWS:.*]] = nn.reshape %arg0 {shape = array<i64: -1, 32>} : (tensor<?x16x32xf32>) -> tensor<?x32xf32>
// CHECK: %[[Y:.*]] = nn.linear %[[ROWS]], %arg1, %arg2 : (tensor<?x32xf32>, tensor<96x32xf32>, tensor<96xf32>) -> tensor<?x96xf32>
// CHECK: nn.reshape %[[Y]] {shape = array<i64: -1, 16, 96>} : (tensor<?x96xf32>) -> tensor<?x16x96xf32>
// CHECK-NOT: nn.add
func.func @matmul_of_transpose_is_linear(%x: tensor<?x16x32xf32>, %w: tensor<96x32xf32>, %b: tensor<96xf32>) -> tensor<?x16x96xf32> {
  %t = nn.transpose %w {permutation = array<i64: 1, 0>} : (tensor<96x32xf32>) -> tensor<32x96xf32>
  %y = nn.matmul %x, %t : (tensor<?x16x32xf32>, tensor<32x96xf32>) -> tensor<?x16x96xf32>
  %z = nn.add %y, %b : (tensor<?x16x96xf32>, tensor<96xf32>) -> tensor<?x16x96xf32>
  return %z : tensor<?x16x96xf32>
}

// -----

// A 2-D x needs no reshapes; a bias the product is also read without stays
// an add (the product without bias is used twice).
// CHECK-LABEL: func.func @linear_used_twice_keeps_add
// CHECK: %[[Y:.*]] = nn.linear %arg0, %arg1 : (tensor<?x32xf32>, tensor<8x32xf32>) -> tensor<?x8xf32>
// CHECK: nn.add %[[Y]], %arg2
func.func @linear_used_twice_keeps_add(%x: tensor<?x32xf32>, %w: tensor<8x32xf32>, %b: tensor<8xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>) {
  %t = nn.transpose %w {permutation = array<i64: 1, 0>} : (tensor<8x32xf32>) -> tensor<32x8xf32>
  %y = nn.matmul %x, %t : (tensor<?x32xf32>, tensor<32x8xf32>) -> tensor<?x8xf32>
  %z = nn.add %y, %b : (tensor<?x8xf32>, tensor<8xf32>) -> tensor<?x8xf32>
  return %y, %z : tensor<?x8xf32>, tensor<?x8xf32>
}

// -----

// A transpose that is not a 2-D swap, or a right operand that is not a
// transpose, stays a matmul.
// CHECK-LABEL: func.func @plain_matmul_stays
// CHECK: nn.matmul
// CHECK-NOT: nn.linear
func.func @plain_matmul_stays(%x: tensor<?x32xf32>, %w: tensor<32x8xf32>) -> tensor<?x8xf32> {
  %y = nn.matmul %x, %w : (tensor<?x32xf32>, tensor<32x8xf32>) -> tensor<?x8xf32>
  return %y : tensor<?x8xf32>
}
