//===- Launcher.cpp - `dpc launch`: one process per local device ----------===//

#include "runtime/launch/Launcher.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <netinet/in.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace dpc::launch {
namespace {

int parseInt(const std::string &flag, const std::string &value, int min,
             int max) {
  char *end = nullptr;
  errno = 0;
  long parsed = std::strtol(value.c_str(), &end, 10);
  if (value.empty() || *end != '\0' || errno == ERANGE || parsed < min ||
      parsed > max)
    throw LaunchUsageError(flag + ": expected a whole number in " +
                           std::to_string(min) + ".." + std::to_string(max) +
                           ", got '" + value + "'");
  return static_cast<int>(parsed);
}

/// torchrun's underscores and dpc's dashes name the same flags.
std::string normalize(std::string flag) {
  for (char &c : flag)
    if (c == '_')
      c = '-';
  return flag;
}

/// A port nobody listens on now (the workers' rank 0 binds it soon after).
int pickFreePort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_ANY);
  address.sin_port = 0;
  socklen_t length = sizeof(address);
  if (fd < 0 ||
      ::bind(fd, reinterpret_cast<sockaddr *>(&address), sizeof(address)) ||
      ::getsockname(fd, reinterpret_cast<sockaddr *>(&address), &length)) {
    if (fd >= 0)
      ::close(fd);
    return -1;
  }
  ::close(fd);
  return ntohs(address.sin_port);
}

std::string describeStatus(int status) {
  if (WIFSIGNALED(status)) {
    int signal = WTERMSIG(status);
    const char *name = strsignal(signal);
    return "was killed by signal " + std::to_string(signal) + " (" +
           (name ? name : "?") + ")";
  }
  return "exited with status " + std::to_string(WEXITSTATUS(status));
}

bool failed(int status) {
  return WIFSIGNALED(status) || WEXITSTATUS(status) != 0;
}

/// A worker that ended, as waitpid reported it.
struct WorkerExit {
  int rank;
  pid_t pid;
  int status;
};

/// Names the failures the launcher found at one look, the likeliest cause
/// first. waitpid hands zombies back in the order the workers were started,
/// not the order they ended, and a rank that loses a peer exits on its own
/// within milliseconds, so the two are often found together: a worker ended
/// by a signal did not react to a lost peer (the launcher sends none before
/// it stops the group), so it comes first; then the lowest rank.
std::string describeFailures(std::vector<WorkerExit> failures) {
  std::sort(failures.begin(), failures.end(),
            [](const WorkerExit &a, const WorkerExit &b) {
              bool aSignalled = WIFSIGNALED(a.status);
              bool bSignalled = WIFSIGNALED(b.status);
              if (aSignalled != bSignalled)
                return aSignalled;
              return a.rank < b.rank;
            });
  std::string line;
  for (const WorkerExit &exit : failures) {
    if (!line.empty())
      line += "; also ";
    line += "rank " + std::to_string(exit.rank) + " (pid " +
            std::to_string(exit.pid) + ") " + describeStatus(exit.status);
  }
  return line;
}

} // namespace

const char *getLaunchUsage() {
  return "usage: dpc launch --nproc-per-node N [--nnodes M --node-rank R]\n"
         "         [--master-addr ADDR] [--master-port PORT] [--grace SECONDS]"
         "\n         [--max-restarts K]"
         "\n         -- COMMAND [ARGS...]   (e.g. -- dpc run PLAN --data ...)\n"
         "  Starts N workers with torchrun's environment (RANK, LOCAL_RANK,\n"
         "  WORLD_SIZE, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT). Port 0\n"
         "  picks a free port (one node only); the default is 29500. After a\n"
         "  worker fails, --max-restarts K starts them all again, up to K\n"
         "  times (TORCHELASTIC_RESTART_COUNT; dpc run --checkpoint "
         "resumes).\n";
}

