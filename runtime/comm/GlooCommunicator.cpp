//===- GlooCommunicator.cpp - collectives over Gloo's TCP transport -------===//
//
// Rendezvous: rank 0 serves a TcpStore on MASTER_PORT; every rank announces
// itself there ("dpc/arrived/R") and waits for the others, so that a missing
// rank is named; then Gloo's full-mesh rendezvous runs over the same store
// and the PeerCommunicator algorithm runs over Gloo's unbound buffers.
//
// The address this rank listens on for its peers: the interface named by
// GLOO_SOCKET_IFNAME if set, 127.0.0.1 if the master is on loopback, else
// the local address the kernel routes MASTER_ADDR through. Each rank also
// leaves it in the store, so that a rank that loses another names its host.
// Ranks with the same address then exchange their messages through shared
// memory (SharedMemoryTransport.h), the others through Gloo.
//
//===----------------------------------------------------------------------===//

#include "runtime/comm/PeerCommunicator.h"
#include "runtime/comm/ProcessGroup.h"
#include "runtime/comm/SharedMemoryTransport.h"
#include "runtime/comm/TcpStore.h"

#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>

#include <algorithm>
#include <arpa/inet.h>
#include <cstdlib>
#include <cstring>
#include <ifaddrs.h>
#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

namespace dpc::comm {
namespace {

using std::chrono::milliseconds;

/// Gloo's view of a TcpStore: its keys under `prefix`.
class GlooStore : public gloo::rendezvous::Store {
public:
  GlooStore(TcpStore &store, std::string prefix, milliseconds timeout)
      : store(store), prefix(std::move(prefix)), timeout(timeout) {}
  void set(const std::string &key, const std::vector<char> &data) override {
    store.set(prefix + key, data);
  }
  std::vector<char> get(const std::string &key) override {
    return store.get(prefix + key, timeout);
  }
  void wait(const std::vector<std::string> &keys) override {
    wait(keys, timeout);
  }
  void wait(const std::vector<std::string> &keys,
            const milliseconds &limit) override {
    for (const std::string &key : keys)
      if (!store.waitFor(prefix + key, limit))
        throw CommError("rendezvous store " + store.getAddress() +
                        ": gloo's key '" + key + "' was not set in time");
  }

private:
  TcpStore &store;
  std::string prefix;
  milliseconds timeout;
};

class GlooRequest : public Transport::Request {
public:
  GlooRequest(std::unique_ptr<gloo::transport::UnboundBuffer> buffer,
              bool sending)
      : buffer(std::move(buffer)), sending(sending) {}

  bool wait(Clock::time_point deadline, int *source) override {
    // Rounded up: Gloo's own timeout must not end before the deadline.
    auto left = std::chrono::ceil<milliseconds>(deadline - Clock::now());
    left = std::max(left, milliseconds(1));
    try {
      // Gloo gives up with an exception (and poisons the context, which is
      // fine: a timeout ends the run).
      if (sending)
        buffer->waitSend(source, left);
      else
        buffer->waitRecv(source, left);
      return true;
    } catch (const std::exception &error) {
      // Gloo's timeout, not a lost connection (its clock may round a
      // little short of ours).
      if (Clock::now() + kClockSlack >= deadline)
        return false;
      throw CommError(std::string("gloo: ") + error.what());
    }
  }

private:
  static constexpr milliseconds kClockSlack{5};
  std::unique_ptr<gloo::transport::UnboundBuffer> buffer;
  bool sending;
};

/// A send or receive that Gloo refused to start (the peer's connection is
/// closed already): it fails when waited for, where the communicator names
/// the peer it lost.
class FailedRequest : public Transport::Request {
public:
  explicit FailedRequest(const std::exception &error)
      : message(std::string("gloo: ") + error.what()) {}
  bool wait(Clock::time_point, int *) override { throw CommError(message); }

private:
  std::string message;
};

class GlooTransport : public Transport {
public:
  GlooTransport(std::unique_ptr<TcpStoreServer> server,
                std::unique_ptr<TcpStore> store,
                std::shared_ptr<gloo::rendezvous::Context> context,
                std::vector<std::string> hosts)
      : server(std::move(server)), store(std::move(store)),
        context(std::move(context)), hosts(std::move(hosts)) {}

  int getRank() const override { return context->rank; }
  int getWorldSize() const override { return context->size; }
  const char *getName() const override { return "gloo"; }
  std::string getPeerHost(int peer) const override { return hosts.at(peer); }

