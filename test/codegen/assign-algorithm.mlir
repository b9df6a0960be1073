// RUN: dpc-opt %s -nn-set-batch=batch=16 -nn-build-train-step -convert-nn-to-exec -assign-kernel-precision | FileCheck %s --check-prefix=AUTO
// RUN: dpc-opt %s -nn-set-batch=batch=4 -nn-build-train-step -convert-nn-to-exec -assign-kernel-precision | FileCheck %s --check-prefix=SMALL
// RUN: dpc-opt %s -nn-set-batch=batch=16 -nn-build-train-step -dpc-partition-data-parallel="devices=cpu:0,cpu:1 split=6,10" -convert-nn-to-exec -assign-kernel-precision | FileCheck %s --check-prefix=TWO
// RUN: dpc-opt %s -nn-set-batch=batch=16 -nn-build-train-step -convert-nn-to-exec -assign-kernel-precision=conv-algorithm=winograd | FileCheck %s --check-prefix=WINOGRAD
// RUN: dpc-opt %s -nn-set-batch=batch=16 -nn-build-train-step -convert-nn-to-exec -assign-kernel-precision=conv-algorithm=direct | FileCheck %s --check-prefix=DIRECT
// RUN: dpc-opt %s -nn-set-batch=batch=16 -nn-build-train-step -convert-nn-to-exec -assign-kernel-precision=precision=bf16 | FileCheck %s --check-prefix=BF16
// RUN: dpc-opt %s -nn-set-batch=batch=16 -nn-build-train-step -convert-nn-to-exec "-assign-kernel-precision=costs=%S/Inputs/winograd-costs.json" | FileCheck %s --check-prefix=COSTS
// RUN: dpc-opt %s -nn-set-batch=batch=16 -nn-build-train-step -convert-nn-to-exec "-assign-kernel-precision=precision=auto costs=%S/Inputs/winograd-costs.json" | FileCheck %s --check-prefix=COSTS-AUTO
// RUN: not dpc-opt %s -nn-set-batch=batch=16 -nn-build-train-step -convert-nn-to-exec "-assign-kernel-precision=precision=bf16 conv-algorithm=winograd" 2>&1 | FileCheck %s --check-prefix=BAD-BF16
// RUN: not dpc-opt %s -nn-set-batch=batch=16 -nn-build-train-step -convert-nn-to-exec -assign-kernel-precision=conv-algorithm=fft 2>&1 | FileCheck %s --check-prefix=BAD-NAME
// RUN: not dpc-opt %s -nn-set-batch=batch=16 -nn-build-train-step -convert-nn-to-exec "-assign-kernel-precision=costs=%S/Inputs/winograd-costs-bad.json" 2>&1 | FileCheck %s --check-prefix=BAD-COSTS

// The convolutions: conv1 16->64 and conv2 64->64 3x3 on 8x8, conv3
// 64->128 with stride 2, conv4 128->128 3x3 on 4x4. Winograd applies to the
// 3x3 stride-1 ones in every pass (conv1 has no backward-data: x needs no
// gradient), never to the strided conv3.

// auto without a cost file, per pass, from the channels and the rows of
// the Winograd products (16 images times the 4x4 tiles of an output):
// forward and backward-data where both channel counts are at least 64 and
// there are at least 64 rows (conv2: 16 x 4 tiles), backward-weights where
// both are at least 128 and there are at least 16 rows (conv4: 16 x 1).
// The eval step's forwards choose as the train step's.
// AUTO-LABEL: exec.step "eval_step"
// AUTO: "Conv2dForward" ins({{.*}}memref<64x16x3x3xf32>){{.*}}algorithm = "direct"
// AUTO: "Conv2dForward" ins({{.*}}memref<64x64x3x3xf32>){{.*}}algorithm = "winograd"
// AUTO: "Conv2dForward" ins({{.*}}memref<128x64x3x3xf32>){{.*}}algorithm = "direct"
// AUTO: "Conv2dForward" ins({{.*}}memref<128x128x3x3xf32>){{.*}}algorithm = "direct"
// AUTO-LABEL: exec.step "train_step"
// AUTO: "Conv2dForward" ins({{.*}}memref<64x16x3x3xf32>){{.*}}algorithm = "direct"
// AUTO: "Conv2dForward" ins({{.*}}memref<64x64x3x3xf32>){{.*}}algorithm = "winograd"
// AUTO: "Conv2dForward" ins({{.*}}memref<128x64x3x3xf32>){{.*}}algorithm = "direct"
// AUTO: "Conv2dForward" ins({{.*}}memref<128x128x3x3xf32>){{.*}}algorithm = "direct"
// AUTO: "Conv2dBackwardData" ins({{.*}}memref<128x128x3x3xf32>){{.*}}algorithm = "direct"
// AUTO: "Conv2dBackwardWeights" {{.*}}outs({{.*}}memref<128x128x3x3xf32>){{.*}}algorithm = "winograd"
// AUTO: "Conv2dBackwardData" ins({{.*}}memref<128x64x3x3xf32>){{.*}}algorithm = "direct"
// AUTO: "Conv2dBackwardWeights" {{.*}}outs({{.*}}memref<128x64x3x3xf32>){{.*}}algorithm = "direct"
// AUTO: "Conv2dBackwardData" ins({{.*}}memref<64x64x3x3xf32>){{.*}}algorithm = "winograd"
// AUTO: "Conv2dBackwardWeights" {{.*}}outs({{.*}}memref<64x64x3x3xf32>){{.*}}algorithm = "direct"
// AUTO: "Conv2dBackwardWeights" {{.*}}outs({{.*}}memref<64x16x3x3xf32>){{.*}}algorithm = "direct"
// f32 stays f32: the algorithm is the only choice made.
// AUTO-NOT: precision

