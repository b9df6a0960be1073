// RUN: not dpc-opt %s -nn-build-train-step -dpc-rematerialize="budget=20000" 2>&1 | FileCheck %s --check-prefix=SMALL
// RUN: not dpc-opt %s -nn-build-train-step -dpc-rematerialize="budget=lots" 2>&1 | FileCheck %s --check-prefix=SIZE
// RUN: not dpc-opt %s -nn-build-train-step -dpc-rematerialize="segments=1" 2>&1 | FileCheck %s --check-prefix=ONE
// RUN: not dpc-opt %s -nn-build-train-step -dpc-rematerialize="segments=2 budget=1MiB" 2>&1 | FileCheck %s --check-prefix=BOTH
// RUN: DPC_DEVICE_MEMORY=20000 not dpc-opt %s -nn-build-train-step -dpc-rematerialize="budget=auto" 2>&1 | FileCheck %s --check-prefix=SMALL
// RUN: DPC_DEVICE_MEMORY=1MiB dpc-opt %s -nn-build-train-step -dpc-rematerialize="budget=auto" | FileCheck %s --check-prefix=AUTO

// The parameters (7.25 KiB) and the smallest arena recomputation
// reaches (greedy or segments) do not fit 20000 bytes: the error says how
// close it got.
// SMALL: error: cannot fit the memory budget of 19.53 KiB per device: the smallest planned peak rematerialization reaches is 44.62 KiB (cpu:0, of which 7.25 KiB training state)
// SIZE: error: dpc-rematerialize: budget 'lots' is not a size (e.g. 1.5GiB, 300MiB) or auto
// ONE: error: dpc-rematerialize: segments must be > 1, got 1
// BOTH: error: dpc-rematerialize: give segments or budget, not both
// AUTO-LABEL: func.func @train_step
// AUTO-NOT: nn.remat
func.func @forward(%x: tensor<64x16xf32> {nn.input = "x"},
                   %w1: tensor<32x16xf32> {nn.param = "fc1.weight"},
                   %w2: tensor<32x32xf32> {nn.param = "fc2.weight"},
                   %w3: tensor<10x32xf32> {nn.param = "fc3.weight"})
    -> (tensor<64x10xf32> {nn.output = "logits"}) {
  %h1 = nn.linear %x, %w1 : (tensor<64x16xf32>, tensor<32x16xf32>) -> tensor<64x32xf32>
  %a1 = nn.relu %h1 : tensor<64x32xf32>
  %h2 = nn.linear %a1, %w2 : (tensor<64x32xf32>, tensor<32x32xf32>) -> tensor<64x32xf32>
  %a2 = nn.sigmoid %h2 : tensor<64x32xf32>
  %h3 = nn.linear %a2, %w3 : (tensor<64x32xf32>, tensor<10x32xf32>) -> tensor<64x10xf32>
  return %h3 : tensor<64x10xf32>
}
