//===- PeerCommunicator.cpp - collectives between processes ---------------===//

#include "runtime/comm/PeerCommunicator.h"
#include "runtime/abi/PlanTypes.h"
#include "runtime/comm/Reduction.h"

#include <algorithm>
#include <cstring>
#include <mutex>

namespace dpc::comm {

namespace {
/// A send from a copy of its pieces, which it keeps.
class CopiedSend : public Transport::Request {
public:
  bool wait(Clock::time_point deadline, int *source) override {
    return sent->wait(deadline, source);
  }
  std::optional<bool> isDone() override { return sent->isDone(); }
  std::vector<uint8_t> bytes;
  std::unique_ptr<Transport::Request> sent;
};
} // namespace

std::unique_ptr<Transport::Request>
Transport::sendPieces(int peer, const std::vector<Piece> &pieces,
                      uint32_t tag) {
  auto request = std::make_unique<CopiedSend>();
  for (const Piece &piece : pieces) {
    const auto *data = static_cast<const uint8_t *>(piece.data);
    request->bytes.insert(request->bytes.end(), data, data + piece.bytes);
  }
  request->sent =
      send(peer, request->bytes.data(), request->bytes.size(), tag);
  return request;
}

std::string formatRanks(const std::vector<int> &ranks) {
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i)
    text += (i ? ", " : "") + std::to_string(ranks[i]);
  return text;
}

namespace {

/// memcpy that allows an empty copy from or to null: a replica's empty
/// share (or an empty buffer) has no memory behind it.
void copyBytes(void *to, const void *from, size_t bytes) {
  if (bytes)
    std::memcpy(to, from, bytes);
}

/// Elements are handed to ranks in blocks of this many: the same split as
/// InProcessCommunicator (which only the reduction order needs to match).
constexpr int64_t kBlock = 16;

/// Up to this many bytes (and always with 2 ranks, where it moves no more
/// data), an all-reduce sends every rank's whole buffers to every rank, and
/// each reduces all of it, in the same order: one round of messages instead
/// of two. Each round costs thread wake-ups that dominate small collectives
/// on busy cores.
constexpr size_t kExchangeAllBytes = 256 << 10;

enum class Operation : uint32_t { AllReduce = 1, Broadcast = 2 };

const char *nameOf(Operation operation) {
  return operation == Operation::AllReduce ? "all-reduce" : "broadcast";
}

/// What every rank says about a collective before any data moves.
struct Header {
  uint64_t sequence = 0;
  uint32_t operation = 0;
  uint32_t argument = 0; // the reduce op, or the broadcast root
  uint64_t numBuffers = 0;
  uint64_t totalElements = 0;
  uint64_t layoutHash = 0; // of every buffer's count and dtype
  bool operator==(const Header &other) const {
    return std::memcmp(this, &other, sizeof(Header)) == 0;
  }
};
static_assert(sizeof(Header) == 40, "Header travels as raw bytes");

bool isSupported(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F64 || dtype == DType::I32 ||
         dtype == DType::I64;
}

/// What a failed collective's requests may still use: the requests and the
/// message memory they point into. Kept, reachable, to the process's end:
/// destroying a pending request can block, and freeing its memory would let
/// a late message land in freed memory.
struct AbandonedCollective {
  std::vector<std::unique_ptr<Transport::Request>> pending;
  std::vector<Header> headers;
  std::vector<std::vector<uint8_t>> outgoing, incoming;
  std::vector<uint8_t> reduced, accumulator;
};

void abandon(std::unique_ptr<AbandonedCollective> collective) {
  // Never destroyed, like what they hold.
  static auto *mutex = new std::mutex;
  static auto *kept = new std::vector<std::unique_ptr<AbandonedCollective>>;
  std::lock_guard<std::mutex> lock(*mutex);
  kept->push_back(std::move(collective));
}

template <typename T> void divide(T *acc, int64_t n, int worldSize) {
  for (int64_t i = 0; i < n; ++i)
    acc[i] /= static_cast<T>(worldSize);
}

class PeerCommunicator : public Communicator {
public:
  PeerCommunicator(std::unique_ptr<Transport> transport,
                   std::chrono::milliseconds timeout)
      : transport(std::move(transport)), timeout(timeout),
        rank(this->transport->getRank()),
        worldSize(this->transport->getWorldSize()) {}

