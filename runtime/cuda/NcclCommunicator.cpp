//===- NcclCommunicator.cpp - collectives across local GPUs (NCCL) --------===//

#include "runtime/cuda/NcclCommunicator.h"
#include "runtime/cuda/CudaDevice.h"
#include "runtime/cuda/OwnKernels.h"
#include "runtime/plan/PlanTypes.h"

#include <string>

namespace dpc::cuda {

namespace {

ncclDataType_t toNccl(comm::DType dtype) {
  switch (dtype) {
  case comm::DType::F32:
    return ncclFloat32;
  case comm::DType::F64:
    return ncclFloat64;
  case comm::DType::I32:
    return ncclInt32;
  case comm::DType::I64:
    return ncclInt64;
  default:
    throw comm::CommError(std::string("all-reduce: dtype ") +
                          plan::EnumNameDType(dtype) + " is not supported");
  }
}

ncclRedOp_t toNccl(comm::ReduceOp op) {
  switch (op) {
  case comm::ReduceOp::Sum:
  case comm::ReduceOp::Mean: // divided afterwards, as the CPU does
    return ncclSum;
  case comm::ReduceOp::Max:
    return ncclMax;
  }
  throw comm::CommError("all-reduce: unknown op");
}

} // namespace

std::vector<std::unique_ptr<comm::Communicator>>
NcclCommunicator::createGroup(const std::vector<int> &ordinals) {
  int size = static_cast<int>(ordinals.size());
  std::vector<ncclComm_t> comms(size);
  if (size > 0)
    DPC_CUDA_CHECK(ncclCommInitAll(comms.data(), size, ordinals.data()));
  std::vector<std::unique_ptr<comm::Communicator>> group;
  for (int rank = 0; rank < size; ++rank)
    group.push_back(std::unique_ptr<comm::Communicator>(
        new NcclCommunicator(comms[rank], rank, size, ordinals[rank])));
  return group;
}

NcclCommunicator::~NcclCommunicator() {
  if (ownStream)
    DPC_CUDA_REPORT(cudaStreamDestroy(ownStream));
  DPC_CUDA_REPORT(ncclCommDestroy(comm));
}

void NcclCommunicator::enqueueAllReduce(
    const std::vector<comm::ReduceBuffer> &buffers, comm::ReduceOp op,
    cudaStream_t stream) {
  ncclRedOp_t ncclOp = toNccl(op);
  for (const comm::ReduceBuffer &buffer : buffers)
    toNccl(buffer.dtype); // every dtype checked before anything is enqueued
  // One group: the bucket's buffers are one collective (one launch).
  DPC_CUDA_CHECK(ncclGroupStart());
  try {
    for (const comm::ReduceBuffer &buffer : buffers)
      if (buffer.count > 0)
        DPC_CUDA_CHECK(ncclAllReduce(buffer.data, buffer.data,
                                     static_cast<size_t>(buffer.count),
                                     toNccl(buffer.dtype), ncclOp, comm,
                                     stream));
  } catch (...) {
    DPC_CUDA_REPORT(ncclGroupEnd());
    throw;
  }
  DPC_CUDA_CHECK(ncclGroupEnd());
  if (op == comm::ReduceOp::Mean && worldSize > 1)
    for (const comm::ReduceBuffer &buffer : buffers)
      divide(stream, buffer.count,
             static_cast<ScalarType>(static_cast<int>(buffer.dtype)),
             worldSize, buffer.data);
}

cudaStream_t NcclCommunicator::getOwnStream() {
  if (!ownStream)
    DPC_CUDA_CHECK(
        cudaStreamCreateWithFlags(&ownStream, cudaStreamNonBlocking));
  return ownStream;
}

void NcclCommunicator::allReduce(const std::vector<comm::ReduceBuffer> &buffers,
                                 comm::ReduceOp op) {
  DeviceScope scope(ordinal);
  cudaStream_t stream = getOwnStream();
  enqueueAllReduce(buffers, op, stream);
  DPC_CUDA_CHECK(cudaStreamSynchronize(stream));
}

void NcclCommunicator::broadcast(const std::vector<comm::ReduceBuffer> &buffers,
                                 int root) {
  if (root < 0 || root >= worldSize)
    throw comm::CommError("broadcast: root " + std::to_string(root) +
                          " is not a rank of " + std::to_string(worldSize));
  DeviceScope scope(ordinal);
  cudaStream_t stream = getOwnStream();
  // sendbuff == recvbuff: in place (NCCL's "In-place Operations").
  DPC_CUDA_CHECK(ncclGroupStart());
  try {
    for (const comm::ReduceBuffer &buffer : buffers)
      if (buffer.count > 0)
        DPC_CUDA_CHECK(ncclBroadcast(
            buffer.data, buffer.data,
            static_cast<size_t>(buffer.count) *
                plan::getDTypeSize(buffer.dtype),
            ncclInt8, root, comm, stream));
  } catch (...) {
    DPC_CUDA_REPORT(ncclGroupEnd());
    throw;
  }
  DPC_CUDA_CHECK(ncclGroupEnd());
  DPC_CUDA_CHECK(cudaStreamSynchronize(stream));
}

} // namespace dpc::cuda
