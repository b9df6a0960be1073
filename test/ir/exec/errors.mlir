// RUN: dpc-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{kind must be parameter, buffer or optimizer_state, got 'weights'}}
exec.persistent @w "weights" init = "zeros" : tensor<4xf32>

// -----

// expected-error @+1 {{init must be model, zeros, ones or constant, got 'random'}}
exec.persistent @w "parameter" init = "random" : tensor<4xf32>

// -----

// expected-error @+1 {{init = model needs a 'source' tensor name}}
exec.persistent @w "parameter" init = "model" : tensor<4xf32>

// -----

// expected-error @+1 {{'parameter' names the parameter of optimizer state, and only optimizer state has one}}
exec.persistent @m "optimizer_state" init = "zeros" : tensor<4xf32>

// -----

// expected-error @+1 {{init = constant needs a 'value', and only it has one}}
exec.persistent @c "buffer" init = "constant" : tensor<2xf32>

// -----

// expected-error @+1 {{init = constant needs a 'value', and only it has one}}
exec.persistent @c "buffer" init = "zeros" {value = dense<[1.0, 2.0]> : tensor<2xf32>} : tensor<2xf32>

// -----

// expected-error @+1 {{a constant is a buffer whose value has its type 'tensor<3xf32>'}}
exec.persistent @c "buffer" init = "constant" {value = dense<[1.0, 2.0]> : tensor<2xf32>} : tensor<3xf32>

// -----

// expected-error @+1 {{a constant is a buffer whose value has its type 'tensor<2xf32>'}}
exec.persistent @c "parameter" init = "constant" {value = dense<[1.0, 2.0]> : tensor<2xf32>} : tensor<2xf32>

// -----

// expected-error @+1 {{type must be a statically shaped tensor, got 'tensor<?xf32>'}}
exec.persistent @w "parameter" init = "zeros" : tensor<?xf32>

// -----

exec.step "s" device(0) batch(1) arena(64) {
  %x = exec.arena[0] : memref<4xf32>
  %y = exec.arena[16] : memref<4xf32>
  // expected-error @+1 {{unknown kernel 'Conv3dForward'}}
  exec.kernel "Conv3dForward" ins(%x : memref<4xf32>) outs(%y : memref<4xf32>)
}

// -----

exec.step "s" device(0) batch(1) arena(64) {
  %x = exec.arena[0] : memref<4xf32>
  // expected-error @+1 {{'exec.kernel' op ReluForward takes 1 inputs, got 2}}
  exec.kernel "ReluForward" ins(%x, %x : memref<4xf32>, memref<4xf32>) outs(%x : memref<4xf32>)
}

// -----

exec.step "s" device(0) batch(1) arena(64) {
  %x = exec.arena[0] : memref<2x4xf32>
  %w = exec.arena[32] : memref<3x4xf32>
  // expected-error @+1 {{'exec.kernel' op Conv2dBackwardWeights writes 1 to 2 outputs, got 0}}
  exec.kernel "Conv2dBackwardWeights" ins(%x, %w : memref<2x4xf32>, memref<3x4xf32>)
}

// -----

exec.step "s" device(0) batch(1) arena(64) {
  %x = exec.input "images" : memref<?x2x3xf32>
  // expected-error @+1 {{'exec.view' op view 'memref<?x5xf32>' does not cover the same elements as 'memref<?x2x3xf32>'}}
  %v = exec.view %x : memref<?x2x3xf32> to memref<?x5xf32>
}

// -----

exec.step "s" device(0) batch(1) arena(64) {
  %x = exec.input "images" : memref<?x2x3xf32>
  // expected-error @+1 {{'exec.view' op cannot change the element type}}
  %v = exec.view %x : memref<?x2x3xf32> to memref<?x6xi32>
}

// -----

exec.step "s" device(0) batch(1) arena(64) {
  // expected-error @+1 {{'exec.arena' op offset must be >= 0}}
  %x = exec.arena[-64] : memref<4xf32>
}

// -----

