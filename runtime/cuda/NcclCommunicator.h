//===- NcclCommunicator.h - collectives across GPUs (NCCL) ------*- C++ -*-===//
//
// One process drives every local GPU of the plan: ncclCommInitAll makes one
// NCCL communicator per device (rank = the device's index in the plan).
// Or one process per GPU (rank mode: `dpc launch`, torchrun, mpirun):
// createForRank makes this process's communicator, rank 0's ncclUniqueId
// reaching the others through the host communicator (Gloo or MPI).
//
// How an all-reduce reaches the communication stream. The Communicator
// interface is synchronous: on the CPU a collective runs on its stream's
// worker thread and returns with the result in place. On CUDA the executor
// enqueues a step from one host thread; each CUDA device hands its stream
// operations to its own dispatch thread (CudaDevice.h), which issues them in
// the executor's order. An AllReduce instruction becomes, on that thread,
// enqueueAllReduce(buffers, op, communicationStream): the bucket's buffers
// in one ncclGroupStart/ncclGroupEnd (one fused collective), enqueued on the
// stream after the cudaStreamWaitEvent on the compute stream's event for
// that bucket, which the plan puts before it. The call returns once the
// collective is enqueued; the GPU runs it when the bucket's gradients are
// ready, while the compute stream goes on with the backward pass, and the
// optimizer update of the bucket waits for its event. Since every rank has
// its own dispatch thread, the ranks' calls meet without the one-thread
// group rule (NCCL: one thread per communicator is allowed), and calls
// match by order, as the interface requires.
//
// allReduce() and broadcast() (the interface) are for host callers: they
// enqueue on the communicator's own stream and wait for it.
//
// NCCL cannot tell ranks that disagree (other counts or dtypes) apart from
// ranks that have not arrived yet: either way the GPU waits. In one process
// dpc's plans issue the same collectives on every device, and the group
// waits as CUDA does. Across processes a rank may be late, stopped or gone,
// so a rank's communicator is nonblocking (NCCL's config.blocking = 0):
// every NCCL call returns at once, possibly with ncclInProgress, meaning
// that NCCL goes on in the background until ncclCommGetAsyncError says
// ncclSuccess (or an error); no other call may touch the communicator
// before that. So each call here is followed by that poll -- also on the
// dispatch thread, since the stream must hold the collective before the
// event records that follow it -- and the waits for NCCL (init, the host
// callers' stream) give up after the run's --timeout: the communicator is
// then aborted (ncclCommAbort, which also stops its kernels) and the call
// throws comm::CommError naming the operation; any later call throws too.
// The collectives a step enqueues are waited for by the device's streams:
// a CollectiveWatch gives each a deadline of --timeout from its enqueue,
// which the streams' waits check (CollectiveWatch.h).
//
// Results are the same on every rank (NCCL reduces each element once and
// broadcasts it); Mean is a sum divided by the world size, as on the CPU.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_CUDA_NCCLCOMMUNICATOR_H
#define DPC_RUNTIME_CUDA_NCCLCOMMUNICATOR_H

#include "runtime/comm/Communicator.h"
#include "runtime/cuda/CollectiveWatch.h"
#include "runtime/cuda/CudaCheck.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dpc::cuda {

class NcclCommunicator : public comm::Communicator {
public:
  /// One communicator per CUDA device ordinal in `ordinals` (all distinct).
  static std::vector<std::unique_ptr<comm::Communicator>>
  createGroup(const std::vector<int> &ordinals);
  /// Rank mode: this process's rank of `host`'s group, on GPU `ordinal`:
  /// a nonblocking communicator whose waits give up after `timeout` (see
  /// above). A collective of `host` (every rank must call it). Throws
  /// comm::CommError, or CudaError before NCCL is reached.
  static std::unique_ptr<NcclCommunicator>
  createForRank(comm::Communicator &host, int ordinal,
                std::chrono::milliseconds timeout);
  ~NcclCommunicator() override;

  int getRank() const override { return rank; }
  int getWorldSize() const override { return worldSize; }
  int getOrdinal() const { return ordinal; }