  int getRank() const override { return rank; }
  int getWorldSize() const override { return worldSize; }

  void allReduce(const std::vector<ReduceBuffer> &buffers,
                 ReduceOp op) override {
    for (const ReduceBuffer &buffer : buffers)
      if (buffer.count < 0 || !isSupported(buffer.dtype))
        throw CommError(std::string("all-reduce: unsupported buffer (") +
                        plan::EnumNameDType(buffer.dtype) + ", " +
                        std::to_string(buffer.count) + " elements)");
    if (op != ReduceOp::Sum && op != ReduceOp::Mean && op != ReduceOp::Max)
      throw CommError("all-reduce: unknown reduce op");
    if (worldSize == 1)
      return;
    size_t totalBytes = 0;
    for (const ReduceBuffer &buffer : buffers)
      totalBytes += bytesOf(buffer);
    if (transport->receivesAnySize()) {
      allReduceBehindHeaders(buffers, op, totalBytes);
      return;
    }
    Clock::time_point deadline =
        begin(Operation::AllReduce, static_cast<uint32_t>(op), buffers);
    whole = worldSize == 2 || totalBytes <= kExchangeAllBytes;

    // Reduce-scatter: block r of every rank to rank r (every block, when
    // `whole`).
    outgoing.resize(worldSize);
    incoming.resize(worldSize);
    std::vector<std::pair<Transport::Request *, int>> sends;
    std::vector<Transport::Request *> receives(worldSize);
    for (int peer = 0; peer < worldSize; ++peer) {
      if (peer == rank)
        continue;
      pack(buffers, peer, outgoing[peer]);
      incoming[peer].resize(sliceBytes(buffers, rank));
      if (!outgoing[peer].empty())
        sends.push_back({track(transport->send(peer, outgoing[peer].data(),
                                               outgoing[peer].size(), tag(1))),
                         peer});
      if (!incoming[peer].empty())
        receives[peer] = track(transport->receive(
            peer, incoming[peer].data(), incoming[peer].size(), tag(1)));
    }
    for (int peer = 0; peer < worldSize; ++peer)
      if (receives[peer])
        waitFor(*receives[peer], peer, deadline, "sent its part");
    waitForSends(sends, deadline);
    reduceMySlice(buffers, incoming, op);
    if (whole) {
      whole = false;
      pending.clear();
      return;
    }

    gatherReducedBlocks(buffers, deadline);
  }

  void broadcast(const std::vector<ReduceBuffer> &buffers, int root) override {
    if (root < 0 || root >= worldSize)
      throw CommError("broadcast: root " + std::to_string(root) +
                      " is not a rank of " + std::to_string(worldSize));
    for (const ReduceBuffer &buffer : buffers)
      if (buffer.count < 0)
        throw CommError("broadcast: a buffer has a negative count");
    if (worldSize == 1)
      return;
    if (transport->receivesAnySize()) {
      broadcastBehindHeaders(buffers, root);
      return;
    }
    Clock::time_point deadline =
        begin(Operation::Broadcast, static_cast<uint32_t>(root), buffers);
    size_t total = 0;
    for (const ReduceBuffer &buffer : buffers)
      total += bytesOf(buffer);
    if (total == 0)
      return;
    std::vector<uint8_t> &staging = reduced;
    staging.resize(total);
    if (rank == root) {
      uint8_t *at = staging.data();
      for (const ReduceBuffer &buffer : buffers) {
        copyBytes(at, buffer.data, bytesOf(buffer));
        at += bytesOf(buffer);
      }
      std::vector<std::pair<Transport::Request *, int>> sends;
      for (int peer = 0; peer < worldSize; ++peer)
        if (peer != root)
          sends.push_back(
              {track(transport->send(peer, staging.data(), total, tag(2))),
               peer});
      waitForSends(sends, deadline);
      pending.clear();
      return;
    }
    Transport::Request *receive =
        track(transport->receive(root, staging.data(), total, tag(2)));
    waitFor(*receive, root, deadline, "sent its buffers");
    pending.clear();
    const uint8_t *at = staging.data();
    for (const ReduceBuffer &buffer : buffers) {
      copyBytes(buffer.data, at, bytesOf(buffer));
      at += bytesOf(buffer);
    }
  }