exec.step "s" device(0) batch(1) arena(128) {
  %x = exec.arena[0] : memref<4xf32>
  %ws = exec.arena[64] : memref<64xi8>
  // expected-error @+1 {{'exec.kernel' op ReluForward takes no workspace}}
  exec.kernel "ReluForward" ins(%x : memref<4xf32>) outs(%x : memref<4xf32>) workspace(%ws : memref<64xi8>)
}

// -----

exec.step "s" device(0) batch(1) arena(256) {
  %x = exec.arena[0] : memref<1x1x4x4xf32>
  %w = exec.arena[64] : memref<1x1x1x1xf32>
  %y = exec.arena[128] : memref<1x1x4x4xf32>
  %ws = exec.input "scratch" : memref<64xi8>
  // expected-error @+1 {{'exec.kernel' op workspace must be an arena buffer}}
  exec.kernel "Conv2dForward" ins(%x, %w : memref<1x1x4x4xf32>, memref<1x1x1x1xf32>) outs(%y : memref<1x1x4x4xf32>) workspace(%ws : memref<64xi8>)
}

// -----

exec.step "s" device(0) batch(1) arena(256) {
  %x = exec.arena[0] : memref<1x1x4x4xf32>
  %w = exec.arena[64] : memref<1x1x1x1xf32>
  %y = exec.arena[128] : memref<1x1x4x4xf32>
  %ws = exec.arena[192] : memref<16xf32>
  // expected-error @+1 {{'exec.kernel' op operand #3 must be 1D memref of 8-bit signless integer values}}
  exec.kernel "Conv2dForward" ins(%x, %w : memref<1x1x4x4xf32>, memref<1x1x1x1xf32>) outs(%y : memref<1x1x4x4xf32>) workspace(%ws : memref<16xf32>)
}

// -----

// The runtime's shape checks run at the op: `?` is the step's batch.
exec.step "s" device(0) batch(4) arena(512) {
  %x = exec.input "x" : memref<?x5xf32>
  %w = exec.arena[0] : memref<6x5xf32>
  %y = exec.arena[128] : memref<?x7xf32>
  // expected-error @+1 {{'exec.kernel' op LinearForward: result 0 (Y) has 28 elements [4, 7], expected 24}}
  exec.kernel "LinearForward" ins(%x, %w : memref<?x5xf32>, memref<6x5xf32>) outs(%y : memref<?x7xf32>)
}

// -----

exec.step "s" device(0) batch(2) arena(512) {
  %x = exec.input "x" : memref<?x3x8x8xf32>
  %w = exec.arena[0] : memref<4x3x3x3xf32>
  %y = exec.arena[512] : memref<?x4x6x6xf32>
  // expected-error @+1 {{'exec.kernel' op 'stride' must be an i64 array, got 2.000000e+00 : f32}}
  exec.kernel "Conv2dForward" ins(%x, %w : memref<?x3x8x8xf32>, memref<4x3x3x3xf32>) outs(%y : memref<?x4x6x6xf32>) {stride = 2.0 : f32}
}

// -----

exec.step "s" device(0) batch(2) arena(512) {
  %x = exec.input "x" : memref<?x3x8x8xf32>
  %w = exec.arena[0] : memref<4x3x3x3xf32>
  %y = exec.arena[512] : memref<?x4x3x3xf32>
  // expected-error @+1 {{'exec.kernel' op Conv2dForward: result 0 (Y) has 72 elements [2, 4, 3, 3], expected 288}}
  exec.kernel "Conv2dForward" ins(%x, %w : memref<?x3x8x8xf32>, memref<4x3x3x3xf32>) outs(%y : memref<?x4x3x3xf32>) {stride = array<i64: 1, 1>}
}

// -----

exec.step "s" device(0) batch(2) arena(64) {
  %g = exec.arena[0] : memref<4xf32>
  // expected-error @+1 {{'exec.kernel' op 'op' must be sum, mean or max, got 'median'}}
  exec.kernel "AllReduce" ins(%g : memref<4xf32>) {op = "median"}
}

// -----

