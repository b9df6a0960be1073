//===- NcclCommunicator.cpp - collectives across GPUs (NCCL) --------------===//

#include "runtime/cuda/NcclCommunicator.h"
#include "runtime/abi/PlanTypes.h"
#include "runtime/cuda/CudaDevice.h"
#include "runtime/cuda/OwnKernels.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <thread>

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

/// How often a nonblocking wait asks NCCL and CUDA whether they are done:
/// often enough to add little to a collective, rarely enough to leave the
/// cores to the ranks' other threads.
constexpr std::chrono::microseconds kPollInterval(100);

} // namespace

std::string NcclCommunicator::describe(const std::string &operation) const {
  return operation + (sequence ? " #" + std::to_string(sequence) : "") +
         " (nccl, rank " + std::to_string(rank) + " of " +
         std::to_string(worldSize) + ", cuda:" + std::to_string(ordinal) + ")";
}

NcclCommunicator::Clock::time_point
NcclCommunicator::begin(const std::string &operation) {
  if (aborted)
    throw comm::CommError(describe(operation) +
                          ": the communicator was aborted after an earlier "
                          "failure");
  ++sequence;
  return isNonblocking() ? Clock::now() + timeout : Clock::time_point::max();
}

template <typename Body>
void NcclCommunicator::guard(const std::string &operation, const Body &body) {
  if (!isNonblocking())
    return body(); // one process: failures throw CudaError, as they did
  try {
    body();
  } catch (const CudaError &error) {
    fail(operation, error.what());
  }
}

void NcclCommunicator::fail(const std::string &operation,
                            const std::string &why) {
  abortAndThrow(describe(operation) + ": " + why);
}

void NcclCommunicator::abortAndThrow(const std::string &message) {
  // Abort stops the communicator's kernels, so that no stream waits on it.
  bool wasAborted = aborted.exchange(true);
  if (comm && !wasAborted)
    DPC_CUDA_REPORT(ncclCommAbort(comm));
  throw comm::CommError(message);
}

void NcclCommunicator::watchCollectives(
    std::shared_ptr<CollectiveWatch> newWatch) {
  watch = std::move(newWatch);
  watch->attach(
      {[this] {
         if (aborted) // the handle is gone; the abort already threw
           return;
         try {
           isNcclBusy(); // throws when NCCL found an error (a rank died)
         } catch (const CudaError &error) {
           fail("collectives", error.what());
         }
       },
       [this](const std::string &collective) {
         abortAndThrow(collective + ": " + describeTimeout(" inside a step"));
       }});
}

bool NcclCommunicator::isNcclBusy() {
  ncclResult_t state = ncclSuccess;
  DPC_CUDA_CHECK(ncclCommGetAsyncError(comm, &state));
  return checkPending(state, "ncclCommGetAsyncError");
}

std::string NcclCommunicator::describeTimeout(const char *where) const {
  char seconds[32];
  std::snprintf(seconds, sizeof(seconds), "%g s", timeout.count() / 1e3);
  return std::string("timed out after ") + seconds + where +
         (sequence ? ": a rank is late, gone, or issued another collective "
                     "(NCCL cannot tell which)"
                   : ": a rank did not arrive");
}

void NcclCommunicator::failTimedOut(const std::string &operation) {
  fail(operation, describeTimeout(""));
}

void NcclCommunicator::waitForNccl(const std::string &operation,
                                   Clock::time_point deadline) {
  while (isNcclBusy()) {
    if (Clock::now() >= deadline)
      failTimedOut(operation);
    std::this_thread::sleep_for(kPollInterval);
  }
}

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

