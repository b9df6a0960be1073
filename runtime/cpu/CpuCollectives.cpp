//===- CpuCollectives.cpp - collective kernels on the CPU -----------------===//
//
// Calls that every replica joins, through the call's communicator.
//
//===----------------------------------------------------------------------===//

#include "runtime/abi/KernelShapes.h"
#include "runtime/comm/Communicator.h"
#include "runtime/cpu/CpuKernelEntries.h"

#include <stdexcept>
#include <string>
#include <vector>

namespace dpc::rt::cpu {

using kernels::KernelContext;

void runAllReduce(KernelContext &, const KernelCall &call) {
  plan::ReduceOp op = plan::getAllReduceOp(call);
  if (!call.communicator)
    throw std::runtime_error("AllReduce has no communicator");
  std::vector<comm::ReduceBuffer> buffers;
  for (const plan::TensorArg &arg : call.operands)
    buffers.push_back({arg.data, arg.getNumElements(), arg.dtype});
  call.communicator->allReduce(buffers, op);
}

void runAllGather(KernelContext &, const KernelCall &call) {
  if (!call.communicator)
    throw std::runtime_error("AllGather has no communicator");
  std::vector<std::vector<int64_t>> sizes = plan::getAllGatherSizes(call);
  int rank = call.communicator->getRank();
  std::vector<comm::ShardedBuffer> buffers;
  for (size_t k = 0; k < sizes.size(); ++k) {
    // The compiler's sizes are for this world, and this rank's part.
    if (sizes[k].size() != size_t(call.communicator->getWorldSize()) ||
        sizes[k][rank] != call.operand(k).getNumElements())
      throw std::runtime_error(
          "AllGather: part " + std::to_string(k) + " of " +
          std::to_string(call.operand(k).getNumElements()) +
          " elements is not rank " + std::to_string(rank) + "'s of " +
          plan::formatDims(sizes[k]));
    buffers.push_back({call.result(k).data, call.operand(k).data,
                       std::move(sizes[k]), call.operand(k).dtype});
  }
  call.communicator->allGather(buffers);
}

} // namespace dpc::rt::cpu
