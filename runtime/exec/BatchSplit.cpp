//===- BatchSplit.cpp - a run-time batch over the replicas ----------------===//

#include "runtime/exec/BatchSplit.h"

#include <algorithm>
#include <numeric>
#include <stdexcept>
#include <string>

namespace dpc::rt {

std::vector<int64_t> splitBatch(const std::vector<int64_t> &shares,
                                int64_t batch) {
  int64_t total = std::accumulate(shares.begin(), shares.end(), int64_t(0));
  if (batch < 0 || batch > total)
    throw std::invalid_argument("batch " + std::to_string(batch) +
                                " is outside 0.." + std::to_string(total));
  size_t n = shares.size();
  std::vector<int64_t> rows(n, 0);
  if (n == 0 || total == 0)
    return rows;
  bool equal = std::all_of(shares.begin(), shares.end(),
                           [&](int64_t s) { return s == shares[0]; });
  if (equal) {
    int64_t chunk = (batch + int64_t(n) - 1) / int64_t(n);
    for (size_t d = 0; d < n; ++d)
      rows[d] = std::clamp(batch - int64_t(d) * chunk, int64_t(0), chunk);
    return rows;
  }
  // Largest remainders of batch * share / total. A replica with a non-zero
  // remainder has floor < its exact quota <= its share, so +1 stays within.
  std::vector<int64_t> remainder(n);
  int64_t given = 0;
  for (size_t d = 0; d < n; ++d) {
    rows[d] = batch * shares[d] / total;
    remainder[d] = batch * shares[d] % total;
    given += rows[d];
  }
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return remainder[a] > remainder[b];
  });
  for (size_t k = 0; given < batch; ++k, ++given)
    ++rows[order[k]];
  return rows;
}

} // namespace dpc::rt