std::unique_ptr<NcclCommunicator>
NcclCommunicator::createForRank(comm::Communicator &host, int ordinal,
                                std::chrono::milliseconds timeout) {
  int rank = host.getRank(), worldSize = host.getWorldSize();
  DeviceScope scope(ordinal);
  // Rank 0's id reaches every rank through the host communicator (a rank
  // that cannot make it leaves the others waiting there, which the host
  // communicator reports).
  alignas(int64_t) ncclUniqueId id{};
  if (rank == 0)
    DPC_CUDA_CHECK(ncclGetUniqueId(&id));
  static_assert(sizeof(id) % sizeof(int64_t) == 0, "id is whole i64 words");
  host.broadcast({{&id, static_cast<int64_t>(sizeof(id) / sizeof(int64_t)),
                   comm::DType::I64}},
                 0);

  std::unique_ptr<NcclCommunicator> self(
      new NcclCommunicator(nullptr, rank, worldSize, ordinal));
  self->timeout = std::max(timeout, std::chrono::milliseconds(1));
  const std::string operation = "init";
  Clock::time_point deadline = Clock::now() + self->timeout;
  self->guard(operation, [&] {
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0; // see NcclCommunicator.h
    if (DPC_CUDA_PENDING(
            ncclCommInitRankConfig(&self->comm, worldSize, id, rank, &config)))
      self->waitForNccl(operation, deadline);
  });
  return self;
}

NcclCommunicator::~NcclCommunicator() {
  if (watch)
    watch->detach(); // before anything here goes
  if (ownStream)
    DPC_CUDA_REPORT(cudaStreamDestroy(ownStream));
  if (!comm || aborted)
    return;
  if (!isNonblocking()) {
    DPC_CUDA_REPORT(ncclCommDestroy(comm));
    return;
  }
  // A nonblocking communicator finalizes (waiting for the other ranks'
  // work) before it is destroyed. While an exception leaves this rank the
  // others may never get there: abort instead.
  if (std::uncaught_exceptions() == 0 && finalize())
    DPC_CUDA_REPORT(ncclCommDestroy(comm));
  else
    DPC_CUDA_REPORT(ncclCommAbort(comm));
}

bool NcclCommunicator::finalize() noexcept {
  try {
    Clock::time_point deadline = Clock::now() + timeout;
    if (DPC_CUDA_PENDING(ncclCommFinalize(comm)))
      while (isNcclBusy()) {
        if (Clock::now() >= deadline)
          return false;
        std::this_thread::sleep_for(kPollInterval);
      }
    return true;
  } catch (const std::exception &error) {
    reportLine(error.what());
    return false;
  }
}

template <typename Body>
void NcclCommunicator::issueGroup(const std::string &operation,
                                  Clock::time_point deadline,
                                  const Body &body) {
  DPC_CUDA_CHECK(ncclGroupStart());
  try {
    body();
  } catch (...) {
    DPC_CUDA_REPORT(ncclGroupEnd());
    throw;
  }
  // Nonblocking: the group may still be issuing. Wait until the stream
  // holds it, so that what the caller enqueues next comes after it.
  if (DPC_CUDA_PENDING(ncclGroupEnd()))
    waitForNccl(operation, deadline);
}

void NcclCommunicator::issueAllReduce(
    const std::vector<comm::ReduceBuffer> &buffers, comm::ReduceOp op,
    cudaStream_t stream, const std::string &operation,
    Clock::time_point deadline) {
  ncclRedOp_t ncclOp = toNccl(op);
  for (const comm::ReduceBuffer &buffer : buffers)
    toNccl(buffer.dtype); // every dtype checked before anything is enqueued
  // One group: the bucket's buffers are one collective (one launch).
  issueGroup(operation, deadline, [&] {
    for (const comm::ReduceBuffer &buffer : buffers)
      if (buffer.count > 0)
        DPC_CUDA_PENDING(ncclAllReduce(
            buffer.data, buffer.data, static_cast<size_t>(buffer.count),
            toNccl(buffer.dtype), ncclOp, comm, stream));
  });
  if (op == comm::ReduceOp::Mean && worldSize > 1)
    for (const comm::ReduceBuffer &buffer : buffers)
      divide(stream, buffer.count,
             static_cast<ScalarType>(static_cast<int>(buffer.dtype)), worldSize,
             buffer.data);
}

