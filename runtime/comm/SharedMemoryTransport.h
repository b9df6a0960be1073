//===- SharedMemoryTransport.h - peers on this host, through memory -*- C++
//-*-===//
//
// Ranks on one host exchange their messages through shared memory instead
// of loopback TCP: Gloo's TCP transport costs every message a rendezvous
// of three socket trips, each through a woken event-loop thread, and that
// loop spins while a message waits for its receive; on a busy host this
// dominates a short step (a few hundred microseconds of CPU per message).
//
// Each rank maps one segment per rank of the host: a ring of bytes per
// sending rank, and a doorbell (a futex word) that a peer rings when it
// writes to this rank's rings or frees room in the rings it writes to. A
// wait polls every pending send and receive, spins on the doorbell for a
// short while (a peer's answer within a few microseconds costs no sleep),
// then sleeps on it. A receive takes a message of any size (its first
// bytes: Transport::receivesAnySize), so that a collective's header and
// data travel as one message. A message larger than a ring streams through it:
// every wait moves what it can of every pending message, so two ranks
// sending each other large buffers at once cannot deadlock.
//
// Which peers share memory is agreed on through the rendezvous store: each
// rank creates its segment (posix shared memory), leaves its name, a nonce,
// its pid and its start time in the store, opens its peers' segments and
// says which it could open; a pair uses shared memory only if both sides
// opened each other's segment and see each other's process (the same pid
// namespace). The segments are unlinked once every rank has opened them,
// so that a killed run leaves nothing behind in /dev/shm. A peer whose
// process has exited is named as a lost connection, as Gloo names a closed
// socket; every other peer goes through the network transport unchanged.
//
// DPC_SHARED_MEMORY=0 turns it off (every peer through the network).
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_COMM_SHAREDMEMORYTRANSPORT_H
#define DPC_RUNTIME_COMM_SHAREDMEMORYTRANSPORT_H

#include "runtime/comm/PeerCommunicator.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace dpc::comm {

/// The rendezvous store, as the transport needs it: keys written once,
/// get() waiting for its key (throws CommError after the timeout).
struct KeyValueStore {
  std::function<void(const std::string &, const std::vector<char> &)> set;
  std::function<std::vector<char>(const std::string &)> get;
};

/// `network` with the peers that share this host's memory moved to shared
/// memory; `keyPrefix` names this group's keys in `store` (a collective:
/// every rank of the group calls it). Only the ranks `sameHost` marks (by
/// their network address: hosts emulated by network namespaces share
/// /dev/shm, yet their traffic must cross their network) are candidates.
/// Returns `network` itself if no peer shares memory with this rank or
/// DPC_SHARED_MEMORY=0.
std::unique_ptr<Transport>
addSharedMemoryPeers(std::unique_ptr<Transport> network,
                     const KeyValueStore &store, const std::string &keyPrefix,
                     const std::vector<bool> &sameHost);

} // namespace dpc::comm

#endif // DPC_RUNTIME_COMM_SHAREDMEMORYTRANSPORT_H
