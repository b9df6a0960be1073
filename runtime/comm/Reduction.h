//===- Reduction.h - how collectives combine values -------------*- C++ -*-===//
//
// One definition for every communicator that reduces on the host (the
// in-process one, and Gloo/MPI's peer exchange), so that they give the same
// bits: ranks are combined in rank order 0..N-1.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_COMM_REDUCTION_H
#define DPC_RUNTIME_COMM_REDUCTION_H

#include "runtime/comm/Communicator.h"

#include <cstdint>

namespace dpc::comm {

/// a > b, where NaN wins, as in torch.max, and the rule is the same on every
/// rank.
template <typename T> bool isGreater(T a, T b) {
  return a > b || (a != a && b == b);
}

/// acc = reduce(acc, x) over n elements (Mean sums; the caller divides).
template <typename T> void combine(T *acc, const T *x, int64_t n, ReduceOp op) {
  if (op == ReduceOp::Max) {
    for (int64_t i = 0; i < n; ++i)
      acc[i] = isGreater(x[i], acc[i]) ? x[i] : acc[i];
  } else {
    for (int64_t i = 0; i < n; ++i)
      acc[i] += x[i];
  }
}

} // namespace dpc::comm

#endif // DPC_RUNTIME_COMM_REDUCTION_H
