//===- NcclCommunicator.h - collectives across local GPUs (NCCL) -*- C++ -*-===//
//
// One process drives every local GPU of the plan: ncclCommInitAll makes one
// NCCL communicator per device (rank = the device's index in the plan).
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
// allReduce() (the interface) is for host callers: it enqueues on the
// communicator's own stream and waits for it.
//
// NCCL cannot tell ranks that disagree (other counts or dtypes) apart from
// ranks that have not arrived yet: such a plan hangs instead of throwing
// CommError. dpc's plans issue the same collectives on every device.
// Results are the same on every rank (NCCL reduces each element once and
// broadcasts it); Mean is a sum divided by the world size, as on the CPU.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_CUDA_NCCLCOMMUNICATOR_H
#define DPC_RUNTIME_CUDA_NCCLCOMMUNICATOR_H

#include "runtime/comm/Communicator.h"
#include "runtime/cuda/CudaCheck.h"

#include <memory>
#include <vector>

namespace dpc::cuda {

class NcclCommunicator : public comm::Communicator {
public:
  /// One communicator per CUDA device ordinal in `ordinals` (all distinct).
  static std::vector<std::unique_ptr<comm::Communicator>>
  createGroup(const std::vector<int> &ordinals);
  ~NcclCommunicator() override;

  int getRank() const override { return rank; }
  int getWorldSize() const override { return worldSize; }
  int getOrdinal() const { return ordinal; }

  /// Enqueues one all-reduce of every buffer (device memory of this rank's
  /// GPU) on `stream` and returns; see above. Throws CommError for a dtype
  /// NCCL is not asked to reduce here.
  void enqueueAllReduce(const std::vector<comm::ReduceBuffer> &buffers,
                        comm::ReduceOp op, cudaStream_t stream);
  /// Synchronous: enqueues on an own stream and waits.
  void allReduce(const std::vector<comm::ReduceBuffer> &buffers,
                 comm::ReduceOp op) override;
  using comm::Communicator::allReduce;
  /// Synchronous, like allReduce: rank `root`'s bytes to every rank, in
  /// place (any dtype: NCCL copies them as bytes).
  void broadcast(const std::vector<comm::ReduceBuffer> &buffers,
                 int root) override;

private:
  NcclCommunicator(ncclComm_t comm, int rank, int worldSize, int ordinal)
      : comm(comm), rank(rank), worldSize(worldSize), ordinal(ordinal) {}

  ncclComm_t comm;
  int rank, worldSize, ordinal;
  cudaStream_t ownStream = nullptr;
  /// The stream the synchronous collectives run on, created on first use.
  cudaStream_t getOwnStream();
};

} // namespace dpc::cuda

#endif // DPC_RUNTIME_CUDA_NCCLCOMMUNICATOR_H