  std::unique_ptr<Request> send(int peer, const void *data, size_t bytes,
                                uint32_t tag) override {
    try {
      auto buffer =
          context->createUnboundBuffer(const_cast<void *>(data), bytes);
      buffer->send(peer, tag);
      return std::make_unique<GlooRequest>(std::move(buffer), true);
    } catch (const std::exception &error) {
      return std::make_unique<FailedRequest>(error);
    }
  }
  std::unique_ptr<Request> receive(int peer, void *data, size_t bytes,
                                   uint32_t tag) override {
    try {
      auto buffer = context->createUnboundBuffer(data, bytes);
      buffer->recv(peer, tag);
      return std::make_unique<GlooRequest>(std::move(buffer), false);
    } catch (const std::exception &error) {
      return std::make_unique<FailedRequest>(error);
    }
  }

private:
  std::unique_ptr<TcpStoreServer> server; // rank 0 only
  std::unique_ptr<TcpStore> store;
  std::shared_ptr<gloo::rendezvous::Context> context;
  std::vector<std::string> hosts; // each rank's address, for messages
};

bool isLoopback(const std::string &host) {
  if (host == "localhost")
    return true;
  in_addr address{};
  return ::inet_pton(AF_INET, host.c_str(), &address) == 1 &&
         (ntohl(address.s_addr) >> 24) == 127;
}

/// The local IPv4 address the kernel would use to reach `host`:`port`.
std::string routeTo(const std::string &host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo *found = nullptr;
  if (::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints,
                    &found) != 0)
    return {};
  std::string local;
  int fd = ::socket(AF_INET, SOCK_DGRAM, 0);
  if (fd >= 0 && ::connect(fd, found->ai_addr, found->ai_addrlen) == 0) {
    sockaddr_in address{};
    socklen_t length = sizeof(address);
    char text[INET_ADDRSTRLEN];
    if (::getsockname(fd, reinterpret_cast<sockaddr *>(&address), &length) ==
            0 &&
        ::inet_ntop(AF_INET, &address.sin_addr, text, sizeof(text)))
      local = text;
  }
  if (fd >= 0)
    ::close(fd);
  ::freeaddrinfo(found);
  return local;
}

/// The IPv4 address of interface `name`, or `name` itself if it has none.
std::string interfaceAddress(const std::string &name) {
  ifaddrs *all = nullptr;
  if (::getifaddrs(&all) != 0)
    return name;
  std::string found = name;
  for (ifaddrs *entry = all; entry; entry = entry->ifa_next) {
    char text[INET_ADDRSTRLEN];
    if (entry->ifa_addr && entry->ifa_addr->sa_family == AF_INET &&
        name == entry->ifa_name &&
        ::inet_ntop(AF_INET,
                    &reinterpret_cast<sockaddr_in *>(entry->ifa_addr)->sin_addr,
                    text, sizeof(text))) {
      found = text;
      break;
    }
  }
  ::freeifaddrs(all);
  return found;
}

/// " (node 1)", " (nodes 1, 2)": where ranks missing from a run on several
/// nodes would run (torchrun's and dpc launch's layout: node by node,
/// `perNode` ranks each); empty on one node.
std::string formatNodes(const std::vector<int> &ranks, int perNode, int size) {
  if (perNode <= 0 || perNode >= size)
    return "";
  std::vector<int> nodes;
  for (int r : ranks)
    if (nodes.empty() || nodes.back() != r / perNode)
      nodes.push_back(r / perNode);
  std::string text = nodes.size() == 1 ? " (node " : " (nodes ";
  for (size_t i = 0; i < nodes.size(); ++i)
    text += (i ? ", " : "") + std::to_string(nodes[i]);
  return text + ")";
}

std::string formatSeconds(milliseconds timeout) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g s", timeout.count() / 1000.0);
  return text;
}

} // namespace

