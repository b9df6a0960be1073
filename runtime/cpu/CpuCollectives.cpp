//===- CpuCollectives.cpp - collective kernels on the CPU -----------------===//
//
// Calls that every replica joins, through the call's communicator.
//
//===----------------------------------------------------------------------===//

#include "runtime/abi/KernelShapes.h"
#include "runtime/comm/Communicator.h"
#include "runtime/comm/ShardedCall.h"
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
  std::vector<comm::ShardedBuffer> buffers = comm::getShardedBuffers(call);
  call.communicator->allGather(buffers);
}

void runReduceScatter(KernelContext &, const KernelCall &call) {
  plan::ReduceOp op = plan::getReduceScatterOp(call);
  std::vector<comm::ShardedBuffer> buffers = comm::getShardedBuffers(call);
  call.communicator->reduceScatter(buffers, op);
}

} // namespace dpc::rt::cpu
