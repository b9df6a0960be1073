//===- Communicator.cpp - sharded collectives over the basic ones ---------===//
//
// The generic reduce-scatter and all-gather: exact on every backend whose
// buffers are host memory (the in-process, Gloo and MPI ones; NCCL
// overrides both). A reduce-scatter is an all-reduce of the wholes, so its
// bits are those of the all-reduce by construction; it moves twice what a
// dedicated reduce-scatter would (a backend may override it, keeping the
// reduction order). An all-gather is one broadcast per rank of that rank's
// part, each one collective in rank order on every rank.
//
//===----------------------------------------------------------------------===//

#include "runtime/comm/Communicator.h"
#include "runtime/abi/PlanTypes.h"

#include <cstring>
#include <string>

namespace dpc::comm {

int64_t ShardedBuffer::getCount() const {
  int64_t count = 0;
  for (int64_t size : sizes)
    count += size;
  return count;
}

int64_t ShardedBuffer::getOffset(int rank) const {
  int64_t offset = 0;
  for (int r = 0; r < rank; ++r)
    offset += sizes[r];
  return offset;
}

void Communicator::checkSharded(const std::vector<ShardedBuffer> &buffers,
                                const char *operation) const {
  for (size_t b = 0; b < buffers.size(); ++b) {
    const ShardedBuffer &buffer = buffers[b];
    if (buffer.sizes.size() != static_cast<size_t>(getWorldSize()))
      throw CommError(std::string(operation) + ": buffer " + std::to_string(b) +
                      " has " + std::to_string(buffer.sizes.size()) +
                      " parts for " + std::to_string(getWorldSize()) +
                      " ranks");
    for (int64_t size : buffer.sizes)
      if (size < 0)
        throw CommError(std::string(operation) + ": buffer " +
                        std::to_string(b) + " has a part of " +
                        std::to_string(size) + " elements");
  }
}

namespace {
/// Copies this rank's part between `whole` and `part`, unless they alias.
void copyPart(const ShardedBuffer &buffer, int rank, bool toPart) {
  int64_t size = plan::getDTypeSize(buffer.dtype);
  auto *inWhole =
      static_cast<uint8_t *>(buffer.whole) + buffer.getOffset(rank) * size;
  size_t bytes = static_cast<size_t>(buffer.sizes[rank] * size);
  if (bytes == 0 || inWhole == buffer.part)
    return;
  if (toPart)
    std::memmove(buffer.part, inWhole, bytes);
  else
    std::memmove(inWhole, buffer.part, bytes);
}
} // namespace

void Communicator::reduceScatter(const std::vector<ShardedBuffer> &buffers,
                                 ReduceOp op) {
  checkSharded(buffers, "reduce-scatter");
  std::vector<ReduceBuffer> wholes;
  for (const ShardedBuffer &buffer : buffers)
    wholes.push_back({buffer.whole, buffer.getCount(), buffer.dtype});
  allReduce(wholes, op);
  for (const ShardedBuffer &buffer : buffers)
    copyPart(buffer, getRank(), /*toPart=*/true);
}

void Communicator::allGather(const std::vector<ShardedBuffer> &buffers) {
  checkSharded(buffers, "all-gather");
  for (const ShardedBuffer &buffer : buffers)
    copyPart(buffer, getRank(), /*toPart=*/false);
  for (int root = 0; root < getWorldSize(); ++root) {
    std::vector<ReduceBuffer> parts;
    for (const ShardedBuffer &buffer : buffers)
      parts.push_back(
          {static_cast<uint8_t *>(buffer.whole) +
               buffer.getOffset(root) * plan::getDTypeSize(buffer.dtype),
           buffer.sizes[root], buffer.dtype});
    broadcast(parts, root);
  }
}

} // namespace dpc::comm
