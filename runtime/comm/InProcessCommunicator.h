//===- InProcessCommunicator.h - collectives between threads ----*- C++ -*-===//
//
// The ranks of one process (one device thread each) share memory, so an
// all-reduce needs no copies in between: each rank posts its buffers, and
// after a barrier rank r reduces its own slice of the elements, reading that
// slice from every rank's buffers in rank order 0, 1, ..., N-1, and writes
// the result back into every rank's buffers (a reduce-scatter and an
// all-gather in one pass); a second barrier ends the call. Every element is
// computed once, in a fixed order, so all ranks hold the same bits, on every
// run, whatever the thread timing.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_COMM_INPROCESSCOMMUNICATOR_H
#define DPC_RUNTIME_COMM_INPROCESSCOMMUNICATOR_H

#include "runtime/comm/Communicator.h"

#include <memory>

namespace dpc::comm {

/// The handles of a new group of `worldSize` ranks, rank i at index i.
std::vector<std::unique_ptr<Communicator>> createInProcessGroup(int worldSize);

} // namespace dpc::comm

#endif // DPC_RUNTIME_COMM_INPROCESSCOMMUNICATOR_H
