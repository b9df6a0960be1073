//===- SharedMemoryTransport.cpp - peers on this host, through memory -----===//

#include "runtime/comm/SharedMemoryTransport.h"

#include <atomic>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <fstream>
#include <linux/futex.h>
#include <random>
#include <sstream>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace dpc::comm {
namespace {

static_assert(std::atomic<uint64_t>::is_always_lock_free &&
                  std::atomic<uint32_t>::is_always_lock_free,
              "the rings' counters are shared between processes");

constexpr uint64_t kMagic = 0x316d68732d637064; // "dpc-shm1"
constexpr size_t kLine = 64;
/// How long a wait spins on its doorbell before it sleeps: a peer that
/// answers within this costs no futex wake-up (two context switches).
constexpr auto kSpin = std::chrono::microseconds(50);
/// How often a sleeping wait wakes to see whether its peer still lives.
constexpr auto kLivenessPeriod = std::chrono::milliseconds(50);

struct alignas(kLine) SegmentHeader {
  uint64_t magic;
  uint64_t nonce;
  std::atomic<uint32_t> bell;     // rung on every change a waiter may need
  std::atomic<uint32_t> sleepers; // waiters asleep on `bell`
};

/// One ring's counters, each on its own cache line: bytes ever written
/// (by the sender) and ever consumed (by the receiver).
struct RingControl {
  alignas(kLine) std::atomic<uint64_t> written;
  alignas(kLine) std::atomic<uint64_t> consumed;
};

/// What precedes every message in a ring.
struct Frame {
  uint32_t tag;
  uint32_t magic;
  uint64_t bytes;
};
constexpr uint32_t kFrameMagic = 0x6d657373;

long futex(std::atomic<uint32_t> *word, int op, uint32_t value,
           const timespec *timeout) {
  // Not FUTEX_PRIVATE_FLAG: the word is shared between processes.
  return ::syscall(SYS_futex, reinterpret_cast<uint32_t *>(word), op, value,
                   timeout, nullptr, 0);
}

/// A mapped segment: this rank's (the rings it receives on) or a peer's
/// (the ring it sends on).
class Segment {
public:
  Segment(void *base, size_t size, int worldSize, size_t capacity)
      : base(static_cast<uint8_t *>(base)), size(size), worldSize(worldSize),
        capacity(capacity) {}
  ~Segment() { ::munmap(base, size); }
  Segment(const Segment &) = delete;
  Segment &operator=(const Segment &) = delete;

  static size_t sizeFor(int worldSize, size_t capacity) {
    return sizeof(SegmentHeader) + worldSize * (sizeof(RingControl) + capacity);
  }
  SegmentHeader &header() { return *reinterpret_cast<SegmentHeader *>(base); }
  RingControl &control(int sender) {
    return reinterpret_cast<RingControl *>(base +
                                           sizeof(SegmentHeader))[sender];
  }
  uint8_t *ring(int sender) {
    return base + sizeof(SegmentHeader) + worldSize * sizeof(RingControl) +
           sender * capacity;
  }
  size_t getCapacity() const { return capacity; }

