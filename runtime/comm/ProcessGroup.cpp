//===- ProcessGroup.cpp - this process's rank, from its environment -------===//

#include "runtime/comm/ProcessGroup.h"
#include "runtime/comm/PeerCommunicator.h"

#include <cerrno>
#include <cstdlib>

namespace dpc::comm {
namespace {

const char *lookup(const char *name) {
  const char *value = std::getenv(name);
  return value && *value ? value : nullptr;
}

/// The integer in variable `name`, or `fallback` if it is unset.
int readInt(const char *name, int fallback, int min) {
  const char *value = lookup(name);
  if (!value)
    return fallback;
  char *end = nullptr;
  errno = 0;
  long parsed = std::strtol(value, &end, 10);
  if (*end != '\0' || errno == ERANGE || parsed < min || parsed > 1 << 30)
    throw CommError(std::string(name) + ": expected a whole number >= " +
                    std::to_string(min) + ", got '" + value + "'");
  return static_cast<int>(parsed);
}

} // namespace

RankEnvironment readRankEnvironment() {
  RankEnvironment environment;
  // mpirun's variables win over a stray WORLD_SIZE, but not over RANK.
  bool mpirun = lookup("OMPI_COMM_WORLD_RANK") && !lookup("RANK");
  if (!mpirun && (lookup("RANK") || lookup("WORLD_SIZE"))) {
    environment.launcher = Launcher::Torchrun;
    if (!lookup("RANK") || !lookup("WORLD_SIZE"))
      throw CommError(std::string(lookup("RANK") ? "WORLD_SIZE" : "RANK") +
                      ": not set, but " +
                      (lookup("RANK") ? "RANK" : "WORLD_SIZE") +
                      " is (a process-per-device run needs both)");
    environment.worldSize = readInt("WORLD_SIZE", 1, 1);
    environment.rank = readInt("RANK", 0, 0);
    environment.localRank = readInt("LOCAL_RANK", environment.rank, 0);
    environment.localWorldSize =
        readInt("LOCAL_WORLD_SIZE", environment.worldSize, 1);
  } else if (mpirun) {
    environment.launcher = Launcher::Mpirun;
    environment.worldSize = readInt("OMPI_COMM_WORLD_SIZE", 1, 1);
    environment.rank = readInt("OMPI_COMM_WORLD_RANK", 0, 0);
    environment.localRank =
        readInt("OMPI_COMM_WORLD_LOCAL_RANK", environment.rank, 0);
    environment.localWorldSize =
        readInt("OMPI_COMM_WORLD_LOCAL_SIZE", environment.worldSize, 1);
  } else {
    return environment;
  }
  environment.restartCount = readInt("TORCHELASTIC_RESTART_COUNT", 0, 0);
  if (environment.rank >= environment.worldSize)
    throw CommError("RANK " + std::to_string(environment.rank) +
                    " is not below WORLD_SIZE " +
                    std::to_string(environment.worldSize));
  if (const char *addr = lookup("MASTER_ADDR"))
    environment.masterAddr = addr;
  environment.masterPort = readInt("MASTER_PORT", -1, 0);
  if (environment.masterPort > 65535)
    throw CommError("MASTER_PORT: " + std::to_string(environment.masterPort) +
                    " is not a port number");
  // torchrun's agent already serves its own (torch) store on MASTER_PORT
  // and says so to its workers: dpc's store takes the next port.
  const char *agentStore = lookup("TORCHELASTIC_USE_AGENT_STORE");
  if (agentStore && std::string(agentStore) == "True" &&
      environment.masterPort > 0 && environment.masterPort < 65535)
    ++environment.masterPort;
  return environment;
}

Backend parseBackend(const std::string &name) {
  if (name == "gloo")
    return Backend::Gloo;
  if (name == "mpi")
    return Backend::Mpi;
  throw CommError("--backend: expected gloo or mpi, got '" + name + "'");
}

Backend resolveBackend(Backend requested, const RankEnvironment &environment) {
  if (requested != Backend::Default)
    return requested;
  return environment.launcher == Launcher::Mpirun &&
                 environment.masterAddr.empty()
             ? Backend::Mpi
             : Backend::Gloo;
}

std::unique_ptr<Communicator>
connectProcessGroup(const RankEnvironment &environment, Backend backend,
                    std::chrono::milliseconds timeout) {
  if (resolveBackend(backend, environment) == Backend::Mpi) {
    if (environment.launcher != Launcher::Mpirun)
      throw CommError("--backend=mpi: start the ranks with mpirun (this "
                      "process has no OMPI_COMM_WORLD_RANK)");
    return connectMpi(environment, timeout);
  }
  if (environment.masterAddr.empty())
    throw CommError("MASTER_ADDR: not set (--backend=gloo meets the other "
                    "ranks at MASTER_ADDR:MASTER_PORT)");
  if (environment.masterPort <= 0)
    throw CommError("MASTER_PORT: not set (--backend=gloo meets the other "
                    "ranks at MASTER_ADDR:MASTER_PORT)");
  return connectGloo(environment, timeout);
}

void checkSameOnEveryRank(Communicator &communicator, uint64_t value,
                          const std::string &what, const std::string &detail) {
  // Each rank's value in its own slot (as two 32-bit halves, exact in i64):
  // a sum then shows every rank every value.
  int size = communicator.getWorldSize(), rank = communicator.getRank();
  std::vector<int64_t> slots(2 * size, 0);
  slots[2 * rank] = static_cast<int64_t>(value >> 32);
  slots[2 * rank + 1] = static_cast<int64_t>(value & 0xffffffffu);
  communicator.allReduce({{slots.data(), int64_t(slots.size()), DType::I64}},
                         ReduceOp::Sum);
  for (int r = 1; r < size; ++r)
    if (slots[2 * r] != slots[0] || slots[2 * r + 1] != slots[1])
      throw CommError("rank " + std::to_string(r) + "'s " + what +
                      " differs from rank 0's" +
                      (detail.empty() ? "" : " (" + detail + ")"));
}

} // namespace dpc::comm
