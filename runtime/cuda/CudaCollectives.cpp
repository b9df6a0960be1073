//===- CudaCollectives.cpp - collectives on a CUDA stream -----------------===//
//
// Calls that every replica joins, enqueued on the stream through the NCCL
// communicator.
//
//===----------------------------------------------------------------------===//

#include "runtime/abi/KernelShapes.h"
#include "runtime/cuda/CudaKernelEntries.h"
#include "runtime/cuda/NcclCommunicator.h"

#include <stdexcept>
#include <vector>

namespace dpc::cuda::entries {

void runAllReduce(StreamContext &ctx, const KernelCall &call) {
  plan::ReduceOp op = plan::getAllReduceOp(call);
  auto *nccl = dynamic_cast<NcclCommunicator *>(call.communicator);
  if (!nccl)
    throw std::runtime_error(
        "AllReduce on a CUDA device needs the NCCL communicator");
  std::vector<comm::ReduceBuffer> buffers;
  for (const plan::TensorArg &arg : call.operands)
    buffers.push_back({arg.data, arg.getNumElements(), arg.dtype});
  nccl->enqueueAllReduce(buffers, op, ctx.getStream());
}

// NcclCommunicator::allGather blocks the host; a stream-ordered one, as
// enqueueAllReduce, is the next step.
void runAllGather(StreamContext &, const KernelCall &call) {
  plan::getAllGatherSizes(call);
  throw std::runtime_error("AllGather (sharded optimizer state) is not yet "
                           "on CUDA");
}

} // namespace dpc::cuda::entries