  /// Enqueues one all-reduce of every buffer (device memory of this rank's
  /// GPU) on `stream` and returns; see above. Throws CommError for a dtype
  /// NCCL is not asked to reduce here.
  void enqueueAllReduce(const std::vector<comm::ReduceBuffer> &buffers,
                        comm::ReduceOp op, cudaStream_t stream);
  /// Rank mode: tells `watch` (shared with this rank's CUDA device) about
  /// every collective enqueueAllReduce enqueues, so that the device's
  /// streams stop waiting for one past the timeout (CollectiveWatch.h).
  void watchCollectives(std::shared_ptr<CollectiveWatch> watch);
  /// Synchronous: enqueues on an own stream and waits.
  void allReduce(const std::vector<comm::ReduceBuffer> &buffers,
                 comm::ReduceOp op) override;
  using comm::Communicator::allReduce;
  /// Synchronous, like allReduce: rank `root`'s bytes to every rank, in
  /// place (any dtype: NCCL copies them as bytes).
  void broadcast(const std::vector<comm::ReduceBuffer> &buffers,
                 int root) override;
  /// Sharded collectives (device memory), enqueued on `stream` like
  /// enqueueAllReduce: an even split is one ncclReduceScatter/ncclAllGather
  /// per buffer, an uneven one a group of ncclReduce/ncclBroadcast, one per
  /// rank's part. NCCL fixes no reduction order, so a reduce-scatter may
  /// differ from the all-reduce in the last bits.
  void enqueueReduceScatter(const std::vector<comm::ShardedBuffer> &buffers,
                            comm::ReduceOp op, cudaStream_t stream);
  void enqueueAllGather(const std::vector<comm::ShardedBuffer> &buffers,
                        cudaStream_t stream);
  /// Synchronous versions of the two, on an own stream.
  void reduceScatter(const std::vector<comm::ShardedBuffer> &buffers,
                     comm::ReduceOp op) override;
  void allGather(const std::vector<comm::ShardedBuffer> &buffers) override;

private:
  using Clock = std::chrono::steady_clock;

  NcclCommunicator(ncclComm_t comm, int rank, int worldSize, int ordinal)
      : comm(comm), rank(rank), worldSize(worldSize), ordinal(ordinal) {}

  bool isNonblocking() const { return timeout.count() > 0; }
  /// "all-reduce #3 (nccl, rank 0 of 2)": for messages.
  std::string describe(const std::string &operation) const;
  /// Starts collective `operation`: throws if the communicator was aborted;
  /// returns its deadline (none when blocking).
  Clock::time_point begin(const std::string &operation);
  /// Runs `body` (NCCL calls of `operation`); in rank mode, a CUDA or NCCL
  /// failure aborts the communicator and throws CommError instead.
  template <typename Body>
  void guard(const std::string &operation, const Body &body);
  /// The NCCL calls `body` makes, as one group, issued to their streams by
  /// the time it returns (a nonblocking ncclGroupEnd may still be issuing).
  template <typename Body>
  void issueGroup(const std::string &operation, Clock::time_point deadline,
                  const Body &body);
  /// Polls ncclCommGetAsyncError until NCCL is done with the last call.
  void waitForNccl(const std::string &operation, Clock::time_point deadline);
  /// Aborts the communicator and throws CommError: `operation`: `why`.
  [[noreturn]] void fail(const std::string &operation, const std::string &why);
  /// Aborts the communicator (once) and throws CommError(`message`).
  [[noreturn]] void abortAndThrow(const std::string &message);
  [[noreturn]] void failTimedOut(const std::string &operation);
  /// "timed out after 300 s<where>: " and what that may mean.
  std::string describeTimeout(const char *where) const;
  /// Polls NCCL's state: true while its last call is still in progress;
  /// throws CudaError when NCCL reports an error.
  bool isNcclBusy();
  /// Issues one all-reduce of `buffers` on `stream` (see enqueueAllReduce).
  void issueAllReduce(const std::vector<comm::ReduceBuffer> &buffers,
                      comm::ReduceOp op, cudaStream_t stream,
                      const std::string &operation, Clock::time_point deadline);
  void issueReduceScatter(const std::vector<comm::ShardedBuffer> &buffers,
                          comm::ReduceOp op, cudaStream_t stream,
                          const std::string &operation,
                          Clock::time_point deadline);
  void issueAllGather(const std::vector<comm::ShardedBuffer> &buffers,
                      cudaStream_t stream, const std::string &operation,
                      Clock::time_point deadline);
  /// Runs `issue(stream, operation, deadline)` on an own stream and waits
  /// (the synchronous collectives).
  template <typename Issue>
  void runSynchronously(const std::string &operation, const Issue &issue);
  /// The host callers' wait for their stream.
  void synchronize(cudaStream_t stream, const std::string &operation,
                   Clock::time_point deadline);
  /// Rank mode, at the end: ncclCommFinalize, polled until done or the
  /// timeout; false if it did not finish.
  bool finalize() noexcept;

  ncclComm_t comm;
  int rank, worldSize, ordinal;
  cudaStream_t ownStream = nullptr;
  /// Rank mode (nonblocking): how long a wait for NCCL may take; 0 in one
  /// process (blocking).
  std::chrono::milliseconds timeout{0};
  /// Collectives begun, for messages; the dispatch thread and the host
  /// callers take turns, never at once.
  uint64_t sequence = 0;
  std::atomic<bool> aborted{false};
  std::shared_ptr<CollectiveWatch> watch;
  /// The stream the synchronous collectives run on, created on first use.
  cudaStream_t getOwnStream();
};

} // namespace dpc::cuda

#endif // DPC_RUNTIME_CUDA_NCCLCOMMUNICATOR_H
