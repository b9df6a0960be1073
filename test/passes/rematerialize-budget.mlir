// RUN: dpc-opt %s -nn-build-train-step -dpc-rematerialize="budget=61280" | FileCheck %s --check-prefix=LOOSE
// RUN: dpc-opt %s -nn-build-train-step -dpc-rematerialize="budget=54000" | FileCheck %s --check-prefix=TIGHT
// RUN: not dpc-opt %s -nn-build-train-step -dpc-rematerialize="budget=53000" 2>&1 | FileCheck %s --check-prefix=SEGMENTS
// RUN: dpc-opt %s -nn-build-train-step -dpc-rematerialize="budget=53000 best-effort=true" -convert-nn-to-exec -schedule-exec-streams -plan-exec-arena -report-exec-memory | FileCheck %s --check-prefix=BEST
// RUN: dpc-opt %s -nn-build-train-step -dpc-rematerialize="budget=1MiB" | FileCheck %s --check-prefix=NONE
// RUN: dpc-opt %s -nn-build-train-step -dpc-rematerialize="budget=54000" -convert-nn-to-exec -schedule-exec-streams -plan-exec-arena -report-exec-memory | FileCheck %s --check-prefix=EXEC
// RUN: dpc-opt %s -nn-build-train-step -convert-nn-to-exec -schedule-exec-streams -plan-exec-arena -report-exec-memory | FileCheck %s --check-prefix=EXEC0

// Four layers, batch 64: 11520 bytes of parameters, and without
// recomputation a 53120-byte arena (64640 bytes in all). Kept for the
// backward pass: h1 (relu1's gradient), a1, a2 = sigmoid(h2), h3, a3.
//
// 61280 bytes: one value is enough. The cheapest bytes are relu
// outputs (one FLOP per element); a1 is alive at the peak, recomputed from
// h1 (kept anyway) right before the fc2 weight gradient reads it.
// LOOSE-LABEL: func.func @train_step
// LOOSE: %[[H1:.*]] = nn.linear %arg0, %arg3 :
// LOOSE-NOT: {nn.remat}
// LOOSE: %[[A1R:.*]] = nn.relu %[[H1]] {nn.remat}
// LOOSE-NEXT: nn.matmul %{{.*}}, %[[A1R]]
// LOOSE-NOT: {nn.remat}
// LOOSE: nn.relu_grad %{{.*}}, %[[H1]]
// LOOSE-NOT: {nn.remat}
// LOOSE: return

// 54000 bytes: a3 (from h3) and a2 too; h2 was not kept, so a2 needs fc2
// again, from a1, itself recomputed for it. A value that only feeds other
// recomputed ops is not held for later: a1 is recomputed again where the
// fc2 weight gradient reads it.
// TIGHT-LABEL: func.func @train_step
// TIGHT: %[[H1:.*]] = nn.linear %arg0, %arg3 :
// TIGHT: %[[H3:.*]] = nn.linear %{{.*}}, %arg5 :
// TIGHT: nn.loss_grad cross_entropy
// TIGHT: %[[A3R:.*]] = nn.relu %[[H3]] {nn.remat}
// TIGHT-NEXT: nn.matmul %{{.*}}, %[[A3R]]
// TIGHT: %[[A1T:.*]] = nn.relu %[[H1]] {nn.remat}
// TIGHT-NEXT: %[[H2R:.*]] = nn.linear %[[A1T]], %arg4 {nn.remat}
// TIGHT-NEXT: %[[A2R:.*]] = nn.sigmoid %[[H2R]] {nn.remat}
// TIGHT-NEXT: nn.matmul %{{.*}}, %[[A2R]]
// TIGHT-NEXT: nn.sigmoid_grad %{{.*}}, %[[A2R]]
// TIGHT: %[[A1R:.*]] = nn.relu %[[H1]] {nn.remat}
// TIGHT-NEXT: nn.matmul %{{.*}}, %[[A1R]]
// TIGHT-NOT: {nn.remat}
// TIGHT: return

// 53000 bytes: below the 53882 the greedy reaches. The segment schemes are
// tried next, but since a folded transpose keeps its operand alive until
// the matmul reads it (the arena plan is right now, and 1280 bytes larger),
// none of them gets lower on this model: the error names the smallest
// peak. (TODO: a model where a segment scheme beats the greedy, as this
// one did under the old, too optimistic plan.)
// SEGMENTS: error: cannot fit the memory budget of 51.76 KiB per device: the smallest planned peak rematerialization reaches is 52.62 KiB (cpu:0, of which 11.25 KiB training state)

// best-effort (for dpc compile --memory-budget's search) applies the
// recomputation that reached that peak instead: 11.25 KiB of state and a
// 42368-byte arena, which is recomputation's.
// BEST: exec.step "train_step" device(0) batch(64) arena(42368)
// BEST-SAME: remat_flops = {{[1-9][0-9]*}} : i64

// A budget the plan already fits changes nothing.
// NONE-LABEL: func.func @train_step
// NONE-NOT: nn.remat

// The plan holds less and says what recomputation costs: 64x32 relus
// (twice for a1, once for a3), a 64x32x32 linear and a sigmoid; the
// kernels that recompute are marked.
// EXEC0: exec.step "train_step" device(0) batch(64) arena(53120) attributes {activation_bytes = {{[0-9]+}} : i64, gradient_bytes = {{[0-9]+}} : i64, live_at_peak = [{{.*}}], remat_flops = 0 : i64}
// EXEC: exec.step "train_step" device(0) batch(64) arena(42368) attributes {activation_bytes = {{[0-9]+}} : i64, gradient_bytes = {{[0-9]+}} : i64, live_at_peak = [{{.*}}(recomputed){{.*}}], remat_flops = 139264 : i64}
// EXEC: exec.kernel "ReluForward" {{.*}} {remat}
// EXEC: exec.kernel "ReluForward" {{.*}} {remat}
// EXEC: exec.kernel "LinearForward" {{.*}} {remat}
// EXEC: exec.kernel "SigmoidForward" {{.*}} {remat}
// EXEC: exec.kernel "ReluForward" {{.*}} {remat}
func.func @forward(%x: tensor<64x16xf32> {nn.input = "x"},
                   %w1: tensor<32x16xf32> {nn.param = "fc1.weight"},
                   %w2: tensor<32x32xf32> {nn.param = "fc2.weight"},
                   %w3: tensor<32x32xf32> {nn.param = "fc3.weight"},
                   %w4: tensor<10x32xf32> {nn.param = "fc4.weight"})
    -> (tensor<64x10xf32> {nn.output = "logits"}) {
  %h1 = nn.linear %x, %w1 : (tensor<64x16xf32>, tensor<32x16xf32>) -> tensor<64x32xf32>
  %a1 = nn.relu %h1 : tensor<64x32xf32>
  %h2 = nn.linear %a1, %w2 : (tensor<64x32xf32>, tensor<32x32xf32>) -> tensor<64x32xf32>
  %a2 = nn.sigmoid %h2 : tensor<64x32xf32>
  %h3 = nn.linear %a2, %w3 : (tensor<64x32xf32>, tensor<32x32xf32>) -> tensor<64x32xf32>
  %a3 = nn.relu %h3 : tensor<64x32xf32>
  %h4 = nn.linear %a3, %w4 : (tensor<64x32xf32>, tensor<10x32xf32>) -> tensor<64x10xf32>
  return %h4 : tensor<64x10xf32>
}
