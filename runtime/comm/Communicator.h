//===- Communicator.h - collectives across the replicas ---------*- C++ -*-===//
//
// A Communicator is one rank's handle on a group of ranks (one rank per
// device), in the style of an NCCL communicator: each rank calls every
// collective with its own buffers, and the call returns once this rank's
// buffers hold the result. Collectives match by order: the n-th call of
// each rank meets the n-th call of every other rank, so all ranks must issue
// the same collectives, with the same counts and dtypes, in the same order.
// One handle must not be used from two threads at once.
//
// The in-process backend (InProcessCommunicator.h) serves device threads of
// one process; the process-per-rank backends (PeerCommunicator.h: Gloo and
// MPI; NCCL for CUDA) implement the same interface with one handle per
// process, and compute the same bits as the in-process one.
//
// Results are deterministic: the same on every run and, bit for bit, on
// every rank, so that data-parallel replicas stay identical.
//
// Sharded training (ZeRO) adds reduceScatter and allGather over tensors
// split by elements into one part per rank (ShardedBuffer). The base class
// implements both over allReduce and broadcast, so every backend has them
// and a reduce-scatter gives, by construction, the bits of the all-reduce
// it stands for; a backend may override them with cheaper exchanges that
// keep those bits (the in-process one does).
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_COMM_COMMUNICATOR_H
#define DPC_RUNTIME_COMM_COMMUNICATOR_H

#include "runtime/plan/Plan_generated.h"

#include <cstdint>
#include <stdexcept>
#include <vector>

namespace dpc::comm {

using plan::DType;
using plan::ReduceOp;

/// A mismatch between ranks (counts, dtypes, ops) or an unsupported dtype.
struct CommError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// `count` elements of `dtype` at `data` (device memory of this rank).
struct ReduceBuffer {
  void *data = nullptr;
  int64_t count = 0;
  DType dtype = DType::F32;
};

/// One tensor of `dtype` split by elements into one part per rank: rank r's
/// part is elements [sum(sizes[0..r)), + sizes[r]) of the whole, `sizes`
/// having one entry per rank (any, 0 included). `part` holds this rank's
/// part; it may point into `whole` at the part's offset (in place).
struct ShardedBuffer {
  void *whole = nullptr;
  void *part = nullptr;
  std::vector<int64_t> sizes;
  DType dtype = DType::F32;

  int64_t getCount() const;
  int64_t getOffset(int rank) const;
};

class Communicator {
public:
  virtual ~Communicator() = default;
  virtual int getRank() const = 0;
  virtual int getWorldSize() const = 0;

  /// Reduces every buffer elementwise across the ranks, in place: buffer i
  /// of each rank ends up holding `op` over buffer i of all ranks (Mean:
  /// the sum divided by the world size; integer division for integers).
  /// One call may carry several buffers (a gradient bucket): it is one
  /// collective. Supports F32, F64, I32 and I64; counts may be 0. Throws
  /// CommError, on every rank, if the ranks disagree.
  virtual void allReduce(const std::vector<ReduceBuffer> &buffers,
                         ReduceOp op) = 0;

  void allReduce(float *data, int64_t count, ReduceOp op) {
    allReduce({{data, count, DType::F32}}, op);
  }

  /// Copies every buffer of rank `root` into the same buffer of every other
  /// rank (any dtype; counts as in allReduce). One collective. Throws
  /// CommError, on every rank, if the ranks disagree.
  virtual void broadcast(const std::vector<ReduceBuffer> &buffers,
                         int root) = 0;

  /// Reduces every buffer's `whole` across the ranks and leaves this rank's
  /// part of the result in its `part`: bit for bit what allReduce of the
  /// wholes followed by taking the part gives. `whole` is input, and may
  /// be overwritten. One collective (ops and dtypes as in allReduce).
  /// Throws CommError, on every rank, if the sizes are not one per rank.
  virtual void reduceScatter(const std::vector<ShardedBuffer> &buffers,
                             ReduceOp op);

  /// Concatenates every rank's `part` of each buffer into every rank's
  /// `whole` (any dtype). Throws CommError, on every rank, if the sizes are
  /// not one per rank.
  virtual void allGather(const std::vector<ShardedBuffer> &buffers);

protected:
  /// Throws CommError unless every buffer has one size per rank, none
  /// negative.
  void checkSharded(const std::vector<ShardedBuffer> &buffers,
                    const char *operation) const;
};

} // namespace dpc::comm

#endif // DPC_RUNTIME_COMM_COMMUNICATOR_H