  ~PeerCommunicator() override {
    // After a failed collective, requests may still point into our memory:
    // leave them (and the memory) to the process's end rather than block.
    // Moved vectors keep their storage, so the requests' pointers hold.
    if (broken)
      abandon(std::unique_ptr<AbandonedCollective>(new AbandonedCollective{
          std::move(pending), std::move(headers), std::move(outgoing),
          std::move(incoming), std::move(reduced), std::move(accumulator)}));
  }

private:
  /// A transport that takes messages of any size (receivesAnySize): every
  /// rank sends each peer one message, its header followed by what the
  /// peer needs of its data, and the headers are checked once everything
  /// arrived. A mismatch still leaves no message behind (each rank sent
  /// and took one per peer), and the group goes on; a round of messages
  /// per collective less than header, then data.
  void allReduceBehindHeaders(const std::vector<ReduceBuffer> &buffers,
                              ReduceOp op, size_t totalBytes) {
    Clock::time_point deadline =
        start(Operation::AllReduce, static_cast<uint32_t>(op), buffers);
    whole = worldSize == 2 || totalBytes <= kExchangeAllBytes;
    outgoing.resize(worldSize);
    incoming.resize(worldSize);
    std::vector<std::pair<Transport::Request *, int>> sends;
    std::vector<Transport::Request *> receives(worldSize);
    for (int peer = 0; peer < worldSize; ++peer) {
      if (peer == rank)
        continue;
      // The header, then the peer's slices, straight from the buffers
      // (which nothing writes before every send is done).
      std::vector<Transport::Piece> pieces{{&headers[rank], sizeof(Header)}};
      for (const ReduceBuffer &buffer : buffers) {
        auto [lo, hi] = sliceOf(buffer.count, peer);
        int64_t size = plan::getDTypeSize(buffer.dtype);
        if (hi > lo)
          pieces.push_back(
              {static_cast<const uint8_t *>(buffer.data) + lo * size,
               size_t((hi - lo) * size)});
      }
      incoming[peer].resize(sizeof(Header) + sliceBytes(buffers, rank));
      sends.push_back(
          {track(transport->sendPieces(peer, pieces, tag(1))), peer});
      receives[peer] = track(transport->receive(
          peer, incoming[peer].data(), incoming[peer].size(), tag(1)));
    }
    awaitArrivals(receives, deadline);
    waitForSends(sends, deadline);
    pending.clear();
    for (int peer = 0; peer < worldSize; ++peer)
      if (peer != rank)
        std::memcpy(&headers[peer], incoming[peer].data(), sizeof(Header));
    checkHeaders();
    reduceMySlice(buffers, incoming, op, sizeof(Header));
    if (whole) {
      whole = false;
      return;
    }
    gatherReducedBlocks(buffers, deadline);
  }

