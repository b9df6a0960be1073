// RUN: dpc-opt %s -nn-set-batch=batch=512 -nn-build-train-step -convert-nn-to-exec -assign-kernel-precision=precision=auto | FileCheck %s --check-prefix=ROWS512
// RUN: dpc-opt %s -nn-set-batch=batch=256 -nn-build-train-step -convert-nn-to-exec -assign-kernel-precision=precision=auto | FileCheck %s --check-prefix=ROWS256
// RUN: dpc-opt %s -nn-set-batch=batch=64 -nn-build-train-step -convert-nn-to-exec -assign-kernel-precision=precision=auto | FileCheck %s --check-prefix=ROWS64
// RUN: dpc-opt %s -nn-set-batch=batch=512 -nn-build-train-step -dpc-partition-data-parallel="devices=cpu:0,cpu:1 split=200,312" -convert-nn-to-exec -assign-kernel-precision=precision=auto | FileCheck %s --check-prefix=TWO
// RUN: dpc-opt %s -nn-set-batch=batch=512 -nn-build-train-step -convert-nn-to-exec "-assign-kernel-precision=precision=auto conv-algorithm=direct" | FileCheck %s --check-prefix=DIRECT

// precision=auto where bf16 and f32 Winograd both apply: conv1 and conv2
// 256->256, conv3 256->128, 3x3 stride 1 on 4x4 (one 4x4 tile per image,
// so the rows of the Winograd products are the images). With >= 256
// channels on both sides, forward goes f32 Winograd from 512 rows and
// backward-data from 256; with fewer rows, or 128 channels (conv3), the
// bf16 rules decide. Backward-weights on a 4x4 output is f32 (Winograd) in
// every case. conv1 has no backward-data: x needs no gradient.
// ROWS512-LABEL: exec.step "train_step"
// ROWS512: "Conv2dForward" ins({{.*}}memref<256x256x3x3xf32>){{.*}}algorithm = "winograd"{{.*}}precision = f32
// ROWS512: "Conv2dForward" ins({{.*}}memref<256x256x3x3xf32>){{.*}}algorithm = "winograd"{{.*}}precision = f32
// ROWS512: "Conv2dForward" ins({{.*}}memref<128x256x3x3xf32>){{.*}}algorithm = "direct"{{.*}}precision = bf16
// ROWS512: "Conv2dBackwardData" ins({{.*}}memref<128x256x3x3xf32>){{.*}}algorithm = "direct"{{.*}}precision = bf16
// ROWS512: "Conv2dBackwardWeights" {{.*}}outs({{.*}}memref<128x256x3x3xf32>){{.*}}algorithm = "winograd"{{.*}}precision = f32
// ROWS512: "Conv2dBackwardData" ins({{.*}}memref<256x256x3x3xf32>){{.*}}algorithm = "winograd"{{.*}}precision = f32
// ROWS512: "Conv2dBackwardWeights" {{.*}}outs({{.*}}memref<256x256x3x3xf32>){{.*}}algorithm = "winograd"{{.*}}precision = f32
// ROWS512: "Conv2dBackwardWeights" {{.*}}outs({{.*}}memref<256x256x3x3xf32>){{.*}}algorithm = "winograd"{{.*}}precision = f32

// ROWS256-LABEL: exec.step "train_step"
// ROWS256: "Conv2dForward" ins({{.*}}memref<256x256x3x3xf32>){{.*}}algorithm = "direct"{{.*}}precision = bf16
// ROWS256: "Conv2dForward" ins({{.*}}memref<256x256x3x3xf32>){{.*}}algorithm = "direct"{{.*}}precision = bf16
// ROWS256: "Conv2dForward" ins({{.*}}memref<128x256x3x3xf32>){{.*}}algorithm = "direct"{{.*}}precision = bf16
// ROWS256: "Conv2dBackwardData" ins({{.*}}memref<128x256x3x3xf32>){{.*}}algorithm = "direct"{{.*}}precision = bf16
// ROWS256: "Conv2dBackwardData" ins({{.*}}memref<256x256x3x3xf32>){{.*}}algorithm = "winograd"{{.*}}precision = f32

// ROWS64-LABEL: exec.step "train_step"
// ROWS64-COUNT-3: "Conv2dForward"{{.*}}algorithm = "direct"{{.*}}precision = bf16
// ROWS64: "Conv2dBackwardData" ins({{.*}}memref<128x256x3x3xf32>){{.*}}algorithm = "direct"{{.*}}precision = bf16
// ROWS64: "Conv2dBackwardData" ins({{.*}}memref<256x256x3x3xf32>){{.*}}algorithm = "direct"{{.*}}precision = bf16

// Replicas of 200 and 312 images choose as one device of 512 does.
// TWO-LABEL: exec.step "train_step" device(0) batch(200)
// TWO: "Conv2dForward" ins({{.*}}memref<256x256x3x3xf32>){{.*}}algorithm = "winograd"{{.*}}precision = f32
// TWO: "Conv2dForward" ins({{.*}}memref<128x256x3x3xf32>){{.*}}algorithm = "direct"{{.*}}precision = bf16
// TWO-LABEL: exec.step "train_step" device(1) batch(312)
// TWO: "Conv2dForward" ins({{.*}}memref<256x256x3x3xf32>){{.*}}algorithm = "winograd"{{.*}}precision = f32
// TWO: "Conv2dForward" ins({{.*}}memref<128x256x3x3xf32>){{.*}}algorithm = "direct"{{.*}}precision = bf16

// conv-algorithm=direct leaves bf16 the faster choice.
// DIRECT-LABEL: exec.step "train_step"
// DIRECT-COUNT-2: "Conv2dForward" ins({{.*}}memref<256x256x3x3xf32>){{.*}}algorithm = "direct"{{.*}}precision = bf16
// DIRECT: "Conv2dBackwardData" ins({{.*}}memref<256x256x3x3xf32>){{.*}}algorithm = "direct"{{.*}}precision = bf16
// DIRECT-NOT: algorithm = "winograd"
func.func @forward(%x: tensor<?x256x4x4xf32> {nn.input = "x"},
                   %w1: tensor<256x256x3x3xf32> {nn.param = "conv1.weight"},
                   %w2: tensor<256x256x3x3xf32> {nn.param = "conv2.weight"},
                   %w3: tensor<128x256x3x3xf32> {nn.param = "conv3.weight"},
                   %f: tensor<10x128xf32> {nn.param = "fc.weight"})
    -> (tensor<?x10xf32> {nn.output = "logits"}) {
  %0 = nn.conv2d %x, %w1 {padding = array<i64: 1, 1, 1, 1>} : (tensor<?x256x4x4xf32>, tensor<256x256x3x3xf32>) -> tensor<?x256x4x4xf32>
  %1 = nn.conv2d %0, %w2 {padding = array<i64: 1, 1, 1, 1>} : (tensor<?x256x4x4xf32>, tensor<256x256x3x3xf32>) -> tensor<?x256x4x4xf32>
  %2 = nn.conv2d %1, %w3 {padding = array<i64: 1, 1, 1, 1>} : (tensor<?x256x4x4xf32>, tensor<128x256x3x3xf32>) -> tensor<?x128x4x4xf32>
  %3 = nn.global_avg_pool2d %2 : (tensor<?x128x4x4xf32>) -> tensor<?x128x1x1xf32>
  %4 = nn.flatten %3 : (tensor<?x128x1x1xf32>) -> tensor<?x128xf32>
  %5 = nn.linear %4, %f : (tensor<?x128xf32>, tensor<10x128xf32>) -> tensor<?x10xf32>
  return %5 : tensor<?x10xf32>
}