LaunchOptions parseLaunchOptions(const std::vector<std::string> &args) {
  LaunchOptions options;
  bool nprocGiven = false, portGiven = false;
  size_t i = 0;
  for (; i < args.size(); ++i) {
    std::string arg = args[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg == "-h" || arg == "--help") {
      options.help = true;
      return options;
    }
    if (arg.rfind("--", 0) != 0)
      break; // the command starts here (torchrun allows no "--")
    std::string flag = normalize(arg), value;
    if (size_t eq = arg.find('='); eq != std::string::npos) {
      flag = normalize(arg.substr(0, eq));
      value = arg.substr(eq + 1);
    } else {
      if (i + 1 >= args.size())
        throw LaunchUsageError(flag + " needs a value");
      value = args[++i];
    }
    if (flag == "--nproc-per-node") {
      options.nprocPerNode = parseInt(flag, value, 1, 4096);
      nprocGiven = true;
    } else if (flag == "--nnodes") {
      options.nnodes = parseInt(flag, value, 1, 65536);
    } else if (flag == "--node-rank") {
      options.nodeRank = parseInt(flag, value, 0, 65535);
    } else if (flag == "--master-addr") {
      if (value.empty())
        throw LaunchUsageError("--master-addr needs a host name or address");
      options.masterAddr = value;
    } else if (flag == "--master-port") {
      options.masterPort = parseInt(flag, value, 0, 65535);
      portGiven = true;
    } else if (flag == "--max-restarts") {
      options.maxRestarts = parseInt(flag, value, 0, 1000000);
    } else if (flag == "--grace") {
      char *end = nullptr;
      options.graceSeconds = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0' || !(options.graceSeconds >= 0))
        throw LaunchUsageError("--grace: expected seconds >= 0, got '" + value +
                               "'");
    } else {
      throw LaunchUsageError("unknown flag '" + arg + "'");
    }
  }
  options.command.assign(args.begin() + i, args.end());
  if (!nprocGiven)
    throw LaunchUsageError("missing --nproc-per-node N");
  if (options.command.empty())
    throw LaunchUsageError("missing the command to run (dpc launch "
                           "--nproc-per-node N -- dpc run PLAN ...)");
  if (options.nodeRank >= options.nnodes)
    throw LaunchUsageError("--node-rank " + std::to_string(options.nodeRank) +
                           " is not below --nnodes " +
                           std::to_string(options.nnodes));
  if (options.masterPort == 0 && options.nnodes > 1)
    throw LaunchUsageError("--master-port 0 (a free port) works on one node "
                           "only: give every node the same port");
  (void)portGiven;
  return options;
}

namespace {

/// How one start of the workers ended.
struct Attempt {
  int exitStatus = 0;
  bool workerFailed = false; // a worker failed (not the launcher signalled)
};

/// In the forked child: sets the rank's environment (torchrun's names) and
/// runs the worker's command; never returns.
[[noreturn]] void execWorker(const LaunchOptions &options,
                             std::vector<char *> &argv, int rank, int local,
                             int port, int restart, const sigset_t &previous,
                             pid_t launcher) {
  int worldSize = options.nprocPerNode * options.nnodes;
  auto set = [](const char *name, int value) {
    ::setenv(name, std::to_string(value).c_str(), 1);
  };
  set("RANK", rank);
  set("LOCAL_RANK", local);
  set("WORLD_SIZE", worldSize);
  set("LOCAL_WORLD_SIZE", options.nprocPerNode);
  set("GROUP_RANK", options.nodeRank);
  set("GROUP_WORLD_SIZE", options.nnodes);
  set("ROLE_RANK", rank);
  set("ROLE_WORLD_SIZE", worldSize);
  set("MASTER_PORT", port);
  // torchrun's names: a restarted worker resumes (dpc run --checkpoint).
  set("TORCHELASTIC_RESTART_COUNT", restart);
  set("TORCHELASTIC_MAX_RESTARTS", options.maxRestarts);
  ::setenv("MASTER_ADDR", options.masterAddr.c_str(), 1);
  sigprocmask(SIG_SETMASK, &previous, nullptr);
  // A launcher killed by SIGKILL cannot stop its workers: the kernel
  // does, as they would otherwise train on as orphans (and hold their
  // ports and GPUs). The signal survives exec; a launcher that died
  // before the prctl left another parent behind.
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != launcher)
    std::_Exit(128 + SIGKILL);
  ::execvp(argv[0], argv.data());
  std::fprintf(stderr, "dpc launch: cannot run '%s': %s\n", argv[0],
               std::strerror(errno));
  std::_Exit(127);
}