  /// Broadcast in the same way: the root's message to each peer is its
  /// header and its buffers, every other rank's its header alone.
  void broadcastBehindHeaders(const std::vector<ReduceBuffer> &buffers,
                              int root) {
    Clock::time_point deadline =
        start(Operation::Broadcast, static_cast<uint32_t>(root), buffers);
    size_t total = 0;
    for (const ReduceBuffer &buffer : buffers)
      total += bytesOf(buffer);
    std::vector<uint8_t> &message = reduced;
    message.resize(sizeof(Header) + (rank == root ? total : 0));
    std::memcpy(message.data(), &headers[rank], sizeof(Header));
    if (rank == root) {
      uint8_t *at = message.data() + sizeof(Header);
      for (const ReduceBuffer &buffer : buffers) {
        copyBytes(at, buffer.data, bytesOf(buffer));
        at += bytesOf(buffer);
      }
    }
    incoming.resize(worldSize);
    std::vector<std::pair<Transport::Request *, int>> sends;
    std::vector<Transport::Request *> receives(worldSize);
    for (int peer = 0; peer < worldSize; ++peer) {
      if (peer == rank)
        continue;
      incoming[peer].resize(sizeof(Header) + (peer == root ? total : 0));
      sends.push_back(
          {track(transport->send(peer, message.data(), message.size(), tag(1))),
           peer});
      receives[peer] = track(transport->receive(
          peer, incoming[peer].data(), incoming[peer].size(), tag(1)));
    }
    awaitArrivals(receives, deadline);
    waitForSends(sends, deadline);
    pending.clear();
    for (int peer = 0; peer < worldSize; ++peer)
      if (peer != rank)
        std::memcpy(&headers[peer], incoming[peer].data(), sizeof(Header));
    checkHeaders();
    if (rank == root)
      return;
    const uint8_t *at = incoming[root].data() + sizeof(Header);
    for (const ReduceBuffer &buffer : buffers) {
      copyBytes(buffer.data, at, bytesOf(buffer));
      at += bytesOf(buffer);
    }
  }

  /// All-gather: the reduced block r from rank r to every rank.
  void gatherReducedBlocks(const std::vector<ReduceBuffer> &buffers,
                           Clock::time_point deadline) {
    pack(buffers, rank, reduced);
    std::vector<std::pair<Transport::Request *, int>> sends;
    std::vector<Transport::Request *> receives(worldSize);
    for (int peer = 0; peer < worldSize; ++peer) {
      if (peer == rank)
        continue;
      incoming[peer].resize(sliceBytes(buffers, peer));
      if (!reduced.empty())
        sends.push_back({track(transport->send(peer, reduced.data(),
                                               reduced.size(), tag(2))),
                         peer});
      if (!incoming[peer].empty())
        receives[peer] = track(transport->receive(
            peer, incoming[peer].data(), incoming[peer].size(), tag(2)));
    }
    for (int peer = 0; peer < worldSize; ++peer)
      if (receives[peer]) {
        waitFor(*receives[peer], peer, deadline, "sent its result");
        unpack(buffers, peer, incoming[peer]);
      }
    waitForSends(sends, deadline);
    pending.clear();
  }

  static size_t bytesOf(const ReduceBuffer &buffer) {
    return static_cast<size_t>(buffer.count) * plan::getDTypeSize(buffer.dtype);
  }

  /// Rank `r`'s element range of a buffer of `count` elements.
  std::pair<int64_t, int64_t> sliceOf(int64_t count, int r) const {
    if (whole)
      return {0, count};
    int64_t blocks = (count + kBlock - 1) / kBlock;
    return {std::min(count, blocks * r / worldSize * kBlock),
            std::min(count, blocks * (r + 1) / worldSize * kBlock)};
  }

  size_t sliceBytes(const std::vector<ReduceBuffer> &buffers, int r) const {
    size_t bytes = 0;
    for (const ReduceBuffer &buffer : buffers) {
      auto [lo, hi] = sliceOf(buffer.count, r);
      bytes += (hi - lo) * plan::getDTypeSize(buffer.dtype);
    }
    return bytes;
  }

