// RUN: not dpc-opt %s -dpc-accumulate-gradients=grad-accum=0 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not dpc-opt %s -dpc-accumulate-gradients=grad-accum=2 2>&1 | FileCheck %s --check-prefix=NOSTEP

// ZERO: error: grad-accum must be at least 1, got 0
// NOSTEP: error: no @train_step to accumulate gradients in; run nn-build-train-step first

func.func @forward(%x: tensor<4x12xf32> {nn.input = "x"}) -> (tensor<4x12xf32> {nn.output = "logits"}) {
  return %x : tensor<4x12xf32>
}