  /// Wakes whoever waits on this segment's doorbell.
  void ring() {
    header().bell.fetch_add(1);
    if (header().sleepers.load() > 0)
      futex(&header().bell, FUTEX_WAKE, INT_MAX, nullptr);
  }

private:
  uint8_t *base;
  size_t size;
  int worldSize;
  size_t capacity;
};

/// Writes up to `bytes` of `data` into `sender`'s ring of `segment`;
/// returns how many fit.
size_t push(Segment &segment, int sender, const uint8_t *data, size_t bytes) {
  RingControl &control = segment.control(sender);
  uint64_t written = control.written.load(std::memory_order_relaxed);
  uint64_t consumed = control.consumed.load(std::memory_order_acquire);
  size_t capacity = segment.getCapacity();
  size_t n = std::min<size_t>(bytes, capacity - (written - consumed));
  size_t at = written % capacity, first = std::min(n, capacity - at);
  uint8_t *ring = segment.ring(sender);
  std::memcpy(ring + at, data, first);
  std::memcpy(ring, data + first, n - first);
  control.written.store(written + n, std::memory_order_release);
  return n;
}

/// Reads up to `bytes` from `sender`'s ring of `segment` into `data`;
/// returns how many were there.
size_t pull(Segment &segment, int sender, uint8_t *data, size_t bytes) {
  RingControl &control = segment.control(sender);
  uint64_t consumed = control.consumed.load(std::memory_order_relaxed);
  uint64_t written = control.written.load(std::memory_order_acquire);
  size_t capacity = segment.getCapacity();
  size_t n = std::min<size_t>(bytes, written - consumed);
  size_t at = consumed % capacity, first = std::min(n, capacity - at);
  const uint8_t *ring = segment.ring(sender);
  std::memcpy(data, ring + at, first);
  std::memcpy(data + first, ring, n - first);
  control.consumed.store(consumed + n, std::memory_order_release);
  return n;
}

/// Drops up to `bytes` from `sender`'s ring of `segment`; returns how many
/// were there.
size_t skip(Segment &segment, int sender, size_t bytes) {
  RingControl &control = segment.control(sender);
  uint64_t consumed = control.consumed.load(std::memory_order_relaxed);
  uint64_t written = control.written.load(std::memory_order_acquire);
  size_t n = std::min<size_t>(bytes, written - consumed);
  control.consumed.store(consumed + n, std::memory_order_release);
  return n;
}

/// A process by pid and start time (which tells a reused pid apart): the
/// start time if it runs (a zombie has exited), else 0.
uint64_t getStartTime(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)),
                   std::istreambuf_iterator<char>());
  // The command name may hold spaces and parentheses: fields follow the
  // last ')'; the state is field 3, the start time field 22.
  size_t close = text.rfind(')');
  if (close == std::string::npos)
    return 0;
  std::istringstream fields(text.substr(close + 1));
  std::string state, field;
  fields >> state;
  if (state == "Z" || state == "X")
    return 0;
  for (int f = 4; f <= 22 && fields >> field; ++f)
    if (f == 22)
      return std::strtoull(field.c_str(), nullptr, 10);
  return 0;
}

/// One message to or from a peer through shared memory.
struct Message {
  Message(int peer, uint32_t tag, uint8_t *data, size_t bytes)
      : peer(peer), tag(tag), data(data), bytes(bytes) {}
  int peer;
  uint32_t tag;
  uint8_t *data; // receives: where the message goes
  size_t bytes;  // receives: how much of it fits there
  /// Sends: the pieces of the message, the one being written and how much
  /// of it is.
  std::vector<Transport::Piece> pieces;
  size_t piece = 0, pieceDone = 0;
  Frame frame{};
  size_t frameDone = 0, dataDone = 0;
  size_t received = 0; // the size the sender sent (receives)
  bool complete = false;
};

class SharedMemoryTransport;

class SharedMemoryRequest : public Transport::Request {
public:
  SharedMemoryRequest(SharedMemoryTransport &transport,
                      std::shared_ptr<Message> message)
      : transport(transport), message(std::move(message)) {}
  bool wait(Clock::time_point deadline, int *source) override;
  std::optional<bool> isDone() override;

private:
  SharedMemoryTransport &transport;
  std::shared_ptr<Message> message;
};

class SharedMemoryTransport : public Transport {
public:
  struct Peer {
    int pid = 0;
    uint64_t startTime = 0;
    std::unique_ptr<Segment> segment; // null: through the network
    std::deque<std::shared_ptr<Message>> sends, receives;
    std::string broken; // why this peer's rings are unusable
  };

  SharedMemoryTransport(std::unique_ptr<Transport> network,
                        std::unique_ptr<Segment> mine, std::vector<Peer> peers,
                        bool everyPairShared)
      : network(std::move(network)), mine(std::move(mine)),
        peers(std::move(peers)), rank(this->network->getRank()),
        everyPairShared(everyPairShared) {}

  int getRank() const override { return rank; }
  int getWorldSize() const override { return network->getWorldSize(); }
  const char *getName() const override { return network->getName(); }
  std::string getPeerHost(int peer) const override {
    return network->getPeerHost(peer);
  }
  /// Rings take any size; the network may not, so only if no pair of the
  /// group uses it (which every rank knows alike).
  bool receivesAnySize() const override { return everyPairShared; }