  /// Rank `r`'s slices of the buffers, back to back, into `bytes` (whose
  /// memory is reused: a step's collectives allocate nothing, and touch no
  /// fresh page).
  void pack(const std::vector<ReduceBuffer> &buffers, int r,
            std::vector<uint8_t> &bytes) const {
    bytes.resize(sliceBytes(buffers, r));
    uint8_t *at = bytes.data();
    for (const ReduceBuffer &buffer : buffers) {
      auto [lo, hi] = sliceOf(buffer.count, r);
      int64_t size = plan::getDTypeSize(buffer.dtype);
      copyBytes(at, static_cast<const uint8_t *>(buffer.data) + lo * size,
                (hi - lo) * size);
      at += (hi - lo) * size;
    }
  }

  void unpack(const std::vector<ReduceBuffer> &buffers, int r,
              const std::vector<uint8_t> &bytes) const {
    const uint8_t *at = bytes.data();
    for (const ReduceBuffer &buffer : buffers) {
      auto [lo, hi] = sliceOf(buffer.count, r);
      int64_t size = plan::getDTypeSize(buffer.dtype);
      copyBytes(static_cast<uint8_t *>(buffer.data) + lo * size, at,
                (hi - lo) * size);
      at += (hi - lo) * size;
    }
  }

  /// Reduces this rank's slices in rank order into its own buffers;
  /// `incoming[r]` holds rank r's slices (packed, from byte `offset` on),
  /// this rank's are in place.
  void reduceMySlice(const std::vector<ReduceBuffer> &buffers,
                     std::vector<std::vector<uint8_t>> &incoming, ReduceOp op,
                     size_t offset = 0) {
    for (const ReduceBuffer &buffer : buffers) {
      auto [lo, hi] = sliceOf(buffer.count, rank);
      int64_t size = plan::getDTypeSize(buffer.dtype);
      if (hi > lo) {
        uint8_t *mine = static_cast<uint8_t *>(buffer.data) + lo * size;
        auto partOf = [&](int r) -> uint8_t * {
          return r == rank ? mine : incoming[r].data() + offset;
        };
        switch (buffer.dtype) {
        case DType::F32:
          reduceRange<float>(partOf, mine, hi - lo, op);
          break;
        case DType::F64:
          reduceRange<double>(partOf, mine, hi - lo, op);
          break;
        case DType::I32:
          reduceRange<int32_t>(partOf, mine, hi - lo, op);
          break;
        default:
          reduceRange<int64_t>(partOf, mine, hi - lo, op);
          break;
        }
      }
      offset += (hi - lo) * size;
    }
  }

  template <typename T, typename PartOf>
  void reduceRange(const PartOf &partOf, uint8_t *target, int64_t n,
                   ReduceOp op) {
    // Rank 0's part in place, rank 0 accumulates into its own buffer, any
    // other rank into rank 0's part (received here): no copy in and out
    // where the part is aligned for T.
    uint8_t *first = partOf(0);
    T *acc = reinterpret_cast<T *>(first);
    if (reinterpret_cast<uintptr_t>(first) % alignof(T) != 0) {
      accumulator.resize(n * sizeof(T));
      acc = reinterpret_cast<T *>(accumulator.data());
      copyBytes(acc, first, n * sizeof(T));
    }
    for (int r = 1; r < worldSize; ++r) {
      const uint8_t *part = partOf(r);
      // Packed parts need not be aligned for T: combine from a copy then.
      if (reinterpret_cast<uintptr_t>(part) % alignof(T) != 0) {
        unaligned.resize(n * sizeof(T));
        copyBytes(unaligned.data(), part, n * sizeof(T));
        part = unaligned.data();
      }
      combine(acc, reinterpret_cast<const T *>(part), n, op);
    }
    if (op == ReduceOp::Mean)
      divide(acc, n, worldSize);
    if (reinterpret_cast<uint8_t *>(acc) != target)
      copyBytes(target, acc, n * sizeof(T));
  }

