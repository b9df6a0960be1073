//===- ShardedCall.h - a sharded collective call's buffers ------*- C++ -*-===//
//
// AllGather and ReduceScatter calls (Kernels.def) as the communicators take
// them, for every backend's kernel entries.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_COMM_SHARDEDCALL_H
#define DPC_RUNTIME_COMM_SHARDEDCALL_H

#include "runtime/abi/KernelAttrs.h"
#include "runtime/abi/KernelCall.h"
#include "runtime/abi/KernelShapes.h"
#include "runtime/comm/Communicator.h"

#include <stdexcept>
#include <string>
#include <vector>

namespace dpc::comm {

/// The call's wholes and parts as the communicator takes them, checked
/// against this world and rank.
inline std::vector<ShardedBuffer>
getShardedBuffers(const plan::KernelCall &call) {
  if (!call.communicator)
    throw std::runtime_error(std::string(plan::EnumNameKernel(call.kernel)) +
                             " has no communicator");
  std::vector<std::vector<int64_t>> sizes = plan::getShardSizes(call);
  int rank = call.communicator->getRank();
  bool gather = call.kernel == plan::Kernel::AllGather;
  std::vector<ShardedBuffer> buffers;
  for (size_t k = 0; k < sizes.size(); ++k) {
    const plan::TensorArg &part = gather ? call.operand(k) : call.result(k);
    const plan::TensorArg &whole = gather ? call.result(k) : call.operand(k);
    // The compiler's sizes are for this world, and this rank's part.
    if (sizes[k].size() != size_t(call.communicator->getWorldSize()) ||
        sizes[k][rank] != part.getNumElements())
      throw std::runtime_error(std::string(plan::EnumNameKernel(call.kernel)) +
                               ": part " + std::to_string(k) + " of " +
                               std::to_string(part.getNumElements()) +
                               " elements is not rank " + std::to_string(rank) +
                               "'s of " + plan::formatDims(sizes[k]));
    buffers.push_back({whole.data, part.data, std::move(sizes[k]), part.dtype});
  }
  return buffers;
}

} // namespace dpc::comm

#endif // DPC_RUNTIME_COMM_SHARDEDCALL_H