  std::unique_ptr<Request> send(int peer, const void *data, size_t bytes,
                                uint32_t tag) override {
    if (!peers[peer].segment)
      return network->send(peer, data, bytes, tag);
    return sendPieces(peer, {{data, bytes}}, tag);
  }

  /// Written into the ring straight from the pieces: no copy first.
  std::unique_ptr<Request> sendPieces(int peer, const std::vector<Piece> &pieces,
                                      uint32_t tag) override {
    if (!peers[peer].segment)
      return Transport::sendPieces(peer, pieces, tag);
    auto message = std::make_shared<Message>(peer, tag, nullptr, 0);
    message->pieces = pieces;
    size_t bytes = 0;
    for (const Piece &piece : pieces)
      bytes += piece.bytes;
    message->frame = {tag, kFrameMagic, bytes};
    peers[peer].sends.push_back(message);
    progress(); // most messages fit the ring at once
    return std::make_unique<SharedMemoryRequest>(*this, std::move(message));
  }

  std::unique_ptr<Request> receive(int peer, void *data, size_t bytes,
                                   uint32_t tag) override {
    if (!peers[peer].segment)
      return network->receive(peer, data, bytes, tag);
    auto message = std::make_shared<Message>(
        peer, tag, static_cast<uint8_t *>(data), bytes);
    peers[peer].receives.push_back(message);
    return std::make_unique<SharedMemoryRequest>(*this, std::move(message));
  }

  /// Waits for `message` (see Request::wait).
  bool wait(Message &message, Clock::time_point deadline) {
    Peer &peer = peers[message.peer];
    Clock::time_point nextLivenessCheck = Clock::now() + kLivenessPeriod;
    while (true) {
      uint32_t seen = mine->header().bell.load();
      progress();
      if (message.complete)
        return true;
      if (!peer.broken.empty())
        throw CommError("shared memory: " + peer.broken);
      Clock::time_point now = Clock::now(), spinEnd = now + kSpin;
      while (now < spinEnd && mine->header().bell.load() == seen) {
        __builtin_ia32_pause();
        now = Clock::now();
      }
      if (mine->header().bell.load() != seen)
        continue;
      if (now >= deadline)
        return false;
      if (now >= nextLivenessCheck) {
        nextLivenessCheck = now + kLivenessPeriod;
        if (getStartTime(peer.pid) != peer.startTime)
          throw CommError("shared memory: rank " +
                          std::to_string(message.peer) + "'s process (pid " +
                          std::to_string(peer.pid) + ") exited");
      }
      auto nap = std::min<Clock::duration>(deadline - now, kLivenessPeriod);
      auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(nap);
      timespec timeout{static_cast<time_t>(nanos.count() / 1000000000),
                       static_cast<long>(nanos.count() % 1000000000)};
      mine->header().sleepers.fetch_add(1);
      futex(&mine->header().bell, FUTEX_WAIT, seen, &timeout);
      mine->header().sleepers.fetch_sub(1);
    }
  }