  /// A tag for `phase` (0: header, 1: reduce-scatter, 2: gather/broadcast)
  /// of the current collective; MPI guarantees tags up to 32767.
  uint32_t tag(uint32_t phase) const {
    return static_cast<uint32_t>(sequence % 8192) * 4 + phase;
  }

  std::string describe(Operation operation) const {
    return std::string(nameOf(operation)) + " #" + std::to_string(sequence) +
           " (" + transport->getName() + ", rank " + std::to_string(rank) +
           " of " + std::to_string(worldSize) + ")";
  }

  /// Starts a collective: this rank's header; returns its deadline.
  Clock::time_point start(Operation operation, uint32_t argument,
                          const std::vector<ReduceBuffer> &buffers) {
    if (broken)
      throw CommError(std::string(nameOf(operation)) +
                      ": an earlier collective of this rank failed");
    ++sequence;
    current = operation;
    Clock::time_point deadline = Clock::now() + timeout;
    Header mine;
    mine.sequence = sequence;
    mine.operation = static_cast<uint32_t>(operation);
    mine.argument = argument;
    mine.numBuffers = buffers.size();
    mine.layoutHash = 0xcbf29ce484222325ull;
    for (const ReduceBuffer &buffer : buffers) {
      mine.totalElements += buffer.count;
      for (uint64_t word : {uint64_t(buffer.count), uint64_t(buffer.dtype)})
        mine.layoutHash = (mine.layoutHash ^ word) * 0x100000001b3ull;
    }
    headers.assign(worldSize, Header());
    headers[rank] = mine;
    return deadline;
  }

  /// Starts a collective: exchanges headers; returns its deadline.
  Clock::time_point begin(Operation operation, uint32_t argument,
                          const std::vector<ReduceBuffer> &buffers) {
    Clock::time_point deadline = start(operation, argument, buffers);
    std::vector<std::pair<Transport::Request *, int>> sends;
    for (int peer = 0; peer < worldSize; ++peer)
      if (peer != rank)
        sends.push_back({track(transport->send(peer, &headers[rank],
                                               sizeof(Header), tag(0))),
                         peer});
    std::vector<Transport::Request *> receives(worldSize, nullptr);
    for (int peer = 0; peer < worldSize; ++peer)
      if (peer != rank)
        receives[peer] = track(
            transport->receive(peer, &headers[peer], sizeof(Header), tag(0)));
    awaitArrivals(receives, deadline);
    waitForSends(sends, deadline);
    pending.clear();
    checkHeaders();
    return deadline;
  }

  /// Waits for the first message of the current collective from every
  /// peer; on a timeout, names the first that did not arrive and every
  /// other one the backend can tell is missing.
  void awaitArrivals(const std::vector<Transport::Request *> &receives,
                     Clock::time_point deadline) {
    for (int peer = 0; peer < worldSize; ++peer) {
      if (peer == rank)
        continue;
      bool done;
      try {
        done = receives[peer]->wait(deadline, nullptr);
      } catch (const CommError &error) {
        broken = true;
        throw CommError(describe(current) + ": lost the connection to " +
                        nameRanks({peer}) + " (" + error.what() + ")");
      }
      if (!done) {
        broken = true;
        std::vector<int> missing{peer};
        for (int later = peer + 1; later < worldSize; ++later)
          if (later != rank && receives[later]->isDone() == false)
            missing.push_back(later);
        throw CommError(describe(current) + ": timed out after " +
                        formatSeconds() + ": " + nameRanks(missing) +
                        " did not arrive");
      }
    }
  }