exec.step "s" device(0) batch(2) arena(64) {
  %l = exec.input "logits" : memref<?x3xf32>
  %y = exec.input "labels" : memref<?xi64>
  %c = exec.arena[0] : memref<i64>
  // expected-error @+1 {{'exec.kernel' op CorrectCount: operand 1 (Labels) is I64, expected I32}}
  exec.kernel "CorrectCount" ins(%l, %y : memref<?x3xf32>, memref<?xi64>) outs(%c : memref<i64>)
}

// -----

// Only convolutions and matmuls have a precision to choose.
exec.step "s" device(0) batch(1) arena(64) {
  %x = exec.arena[0] : memref<4xf32>
  // expected-error @+1 {{'exec.kernel' op ReluForward computes in f32 only, not bf16}}
  exec.kernel "ReluForward" ins(%x : memref<4xf32>) outs(%x : memref<4xf32>) {precision = bf16}
}

// -----

exec.step "s" device(0) batch(1) arena(64) {
  %a = exec.arena[0] : memref<2x2xf32>
  %b = exec.arena[16] : memref<2x2xf32>
  %c = exec.arena[32] : memref<2x2xf32>
  // expected-error @+1 {{'exec.kernel' op 'precision' must be f32, bf16 or tf32, got f16}}
  exec.kernel "MatmulForward" ins(%a, %b : memref<2x2xf32>, memref<2x2xf32>) outs(%c : memref<2x2xf32>) {precision = f16}
}

// -----

exec.step "s" device(0) batch(1) arena(64) {
  %a = exec.arena[0] : memref<2x2xf32>
  %b = exec.arena[16] : memref<2x2xf32>
  %c = exec.arena[32] : memref<2x2xf32>
  // expected-error @+1 {{'exec.kernel' op attribute 'precision' failed to satisfy constraint: any type attribute}}
  exec.kernel "MatmulForward" ins(%a, %b : memref<2x2xf32>, memref<2x2xf32>) outs(%c : memref<2x2xf32>) {precision = "bf16"}
}

// -----

exec.step "s" device(0) batch(2) arena(4096) {
  // expected-error @+1 {{'exec.arena' op layout nChw16c needs an f32 [n, c, h, w] buffer with c a multiple of 16, not 'memref<?x8x4x4xf32>'}}
  %x = exec.arena[0] {layout = "nChw16c"} : memref<?x8x4x4xf32>
}

// -----

exec.step "s" device(0) batch(2) arena(4096) {
  // expected-error @+1 {{'exec.arena' op unknown layout 'nhwc'}}
  %x = exec.arena[0] {layout = "nhwc"} : memref<?x16x4x4xf32>
}

// -----

exec.step "s" device(0) batch(2) arena(4096) {
  %x = exec.arena[0] {layout = "nChw16c"} : memref<?x16x2x2xf32>
  // expected-error @+1 {{'exec.view' op cannot view a buffer that is not plain}}
  %v = exec.view %x : memref<?x16x2x2xf32> to memref<?x64xf32>
}

// -----

exec.step "s" device(0) batch(2) arena(4096) {
  %x = exec.arena[0] {layout = "nChw16c"} : memref<?x16x2x2xf32>
  %s = exec.arena[1024] : memref<16xf32>
  // expected-error @+1 {{'exec.kernel' op ReduceSum: operand 0 (X) is nChw16c, but the kernel takes it plain only}}
  exec.kernel "ReduceSum" ins(%x : memref<?x16x2x2xf32>) outs(%s : memref<16xf32>) {dims = array<i64: 0, 2, 3>}
}

// -----

exec.step "s" device(0) batch(2) arena(4096) {
  %x = exec.arena[0] {layout = "nChw16c"} : memref<?x16x2x2xf32>
  %y = exec.arena[1024] : memref<?x16x2x2xf32>
  // expected-error @+1 {{'exec.kernel' op ReluForward: result 0 (Y) is plain, but operand 0 (X) is nChw16c}}
  exec.kernel "ReluForward" ins(%x : memref<?x16x2x2xf32>) outs(%y : memref<?x16x2x2xf32>)
}

// -----

