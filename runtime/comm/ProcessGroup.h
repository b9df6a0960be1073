//===- ProcessGroup.h - this process's rank and its group -------*- C++ -*-===//
//
// A process-per-device run: each process is one rank and drives one device.
// Who this process is comes from the environment its launcher set:
//
//  - torchrun or `dpc launch`: RANK, WORLD_SIZE, LOCAL_RANK,
//    LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT (under torchrun, whose
//    agent serves its own store on MASTER_PORT and sets
//    TORCHELASTIC_USE_AGENT_STORE=True, dpc's store is on MASTER_PORT + 1);
//  - mpirun (Open MPI): OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE,
//    OMPI_COMM_WORLD_LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_SIZE.
//
// connectProcessGroup() then meets the other ranks (Gloo: through the TCP
// store at MASTER_ADDR:MASTER_PORT that rank 0 serves; MPI: MPI_Init) and
// returns this rank's Communicator.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_COMM_PROCESSGROUP_H
#define DPC_RUNTIME_COMM_PROCESSGROUP_H

#include "runtime/comm/Communicator.h"

#include <chrono>
#include <memory>
#include <string>

namespace dpc::comm {

enum class Launcher { None, Torchrun, Mpirun };
enum class Backend { Default, Gloo, Mpi };

struct RankEnvironment {
  Launcher launcher = Launcher::None; // None: one process, every device
  int rank = 0, worldSize = 1;
  int localRank = 0, localWorldSize = 1;
  /// The launcher's restarts of the group so far (TORCHELASTIC_RESTART_COUNT:
  /// dpc launch --max-restarts, torchrun): each meets in keys of its own.
  int restartCount = 0;
  std::string masterAddr; // empty if unset
  int masterPort = -1;    // -1 if unset
};

/// Reads this process's environment; throws CommError naming the variable
/// whose value is bad or missing.
RankEnvironment readRankEnvironment();

/// "gloo" | "mpi" to a Backend; throws CommError otherwise.
Backend parseBackend(const std::string &name);

/// The backend `requested` resolves to under `environment` (Default: MPI
/// when mpirun started this process without MASTER_ADDR, else Gloo).
Backend resolveBackend(Backend requested, const RankEnvironment &environment);

/// Meets the other ranks and returns this rank's communicator; collectives
/// (and the rendezvous itself) time out after `timeout`. Throws CommError.
std::unique_ptr<Communicator>
connectProcessGroup(const RankEnvironment &environment, Backend backend,
                    std::chrono::milliseconds timeout);

/// Whether every rank agrees on `value` (a hash of something each loaded
/// itself): a collective. Throws CommError on every rank naming `what`,
/// the first rank whose value differs from rank 0's, and `detail`.
void checkSameOnEveryRank(Communicator &communicator, uint64_t value,
                          const std::string &what,
                          const std::string &detail = {});

/// Backend-specific parts (GlooCommunicator.cpp, MpiCommunicator.cpp).
std::unique_ptr<Communicator> connectGloo(const RankEnvironment &environment,
                                          std::chrono::milliseconds timeout);
std::unique_ptr<Communicator> connectMpi(const RankEnvironment &environment,
                                         std::chrono::milliseconds timeout);

} // namespace dpc::comm

#endif // DPC_RUNTIME_COMM_PROCESSGROUP_H