  /// Moves what it can of every pending message; rings the doorbells of
  /// the peers whose rings changed.
  void progress() {
    for (int p = 0; p < int(peers.size()); ++p) {
      Peer &peer = peers[p];
      if (!peer.segment || !peer.broken.empty())
        continue;
      bool wrote = false, read = false;
      while (!peer.sends.empty()) {
        Message &message = *peer.sends.front();
        auto *frame = reinterpret_cast<const uint8_t *>(&message.frame);
        size_t n = push(*peer.segment, rank, frame + message.frameDone,
                        sizeof(Frame) - message.frameDone);
        message.frameDone += n;
        wrote |= n > 0;
        if (message.frameDone < sizeof(Frame))
          break;
        for (; message.piece < message.pieces.size(); ++message.piece) {
          const Piece &piece = message.pieces[message.piece];
          size_t m = push(*peer.segment, rank,
                          static_cast<const uint8_t *>(piece.data) +
                              message.pieceDone,
                          piece.bytes - message.pieceDone);
          message.pieceDone += m;
          wrote |= m > 0;
          if (message.pieceDone < piece.bytes)
            break;
          message.pieceDone = 0;
        }
        if (message.piece < message.pieces.size())
          break;
        message.complete = true;
        peer.sends.pop_front();
      }
      while (!peer.receives.empty()) {
        Message &message = *peer.receives.front();
        auto *frame = reinterpret_cast<uint8_t *>(&message.frame);
        size_t n = pull(*mine, p, frame + message.frameDone,
                        sizeof(Frame) - message.frameDone);
        message.frameDone += n;
        read |= n > 0;
        if (message.frameDone < sizeof(Frame))
          break;
        if (n > 0 && !checkFrame(peer, message))
          break;
        // The message's first bytes, as many as the receive holds; the
        // rest (of a longer message than expected) is dropped.
        size_t sent = message.frame.bytes;
        size_t kept = std::min(sent, message.bytes);
        size_t m = 0;
        if (message.dataDone < kept) {
          m = pull(*mine, p, message.data + message.dataDone,
                   kept - message.dataDone);
          message.dataDone += m;
        }
        if (message.dataDone >= kept) {
          size_t dropped = skip(*mine, p, sent - message.dataDone);
          message.dataDone += dropped;
          m += dropped;
        }
        read |= m > 0;
        if (message.dataDone < sent)
          break;
        message.received = sent;
        message.complete = true;
        peer.receives.pop_front();
      }
      // Our ring in the peer's segment has data; ours has room again.
      if (wrote || read)
        peer.segment->ring();
    }
  }

private:
  /// Whether the frame just read announces the message expected; if not,
  /// the ring is out of step for good.
  bool checkFrame(Peer &peer, const Message &message) {
    const Frame &frame = message.frame;
    if (frame.magic == kFrameMagic && frame.tag == message.tag)
      return true;
    peer.broken = frame.magic != kFrameMagic
                      ? "rank " + std::to_string(message.peer) +
                            "'s ring holds no message where one begins"
                      : "rank " + std::to_string(message.peer) +
                            " sent a message with tag " +
                            std::to_string(frame.tag) + " where tag " +
                            std::to_string(message.tag) + " was expected";
    return false;
  }

  std::unique_ptr<Transport> network;
  std::unique_ptr<Segment> mine;
  std::vector<Peer> peers;
  int rank;
  bool everyPairShared;
};

bool SharedMemoryRequest::wait(Clock::time_point deadline, int *source) {
  if (!transport.wait(*message, deadline))
    return false;
  if (source)
    *source = message->peer;
  return true;
}

std::optional<bool> SharedMemoryRequest::isDone() {
  transport.progress();
  return message->complete;
}

/// Each ring's size: 4 MiB (a gradient bucket of the small models at
/// once), less with many ranks, so that a segment stays under 64 MiB.
size_t ringCapacity(int worldSize) {
  size_t capacity = size_t(4) << 20;
  while (capacity > (size_t(256) << 10) &&
         worldSize * capacity > (size_t(64) << 20))
    capacity /= 2;
  return capacity;
}

std::unique_ptr<Segment> mapSegment(int fd, int worldSize, size_t capacity) {
  size_t size = Segment::sizeFor(worldSize, capacity);
  void *base = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED)
    return nullptr;
  return std::make_unique<Segment>(base, size, worldSize, capacity);
}

/// Creates this rank's segment under a fresh name; null if it cannot (no
/// /dev/shm, or too little room in it: reserved now, not found missing
/// later as a SIGBUS).
std::unique_ptr<Segment> createSegment(const std::string &name, int worldSize,
                                       size_t capacity, uint64_t nonce) {
  int fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0)
    return nullptr;
  size_t size = Segment::sizeFor(worldSize, capacity);
  std::unique_ptr<Segment> segment;
  if (::posix_fallocate(fd, 0, off_t(size)) == 0)
    segment = mapSegment(fd, worldSize, capacity);
  ::close(fd);
  if (!segment) {
    ::shm_unlink(name.c_str());
    return nullptr;
  }
  // Fresh pages are zero: the counters, the doorbell and the sleepers.
  segment->header().magic = kMagic;
  segment->header().nonce = nonce;
  return segment;
}

