//===- PrecisionBench.cpp - f32 against bf16, direct against Winograd -----===//
//
// Times dpc's own CPU kernels (oneDNN 2.6) in f32 and in bf16 at the zoo's
// ResNet-18 and LeNet convolution shapes and a few matmuls, every pass:
// forward, backward-data, backward-weights. The bf16 timings include rounding
// the f32 operands into bf16 (the kernels' reorders), as a plan runs them;
// convolutions run in the plan's layouts, f32 with the faster of direct and
// Winograd. What it prints decides what `dpc compile --precision auto` picks
// (codegen/AssignPrecision.cpp). With `--winograd`, it times the f32 3x3
// stride-1 convolutions with the direct and the Winograd algorithm instead,
// activations in nChw16c as planned layouts give them, and names the oneDNN
// implementation each ran: what `--conv-algorithm auto` picks.
//
//   dpc-bench-precision [--batch N] [--reps R] [--threads T] [--winograd]
//                       [--cpu-time]
//
// One line per shape and pass: milliseconds per call in f32 and bf16 (or
// direct and Winograd; the median of R calls after a warm-up call) and
// their ratio. `--cpu-time` counts the process's CPU time instead of wall
// time: with OMP_NUM_THREADS=1, a kernel's cost on a machine others share.
//
//===----------------------------------------------------------------------===//

#include "runtime/kernels/Conv.h"
#include "runtime/kernels/Linear.h"
#include "tools/bench/BenchUtil.h"

#include <dnnl.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

using namespace dpc::kernels;

