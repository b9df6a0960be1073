//===- TcpStore.cpp - the rendezvous key-value store ----------------------===//

#include "runtime/comm/TcpStore.h"
#include "runtime/comm/Communicator.h"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace dpc::comm {
namespace {

enum : uint8_t { kSet = 1, kGet = 2, kCheck = 3 };

/// Limits that keep a stray client (a port scanner, the wrong program)
/// from making the server allocate without bound.
constexpr uint32_t kMaxKey = 4096;
constexpr uint64_t kMaxValue = 64u << 20;

bool writeAll(int fd, const void *data, size_t size) {
  const char *at = static_cast<const char *>(data);
  while (size > 0) {
    ssize_t n = ::send(fd, at, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    at += n, size -= n;
  }
  return true;
}

bool readAll(int fd, void *data, size_t size) {
  char *at = static_cast<char *>(data);
  while (size > 0) {
    ssize_t n = ::recv(fd, at, size, 0);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    at += n, size -= n;
  }
  return true;
}

} // namespace

//===----------------------------------------------------------------------===//
// Server
//===----------------------------------------------------------------------===//

TcpStoreServer::TcpStoreServer(int requestedPort) {
  listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0)
    throw CommError(std::string("rendezvous store: cannot open a socket (") +
                    std::strerror(errno) + ")");
  int one = 1;
  ::setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  address.sin_port = htons(static_cast<uint16_t>(requestedPort));
  if (::bind(listener, reinterpret_cast<sockaddr *>(&address),
             sizeof(address)) != 0 ||
      ::listen(listener, 128) != 0) {
    std::string reason = std::strerror(errno);
    ::close(listener);
    throw CommError("rendezvous store: cannot listen on port " +
                    std::to_string(requestedPort) +
                    " (MASTER_PORT): " + reason);
  }
  socklen_t length = sizeof(address);
  ::getsockname(listener, reinterpret_cast<sockaddr *>(&address), &length);
  port = ntohs(address.sin_port);
  acceptor = std::thread([this] { acceptLoop(); });
}

TcpStoreServer::~TcpStoreServer() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    stopping = true;
    for (int fd : connections)
      ::shutdown(fd, SHUT_RDWR);
  }
  changed.notify_all();
  ::shutdown(listener, SHUT_RDWR);
  acceptor.join();
  for (std::thread &thread : threads)
    thread.join();
  for (int fd : connections)
    ::close(fd);
  ::close(listener);
}

void TcpStoreServer::acceptLoop() {
  while (true) {
    pollfd waiting{listener, POLLIN, 0};
    int ready = ::poll(&waiting, 1, 100);
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (stopping)
        return;
    }
    if (ready <= 0)
      continue;
    int fd = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0)
      continue;
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    std::lock_guard<std::mutex> lock(mutex);
    connections.push_back(fd);
    threads.emplace_back([this, fd] { serve(fd); });
  }
}

void TcpStoreServer::serve(int fd) {
  while (true) {
    uint8_t kind;
    uint32_t keyLength;
    if (!readAll(fd, &kind, 1) || !readAll(fd, &keyLength, 4) ||
        keyLength > kMaxKey)
      return;
    std::string key(keyLength, '\0');
    if (!readAll(fd, key.data(), keyLength))
      return;
    if (kind == kSet) {
      uint64_t valueLength;
      if (!readAll(fd, &valueLength, 8) || valueLength > kMaxValue)
        return;
      std::vector<char> value(valueLength);
      if (!readAll(fd, value.data(), valueLength))
        return;
      {
        std::lock_guard<std::mutex> lock(mutex);
        values[key] = std::move(value);
      }
      changed.notify_all();
      uint8_t ok = 1;
      if (!writeAll(fd, &ok, 1))
        return;
    } else if (kind == kCheck) {
      uint8_t found;
      {
        std::lock_guard<std::mutex> lock(mutex);
        found = values.count(key) ? 1 : 0;
      }
      if (!writeAll(fd, &found, 1))
        return;
    } else if (kind == kGet) {
      std::vector<char> value;
      {
        std::unique_lock<std::mutex> lock(mutex);
        changed.wait(lock, [&] { return stopping || values.count(key); });
        if (stopping)
          return;
        value = values[key];
      }
      uint64_t length = value.size();
      if (!writeAll(fd, &length, 8) || !writeAll(fd, value.data(), length))
        return;
    } else {
      return;
    }
  }
}

