//===- MemoryBoundBench.cpp - batch norm and element-wise against memory --===//
//
// The kernels between ResNet-18's convolutions only stream memory: a
// training step spends a fifth of its time in them. This times each at the
// zoo ResNet-18's activation shapes (nChw16c, as planned) and prints its
// bytes moved per second next to the machine's: a copy (read one, write
// one) and an add (read two, write one) over the same sizes, so that a
// kernel's distance from the memory bound is its ratio to those.
//
//   dpc-bench-memory [--batch N] [--reps R]
//
// One line per kernel and shape: milliseconds per call (the median of R
// calls after a warm-up call), GB/s of the bytes it must move (each pass
// reads its inputs once and writes its outputs once: a batch norm makes a
// statistics pass and an apply pass), and that as a share of the copy's
// GB/s.
//
//===----------------------------------------------------------------------===//

#include "runtime/kernels/BatchNorm.h"
#include "runtime/kernels/Elementwise.h"
#include "runtime/kernels/Parallel.h"
#include "tools/bench/BenchUtil.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

using namespace dpc::kernels;

namespace {

using dpc::bench::randomVector;

double timeMs(int reps, const std::function<void()> &fn) {
  return dpc::bench::medianMs(reps, fn);
}

void benchShape(int64_t n, int64_t c, int64_t hw, int reps) {
  int64_t size = n * c * hw * hw;
  double bytes = 4.0 * size;
  std::vector<float> x = randomVector(size, 1), dy = randomVector(size, 2);
  std::vector<float> other = randomVector(size, 3), y(size), dx(size);
  std::vector<float> scale(c, 1.f), shift(c, 0.f), mean(c), invStd(c),
      runMean(c, 0.f), runVar(c, 1.f), dScale(c), dShift(c);
  std::vector<double> sum(c), sumSq(c);
  double count = 0;
  BatchNormShape s{n, c, hw, hw, c % 16 == 0 ? 16 : 1};
  BatchNormParams params;
  char shape[64];
  std::snprintf(shape, sizeof shape, "%ldx%ldx%ldx%ld", long(n), long(c),
                long(hw), long(hw));
  double copyMs = timeMs(reps, [&] {
    forRange(size, 1, [&](int64_t b, int64_t e) {
      std::memcpy(y.data() + b, x.data() + b, (e - b) * sizeof(float));
    });
  });
  double copyRate = 2 * bytes / copyMs / 1e6;
  auto report = [&](const char *name, double ms, double moved) {
    double rate = moved * bytes / ms / 1e6;
    std::printf("%-16s %-28s %8.3f ms %7.1f GB/s %5.0f%%\n", shape, name, ms,
                rate, 100 * rate / copyRate);
    std::fflush(stdout);
  };
  report("copy", copyMs, 2);
  BroadcastShape same = makeBroadcastShape({n, c, hw, hw}, {n, c, hw, hw});
  report(
      "add",
      timeMs(reps, [&] { addForward(same, x.data(), other.data(), y.data()); }),
      3);
  report("relu", timeMs(reps, [&] { reluForward(size, x.data(), y.data()); }),
         2);
  report(
      "relu-backward",
      timeMs(reps, [&] { reluBackward(size, x.data(), dy.data(), dx.data()); }),
      3);
  report("bn-statistics",
         timeMs(reps,
                [&] {
                  batchNormStatistics(s, x.data(), sum.data(), sumSq.data(),
                                      &count);
                }),
         1);
  report("bn-apply",
         timeMs(reps,
                [&] {
                  batchNormApply(s, params, x.data(), scale.data(),
                                 shift.data(), runMean.data(), runVar.data(),
                                 sum.data(), sumSq.data(), &count, y.data(),
                                 mean.data(), invStd.data(), /*relu=*/false);
                }),
         2);
  report("bn-forward",
         timeMs(reps,
                [&] {
                  batchNormTrainingForward(s, params, x.data(), scale.data(),
                                           shift.data(), y.data(), mean.data(),
                                           invStd.data(), runMean.data(),
                                           runVar.data(), /*relu=*/true);
                }),
         3);
  report("bn-grad-statistics",
         timeMs(reps,
                [&] {
                  batchNormGradStatistics(s, x.data(), dy.data(), mean.data(),
                                          invStd.data(), dShift.data(),
                                          dScale.data(), nullptr);
                }),
         2);
  double n64 = static_cast<double>(n * hw * hw);
  report("bn-grad-apply",
         timeMs(reps,
                [&] {
                  batchNormGradApply(s, x.data(), dy.data(), scale.data(),
                                     mean.data(), invStd.data(), dShift.data(),
                                     dScale.data(), &n64, dx.data(), nullptr);
                }),
         3);
  report("bn-backward",
         timeMs(reps,
                [&] {
                  batchNormBackward(s, x.data(), dy.data(), scale.data(),
                                    mean.data(), invStd.data(), dx.data(),
                                    dScale.data(), dShift.data(),
                                    /*reluY=*/y.data());
                }),
         7);
}

} // namespace

int main(int argc, char **argv) {
  int64_t batch = 256;
  int reps = 5;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--batch") && i + 1 < argc)
      batch = std::atoll(argv[++i]);
    else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: dpc-bench-memory [--batch N] [--reps R]\n");
      return 2;
    }
  }
  // The zoo ResNet-18's four stages on 28x28 Fashion-MNIST images.
  const int64_t stages[][2] = {{64, 28}, {128, 14}, {256, 7}, {512, 4}};
  for (const auto &stage : stages)
    benchShape(batch, stage[0], stage[1], reps);
  return 0;
}