/// Starts this node's workers (restart `restart` of the group) and waits
/// for them; the signals in `handled` are blocked and arrive here.
Attempt runWorkers(const LaunchOptions &options, std::vector<char *> &argv,
                   int port, int restart, const sigset_t &handled,
                   const sigset_t &previous, std::ostream &err) {
  std::vector<pid_t> workers(options.nprocPerNode, -1);
  std::vector<bool> running(options.nprocPerNode, false);
  std::cout.flush();
  err.flush();
  pid_t launcher = ::getpid();
  for (int local = 0; local < options.nprocPerNode; ++local) {
    int rank = options.nodeRank * options.nprocPerNode + local;
    pid_t pid = ::fork();
    if (pid < 0) {
      err << "dpc launch: cannot start rank " << rank << ": "
          << std::strerror(errno) << std::endl;
      for (int r = 0; r < local; ++r)
        ::kill(workers[r], SIGKILL);
      return {1, false};
    }
    if (pid == 0)
      execWorker(options, argv, rank, local, port, restart, previous, launcher);
    workers[local] = pid;
    running[local] = true;
  }

  auto alive = [&] {
    int count = 0;
    for (bool r : running)
      count += r;
    return count;
  };
  auto signalAll = [&](int signal) {
    for (int local = 0; local < options.nprocPerNode; ++local)
      if (running[local])
        ::kill(workers[local], signal);
  };
  Attempt attempt;
  bool stopping = false;
  std::chrono::steady_clock::time_point killAt;
  while (alive() > 0) {
    timespec wait{0, 100 * 1000 * 1000};
    int signal = sigtimedwait(&handled, nullptr, &wait);
    if (signal == SIGINT || signal == SIGTERM || signal == SIGHUP) {
      signalAll(signal);            // forwarded; workers decide how to stop
      attempt.workerFailed = false; // no restart after an interruption
      if (!stopping) {
        stopping = true;
        attempt.exitStatus = 128 + signal;
        killAt = std::chrono::steady_clock::now() +
                 std::chrono::milliseconds(
                     static_cast<int64_t>(options.graceSeconds * 1000));
      }
    }
    // Every worker that ended since the last look; the failures among
    // them, unless the launcher is stopping the group anyway.
    std::vector<WorkerExit> failures;
    auto reap = [&] {
      int status;
      pid_t pid;
      while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) {
        for (int local = 0; local < options.nprocPerNode; ++local) {
          if (workers[local] != pid || !running[local])
            continue;
          running[local] = false;
          if (failed(status) && !stopping)
            failures.push_back(
                {options.nodeRank * options.nprocPerNode + local, pid, status});
          break;
        }
      }
    };
    reap();
    // A killed worker closes its sockets before it becomes a zombie, so a
    // peer that saw them close can be found first: give a signalled worker
    // a moment to show up before naming the failure.
    for (int look = 0; look < 20 && !failures.empty() && alive() > 0 &&
                       std::none_of(failures.begin(), failures.end(),
                                    [](const WorkerExit &exit) {
                                      return WIFSIGNALED(exit.status);
                                    });
         ++look) {
      ::usleep(10 * 1000);
      reap();
    }
    if (!failures.empty()) {
      err << "dpc launch: " << describeFailures(failures);
      if (alive() > 0)
        err << "; stopping the other " << alive() << " worker"
            << (alive() == 1 ? "" : "s");
      err << std::endl;
      attempt = {1, true}; // as torchrun: the line above says why
      stopping = true;
      signalAll(SIGTERM);
      killAt = std::chrono::steady_clock::now() +
               std::chrono::milliseconds(
                   static_cast<int64_t>(options.graceSeconds * 1000));
    }
    if (stopping && std::chrono::steady_clock::now() >= killAt)
      signalAll(SIGKILL);
  }
  return attempt;
}

} // namespace

int launchWorkers(const LaunchOptions &options, std::ostream &err) {
  int port = options.masterPort;
  if (port == 0 && (port = pickFreePort()) < 0) {
    err << "dpc launch: cannot find a free port: " << std::strerror(errno)
        << std::endl;
    return 1;
  }
  // The signals the launcher handles arrive through sigtimedwait; workers
  // get the default dispositions back before exec.
  sigset_t handled, previous;
  sigemptyset(&handled);
  for (int signal : {SIGINT, SIGTERM, SIGCHLD, SIGHUP})
    sigaddset(&handled, signal);
  sigprocmask(SIG_BLOCK, &handled, &previous);

  std::vector<std::string> command = options.command;
  if (command[0] == "dpc") {
    char self[4096];
    ssize_t length = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (length > 0)
      command[0] = std::string(self, length);
  }
  std::vector<char *> argv;
  for (std::string &word : command)
    argv.push_back(word.data());
  argv.push_back(nullptr);

  // As torchrun: after a worker fails, the whole group starts again, up to
  // --max-restarts times (every node's launcher restarts its own workers,
  // whose ranks fail too when they lose the failed one).
  Attempt attempt;
  for (int restart = 0;; ++restart) {
    attempt = runWorkers(options, argv, port, restart, handled, previous, err);
    if (!attempt.workerFailed || restart >= options.maxRestarts)
      break;
    err << "dpc launch: restarting the workers (restart " << restart + 1
        << " of " << options.maxRestarts << ")" << std::endl;
  }
  sigprocmask(SIG_SETMASK, &previous, nullptr);
  return attempt.exitStatus;
}

int launchCommand(int argc, char **argv) {
  std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + argc);
  try {
    LaunchOptions options = parseLaunchOptions(args);
    if (options.help) {
      std::cout << getLaunchUsage();
      return 0;
    }
    return launchWorkers(options, std::cerr);
  } catch (const LaunchUsageError &error) {
    std::cerr << "dpc launch: " << error.what() << " (see dpc launch --help)"
              << std::endl;
    return 1;
  }
}

} // namespace dpc::launch
