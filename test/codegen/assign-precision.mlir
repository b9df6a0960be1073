// RUN: dpc-opt %s -nn-set-batch=batch=4 -nn-build-train-step -convert-nn-to-exec -schedule-exec-streams -plan-exec-arena -report-exec-memory -assign-kernel-precision=precision=auto | FileCheck %s --check-prefix=AUTO
// RUN: dpc-opt %s -nn-set-batch=batch=4 -nn-build-train-step -convert-nn-to-exec -schedule-exec-streams -plan-exec-arena -report-exec-memory -assign-kernel-precision=precision=bf16 | FileCheck %s --check-prefix=BF16
// RUN: dpc-opt %s -nn-set-batch=batch=4 -nn-build-train-step -convert-nn-to-exec -schedule-exec-streams -plan-exec-arena -report-exec-memory -assign-kernel-precision=precision=f32 | FileCheck %s --check-prefix=F32
// RUN: dpc-opt %s -nn-set-batch=batch=4 -nn-build-train-step -convert-nn-to-exec -schedule-exec-streams -plan-exec-arena -report-exec-memory -assign-kernel-precision=precision=tf32 | FileCheck %s --check-prefix=TF32
// RUN: not dpc-opt %s -nn-set-batch=batch=4 -nn-build-train-step -convert-nn-to-exec -schedule-exec-streams -plan-exec-arena -report-exec-memory -assign-kernel-precision=precision=f16 2>&1 | FileCheck %s --check-prefix=BAD

// auto: per call, from the per-sample geometry alone. Forward: bf16 once an
// output sums c*r*s >= 256 products (conv1's 1*3*3 stays f32, conv2's and
// conv3's 32*3*3 and conv4's 64*3*3 go bf16). Backward-data: bf16.
// Backward-weights: f32 for the strided 3x3 conv3 and for conv4's 4x4
// output, bf16 for conv2 and conv1 (32 output channels on 8x8).
// Linear layers and their gradient matmuls: bf16 only for fc2, the one
// whose weight is 256 wide both ways.
// AUTO-LABEL: exec.step "eval_step"
// AUTO: exec.kernel "Conv2dForward"{{.*}}precision = f32
// AUTO: exec.kernel "Conv2dForward"{{.*}}precision = bf16
// AUTO: exec.kernel "Conv2dForward"{{.*}}precision = bf16
// AUTO: exec.kernel "Conv2dForward"{{.*}}precision = bf16
// AUTO: exec.kernel "LinearForward"{{.*}}memref<256x64xf32>{{.*}}{precision = f32}
// AUTO: exec.kernel "LinearForward"{{.*}}memref<256x256xf32>{{.*}}{precision = bf16}
// AUTO: exec.kernel "LinearForward"{{.*}}memref<10x256xf32>{{.*}}{precision = f32}
// AUTO-LABEL: exec.step "train_step"
// AUTO: exec.kernel "Conv2dForward"{{.*}}precision = f32
// AUTO: exec.kernel "Conv2dForward"{{.*}}precision = bf16
// AUTO: exec.kernel "Conv2dForward"{{.*}}precision = bf16
// AUTO: exec.kernel "Conv2dForward"{{.*}}precision = bf16
// AUTO: exec.kernel "LinearForward"{{.*}}{precision = f32}
// AUTO: exec.kernel "LinearForward"{{.*}}{precision = bf16}
// AUTO: exec.kernel "LinearForward"{{.*}}{precision = f32}
// Loss, pooling and the optimizer have no precision: they stay f32.
// AUTO-NOT: "CrossEntropyForward"{{.*}}precision
// AUTO: exec.kernel "MatmulForward"{{.*}}outs({{.*}}memref<?x256xf32>) {precision = f32}
// AUTO: exec.kernel "MatmulTransposedA"{{.*}}outs({{.*}}memref<10x256xf32>) {precision = f32}
// AUTO: exec.kernel "MatmulForward"{{.*}}outs({{.*}}memref<?x256xf32>) {precision = bf16}
// AUTO: exec.kernel "MatmulTransposedA"{{.*}}outs({{.*}}memref<256x256xf32>) {precision = bf16}
// AUTO: exec.kernel "MatmulForward"{{.*}}outs({{.*}}memref<?x64xf32>) {precision = f32}
// AUTO: exec.kernel "MatmulTransposedA"{{.*}}outs({{.*}}memref<256x64xf32>) {precision = f32}
// AUTO: exec.kernel "Conv2dBackwardData"{{.*}}precision = bf16
// AUTO: exec.kernel "Conv2dBackwardWeights"{{.*}}outs({{.*}}memref<64x64x3x3xf32>){{.*}}precision = f32
// AUTO: exec.kernel "Conv2dBackwardData"{{.*}}precision = bf16
// AUTO: exec.kernel "Conv2dBackwardWeights"{{.*}}outs({{.*}}memref<64x32x3x3xf32>){{.*}}precision = f32
// AUTO: exec.kernel "Conv2dBackwardData"{{.*}}precision = bf16
// AUTO: exec.kernel "Conv2dBackwardWeights"{{.*}}outs({{.*}}memref<32x32x3x3xf32>){{.*}}precision = bf16
// AUTO: exec.kernel "Conv2dBackwardWeights"{{.*}}outs({{.*}}memref<32x1x3x3xf32>){{.*}}precision = bf16
// AUTO-NOT: precision
// AUTO: exec.kernel "SgdUpdate"
// AUTO-NOT: precision

