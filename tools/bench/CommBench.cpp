//===- CommBench.cpp - time the process-per-rank collectives --------------===//
//
// dpc-bench-comm [--ranks N] [--backend gloo|mpi] [--iters K] BYTES...
//
// Forks N processes on this host, connects them as `dpc launch` would (a
// Gloo group on loopback), and times K f32 sum all-reduces of each size in
// BYTES on every rank: what one gradient bucket (or the scalar outputs)
// costs a step in rank mode. Rank 0 prints the median and the mean wall
// microseconds per call, and the CPU microseconds per call of every rank.
//
//===----------------------------------------------------------------------===//

#include "runtime/comm/ProcessGroup.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <netinet/in.h>
#include <string>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

using namespace dpc::comm;

namespace {

int freePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  ::bind(fd, reinterpret_cast<sockaddr *>(&address), length);
  ::getsockname(fd, reinterpret_cast<sockaddr *>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

double cpuSeconds() {
  timespec now{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return now.tv_sec + now.tv_nsec * 1e-9;
}

int runRank(int rank, int size, int port, int iters,
            const std::vector<size_t> &sizes) {
  RankEnvironment environment;
  environment.launcher = Launcher::Torchrun;
  environment.rank = rank;
  environment.worldSize = size;
  environment.localRank = rank;
  environment.localWorldSize = size;
  environment.masterAddr = "127.0.0.1";
  environment.masterPort = port;
  auto communicator = connectProcessGroup(environment, Backend::Gloo,
                                          std::chrono::milliseconds(60000));
  for (size_t bytes : sizes) {
    std::vector<float> data(bytes / sizeof(float), 1.0f);
    for (int warm = 0; warm < 5; ++warm)
      communicator->allReduce(data.data(), int64_t(data.size()), ReduceOp::Sum);
    std::vector<double> micros;
    double cpu = cpuSeconds();
    for (int i = 0; i < iters; ++i) {
      auto start = std::chrono::steady_clock::now();
      communicator->allReduce(data.data(), int64_t(data.size()), ReduceOp::Sum);
      micros.push_back(std::chrono::duration<double, std::micro>(
                           std::chrono::steady_clock::now() - start)
                           .count());
    }
    cpu = (cpuSeconds() - cpu) * 1e6 / iters;
    double mean = 0;
    for (double m : micros)
      mean += m / iters;
    std::nth_element(micros.begin(), micros.begin() + iters / 2, micros.end());
    std::printf("rank %d: %10zu bytes: median %8.1f us, mean %8.1f us, "
                "CPU %8.1f us per all-reduce\n",
                rank, bytes, micros[iters / 2], mean, cpu);
    std::fflush(stdout);
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  int size = 2, iters = 200;
  std::vector<size_t> sizes;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--ranks" && i + 1 < argc)
      size = std::atoi(argv[++i]);
    else if (arg == "--iters" && i + 1 < argc)
      iters = std::atoi(argv[++i]);
    else if (!arg.empty() && arg[0] != '-')
      sizes.push_back(std::strtoull(arg.c_str(), nullptr, 10));
    else {
      std::fprintf(stderr, "usage: dpc-bench-comm [--ranks N] [--iters K] "
                           "BYTES...\n");
      return 2;
    }
  }
  if (sizes.empty())
    sizes = {16, 802816 + 10240 + 1024 + 40};
  if (size < 1 || iters < 1) {
    std::fprintf(stderr, "dpc-bench-comm: --ranks and --iters must be >= 1\n");
    return 2;
  }
  int port = freePort();
  std::vector<pid_t> children;
  for (int rank = 1; rank < size; ++rank) {
    pid_t pid = ::fork();
    if (pid == 0)
      return runRank(rank, size, port, iters, sizes);
    children.push_back(pid);
  }
  int status = 0;
  try {
    status = runRank(0, size, port, iters, sizes);
  } catch (const std::exception &error) {
    std::fprintf(stderr, "dpc-bench-comm: %s\n", error.what());
    status = 1;
  }
  for (pid_t child : children) {
    int childStatus = 0;
    ::waitpid(child, &childStatus, 0);
    if (!WIFEXITED(childStatus) || WEXITSTATUS(childStatus) != 0)
      status = 1;
  }
  return status;
}