  /// Throws, naming the first rank whose header differs from rank 0's.
  void checkHeaders() const {
    Operation operation = current;
    for (int r = 0; r < worldSize; ++r) {
      const Header &other = headers[r];
      if (other == headers[0])
        continue;
      std::string what = describe(operation) + ": rank " + std::to_string(r);
      if (other.sequence != headers[0].sequence ||
          other.operation != headers[0].operation)
        throw CommError(what + " is at " +
                        nameOf(static_cast<Operation>(other.operation)) + " #" +
                        std::to_string(other.sequence) + ", rank 0 at " +
                        nameOf(static_cast<Operation>(headers[0].operation)) +
                        " #" + std::to_string(headers[0].sequence));
      if (other.argument != headers[0].argument)
        throw CommError(what +
                        (operation == Operation::AllReduce
                             ? " reduces with another op than rank 0"
                             : " broadcasts from another root than rank 0"));
      throw CommError(what + " passed " + std::to_string(other.numBuffers) +
                      " buffers of " + std::to_string(other.totalElements) +
                      " elements, rank 0 passed " +
                      std::to_string(headers[0].numBuffers) + " of " +
                      std::to_string(headers[0].totalElements) +
                      (other.numBuffers == headers[0].numBuffers &&
                               other.totalElements == headers[0].totalElements
                           ? " (counts or dtypes differ)"
                           : ""));
    }
  }

  /// "rank 1 (host 10.0.0.2)", "ranks 2, 3 (host 10.0.0.2)": the ranks,
  /// then their hosts where the backend knows them.
  std::string nameRanks(const std::vector<int> &ranks) const {
    std::vector<std::string> hosts;
    for (int r : ranks) {
      std::string host = transport->getPeerHost(r);
      if (host.empty())
        return formatRanks(ranks);
      if (std::find(hosts.begin(), hosts.end(), host) == hosts.end())
        hosts.push_back(host);
    }
    std::string text =
        formatRanks(ranks) + (hosts.size() == 1 ? " (host " : " (hosts ");
    for (size_t i = 0; i < hosts.size(); ++i)
      text += (i ? ", " : "") + hosts[i];
    return text + ")";
  }

  std::string formatSeconds() const {
    double seconds = timeout.count() / 1000.0;
    char text[32];
    std::snprintf(text, sizeof(text), "%g s", seconds);
    return text;
  }

  Transport::Request *track(std::unique_ptr<Transport::Request> request) {
    pending.push_back(std::move(request));
    return pending.back().get();
  }

  void waitFor(Transport::Request &request, int peer,
               Clock::time_point deadline, const char *what) {
    bool done;
    broken = true; // until it is done
    try {
      done = request.wait(deadline, nullptr);
    } catch (const CommError &error) {
      throw CommError(describe(current) + ": lost the connection to " +
                      nameRanks({peer}) + " (" + error.what() + ")");
    }
    if (!done)
      throw CommError(describe(current) + ": timed out after " +
                      formatSeconds() + ": " + nameRanks({peer}) + " never " +
                      what);
    broken = false;
  }

  void waitForSends(std::vector<std::pair<Transport::Request *, int>> &sends,
                    Clock::time_point deadline) {
    for (auto [send, peer] : sends)
      waitFor(*send, peer, deadline, "took what this rank sent");
    sends.clear();
  }

  std::unique_ptr<Transport> transport;
  std::chrono::milliseconds timeout;
  int rank, worldSize;
  uint64_t sequence = 0;
  Operation current = Operation::AllReduce;
  bool whole = false;  // this all-reduce exchanges whole buffers
  bool broken = false; // a collective failed: its requests may be pending
  // Message memory lives here, so that it outlives a failed collective.
  std::vector<std::unique_ptr<Transport::Request>> pending;
  std::vector<Header> headers;
  std::vector<std::vector<uint8_t>> outgoing, incoming;
  std::vector<uint8_t> reduced, accumulator, unaligned;
};

} // namespace

std::unique_ptr<Communicator>
createPeerCommunicator(std::unique_ptr<Transport> transport,
                       std::chrono::milliseconds timeout) {
  return std::make_unique<PeerCommunicator>(std::move(transport), timeout);
}

} // namespace dpc::comm