// bf16: every convolution and matmul call, nothing else.
// BF16-LABEL: exec.step "train_step"
// BF16-COUNT-7: {{Conv2dForward|LinearForward}}{{.*}}precision = bf16
// BF16-NOT: precision = f32
// BF16-NOT: "CrossEntropyForward"{{.*}}precision
// BF16-COUNT-13: {{Matmul|Conv2dBackward}}{{.*}}precision = bf16
// BF16-NOT: precision

// f32: the calls are left as they were.
// F32-NOT: precision

// BAD: precision must be f32, bf16, tf32 or auto, got 'f16'

// tf32: every call that may compute in another precision computes in TF32
// (CUDA devices: dpc compile refuses others); the rest has no precision.
// TF32-LABEL: exec.step "train_step"
// TF32-NOT: precision = f32
// TF32-NOT: precision = bf16
// TF32: exec.kernel "Conv2dForward"{{.*}}precision = tf32
// TF32: exec.kernel "LinearForward"{{.*}}{precision = tf32}
// TF32-NOT: "CrossEntropyForward"{{.*}}precision
// TF32: exec.kernel "Conv2dBackwardWeights"{{.*}}precision = tf32
// TF32-NOT: precision = f32
func.func @forward(%x: tensor<?x1x8x8xf32> {nn.input = "x"},
                   %w1: tensor<32x1x3x3xf32> {nn.param = "conv1.weight"},
                   %w2: tensor<32x32x3x3xf32> {nn.param = "conv2.weight"},
                   %w3: tensor<64x32x3x3xf32> {nn.param = "conv3.weight"},
                   %w4: tensor<64x64x3x3xf32> {nn.param = "conv4.weight"},
                   %f1: tensor<256x64xf32> {nn.param = "fc1.weight"},
                   %f2: tensor<256x256xf32> {nn.param = "fc2.weight"},
                   %f3: tensor<10x256xf32> {nn.param = "fc3.weight"})
    -> (tensor<?x10xf32> {nn.output = "logits"}) {
  %0 = nn.conv2d %x, %w1 {padding = array<i64: 1, 1, 1, 1>} : (tensor<?x1x8x8xf32>, tensor<32x1x3x3xf32>) -> tensor<?x32x8x8xf32>
  %1 = nn.conv2d %0, %w2 {padding = array<i64: 1, 1, 1, 1>} : (tensor<?x32x8x8xf32>, tensor<32x32x3x3xf32>) -> tensor<?x32x8x8xf32>
  %2 = nn.conv2d %1, %w3 {stride = array<i64: 2, 2>, padding = array<i64: 1, 1, 1, 1>} : (tensor<?x32x8x8xf32>, tensor<64x32x3x3xf32>) -> tensor<?x64x4x4xf32>
  %c4 = nn.conv2d %2, %w4 {padding = array<i64: 1, 1, 1, 1>} : (tensor<?x64x4x4xf32>, tensor<64x64x3x3xf32>) -> tensor<?x64x4x4xf32>
  %3 = nn.global_avg_pool2d %c4 : (tensor<?x64x4x4xf32>) -> tensor<?x64x1x1xf32>
  %4 = nn.flatten %3 : (tensor<?x64x1x1xf32>) -> tensor<?x64xf32>
  %5 = nn.linear %4, %f1 : (tensor<?x64xf32>, tensor<256x64xf32>) -> tensor<?x256xf32>
  %6 = nn.linear %5, %f2 : (tensor<?x256xf32>, tensor<256x256xf32>) -> tensor<?x256xf32>
  %7 = nn.linear %6, %f3 : (tensor<?x256xf32>, tensor<10x256xf32>) -> tensor<?x10xf32>
  return %7 : tensor<?x10xf32>
}
