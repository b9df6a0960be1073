//===- PeerCommunicator.h - collectives between processes -------*- C++ -*-===//
//
// The process-per-rank backends (Gloo, MPI) share one algorithm over a
// point-to-point Transport, so that they compute exactly what the
// in-process communicator computes:
//
//  1. Every rank sends a small header (operation, sequence number, buffer
//     layout) to every other rank and receives theirs (on a transport that
//     receives any size, with its first message of the collective's data
//     behind it). A rank whose header
//     differs is named in a CommError on every rank (instead of a crash or
//     a hang on mismatched message sizes); a rank that does not send its
//     header within the timeout is named as one that did not arrive, and
//     a rank whose connection closes (it died) is named too. (Headers are
//     received per peer, not from any rank: Gloo reports a closed
//     connection only to the receives posted on it.)
//  2. All-reduce: each buffer is cut into the same per-rank blocks as in
//     InProcessCommunicator; rank r receives block r of every rank, reduces
//     it in rank order 0, 1, ..., N-1 (the in-process order, so the bits are
//     the same) and sends the result to every rank (a reduce-scatter and an
//     all-gather, 2 (N-1)/N of the data in and out per rank). With 2 ranks,
//     or few bytes, every rank sends its whole buffers to every rank instead
//     and each reduces everything in the same order: one round, same bits.
//  3. Broadcast: the root sends its buffers to every rank.
//
// Every wait has the deadline `timeout` after the collective began; a
// lost connection or a timeout throws CommError naming the operation, its
// sequence number and the ranks concerned.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_COMM_PEERCOMMUNICATOR_H
#define DPC_RUNTIME_COMM_PEERCOMMUNICATOR_H

#include "runtime/comm/Communicator.h"

#include <chrono>
#include <memory>
#include <optional>
#include <string>

namespace dpc::comm {

using Clock = std::chrono::steady_clock;

/// Tagged, nonblocking messages between the ranks of a group. Messages of
/// the same (source, destination, tag) arrive in the order they were sent.
class Transport {
public:
  /// One pending send or receive; its memory must stay valid until it is
  /// done.
  class Request {
  public:
    virtual ~Request() = default;
    /// Waits until the message is sent or received, or `deadline` passes
    /// (false). Sets *source for a receive. Throws CommError if the
    /// connection broke.
    virtual bool wait(Clock::time_point deadline, int *source) = 0;
    /// Whether it is done, without waiting, if the backend can tell (after
    /// a timeout, to name every rank that did not arrive).
    virtual std::optional<bool> isDone() { return std::nullopt; }
  };

  virtual ~Transport() = default;
  virtual int getRank() const = 0;
  virtual int getWorldSize() const = 0;
  /// The backend's name, for messages ("gloo", "mpi").
  virtual const char *getName() const = 0;
  /// The host `peer` runs on (its address), for messages; empty if unknown.
  virtual std::string getPeerHost(int peer) const {
    (void)peer;
    return {};
  }
  virtual std::unique_ptr<Request> send(int peer, const void *data,
                                        size_t bytes, uint32_t tag) = 0;
  virtual std::unique_ptr<Request> receive(int peer, void *data, size_t bytes,
                                           uint32_t tag) = 0;
  /// Memory for one message in several pieces.
  struct Piece {
    const void *data;
    size_t bytes;
  };
  /// One message: `pieces` back to back. Their memory must stay valid and
  /// unchanged until it is done. By default sent from a copy the request
  /// keeps; a transport that writes each piece where it goes overrides it.
  virtual std::unique_ptr<Request>
  sendPieces(int peer, const std::vector<Piece> &pieces, uint32_t tag);
  /// Whether a receive takes a message of any size from every peer: its
  /// first `bytes`, the rest dropped (a shorter one leaves the rest of the
  /// buffer as it was), on every rank of the group alike. A collective then
  /// sends its data right behind its header, in one message (step 1
  /// below): a mismatch the headers then reveal leaves no message behind.
  virtual bool receivesAnySize() const { return false; }
};

/// A Communicator over `transport`; collectives time out after `timeout`.
std::unique_ptr<Communicator>
createPeerCommunicator(std::unique_ptr<Transport> transport,
                       std::chrono::milliseconds timeout);

/// "ranks 1, 3" / "rank 2": for messages.
std::string formatRanks(const std::vector<int> &ranks);

} // namespace dpc::comm

#endif // DPC_RUNTIME_COMM_PEERCOMMUNICATOR_H
