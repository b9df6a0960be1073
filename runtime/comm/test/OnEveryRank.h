//===- OnEveryRank.h - one thread per rank, for the tests -------*- C++ -*-===//

#ifndef DPC_RUNTIME_COMM_TEST_ONEVERYRANK_H
#define DPC_RUNTIME_COMM_TEST_ONEVERYRANK_H

#include <functional>
#include <thread>
#include <vector>

namespace dpc::comm::test {

/// Runs `body(rank)` on one thread per rank and joins them.
inline void onEveryRank(int ranks, const std::function<void(int)> &body) {
  std::vector<std::thread> threads;
  for (int rank = 0; rank < ranks; ++rank)
    threads.emplace_back(body, rank);
  for (std::thread &thread : threads)
    thread.join();
}

} // namespace dpc::comm::test

#endif // DPC_RUNTIME_COMM_TEST_ONEVERYRANK_H