// 4 images: too few rows anywhere, every call stays direct.
// SMALL-NOT: algorithm = "winograd"

// Two devices of 6 and 10 images choose as one device of 16 does: by the
// step's global batch, so both replicas alike.
// TWO-LABEL: exec.step "train_step" device(0) batch(6)
// TWO: "Conv2dForward" ins({{.*}}memref<64x64x3x3xf32>){{.*}}algorithm = "winograd"
// TWO: "Conv2dForward" ins({{.*}}memref<128x128x3x3xf32>){{.*}}algorithm = "direct"
// TWO: "Conv2dBackwardWeights" {{.*}}outs({{.*}}memref<128x128x3x3xf32>){{.*}}algorithm = "winograd"
// TWO: "Conv2dBackwardData" ins({{.*}}memref<64x64x3x3xf32>){{.*}}algorithm = "winograd"
// TWO-LABEL: exec.step "train_step" device(1) batch(10)
// TWO: "Conv2dForward" ins({{.*}}memref<64x64x3x3xf32>){{.*}}algorithm = "winograd"
// TWO: "Conv2dForward" ins({{.*}}memref<128x128x3x3xf32>){{.*}}algorithm = "direct"
// TWO: "Conv2dBackwardWeights" {{.*}}outs({{.*}}memref<128x128x3x3xf32>){{.*}}algorithm = "winograd"
// TWO: "Conv2dBackwardData" ins({{.*}}memref<64x64x3x3xf32>){{.*}}algorithm = "winograd"

// winograd: wherever it applies, whatever the channels and rows.
// WINOGRAD-LABEL: exec.step "train_step"
// WINOGRAD: "Conv2dForward" ins({{.*}}memref<64x16x3x3xf32>){{.*}}algorithm = "winograd"
// WINOGRAD: "Conv2dForward" ins({{.*}}memref<64x64x3x3xf32>){{.*}}algorithm = "winograd"
// WINOGRAD: "Conv2dForward" ins({{.*}}memref<128x64x3x3xf32>){{.*}}algorithm = "direct"
// WINOGRAD: "Conv2dForward" ins({{.*}}memref<128x128x3x3xf32>){{.*}}algorithm = "winograd"
// WINOGRAD: "Conv2dBackwardData" ins({{.*}}memref<128x128x3x3xf32>){{.*}}algorithm = "winograd"
// WINOGRAD: "Conv2dBackwardWeights" {{.*}}outs({{.*}}memref<128x128x3x3xf32>){{.*}}algorithm = "winograd"
// WINOGRAD: "Conv2dBackwardData" ins({{.*}}memref<128x64x3x3xf32>){{.*}}algorithm = "direct"
// WINOGRAD: "Conv2dBackwardWeights" {{.*}}outs({{.*}}memref<128x64x3x3xf32>){{.*}}algorithm = "direct"
// WINOGRAD: "Conv2dBackwardData" ins({{.*}}memref<64x64x3x3xf32>){{.*}}algorithm = "winograd"
// WINOGRAD: "Conv2dBackwardWeights" {{.*}}outs({{.*}}memref<64x64x3x3xf32>){{.*}}algorithm = "winograd"
// WINOGRAD: "Conv2dBackwardWeights" {{.*}}outs({{.*}}memref<64x16x3x3xf32>){{.*}}algorithm = "winograd"

// direct: every call keeps the lowering's direct algorithm.
// DIRECT-NOT: algorithm = "winograd"
// DIRECT-COUNT-11: algorithm = "direct"
// DIRECT-NOT: algorithm = "winograd"

// bf16 computes every convolution in bf16, which Winograd cannot.
// BF16-NOT: algorithm = "winograd"
// BF16-COUNT-11: algorithm = "direct"{{.*}}precision = bf16
// BF16-NOT: algorithm = "winograd"

