//===- PeakBench.cpp - the CPU's f32 FMA and bf16 dot-product peaks -------===//
//
// Measures what the convolution kernels are bounded by: the rate at which
// this CPU retires 512-bit f32 fused multiply-adds (vfmadd231ps, 32 FLOPs
// each) and bf16 dot products (vdpbf16ps, 64 FLOPs each: 16 lanes of two
// products summed into f32), on 1 thread and on every thread OpenMP has.
// Each thread runs a loop of 24 independent accumulators (more than the
// instructions' latency times their throughput: with 12, vdpbf16ps ran 8%
// short of its rate here), so the loop is bound by the execution units
// alone: a datasheet's peak at the clock the machine actually runs. A
// direct convolution's nominal FLOPs on a small padded image may exceed
// it: oneDNN skips the taps that fall on padding (31% of a 3x3 on 4x4).
//
//   dpc-bench-peak [--seconds S]
//
// Prints GFLOP/s per kind and thread count; kernels' GFLOP/s in
// tools/bench/layer_roofline.py are compared against these.
//
//===----------------------------------------------------------------------===//

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace {

constexpr long kInnerIterations = 1 << 16;
constexpr int kAccumulators = 24;

/// The sum of every lane of the kAccumulators vectors at `acc` (lanes by a
/// store, not _mm512_reduce_add_ps: GCC 12 warns on its use of an undefined
/// register): a value that depends on every accumulator of a loop.
__attribute__((target("avx512f"))) float sumAccumulators(const __m512 *acc) {
  __m512 v = acc[0];
  for (int i = 1; i < kAccumulators; ++i)
    v = _mm512_add_ps(v, acc[i]);
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, v);
  float sum = 0;
  for (float lane : lanes)
    sum += lane;
  return sum;
}

/// `iterations` x kInnerIterations x kAccumulators FMAs; returns a value
/// that depends on every accumulator so that none is optimized away.
__attribute__((target("avx512f"))) float fmaLoop(long iterations) {
  __m512 acc[kAccumulators];
  for (int i = 0; i < kAccumulators; ++i)
    acc[i] = _mm512_set1_ps(1.f + i * 1e-3f);
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (long it = 0; it < iterations * kInnerIterations; ++it) {
    // Unrolled so that the accumulators stay in registers.
#pragma GCC unroll 24
    for (int i = 0; i < kAccumulators; ++i)
      acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  }
  return sumAccumulators(acc);
}

__attribute__((target("avx512f,avx512bf16"))) float
dpbf16Loop(long iterations) {
  __m512 acc[kAccumulators];
  for (int i = 0; i < kAccumulators; ++i)
    acc[i] = _mm512_set1_ps(i * 1e-3f);
  const __m512bh a = (__m512bh)_mm512_set1_epi16(0x3f80); // 1.0
  const __m512bh b = (__m512bh)_mm512_set1_epi16(0x3380); // ~6e-8
  for (long it = 0; it < iterations * kInnerIterations; ++it) {
#pragma GCC unroll 24
    for (int i = 0; i < kAccumulators; ++i)
      acc[i] = _mm512_dpbf16_ps(acc[i], a, b);
  }
  return sumAccumulators(acc);
}

double threadCpuSeconds() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

/// GFLOP/s of `loop` (`flopsPerInstruction` each) on `threads` threads,
/// each running it for about `seconds`. Each thread counts its own CPU
/// time, so that on a machine others share the rate is that of the core
/// while this thread held it.
double measure(float (*loop)(long), double flopsPerInstruction, int threads,
               double seconds) {
  // Size the run from a short calibration on one thread.
  double start = threadCpuSeconds();
  volatile float sink = loop(16);
  double calibration = threadCpuSeconds() - start;
  long iterations = std::max(1L, static_cast<long>(16 * seconds / calibration));
  double instructions =
      static_cast<double>(iterations) * kInnerIterations * kAccumulators;
  double gflops = 0;
#pragma omp parallel num_threads(threads) reduction(+ : gflops)
  {
    double begin = threadCpuSeconds();
    sink = sink + loop(iterations);
    gflops = instructions * flopsPerInstruction / (threadCpuSeconds() - begin) *
             1e-9;
  }
  return gflops;
}

} // namespace

int main(int argc, char **argv) {
  double seconds = 1;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--seconds") && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: dpc-bench-peak [--seconds S]\n");
      return 2;
    }
  }
  if (!__builtin_cpu_supports("avx512f")) {
    std::fprintf(stderr, "dpc-bench-peak: this CPU has no AVX-512\n");
    return 1;
  }
  bool bf16 = __builtin_cpu_supports("avx512bf16");
  int maxThreads = omp_get_max_threads();
  std::printf("%-28s %8s %12s\n", "kind", "threads", "GFLOP/s");
  for (int threads : {1, maxThreads}) {
    std::printf("%-28s %8d %12.1f\n", "f32 FMA (vfmadd231ps zmm)", threads,
                measure(fmaLoop, 32, threads, seconds));
    if (bf16)
      std::printf("%-28s %8d %12.1f\n", "bf16 dot (vdpbf16ps zmm)", threads,
                  measure(dpbf16Loop, 64, threads, seconds));
    if (maxThreads == 1)
      break;
  }
  if (!bf16)
    std::printf("(no avx512_bf16: bf16 dot products not measured)\n");
  return 0;
}