namespace {

using dpc::bench::randomVector;

/// Whether timeMs counts the process's CPU time rather than wall time: on
/// a shared machine, with one thread, what a call costs whoever else runs.
bool cpuTime = false;

double timeMs(int reps, const std::function<void()> &fn) {
  return dpc::bench::medianMs(reps, fn, cpuTime);
}

void report(const std::string &name, const char *pass, double flops, double f32,
            double bf16) {
  std::printf("%-34s %-16s %9.3f %9.3f %6.2f  %7.1f %7.1f\n", name.c_str(),
              pass, f32, bf16, f32 / bf16, flops / f32 / 1e6,
              flops / bf16 / 1e6);
  std::fflush(stdout);
}

/// Whether oneDNN has an f32 Winograd kernel for `s` (3x3, stride 1,
/// dense, one group: codegen/AssignPrecision.cpp's winogradApplies).
bool winogradApplies(const Conv2dShape &s) {
  return s.r == 3 && s.s == 3 && s.strideH == 1 && s.strideW == 1 &&
         s.dilationH == 1 && s.dilationW == 1 && s.groups == 1;
}

/// f32 against bf16, every pass, as a plan runs them: activations with 16k
/// channels in nChw16c (codegen/AssignLayouts.cpp), f32 the faster of the
/// direct and the Winograd algorithm where Winograd applies (what
/// `--precision auto` chooses between; 'w' marks Winograd's wins).
void benchConv(KernelContext &ctx, Conv2dShape s, int reps) {
  std::vector<float> x = randomVector(s.n * s.c * s.h * s.w, 1);
  std::vector<float> w = randomVector(s.k * s.c * s.r * s.s, 2);
  std::vector<float> y(s.n * s.k * s.outH() * s.outW());
  std::vector<float> dy = randomVector(y.size(), 3);
  std::vector<float> dx(x.size()), dw(w.size());
  double flops = 2.0 * s.n * s.k * s.outH() * s.outW() * s.c * s.r * s.s;
  std::string name = "conv n" + std::to_string(s.n) + " " +
                     std::to_string(s.c) + "->" + std::to_string(s.k) + " " +
                     std::to_string(s.h) + "x" + std::to_string(s.w) + " k" +
                     std::to_string(s.r) + " s" + std::to_string(s.strideH);
  s.blockedX = s.c % 16 == 0;
  s.blockedY = s.k % 16 == 0;
  // [pass][f32 direct, bf16, f32 Winograd]
  double t[3][3] = {};
  auto time = [&](int variant) {
    t[0][variant] = timeMs(reps, [&] {
      conv2dForward(ctx, s, x.data(), w.data(), nullptr, y.data());
    });
    t[1][variant] = timeMs(reps, [&] {
      conv2dBackwardData(ctx, s, dy.data(), w.data(), dx.data());
    });
    t[2][variant] = timeMs(reps, [&] {
      conv2dBackwardWeights(ctx, s, x.data(), dy.data(), dw.data(), nullptr);
    });
  };
  time(0);
  s.precision = Precision::BF16;
  time(1);
  s.precision = Precision::F32;
  bool winograd = winogradApplies(s);
  if (winograd) {
    s.algorithm = ConvAlgorithm::Winograd;
    time(2);
  }
  const char *passes[] = {"forward", "backward-data", "backward-weights"};
  for (int p = 0; p < 3; ++p) {
    bool wins = winograd && t[p][2] < t[p][0];
    report(name, (passes[p] + std::string(wins ? " w" : "")).c_str(), flops,
           wins ? t[p][2] : t[p][0], t[p][1]);
  }
}

/// Direct against Winograd, f32, every pass, with the implementation
/// oneDNN chose for each (a Winograd call it has no kernel for runs direct).
void benchConvAlgorithm(KernelContext &ctx, Conv2dShape s, int reps) {
  std::vector<float> x = randomVector(s.n * s.c * s.h * s.w, 1);
  std::vector<float> w = randomVector(s.k * s.c * s.r * s.s, 2);
  std::vector<float> y(s.n * s.k * s.outH() * s.outW());
  std::vector<float> dy = randomVector(y.size(), 3);
  std::vector<float> dx(x.size()), dw(w.size());
  double flops = 2.0 * s.n * s.k * s.outH() * s.outW() * s.c * s.r * s.s;
  std::string name = "conv n" + std::to_string(s.n) + " " +
                     std::to_string(s.c) + "->" + std::to_string(s.k) + " " +
                     std::to_string(s.h) + "x" + std::to_string(s.w) + " k" +
                     std::to_string(s.r) + " s" + std::to_string(s.strideH);
  s.blockedX = s.blockedY = true;
  double t[3][2];
  std::string impl[3];
  for (ConvAlgorithm a : {ConvAlgorithm::Direct, ConvAlgorithm::Winograd}) {
    s.algorithm = a;
    int i = a == ConvAlgorithm::Winograd;
    t[0][i] = timeMs(reps, [&] {
      conv2dForward(ctx, s, x.data(), w.data(), nullptr, y.data());
    });
    t[1][i] = timeMs(reps, [&] {
      conv2dBackwardData(ctx, s, dy.data(), w.data(), dx.data());
    });
    t[2][i] = timeMs(reps, [&] {
      conv2dBackwardWeights(ctx, s, x.data(), dy.data(), dw.data(), nullptr);
    });
    if (i)
      for (ConvPass pass : {ConvPass::Forward, ConvPass::BackwardData,
                            ConvPass::BackwardWeights})
        impl[static_cast<int>(pass)] = conv2dImplementation(ctx, s, pass);
  }
  const char *passes[] = {"forward", "backward-data", "backward-weights"};
  for (int p = 0; p < 3; ++p) {
    report(name, passes[p], flops, t[p][0], t[p][1]);
    std::printf("%-34s %-16s winograd runs %s\n", "", "", impl[p].c_str());
  }
}

void benchLinear(KernelContext &ctx, LinearShape s, int reps) {
  std::vector<float> x = randomVector(s.n * s.in, 1);
  std::vector<float> w = randomVector(s.out * s.in, 2);
  std::vector<float> y(s.n * s.out), dy = randomVector(s.n * s.out, 3);
  std::vector<float> dx(x.size()), dw(w.size());
  double flops = 2.0 * s.n * s.in * s.out;
  std::string name = "linear n" + std::to_string(s.n) + " " +
                     std::to_string(s.in) + "->" + std::to_string(s.out);
  double t[3][2];
  for (Precision p : {Precision::F32, Precision::BF16}) {
    s.precision = p;
    int i = p == Precision::BF16;
    t[0][i] = timeMs(reps, [&] {
      linearForward(ctx, s, x.data(), w.data(), nullptr, y.data());
    });
    t[1][i] = timeMs(reps, [&] {
      linearBackwardData(ctx, s, dy.data(), w.data(), dx.data());
    });
    t[2][i] = timeMs(reps, [&] {
      linearBackwardWeights(ctx, s, x.data(), dy.data(), dw.data(), nullptr);
    });
  }
  report(name, "forward", flops, t[0][0], t[0][1]);
  report(name, "backward-data", flops, t[1][0], t[1][1]);
  report(name, "backward-weights", flops, t[2][0], t[2][1]);
}

void benchMatmul(KernelContext &ctx, MatmulShape s, int reps) {
  std::vector<float> a = randomVector(s.n * s.k, 1);
  std::vector<float> b = randomVector(s.k * s.m, 2);
  std::vector<float> c(s.n * s.m), dc = randomVector(s.n * s.m, 3);
  std::vector<float> da(a.size()), db(b.size());
  double flops = 2.0 * s.n * s.k * s.m;
  std::string name = "matmul " + std::to_string(s.n) + "x" +
                     std::to_string(s.k) + "x" + std::to_string(s.m);
  double t[3][2];
  for (Precision p : {Precision::F32, Precision::BF16}) {
    s.precision = p;
    int i = p == Precision::BF16;
    t[0][i] = timeMs(
        reps, [&] { matmulForward(ctx, s, a.data(), b.data(), c.data()); });
    t[1][i] = timeMs(reps, [&] {
      matmulBackward(ctx, s, a.data(), b.data(), dc.data(), da.data(), nullptr);
    });
    t[2][i] = timeMs(reps, [&] {
      matmulBackward(ctx, s, a.data(), b.data(), dc.data(), nullptr, db.data());
    });
  }
  report(name, "forward", flops, t[0][0], t[0][1]);
  report(name, "backward-data", flops, t[1][0], t[1][1]);
  report(name, "backward-weights", flops, t[2][0], t[2][1]);
}

} // namespace

