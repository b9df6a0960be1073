//===- Launcher.h - `dpc launch`: one process per local device --*- C++ -*-===//
//
// torchrun's job for dpc: starts --nproc-per-node workers on this node,
// each with the environment torchrun gives its workers (RANK, LOCAL_RANK,
// WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK, MASTER_ADDR, MASTER_PORT; the
// rest of the environment, GLOO_SOCKET_IFNAME or NCCL_SOCKET_IFNAME say,
// passes through), forwards SIGINT and SIGTERM to them, and waits. When a
// worker fails (a non-zero exit or a signal), it names the worker's rank
// and status (several found ended at once: a signalled one first, as the
// others likely exited on losing it), stops the others (SIGTERM, then
// SIGKILL after a grace period) and exits with status 1 (128 + the signal when the launcher
// itself was interrupted). With --max-restarts K it starts them all again
// instead, up to K times, as torchrun does. Workers never outlive the
// launcher: each asks the kernel for SIGKILL when its parent dies
// (PR_SET_PDEATHSIG), so even a launcher killed by SIGKILL leaves no
// orphans, and the ranks of other nodes then lose theirs and stop within
// their --timeout.
//
// A command whose first word is `dpc` runs this very executable, so
// `dpc launch ... -- dpc run PLAN ...` needs no dpc on PATH.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_LAUNCH_LAUNCHER_H
#define DPC_RUNTIME_LAUNCH_LAUNCHER_H

#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace dpc::launch {

/// A bad command line; the message is one line.
struct LaunchUsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct LaunchOptions {
  int nprocPerNode = 1;
  int nnodes = 1;
  int nodeRank = 0;
  std::string masterAddr = "127.0.0.1";
  int masterPort = 29500;  // 0: a free port (one node only)
  double graceSeconds = 5; // --grace: SIGTERM to SIGKILL
  int maxRestarts = 0;     // --max-restarts: group restarts after a failure
  std::vector<std::string> command;
  bool help = false;
};

/// Parses the arguments after "launch" (torchrun spellings too:
/// --nproc_per_node, --node_rank, ...). Throws LaunchUsageError.
LaunchOptions parseLaunchOptions(const std::vector<std::string> &args);

const char *getLaunchUsage();

/// Runs the workers and returns the launcher's exit status.
int launchWorkers(const LaunchOptions &options, std::ostream &err);

/// `dpc launch` (argv[0] is "launch").
int launchCommand(int argc, char **argv);

} // namespace dpc::launch

#endif // DPC_RUNTIME_LAUNCH_LAUNCHER_H