void NcclCommunicator::enqueueAllReduce(
    const std::vector<comm::ReduceBuffer> &buffers, comm::ReduceOp op,
    cudaStream_t stream) {
  const std::string operation = "all-reduce";
  Clock::time_point deadline = begin(operation);
  guard(operation,
        [&] { issueAllReduce(buffers, op, stream, operation, deadline); });
  if (watch)
    watch->add(describe(operation), stream);
}

cudaStream_t NcclCommunicator::getOwnStream() {
  if (!ownStream)
    DPC_CUDA_CHECK(
        cudaStreamCreateWithFlags(&ownStream, cudaStreamNonBlocking));
  return ownStream;
}

void NcclCommunicator::synchronize(cudaStream_t stream,
                                   const std::string &operation,
                                   Clock::time_point deadline) {
  if (!isNonblocking()) {
    DPC_CUDA_CHECK(cudaStreamSynchronize(stream));
    return;
  }
  // The collective waits on the GPU for the other ranks: poll, so that a
  // rank that never comes ends in an error rather than a hang.
  while (DPC_CUDA_PENDING(cudaStreamQuery(stream))) {
    isNcclBusy(); // throws on an error NCCL found (a rank that died)
    if (Clock::now() >= deadline)
      failTimedOut(operation);
    std::this_thread::sleep_for(kPollInterval);
  }
}

void NcclCommunicator::allReduce(const std::vector<comm::ReduceBuffer> &buffers,
                                 comm::ReduceOp op) {
  DeviceScope scope(ordinal);
  const std::string operation = "all-reduce";
  Clock::time_point deadline = begin(operation);
  guard(operation, [&] {
    cudaStream_t stream = getOwnStream();
    issueAllReduce(buffers, op, stream, operation, deadline);
    synchronize(stream, operation, deadline);
  });
}

void NcclCommunicator::broadcast(const std::vector<comm::ReduceBuffer> &buffers,
                                 int root) {
  if (root < 0 || root >= worldSize)
    throw comm::CommError("broadcast: root " + std::to_string(root) +
                          " is not a rank of " + std::to_string(worldSize));
  DeviceScope scope(ordinal);
  const std::string operation = "broadcast";
  Clock::time_point deadline = begin(operation);
  guard(operation, [&] {
    cudaStream_t stream = getOwnStream();
    // sendbuff == recvbuff: in place (NCCL's "In-place Operations").
    issueGroup(operation, deadline, [&] {
      for (const comm::ReduceBuffer &buffer : buffers)
        if (buffer.count > 0)
          DPC_CUDA_PENDING(ncclBroadcast(buffer.data, buffer.data,
                                         static_cast<size_t>(buffer.count) *
                                             plan::getDTypeSize(buffer.dtype),
                                         ncclInt8, root, comm, stream));
    });
    synchronize(stream, operation, deadline);
  });
}

} // namespace dpc::cuda