int main(int argc, char **argv) {
  int64_t batch = 256;
  int reps = 5;
  int threads = 0;
  bool winograd = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--winograd") ||
        !std::strcmp(argv[i], "--cpu-time")) {
      (argv[i][2] == 'w' ? winograd : cpuTime) = true;
      continue;
    }
    if (i + 1 == argc) {
      std::fprintf(stderr, "dpc-bench-precision: '%s' needs a value\n",
                   argv[i]);
      return 1;
    }
    if (!std::strcmp(argv[i], "--batch"))
      batch = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--reps"))
      reps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--threads"))
      threads = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "dpc-bench-precision: unknown option '%s'\n",
                   argv[i]);
      return 1;
    }
  }
  if (batch < 1 || reps < 1) {
    std::fprintf(stderr, "dpc-bench-precision: --batch and --reps must be "
                         "positive\n");
    return 1;
  }
  KernelContext ctx;
  if (threads > 0)
    ctx.setReductionThreads(threads);
  if (winograd) {
    std::printf("%-34s %-16s %9s %9s %6s  %7s %7s\n", "shape", "pass",
                "direct ms", "wino ms", "ratio", "dir GF", "wino GF");
    // ResNet-18's 3x3 stride-1 convolutions (28x28 input), and a few
    // with fewer channels, where the transforms cost more than they save.
    for (auto [c, k, hw] : {std::tuple<int64_t, int64_t, int64_t>{64, 64, 28},
                            {128, 128, 14},
                            {256, 256, 7},
                            {512, 512, 4},
                            {16, 16, 28},
                            {32, 32, 28},
                            {32, 64, 14},
                            {64, 128, 14}}) {
      Conv2dShape s{batch, c, hw, hw, k, 3, 3};
      s.padTop = s.padLeft = s.padBottom = s.padRight = 1;
      benchConvAlgorithm(ctx, s, reps);
    }
    return 0;
  }
  std::printf("%-34s %-16s %9s %9s %6s  %7s %7s\n", "shape", "pass", "f32 ms",
              "bf16 ms", "ratio", "f32 GF", "bf16 GF");
  // The d2l ResNet-18 of the zoo and peers.py on 28x28 Fashion-MNIST: the
  // stem, then per stage its 3x3 convolution, and the strided first one
  // with its 1x1 shortcut; LeNet's two convolutions.
  auto conv = [&](int64_t c, int64_t k, int64_t hw, int64_t r, int64_t stride,
                  int64_t pad) {
    Conv2dShape s{batch, c, hw, hw, k, r, r};
    s.strideH = s.strideW = stride;
    s.padTop = s.padLeft = s.padBottom = s.padRight = pad;
    benchConv(ctx, s, reps);
  };
  conv(1, 64, 28, 3, 1, 1);
  conv(64, 64, 28, 3, 1, 1);
  conv(64, 128, 28, 3, 2, 1);
  conv(64, 128, 28, 1, 2, 0);
  conv(128, 128, 14, 3, 1, 1);
  conv(128, 256, 14, 3, 2, 1);
  conv(256, 256, 7, 3, 1, 1);
  conv(256, 512, 7, 3, 2, 1);
  conv(512, 512, 4, 3, 1, 1);
  conv(1, 6, 28, 5, 1, 2);
  conv(6, 16, 14, 5, 1, 0);
  // ResNet-18's classifier, the MLP's layers, LeNet's widest, and a
  // transformer-sized matmul.
  benchLinear(ctx, {batch, 512, 10}, reps);
  benchLinear(ctx, {batch, 784, 256}, reps);
  benchLinear(ctx, {batch, 400, 120}, reps);
  benchMatmul(ctx, {batch * 4, 768, 768}, reps);
  return 0;
}
