//===- CudaCollectives.cpp - collectives on a CUDA stream -----------------===//
//
// Calls that every replica joins, enqueued on the stream through the NCCL
// communicator (no host synchronization: stream-ordered like the kernels).
//
//===----------------------------------------------------------------------===//

#include "runtime/abi/KernelShapes.h"
#include "runtime/comm/ShardedCall.h"
#include "runtime/cuda/CudaKernelEntries.h"
#include "runtime/cuda/NcclCommunicator.h"

#include <stdexcept>
#include <vector>

namespace dpc::cuda::entries {

namespace {
NcclCommunicator &getNccl(const KernelCall &call) {
  auto *nccl = dynamic_cast<NcclCommunicator *>(call.communicator);
  if (!nccl)
    throw std::runtime_error(std::string(plan::EnumNameKernel(call.kernel)) +
                             " on a CUDA device needs the NCCL communicator");
  return *nccl;
}
} // namespace

void runAllReduce(StreamContext &ctx, const KernelCall &call) {
  plan::ReduceOp op = plan::getAllReduceOp(call);
  NcclCommunicator &nccl = getNccl(call);
  std::vector<comm::ReduceBuffer> buffers;
  for (const plan::TensorArg &arg : call.operands)
    buffers.push_back({arg.data, arg.getNumElements(), arg.dtype});
  nccl.enqueueAllReduce(buffers, op, ctx.getStream());
}

void runAllGather(StreamContext &ctx, const KernelCall &call) {
  std::vector<comm::ShardedBuffer> buffers = comm::getShardedBuffers(call);
  getNccl(call).enqueueAllGather(buffers, ctx.getStream());
}

void runReduceScatter(StreamContext &ctx, const KernelCall &call) {
  plan::ReduceOp op = plan::getReduceScatterOp(call);
  std::vector<comm::ShardedBuffer> buffers = comm::getShardedBuffers(call);
  getNccl(call).enqueueReduceScatter(buffers, op, ctx.getStream());
}

} // namespace dpc::cuda::entries
