//===- ProcessGroupTest.cpp - Gloo collectives and the rendezvous store ---===//
//
// The process-per-rank path, with ranks on threads over loopback: the
// TcpStore; Gloo rendezvous; all-reduce and broadcast bit for bit equal to
// the in-process communicator (every op and dtype, several buffers, odd
// sizes, 2 to 4 ranks), through shared memory (ranks on one address) and
// through Gloo's sockets alone, with messages larger than a ring; a
// mismatch named on every rank; a rank that never arrives named in a
// timeout. (MPI needs mpirun: test/launch covers it.)
//
//===----------------------------------------------------------------------===//

#include "runtime/comm/ProcessGroup.h"
#include "runtime/comm/InProcessCommunicator.h"
#include "runtime/comm/TcpStore.h"
#include "runtime/comm/test/OnEveryRank.h"
#include "runtime/comm/test/ShardedCheck.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <netinet/in.h>
#include <random>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace dpc::comm {
namespace {

using std::chrono::milliseconds;

int freePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  socklen_t length = sizeof(address);
  ::bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof(address));
  ::getsockname(fd, reinterpret_cast<sockaddr *>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

using test::onEveryRank;

/// A Gloo group of `size` ranks on loopback, rank i at index i.
std::vector<std::unique_ptr<Communicator>> connectGroup(int size,
                                                        milliseconds timeout) {
  int port = freePort();
  std::vector<std::unique_ptr<Communicator>> group(size);
  std::vector<std::string> errors(size);
  onEveryRank(size, [&](int rank) {
    RankEnvironment environment;
    environment.launcher = Launcher::Torchrun;
    environment.rank = rank;
    environment.worldSize = size;
    environment.masterAddr = "127.0.0.1";
    environment.masterPort = port;
    try {
      group[rank] = connectProcessGroup(environment, Backend::Gloo, timeout);
    } catch (const std::exception &error) {
      errors[rank] = error.what();
    }
  });
  for (const std::string &error : errors)
    EXPECT_EQ(error, "");
  return group;
}

TEST(TcpStoreTest, SetGetWaitAcrossClients) {
  TcpStoreServer server(0);
  TcpStore a("127.0.0.1", server.getPort(), milliseconds(2000));
  TcpStore b("localhost", server.getPort(), milliseconds(2000));
  EXPECT_FALSE(b.waitFor("key", milliseconds(20)));
  a.set("key", {'x', '\0', 'y'});
  EXPECT_TRUE(b.waitFor("key", milliseconds(0)));
  EXPECT_EQ(b.get("key", milliseconds(100)), (std::vector<char>{'x', 0, 'y'}));
  // A get waits for a later set.
  std::thread later([&] {
    std::this_thread::sleep_for(milliseconds(50));
    a.set("late", std::vector<char>(100000, 'z'));
  });
  EXPECT_EQ(b.get("late", milliseconds(5000)).size(), 100000u);
  later.join();
  try {
    b.get("never", milliseconds(50));
    FAIL() << "expected a timeout";
  } catch (const CommError &error) {
    EXPECT_NE(std::string(error.what()).find("'never' was not set"),
              std::string::npos)
        << error.what();
  }
}

TEST(TcpStoreTest, UnreachableStoreIsNamed) {
  int port = freePort();
  try {
    TcpStore store("127.0.0.1", port, milliseconds(200));
    FAIL() << "expected an error";
  } catch (const CommError &error) {
    EXPECT_EQ(std::string(error.what()),
              "rendezvous store 127.0.0.1:" + std::to_string(port) +
                  " (MASTER_ADDR:MASTER_PORT): not reachable within 0.2 s "
                  "(Connection refused)");
  }
}

/// One rank's buffers of one round: bytes, with their dtype and count.
struct Buffers {
  std::vector<std::vector<uint8_t>> bytes;
  std::vector<DType> dtypes;
  std::vector<int64_t> counts;
  std::vector<ReduceBuffer> view() {
    std::vector<ReduceBuffer> buffers;
    for (size_t b = 0; b < bytes.size(); ++b)
      buffers.push_back({bytes[b].data(), counts[b], dtypes[b]});
    return buffers;
  }
};

template <typename T>
void fillRandom(std::vector<uint8_t> &bytes, int64_t count,
                std::mt19937 &random) {
  bytes.resize(count * sizeof(T));
  std::uniform_real_distribution<double> uniform(-100, 100);
  for (int64_t i = 0; i < count; ++i) {
    T value = static_cast<T>(uniform(random));
    if constexpr (std::is_floating_point_v<T>)
      value = static_cast<T>(uniform(random) / 7.0); // inexact sums
    std::memcpy(bytes.data() + i * sizeof(T), &value, sizeof(T));
  }
}

/// A Gloo group whose ranks (threads of one process, on one address)
/// talk through Gloo's sockets alone, as ranks on different hosts do.
std::vector<std::unique_ptr<Communicator>>
connectGroupOverSockets(int size, milliseconds timeout) {
  ::setenv("DPC_SHARED_MEMORY", "0", 1);
  auto group = connectGroup(size, timeout);
  ::unsetenv("DPC_SHARED_MEMORY");
  return group;
}

/// Random rounds on the Gloo group and the in-process group alike; every
/// rank of both must end with the same bytes. `large` adds buffers of a
/// few million elements: messages larger than a shared-memory ring.
void checkSameAsInProcess(int size, int rounds, uint32_t seed,
                          bool sockets = false, bool large = false) {
  auto gloo = sockets ? connectGroupOverSockets(size, milliseconds(20000))
                      : connectGroup(size, milliseconds(20000));
  auto local = createInProcessGroup(size);
  std::mt19937 random(seed);
  for (int round = 0; round < rounds; ++round) {
    int numBuffers = 1 + random() % 3;
    std::vector<DType> dtypes;
    std::vector<int64_t> counts;
    bool floats = random() % 2;
    for (int b = 0; b < numBuffers; ++b) {
      static const DType kFloat[] = {DType::F32, DType::F64};
      static const DType kInt[] = {DType::I32, DType::I64};
      dtypes.push_back(floats ? kFloat[random() % 2] : kInt[random() % 2]);
      int64_t sizes[] = {0, 1, 15, 17, 100, 1000 + int64_t(random() % 5000)};
      counts.push_back(large ? (1 << 20) + int64_t(random() % (1 << 20))
                             : sizes[random() % 6]);
    }
    ReduceOp op = static_cast<ReduceOp>(random() % 3);
    bool broadcast = random() % 4 == 0;
    int root = random() % size;
    std::vector<Buffers> viaGloo(size), viaThreads;
    for (int rank = 0; rank < size; ++rank) {
      Buffers &buffers = viaGloo[rank];
      buffers.dtypes = dtypes;
      buffers.counts = counts;
      buffers.bytes.resize(numBuffers);
      for (int b = 0; b < numBuffers; ++b) {
        switch (dtypes[b]) {
        case DType::F32:
          fillRandom<float>(buffers.bytes[b], counts[b], random);
          break;
        case DType::F64:
          fillRandom<double>(buffers.bytes[b], counts[b], random);
          break;
        case DType::I32:
          fillRandom<int32_t>(buffers.bytes[b], counts[b], random);
          break;
        default:
          fillRandom<int64_t>(buffers.bytes[b], counts[b], random);
          break;
        }
      }
    }
    viaThreads = viaGloo;
    Buffers rootInput = viaGloo[root];
    for (auto *group : {&gloo, &local}) {
      auto &buffers = group == &gloo ? viaGloo : viaThreads;
      onEveryRank(size, [&](int rank) {
        if (broadcast) {
          (*group)[rank]->broadcast(buffers[rank].view(), root);
        } else {
          (*group)[rank]->allReduce(buffers[rank].view(), op);
        }
      });
    }
    for (int rank = 0; rank < size; ++rank)
      for (int b = 0; b < numBuffers; ++b) {
        ASSERT_EQ(viaGloo[rank].bytes[b], viaThreads[rank].bytes[b])
            << "round " << round << " rank " << rank << " buffer " << b;
        ASSERT_EQ(viaGloo[rank].bytes[b], viaGloo[0].bytes[b]);
        if (broadcast) {
          ASSERT_EQ(viaGloo[rank].bytes[b], rootInput.bytes[b]);
        }
      }
  }
}

TEST(GlooCommunicatorTest, SameBitsAsInProcessTwoRanks) {
  checkSameAsInProcess(2, 40, 1);
}
TEST(GlooCommunicatorTest, SameBitsAsInProcessThreeRanks) {
  checkSameAsInProcess(3, 30, 2);
}
TEST(GlooCommunicatorTest, SameBitsAsInProcessFourRanks) {
  checkSameAsInProcess(4, 20, 3);
}

// Ranks on one host talk through shared memory (above); these go through
// Gloo's sockets, and through rings that a message fills several times.
TEST(GlooCommunicatorTest, SameBitsAsInProcessOverSockets) {
  checkSameAsInProcess(2, 20, 4, /*sockets=*/true);
  checkSameAsInProcess(3, 20, 5, /*sockets=*/true);
}
TEST(GlooCommunicatorTest, MessagesLargerThanTheRingStream) {
  checkSameAsInProcess(2, 3, 6, /*sockets=*/false, /*large=*/true);
  checkSameAsInProcess(3, 2, 7, /*sockets=*/false, /*large=*/true);
}

// Reduce-scatter and all-gather on Gloo (the generic ones, over the
// all-reduce and broadcast above, as on MPI) give the all-reduce's bits.
TEST(GlooCommunicatorTest, ReduceScatterAndAllGatherMatchAllReduce) {
  for (int size : {2, 3}) {
    auto gloo = connectGroup(size, milliseconds(20000));
    test::checkShardedCollectives(gloo, 15, 30 + size);
  }
  auto overSockets = connectGroupOverSockets(3, milliseconds(20000));
  test::checkShardedCollectives(overSockets, 10, 40);
}

TEST(GlooCommunicatorTest, OneRankIsTheIdentity) {
  auto group = connectGroup(1, milliseconds(5000));
  float x[3] = {1, 2, 3};
  group[0]->allReduce(x, 3, ReduceOp::Mean);
  EXPECT_EQ(x[2], 3.f);
}

void checkMismatchIsNamedOnEveryRank(bool sockets) {
  auto group = sockets ? connectGroupOverSockets(3, milliseconds(5000))
                       : connectGroup(3, milliseconds(5000));
  std::vector<std::string> errors(3);
  onEveryRank(3, [&](int rank) {
    std::vector<float> x(rank == 1 ? 9 : 8, 1.f);
    try {
      group[rank]->allReduce(x.data(), int64_t(x.size()), ReduceOp::Sum);
    } catch (const CommError &error) {
      errors[rank] = error.what();
    }
  });
  for (int rank = 0; rank < 3; ++rank)
    EXPECT_EQ(errors[rank],
              "all-reduce #1 (gloo, rank " + std::to_string(rank) +
                  " of 3): rank 1 passed 1 buffers of 9 elements, rank 0 "
                  "passed 1 of 8");
  // The group goes on: nothing was sent past the headers (or, through
  // shared memory, no message was left behind).
  onEveryRank(3, [&](int rank) {
    double x = rank + 1;
    group[rank]->allReduce({{&x, 1, DType::F64}}, ReduceOp::Sum);
    EXPECT_EQ(x, 6.0);
  });
  // Another collective, another root: named, and the group goes on.
  onEveryRank(3, [&](int rank) {
    std::vector<float> x(1000, float(rank));
    try {
      if (rank == 2)
        group[rank]->broadcast({{x.data(), 1000, DType::F32}}, 2);
      else
        group[rank]->allReduce(x.data(), 1000, ReduceOp::Sum);
      ADD_FAILURE() << "rank " << rank << " did not throw";
    } catch (const CommError &error) {
      EXPECT_EQ(std::string(error.what()),
                std::string(rank == 2 ? "broadcast" : "all-reduce") +
                    " #3 (gloo, rank " + std::to_string(rank) +
                    " of 3): rank 2 is at broadcast #3, rank 0 at all-reduce "
                    "#3")
          << "rank " << rank;
    }
  });
  onEveryRank(3, [&](int rank) {
    std::vector<float> x(100, float(rank));
    try {
      group[rank]->broadcast({{x.data(), 100, DType::F32}}, rank == 1 ? 1 : 0);
      ADD_FAILURE() << "rank " << rank << " did not throw";
    } catch (const CommError &error) {
      EXPECT_NE(std::string(error.what())
                    .find("rank 1 broadcasts from another root than rank 0"),
                std::string::npos)
          << error.what();
    }
  });
  onEveryRank(3, [&](int rank) {
    std::vector<double> x(5000, rank + 1);
    group[rank]->allReduce({{x.data(), 5000, DType::F64}}, ReduceOp::Sum);
    EXPECT_EQ(x, std::vector<double>(5000, 6.0));
  });
}

TEST(GlooCommunicatorTest, MismatchIsNamedOnEveryRank) {
  checkMismatchIsNamedOnEveryRank(/*sockets=*/false);
}
TEST(GlooCommunicatorTest, MismatchIsNamedOnEveryRankOverSockets) {
  checkMismatchIsNamedOnEveryRank(/*sockets=*/true);
}

TEST(GlooCommunicatorTest, AbsentRankTimesOut) {
  auto group = connectGroup(3, milliseconds(300));
  std::string error;
  auto start = std::chrono::steady_clock::now();
  onEveryRank(3, [&](int rank) {
    if (rank == 2)
      return; // never joins
    float x = 1;
    try {
      group[rank]->allReduce(&x, 1, ReduceOp::Sum);
    } catch (const CommError &e) {
      if (rank == 0)
        error = e.what();
    }
  });
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(error, "all-reduce #1 (gloo, rank 0 of 3): timed out after 0.3 s: "
                   "rank 2 did not arrive");
}

TEST(RankEnvironmentTest, Backends) {
  RankEnvironment environment;
  environment.launcher = Launcher::Mpirun;
  EXPECT_EQ(resolveBackend(Backend::Default, environment), Backend::Mpi);
  environment.masterAddr = "10.0.0.1";
  EXPECT_EQ(resolveBackend(Backend::Default, environment), Backend::Gloo);
  environment.launcher = Launcher::Torchrun;
  EXPECT_EQ(resolveBackend(Backend::Mpi, environment), Backend::Mpi);
  EXPECT_THROW(parseBackend("nccl"), CommError);
}

} // namespace
} // namespace dpc::comm