/// Maps a peer's segment, if it is the one it announced.
std::unique_ptr<Segment> openSegment(const std::string &name, int worldSize,
                                     size_t capacity, uint64_t nonce) {
  int fd = ::shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0)
    return nullptr;
  struct stat status {};
  std::unique_ptr<Segment> segment;
  if (::fstat(fd, &status) == 0 &&
      size_t(status.st_size) == Segment::sizeFor(worldSize, capacity))
    segment = mapSegment(fd, worldSize, capacity);
  ::close(fd);
  if (segment &&
      (segment->header().magic != kMagic || segment->header().nonce != nonce))
    segment.reset();
  return segment;
}

std::vector<char> toBytes(const std::string &text) {
  return std::vector<char>(text.begin(), text.end());
}

} // namespace

std::unique_ptr<Transport>
addSharedMemoryPeers(std::unique_ptr<Transport> network,
                     const KeyValueStore &store, const std::string &keyPrefix,
                     const std::vector<bool> &sameHost) {
  if (const char *setting = std::getenv("DPC_SHARED_MEMORY");
      setting && std::string(setting) == "0")
    return network;
  int rank = network->getRank(), size = network->getWorldSize();
  if (size < 2)
    return network;
  size_t capacity = ringCapacity(size);
  std::random_device random;
  uint64_t nonce = (uint64_t(random()) << 32) ^ random();
  int pid = int(::getpid());
  char name[96];
  std::snprintf(name, sizeof(name), "/dpc-%d-%d-%016llx", pid, rank,
                static_cast<unsigned long long>(nonce));
  std::unique_ptr<Segment> mine = createSegment(name, size, capacity, nonce);
  std::ostringstream announce;
  announce << (mine ? name : "-") << ' ' << nonce << ' ' << pid << ' '
           << getStartTime(pid);
  store.set(keyPrefix + "shm/" + std::to_string(rank), toBytes(announce.str()));

  std::vector<SharedMemoryTransport::Peer> peers(size);
  std::string opened(size, '0');
  for (int p = 0; p < size; ++p) {
    std::vector<char> theirs =
        store.get(keyPrefix + "shm/" + std::to_string(p));
    std::istringstream fields(std::string(theirs.begin(), theirs.end()));
    std::string theirName;
    uint64_t theirNonce = 0;
    SharedMemoryTransport::Peer &peer = peers[p];
    fields >> theirName >> theirNonce >> peer.pid >> peer.startTime;
    // Only a peer whose process this rank sees (same pid namespace).
    if (p == rank || !sameHost.at(p) || !mine || theirName == "-" || !fields ||
        peer.startTime == 0 || getStartTime(peer.pid) != peer.startTime)
      continue;
    peer.segment = openSegment(theirName, size, capacity, theirNonce);
    opened[p] = peer.segment ? '1' : '0';
  }
  store.set(keyPrefix + "shm-open/" + std::to_string(rank), toBytes(opened));
  bool any = false;
  std::vector<std::string> masks(size);
  for (int p = 0; p < size; ++p) {
    std::vector<char> theirs =
        store.get(keyPrefix + "shm-open/" + std::to_string(p));
    masks[p].assign(theirs.begin(), theirs.end());
    // Both sides must agree, or one would wait on the other's network.
    if (int(theirs.size()) != size || theirs[rank] != '1')
      peers[p].segment.reset();
    any |= peers[p].segment != nullptr;
  }
  bool everyPairShared = true;
  for (int a = 0; a < size; ++a)
    for (int b = 0; b < size; ++b)
      everyPairShared &= a == b || (int(masks[a].size()) == size &&
                                    int(masks[b].size()) == size &&
                                    masks[a][b] == '1' && masks[b][a] == '1');
  // Every peer that opened ours has it mapped now.
  if (mine)
    ::shm_unlink(name);
  if (!any)
    return network;
  return std::make_unique<SharedMemoryTransport>(
      std::move(network), std::move(mine), std::move(peers), everyPairShared);
}

} // namespace dpc::comm
