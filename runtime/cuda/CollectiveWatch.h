//===- CollectiveWatch.h - deadlines of a step's collectives ----*- C++ -*-===//
//
// In rank mode a collective that another rank never joins waits on the GPU
// for ever: NCCL cannot tell a late rank from a stopped or gone one. So the
// rank's NcclCommunicator (nonblocking, NcclCommunicator.h) tells the watch
// about every collective it enqueues on a step's stream; the watch records
// an event after it, due --timeout from then. A CUDA stream of that device
// then waits by polling (CudaStream::synchronize) and asks the watch each
// time: the first collective past its deadline, or an error NCCL reports,
// aborts the communicator (its kernels stop, so no stream waits on them)
// and throws comm::CommError naming the collective -- as PyTorch's NCCL
// watchdog does.
//
// The device and the communicator share the watch; the communicator
// detaches it before it goes, so the watch never calls into a communicator
// that is gone, whichever of the two the executor destroys first.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_CUDA_COLLECTIVEWATCH_H
#define DPC_RUNTIME_CUDA_COLLECTIVEWATCH_H

#include "runtime/cuda/CudaCheck.h"

#include <chrono>
#include <deque>
#include <functional>
#include <mutex>
#include <string>

namespace dpc::cuda {

class CollectiveWatch {
public:
  using Clock = std::chrono::steady_clock;
  /// What the watch asks of its communicator: `checkErrors` throws when
  /// NCCL reports an asynchronous error; `failTimedOut(collective)` aborts
  /// the communicator and throws. Both throw comm::CommError.
  struct Owner {
    std::function<void()> checkErrors;
    std::function<void(const std::string &collective)> failTimedOut;
  };

  /// For the collectives enqueued on GPU `ordinal`'s streams.
  CollectiveWatch(int ordinal, std::chrono::milliseconds timeout)
      : ordinal(ordinal), timeout(timeout) {}
  ~CollectiveWatch();
  CollectiveWatch(const CollectiveWatch &) = delete;
  CollectiveWatch &operator=(const CollectiveWatch &) = delete;

  void attach(Owner newOwner);
  /// From now on check() looks at nothing.
  void detach();
  /// Collective `collective` ("all-reduce #3 (nccl, ...)") was just
  /// enqueued on `stream`: it is due within the timeout.
  void add(const std::string &collective, cudaStream_t stream);
  /// Forgets the collectives that completed; throws comm::CommError (after
  /// aborting the communicator) when one is past its deadline or NCCL
  /// reports an error.
  void check();

private:
  struct Pending {
    std::string collective;
    cudaEvent_t done;
    Clock::time_point deadline;
  };
  void forgetAll();

  int ordinal;
  std::chrono::milliseconds timeout;
  std::mutex mutex;
  Owner owner;
  bool attached = false;
  std::deque<Pending> pending;
};

} // namespace dpc::cuda

#endif // DPC_RUNTIME_CUDA_COLLECTIVEWATCH_H
