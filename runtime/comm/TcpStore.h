//===- TcpStore.h - the rendezvous key-value store --------------*- C++ -*-===//
//
// The ranks of a process-per-device run meet through a small key-value
// store at MASTER_ADDR:MASTER_PORT, as torchrun's ranks do through
// torch.distributed's TCPStore: rank 0 serves it (TcpStoreServer), every
// rank (rank 0 too) is a client. Keys are written once; get() waits until
// its key exists.
//
// Gloo's rendezvous runs over it (GlooCommunicator.cpp); it is also the
// hook for other backends that need to exchange a few bytes before their
// first collective. NCCL, for instance: rank 0 calls ncclGetUniqueId and
// set("nccl/unique-id", id), the other ranks get("nccl/unique-id", timeout),
// then every rank calls ncclCommInitRank(&comm, worldSize, id, rank).
//
// Protocol (one TCP connection per client, little-endian): a request is
// u8 kind (1 set, 2 get, 3 check), u32 key length, key, and for set u64
// value length and the value; the server answers a set with u8 1, a check
// with u8 0 or 1 (whether the key exists) and a get, once the key exists,
// with u64 length and the value. Clients poll with check, so that a get
// never blocks the connection past the client's timeout.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_COMM_TCPSTORE_H
#define DPC_RUNTIME_COMM_TCPSTORE_H

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace dpc::comm {

/// Serves the store on `port` of every interface until destroyed. Throws
/// CommError if it cannot listen. Port 0 picks a free port (getPort()).
class TcpStoreServer {
public:
  explicit TcpStoreServer(int port);
  ~TcpStoreServer();
  TcpStoreServer(const TcpStoreServer &) = delete;
  TcpStoreServer &operator=(const TcpStoreServer &) = delete;
  int getPort() const { return port; }

private:
  void acceptLoop();
  void serve(int fd);

  int listener = -1;
  int port = 0;
  std::mutex mutex;
  std::condition_variable changed;
  std::map<std::string, std::vector<char>> values;
  std::vector<int> connections;
  std::vector<std::thread> threads;
  bool stopping = false;
  std::thread acceptor;
};

/// One client connection. Every call throws CommError naming the store's
/// address if the store cannot be reached or answers wrongly.
class TcpStore {
public:
  /// Connects to `host`:`port`, retrying until `timeout` has passed (the
  /// server may start later than its clients).
  TcpStore(const std::string &host, int port,
           std::chrono::milliseconds timeout);
  ~TcpStore();
  TcpStore(const TcpStore &) = delete;
  TcpStore &operator=(const TcpStore &) = delete;

  void set(const std::string &key, const std::vector<char> &value);
  /// The value of `key`, waiting for it at most `timeout`; throws
  /// CommError (mentioning the key) after that.
  std::vector<char> get(const std::string &key,
                        std::chrono::milliseconds timeout);
  /// Whether `key` is set, waiting at most `timeout`.
  bool waitFor(const std::string &key, std::chrono::milliseconds timeout);
  const std::string &getAddress() const { return address; }

private:
  std::mutex mutex; // one request at a time on the connection
  int fd = -1;
  std::string address; // "host:port", for messages
};

} // namespace dpc::comm

#endif // DPC_RUNTIME_COMM_TCPSTORE_H