//===----------------------------------------------------------------------===//
// Client
//===----------------------------------------------------------------------===//

TcpStore::TcpStore(const std::string &host, int port,
                   std::chrono::milliseconds timeout)
    : address(host + ":" + std::to_string(port)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo *found = nullptr;
  int status =
      ::getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
  if (status != 0)
    throw CommError("rendezvous store " + address +
                    " (MASTER_ADDR:MASTER_PORT): cannot resolve '" + host +
                    "': " + ::gai_strerror(status));
  std::string reason;
  while (true) {
    fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && ::connect(fd, found->ai_addr, found->ai_addrlen) == 0)
      break;
    reason = std::strerror(errno);
    if (fd >= 0)
      ::close(fd);
    fd = -1;
    if (std::chrono::steady_clock::now() >= deadline)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ::freeaddrinfo(found);
  if (fd < 0) {
    char seconds[32];
    std::snprintf(seconds, sizeof(seconds), "%g s", timeout.count() / 1000.0);
    throw CommError("rendezvous store " + address +
                    " (MASTER_ADDR:MASTER_PORT): not reachable within " +
                    seconds + " (" + reason + ")");
  }
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

TcpStore::~TcpStore() {
  if (fd >= 0)
    ::close(fd);
}

void TcpStore::set(const std::string &key, const std::vector<char> &value) {
  std::lock_guard<std::mutex> lock(mutex);
  uint8_t kind = kSet, ok = 0;
  uint32_t keyLength = key.size();
  uint64_t valueLength = value.size();
  if (!writeAll(fd, &kind, 1) || !writeAll(fd, &keyLength, 4) ||
      !writeAll(fd, key.data(), key.size()) || !writeAll(fd, &valueLength, 8) ||
      !writeAll(fd, value.data(), value.size()) || !readAll(fd, &ok, 1) ||
      ok != 1)
    throw CommError("rendezvous store " + address +
                    ": lost the connection setting '" + key + "'");
}

bool TcpStore::waitFor(const std::string &key,
                       std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  auto pause = std::chrono::milliseconds(1);
  while (true) {
    uint8_t found = 0;
    {
      std::lock_guard<std::mutex> lock(mutex);
      uint8_t kind = kCheck;
      uint32_t keyLength = key.size();
      if (!writeAll(fd, &kind, 1) || !writeAll(fd, &keyLength, 4) ||
          !writeAll(fd, key.data(), key.size()) || !readAll(fd, &found, 1))
        throw CommError("rendezvous store " + address +
                        ": lost the connection waiting for '" + key + "'");
    }
    if (found)
      return true;
    if (std::chrono::steady_clock::now() >= deadline)
      return false;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(50));
  }
}

std::vector<char> TcpStore::get(const std::string &key,
                                std::chrono::milliseconds timeout) {
  if (!waitFor(key, timeout))
    throw CommError("rendezvous store " + address + ": '" + key +
                    "' was not set within " +
                    std::to_string(timeout.count() / 1000.0) + " s");
  std::lock_guard<std::mutex> lock(mutex);
  uint8_t kind = kGet;
  uint32_t keyLength = key.size();
  uint64_t length = 0;
  std::vector<char> value;
  bool ok = writeAll(fd, &kind, 1) && writeAll(fd, &keyLength, 4) &&
            writeAll(fd, key.data(), key.size()) && readAll(fd, &length, 8) &&
            length <= kMaxValue;
  if (ok) {
    value.resize(length);
    ok = readAll(fd, value.data(), length);
  }
  if (!ok)
    throw CommError("rendezvous store " + address +
                    ": lost the connection getting '" + key + "'");
  return value;
}

} // namespace dpc::comm
