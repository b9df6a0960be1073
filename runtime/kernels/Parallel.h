//===- Parallel.h - when the own loops fork threads -------------*- C++ -*-===//
//
// Every OpenMP parallel region forks and joins the team; with
// OMP_WAIT_POLICY=passive (what a shared machine needs) that wakes a
// sleeping thread each time, some microseconds, which is more than a
// small element-wise loop takes on one core. The own loops therefore run
// on the calling thread below a few hundred KiB of traffic, the size of a
// bias, a loss or most of LeNet's and the MLP's activations at batch 256:
// `#pragma omp parallel for if (isWorthThreads(work))`. The loops'
// results never depend on their thread count, so the choice changes only
// speed.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_KERNELS_PARALLEL_H
#define DPC_RUNTIME_KERNELS_PARALLEL_H

#include <cstdint>

namespace dpc::kernels {

/// Element operations below which one thread beats a fork and join: about
/// 10 us of a simple AVX-512 loop over L2-resident data.
inline constexpr int64_t kMinParallelWork = int64_t{1} << 16;

/// Whether a loop of `elements` iterations of about `costPerElement`
/// simple operations each is worth running on the whole team.
inline bool isWorthThreads(int64_t elements, int64_t costPerElement = 1) {
  return elements * costPerElement >= kMinParallelWork;
}

} // namespace dpc::kernels

#endif // DPC_RUNTIME_KERNELS_PARALLEL_H
