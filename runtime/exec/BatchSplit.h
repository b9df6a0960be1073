//===- BatchSplit.h - a run-time batch over the replicas --------*- C++ -*-===//
//
// Each replica of a step was compiled for its share of the global batch
// (Plan.split). A run-time batch B (at most the sum of the shares) is split
// into contiguous row ranges, replica 0 first:
//
//  - equal shares: torch.chunk's rule, ceil(B / N) rows each until the rows
//    run out (30 over 4 -> 8, 8, 8, 6; 10 over 4 -> 3, 3, 3, 1; 5 over 4
//    -> 2, 2, 1, 0);
//  - unequal shares: B in proportion to the shares, floors first, the rows
//    left over to the largest remainders (ties to the lower replica). No
//    replica gets more than its share.
//
// A replica may get 0 rows; it still runs (see KernelCall.h).
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_EXEC_BATCHSPLIT_H
#define DPC_RUNTIME_EXEC_BATCHSPLIT_H

#include <cstdint>
#include <vector>

namespace dpc::rt {

/// The rows of each replica; `batch` must be in 0..sum(shares).
std::vector<int64_t> splitBatch(const std::vector<int64_t> &shares,
                                int64_t batch);

} // namespace dpc::rt

#endif // DPC_RUNTIME_EXEC_BATCHSPLIT_H