namespace {

/// Every rank announces itself and its world size in `store`, then waits
/// for the rest (each restart of the group has keys of its own, under
/// `generation`); a rank missing after `timeout`, or a world size that
/// differs, is a CommError. After a restart the store may be replaced: the
/// failed group's rank 0 may have served the old one.
void meetEveryRank(const RankEnvironment &environment, milliseconds timeout,
                   const std::string &generation,
                   std::unique_ptr<TcpStore> &store) {
  const std::string &host = environment.masterAddr;
  int port = environment.masterPort;
  std::string where = host + ":" + std::to_string(port);
  int rank = environment.rank, size = environment.worldSize;
  std::string arrived = "dpc/" + generation + "arrived/";
  auto deadline = Clock::now() + timeout;
  std::string mySize = std::to_string(size);
  auto announce = [&] {
    store->set(arrived + std::to_string(rank),
               std::vector<char>(mySize.begin(), mySize.end()));
  };
  announce();
  std::vector<int> missing;
  std::string who =
      " (rank " + std::to_string(rank) + " of " + std::to_string(size) + ")";
  for (int r = 0; r < size; ++r) {
    auto left = std::max(
        std::chrono::duration_cast<milliseconds>(deadline - Clock::now()),
        milliseconds(0));
    try {
      if (!store->waitFor(arrived + std::to_string(r), left))
        missing.push_back(r);
    } catch (const CommError &) {
      // After a restart, the store may have been the failed group's rank
      // 0's, on its way out: meet at the new one.
      if (environment.restartCount > 0 && left > milliseconds(0)) {
        store = std::make_unique<TcpStore>(host, port, left);
        announce();
        --r;
        continue;
      }
      throw CommError("rendezvous at " + where + who +
                      ": lost the store (rank 0 serves it) while waiting "
                      "for rank " +
                      std::to_string(r));
    }
  }
  if (!missing.empty())
    throw CommError("rendezvous at " + where + who + ": " +
                    formatRanks(missing) +
                    formatNodes(missing, environment.localWorldSize, size) +
                    " did not arrive within " + formatSeconds(timeout));
  for (int r = 0; r < size; ++r) {
    std::vector<char> theirs = store->get(arrived + std::to_string(r), timeout);
    if (std::string(theirs.begin(), theirs.end()) != mySize)
      throw CommError("rendezvous at " + where + ": rank " + std::to_string(r) +
                      " has WORLD_SIZE " +
                      std::string(theirs.begin(), theirs.end()) + ", rank " +
                      std::to_string(rank) + " has " + mySize);
  }
}

/// Where this rank listens for the others' messages (set in `attributes`):
/// GLOO_SOCKET_IFNAME's address, loopback for a local master, or the
/// address that routes to the master.
std::string chooseListenAddress(gloo::transport::tcp::attr &attributes,
                                const std::string &host, int port,
                                const std::string &where) {
  std::string address;
  if (const char *iface = std::getenv("GLOO_SOCKET_IFNAME"); iface && *iface)
    address = interfaceAddress(attributes.iface = iface);
  else if (isLoopback(host))
    address = attributes.hostname = "127.0.0.1";
  else if (std::string local = routeTo(host, port); !local.empty())
    address = attributes.hostname = local;
  else
    throw CommError("rendezvous at " + where +
                    ": no local address routes to MASTER_ADDR; set "
                    "GLOO_SOCKET_IFNAME to the interface to use");
  return address;
}

} // namespace

std::unique_ptr<Communicator> connectGloo(const RankEnvironment &environment,
                                          milliseconds timeout) {
  const std::string &host = environment.masterAddr;
  int port = environment.masterPort;
  std::string where = host + ":" + std::to_string(port);
  int rank = environment.rank, size = environment.worldSize;

  std::unique_ptr<TcpStoreServer> server;
  if (rank == 0)
    server = std::make_unique<TcpStoreServer>(port);
  auto store = std::make_unique<TcpStore>(host, port, timeout);

  // Each restart of the group has keys of its own.
  std::string generation = std::to_string(environment.restartCount) + "/";
  meetEveryRank(environment, timeout, generation, store);

  gloo::transport::tcp::attr attributes;
  std::string address = chooseListenAddress(attributes, host, port, where);
  // Set before Gloo's keys: once the mesh is up, every rank's is there.
  store->set("dpc/" + generation + "host/" + std::to_string(rank),
             std::vector<char>(address.begin(), address.end()));
  try {
    auto device = gloo::transport::tcp::CreateDevice(attributes);
    auto context = std::make_shared<gloo::rendezvous::Context>(rank, size);
    context->setTimeout(timeout);
    GlooStore glooStore(*store, "gloo/" + generation, timeout);
    context->connectFullMesh(glooStore, device);
    std::vector<std::string> hosts;
    for (int r = 0; r < size; ++r) {
      std::vector<char> theirs = store->get(
          "dpc/" + generation + "host/" + std::to_string(r), timeout);
      hosts.emplace_back(theirs.begin(), theirs.end());
    }
    // Ranks that listen on this rank's address are on its host: they then
    // talk through shared memory instead.
    std::vector<bool> sameHost(size);
    for (int r = 0; r < size; ++r)
      sameHost[r] = hosts[r] == hosts[rank];
    // On one host, the ranks alone say it all.
    if (std::count(hosts.begin(), hosts.end(), hosts[0]) == size)
      hosts.assign(size, "");
    TcpStore &keys = *store;
    KeyValueStore sharedMemoryKeys{
        [&](const std::string &key, const std::vector<char> &value) {
          keys.set(key, value);
        },
        [&](const std::string &key) { return keys.get(key, timeout); }};
    return createPeerCommunicator(
        addSharedMemoryPeers(std::make_unique<GlooTransport>(
                                 std::move(server), std::move(store),
                                 std::move(context), std::move(hosts)),
                             sharedMemoryKeys, "dpc/" + generation, sameHost),
        timeout);
  } catch (const CommError &) {
    throw;
  } catch (const std::exception &error) {
    throw CommError("rendezvous at " + where + ": gloo: " + error.what());
  }
}

} // namespace dpc::comm
