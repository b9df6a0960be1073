//===- Parallel.h - when the own loops fork threads -------------*- C++ -*-===//
//
// Every OpenMP parallel region forks and joins the team; with
// OMP_WAIT_POLICY=passive (what a shared machine needs) that wakes a
// sleeping thread each time, about 4 us here, while a ReLU over 64K floats
// takes 4 us on one core and two cores are no faster on a memory-bound
// loop until about a million elements (measured: 1.2M-element ReLU 100 us
// on one thread, 103 us on two). The own loops therefore run on the
// calling thread below kMinParallelWork: the size of a bias, a loss and all
// of LeNet's and the MLP's activations at batch 256. Their results never
// depend on the thread count, so the choice changes only speed.
//
// forRange rather than `omp parallel for simd if (...)`: GCC leaves the
// serial copy of such a loop unvectorised (5x slower).
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_KERNELS_PARALLEL_H
#define DPC_RUNTIME_KERNELS_PARALLEL_H

#include <algorithm>
#include <cstdint>
#include <omp.h>

namespace dpc::kernels {

/// Element operations below which one thread beats a fork and join.
inline constexpr int64_t kMinParallelWork = int64_t{1} << 20;

/// Whether a loop of `elements` iterations of about `costPerElement`
/// simple operations each is worth running on the whole team.
inline bool isWorthThreads(int64_t elements, int64_t costPerElement = 1) {
  return elements * costPerElement >= kMinParallelWork;
}

/// Runs body(begin, end) over [0, size): on the calling thread when the
/// loop is small, else in one contiguous share per thread of the team.
template <typename Fn>
void forRange(int64_t size, int64_t costPerElement, Fn &&body) {
  if (!isWorthThreads(size, costPerElement)) {
    body(int64_t{0}, size);
    return;
  }
#pragma omp parallel
  {
    int64_t threads = omp_get_num_threads(), thread = omp_get_thread_num();
    int64_t share = (size + threads - 1) / threads;
    int64_t begin = std::min(size, thread * share);
    int64_t end = std::min(size, begin + share);
    if (begin < end)
      body(begin, end);
  }
}

} // namespace dpc::kernels

#endif // DPC_RUNTIME_KERNELS_PARALLEL_H