// A cost file decides the calls it times: conv2's forward measured slower
// in Winograd stays direct, its backward-weights measured faster goes
// Winograd; conv4's forward, fastest in bf16 but in an f32 plan, takes the
// faster f32 algorithm, Winograd, which the rules would not take at 16
// rows. The calls the file lacks follow the rules.
// COSTS-LABEL: exec.step "train_step"
// COSTS: "Conv2dForward" ins({{.*}}memref<64x16x3x3xf32>){{.*}}algorithm = "direct"
// COSTS: "Conv2dForward" ins({{.*}}memref<64x64x3x3xf32>){{.*}}algorithm = "direct"
// COSTS: "Conv2dForward" ins({{.*}}memref<128x64x3x3xf32>){{.*}}algorithm = "direct"
// COSTS: "Conv2dForward" ins({{.*}}memref<128x128x3x3xf32>){{.*}}algorithm = "winograd"
// COSTS: "Conv2dBackwardData" ins({{.*}}memref<128x128x3x3xf32>){{.*}}algorithm = "direct"
// COSTS: "Conv2dBackwardWeights" {{.*}}outs({{.*}}memref<128x128x3x3xf32>){{.*}}algorithm = "winograd"
// COSTS: "Conv2dBackwardData" ins({{.*}}memref<128x64x3x3xf32>){{.*}}algorithm = "direct"
// COSTS: "Conv2dBackwardWeights" {{.*}}outs({{.*}}memref<128x64x3x3xf32>){{.*}}algorithm = "direct"
// COSTS: "Conv2dBackwardData" ins({{.*}}memref<64x64x3x3xf32>){{.*}}algorithm = "winograd"
// COSTS: "Conv2dBackwardWeights" {{.*}}outs({{.*}}memref<64x64x3x3xf32>){{.*}}algorithm = "winograd"
// COSTS-NOT: precision

// With precision=auto the same file makes conv4's forward bf16 (4 us
// against Winograd's 6), direct, as bf16 calls always are.
// COSTS-AUTO-LABEL: exec.step "train_step"
// COSTS-AUTO: "Conv2dForward" ins({{.*}}memref<64x64x3x3xf32>){{.*}}algorithm = "direct"{{.*}}precision = f32
// COSTS-AUTO: "Conv2dForward" ins({{.*}}memref<128x128x3x3xf32>){{.*}}algorithm = "direct"{{.*}}precision = bf16
// COSTS-AUTO: "Conv2dBackwardWeights" {{.*}}outs({{.*}}memref<64x64x3x3xf32>){{.*}}algorithm = "winograd"{{.*}}precision = f32

// BAD-BF16: error: conv-algorithm=winograd computes in f32 only, but the precision is bf16
// BAD-NAME: error: conv-algorithm must be direct, winograd or auto, got 'fft'
// BAD-COSTS: winograd-costs-bad.json: kernel 'Conv2dForward(?x64x8x8, 64x64x3x3) -> (?x64x8x8) stride 1x1 padding 1,1,1,1 dilation 1x1 groups 1' needs positive "f32" and "bf16" times (and "f32_winograd", if given)
func.func @forward(%x: tensor<?x16x8x8xf32> {nn.input = "x"},
                   %w1: tensor<64x16x3x3xf32> {nn.param = "conv1.weight"},
                   %w2: tensor<64x64x3x3xf32> {nn.param = "conv2.weight"},
                   %w3: tensor<128x64x3x3xf32> {nn.param = "conv3.weight"},
                   %w4: tensor<128x128x3x3xf32> {nn.param = "conv4.weight"},
                   %f: tensor<10x128xf32> {nn.param = "fc.weight"})
    -> (tensor<?x10xf32> {nn.output = "logits"}) {
  %0 = nn.conv2d %x, %w1 {padding = array<i64: 1, 1, 1, 1>} : (tensor<?x16x8x8xf32>, tensor<64x16x3x3xf32>) -> tensor<?x64x8x8xf32>
  %1 = nn.conv2d %0, %w2 {padding = array<i64: 1, 1, 1, 1>} : (tensor<?x64x8x8xf32>, tensor<64x64x3x3xf32>) -> tensor<?x64x8x8xf32>
  %2 = nn.conv2d %1, %w3 {stride = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<?x64x8x8xf32>, tensor<128x64x3x3xf32>) -> tensor<?x128x4x4xf32>
  %3 = nn.conv2d %2, %w4 {padding = array<i64: 1, 1, 1, 1>} : (tensor<?x128x4x4xf32>, tensor<128x128x3x3xf32>) -> tensor<?x128x4x4xf32>
  %4 = nn.global_avg_pool2d %3 : (tensor<?x128x4x4xf32>) -> tensor<?x128x1x1xf32>
  %5 = nn.flatten %4 : (tensor<?x128x1x1xf32>) -> tensor<?x128xf32>
  %6 = nn.linear %5, %f : (tensor<?x128xf32>, tensor<10x128xf32>) -> tensor<?x10xf32>
  return %6 : tensor<?x10xf32>
}