exec.step "s" device(0) batch(2) arena(4096) {
  %x = exec.input "x" : memref<?x16xf32>
  %w = exec.arena[0] : memref<4x16xf32>
  %y = exec.arena[256] : memref<?x4xf32>
  // expected-error @+1 {{'exec.kernel' op 'cast_reuse' needs a 'cast_slot'}}
  exec.kernel "LinearForward" ins(%x, %w : memref<?x16xf32>, memref<4x16xf32>) outs(%y : memref<?x4xf32>) {cast_reuse, precision = bf16}
}

// -----

exec.step "s" device(0) batch(2) arena(4096) {
  %x = exec.input "x" : memref<?x16xf32>
  %w = exec.arena[0] : memref<4x16xf32>
  %y = exec.arena[256] : memref<?x4xf32>
  // expected-error @+1 {{'exec.kernel' op 'cast_slot' must be an integer in [1, 64], got 0 : i64}}
  exec.kernel "LinearForward" ins(%x, %w : memref<?x16xf32>, memref<4x16xf32>) outs(%y : memref<?x4xf32>) {cast_slot = 0 : i64, precision = bf16}
}

// -----

exec.step "s" device(0) batch(2) arena(4096) {
  %x = exec.input "x" : memref<?x16xf32>
  %w = exec.arena[0] : memref<4x16xf32>
  %y = exec.arena[256] : memref<?x4xf32>
  // expected-error @+1 {{'exec.kernel' op 'cast_slot' on a call that is not bf16}}
  exec.kernel "LinearForward" ins(%x, %w : memref<?x16xf32>, memref<4x16xf32>) outs(%y : memref<?x4xf32>) {cast_slot = 1 : i64}
}

// -----

exec.step "s" device(0) batch(2) arena(4096) {
  %a = exec.input "a" : memref<?x16xf32>
  %b = exec.arena[0] : memref<16x4xf32>
  %c = exec.arena[256] : memref<?x4xf32>
  // expected-error @+1 {{'exec.kernel' op MatmulForward cannot share the cast of an operand}}
  exec.kernel "MatmulForward" ins(%a, %b : memref<?x16xf32>, memref<16x4xf32>) outs(%c : memref<?x4xf32>) {cast_slot = 1 : i64, precision = bf16}
}

// -----

// A convolution shares its DY's cast between its backward passes; its
// forward shares nothing.
exec.step "s" device(0) batch(2) arena(65536) {
  %x = exec.input "x" : memref<?x6x14x14xf32>
  %w = exec.arena[0] : memref<16x6x5x5xf32>
  %y = exec.arena[16384] : memref<?x16x10x10xf32>
  // expected-error @+1 {{'exec.kernel' op Conv2dForward cannot share the cast of an operand}}
  exec.kernel "Conv2dForward" ins(%x, %w : memref<?x6x14x14xf32>, memref<16x6x5x5xf32>) outs(%y : memref<?x16x10x10xf32>) {cast_slot = 1 : i64, precision = bf16}
}

// -----

exec.step "s" device(0) batch(1) arena(64) {
  %a = exec.arena[0] : memref<4xf32>
  // expected-error @+1 {{'exec.kernel' op stream must be >= 0, got -1}}
  exec.kernel "AllReduce" ins(%a : memref<4xf32>) {op = "sum", stream = -1 : i64}
}

// -----

exec.step "s" device(0) batch(1) arena(64) {
  %a = exec.arena[0] : memref<4xf32>
  // expected-error @+1 {{'exec.kernel' op events must be >= 0}}
  exec.kernel "AllReduce" ins(%a : memref<4xf32>) {op = "sum", signal = array<i64: 1>, stream = 1 : i64, wait = array<i64: -2>}
}

// -----

exec.step "s" device(0) batch(1) arena(64) {
  %a = exec.arena[0] : memref<4xf32>
  // expected-error @+1 {{'exec.kernel' op attribute 'stream' failed to satisfy constraint: 64-bit signless integer attribute}}
  exec.kernel "AllReduce" ins(%a : memref<4xf32>) {op = "sum", stream = "comm"}
}
