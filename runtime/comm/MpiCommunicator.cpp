//===- MpiCommunicator.cpp - collectives over MPI point-to-point ----------===//
//
// mpirun has already met the ranks: MPI_Init connects them. Collectives
// are the PeerCommunicator algorithm over MPI_Isend/MPI_Irecv, polled with
// MPI_Test so that a wait can time out (MPI's own waits cannot) and name
// the rank that did not arrive. The communicator is used from one thread
// at a time, not always the same one: MPI_THREAD_SERIALIZED.
//
//===----------------------------------------------------------------------===//

#include "runtime/comm/PeerCommunicator.h"
#include "runtime/comm/ProcessGroup.h"

#include <mpi.h>

#include <climits>
#include <thread>

namespace dpc::comm {
namespace {

std::string describeError(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string("mpi: ") + std::string(text, length);
}

void check(int code) {
  if (code != MPI_SUCCESS)
    throw CommError(describeError(code));
}

class MpiRequest : public Transport::Request {
public:
  MpiRequest() = default;
  ~MpiRequest() override {
    if (request != MPI_REQUEST_NULL) {
      MPI_Cancel(&request);
      MPI_Request_free(&request);
    }
  }
  MPI_Request request = MPI_REQUEST_NULL;

  std::optional<bool> isDone() override {
    int done = 0;
    MPI_Status status;
    if (MPI_Test(&request, &done, &status) != MPI_SUCCESS)
      return std::nullopt;
    return done != 0;
  }

  bool wait(Clock::time_point deadline, int *source) override {
    // Spin briefly, then back off: the cores are shared with the kernels.
    auto pause = std::chrono::microseconds(2);
    for (int spins = 0;; ++spins) {
      int done = 0;
      MPI_Status status;
      check(MPI_Test(&request, &done, &status));
      if (done) {
        if (source)
          *source = status.MPI_SOURCE;
        return true;
      }
      if (Clock::now() >= deadline)
        return false;
      if (spins > 64) {
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, std::chrono::microseconds(500));
      }
    }
  }
};

class MpiTransport : public Transport {
public:
  MpiTransport(int rank, int size) : rank(rank), size(size) {}
  ~MpiTransport() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized)
      MPI_Finalize();
  }

  int getRank() const override { return rank; }
  int getWorldSize() const override { return size; }
  const char *getName() const override { return "mpi"; }

  std::unique_ptr<Request> send(int peer, const void *data, size_t bytes,
                                uint32_t tag) override {
    auto request = std::make_unique<MpiRequest>();
    check(MPI_Isend(data, countOf(bytes), MPI_BYTE, peer, int(tag),
                    MPI_COMM_WORLD, &request->request));
    return request;
  }
  std::unique_ptr<Request> receive(int peer, void *data, size_t bytes,
                                   uint32_t tag) override {
    auto request = std::make_unique<MpiRequest>();
    check(MPI_Irecv(data, countOf(bytes), MPI_BYTE, peer, int(tag),
                    MPI_COMM_WORLD, &request->request));
    return request;
  }

private:
  static int countOf(size_t bytes) {
    if (bytes > size_t(INT_MAX))
      throw CommError("mpi: a message of " + std::to_string(bytes) +
                      " bytes is over MPI's int count");
    return static_cast<int>(bytes);
  }
  int rank, size;
};

} // namespace

std::unique_ptr<Communicator> connectMpi(const RankEnvironment &environment,
                                         std::chrono::milliseconds timeout) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided));
    if (provided < MPI_THREAD_SERIALIZED)
      throw CommError("mpi: the library does not support "
                      "MPI_THREAD_SERIALIZED");
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0, size = 1;
  check(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  check(MPI_Comm_size(MPI_COMM_WORLD, &size));
  if (rank != environment.rank || size != environment.worldSize)
    throw CommError("mpi: MPI_COMM_WORLD says rank " + std::to_string(rank) +
                    " of " + std::to_string(size) + ", the environment rank " +
                    std::to_string(environment.rank) + " of " +
                    std::to_string(environment.worldSize));
  return createPeerCommunicator(std::make_unique<MpiTransport>(rank, size),
                                timeout);
}

} // namespace dpc::comm