namespace dpc::cuda {

namespace {
bool isEvenSplit(const comm::ShardedBuffer &buffer) {
  for (int64_t size : buffer.sizes)
    if (size != buffer.sizes.front())
      return false;
  return true;
}

void *atElement(void *base, int64_t index, comm::DType dtype) {
  return static_cast<uint8_t *>(base) + index * plan::getDTypeSize(dtype);
}
} // namespace

void NcclCommunicator::issueReduceScatter(
    const std::vector<comm::ShardedBuffer> &buffers, comm::ReduceOp op,
    cudaStream_t stream, const std::string &operation,
    Clock::time_point deadline) {
  checkSharded(buffers, "reduce-scatter");
  ncclRedOp_t ncclOp = toNccl(op);
  for (const comm::ShardedBuffer &buffer : buffers)
    toNccl(buffer.dtype);
  issueGroup(operation, deadline, [&] {
    for (const comm::ShardedBuffer &buffer : buffers) {
      ncclDataType_t dtype = toNccl(buffer.dtype);
      if (isEvenSplit(buffer)) {
        if (buffer.sizes.front() > 0)
          DPC_CUDA_PENDING(ncclReduceScatter(buffer.whole, buffer.part,
                                             size_t(buffer.sizes.front()),
                                             dtype, ncclOp, comm, stream));
        continue;
      }
      for (int root = 0; root < worldSize; ++root)
        if (buffer.sizes[root] > 0)
          DPC_CUDA_PENDING(ncclReduce(
              atElement(buffer.whole, buffer.getOffset(root), buffer.dtype),
              buffer.part, size_t(buffer.sizes[root]), dtype, ncclOp, root,
              comm, stream));
    }
  });
  if (op == comm::ReduceOp::Mean && worldSize > 1)
    for (const comm::ShardedBuffer &buffer : buffers)
      divide(stream, buffer.sizes[rank],
             static_cast<ScalarType>(static_cast<int>(buffer.dtype)), worldSize,
             buffer.part);
}

void NcclCommunicator::issueAllGather(
    const std::vector<comm::ShardedBuffer> &buffers, cudaStream_t stream,
    const std::string &operation, Clock::time_point deadline) {
  checkSharded(buffers, "all-gather");
  issueGroup(operation, deadline, [&] {
    for (const comm::ShardedBuffer &buffer : buffers) {
      size_t elementBytes = plan::getDTypeSize(buffer.dtype);
      if (isEvenSplit(buffer)) {
        if (buffer.sizes.front() > 0)
          DPC_CUDA_PENDING(ncclAllGather(buffer.part, buffer.whole,
                                         buffer.sizes.front() * elementBytes,
                                         ncclInt8, comm, stream));
        continue;
      }
      for (int root = 0; root < worldSize; ++root)
        if (buffer.sizes[root] > 0)
          DPC_CUDA_PENDING(ncclBroadcast(
              buffer.part,
              atElement(buffer.whole, buffer.getOffset(root), buffer.dtype),
              buffer.sizes[root] * elementBytes, ncclInt8, root, comm, stream));
    }
  });
}

void NcclCommunicator::enqueueReduceScatter(
    const std::vector<comm::ShardedBuffer> &buffers, comm::ReduceOp op,
    cudaStream_t stream) {
  const std::string operation = "reduce-scatter";
  Clock::time_point deadline = begin(operation);
  guard(operation,
        [&] { issueReduceScatter(buffers, op, stream, operation, deadline); });
  if (watch)
    watch->add(describe(operation), stream);
}

void NcclCommunicator::enqueueAllGather(
    const std::vector<comm::ShardedBuffer> &buffers, cudaStream_t stream) {
  const std::string operation = "all-gather";
  Clock::time_point deadline = begin(operation);
  guard(operation,
        [&] { issueAllGather(buffers, stream, operation, deadline); });
  if (watch)
    watch->add(describe(operation), stream);
}

template <typename Issue>
void NcclCommunicator::runSynchronously(const std::string &operation,
                                        const Issue &issue) {
  DeviceScope scope(ordinal);
  Clock::time_point deadline = begin(operation);
  guard(operation, [&] {
    cudaStream_t stream = getOwnStream();
    issue(stream, deadline);
    synchronize(stream, operation, deadline);
  });
}

void NcclCommunicator::reduceScatter(
    const std::vector<comm::ShardedBuffer> &buffers, comm::ReduceOp op) {
  const std::string operation = "reduce-scatter";
  runSynchronously(
      operation, [&](cudaStream_t stream, Clock::time_point deadline) {
        issueReduceScatter(buffers, op, stream, operation, deadline);
      });
}

void NcclCommunicator::allGather(
    const std::vector<comm::ShardedBuffer> &buffers) {
  const std::string operation = "all-gather";
  runSynchronously(operation,
                   [&](cudaStream_t stream, Clock::time_point deadline) {
                     issueAllGather(buffers, stream, operation, deadline);
                   });
}

} // namespace dpc::cuda
