//===- BenchUtil.h - inputs and timing shared by the kernel benchmarks ----===//
//
// The kernel benchmarks (PrecisionBench.cpp, MemoryBoundBench.cpp) fill
// their operands the same way and report the median of repeated calls, by
// wall time or -- on a shared machine, with one thread -- by the process's
// CPU time.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_TOOLS_BENCH_BENCHUTIL_H
#define DPC_TOOLS_BENCH_BENCHUTIL_H

#include <algorithm>
#include <chrono>
#include <ctime>
#include <functional>
#include <random>
#include <vector>

namespace dpc::bench {

/// `n` values uniform in [-1, 1) from `seed`.
inline std::vector<float> randomVector(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(rng);
  return v;
}

/// Milliseconds now: wall time, or the process's CPU time (what a call
/// costs whoever else runs).
inline double nowMs(bool cpuTime) {
  if (!cpuTime)
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

/// Median milliseconds per call of `fn` over `reps` calls, after one
/// warm-up call (which creates primitives and touches the pages).
inline double medianMs(int reps, const std::function<void()> &fn,
                       bool cpuTime = false) {
  fn();
  std::vector<double> times;
  for (int i = 0; i < reps; ++i) {
    double start = nowMs(cpuTime);
    fn();
    times.push_back(nowMs(cpuTime) - start);
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2,
                   times.end());
  return times[times.size() / 2];
}

} // namespace dpc::bench

#endif // DPC_TOOLS_BENCH_BENCHUTIL_H
