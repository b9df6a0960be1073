//===- RunCommand.cpp - `dpc run` -----------------------------------------===//

#include "runtime/train/RunCommand.h"
#include "runtime/train/RunOptions.h"
#include "runtime/train/Trainer.h"

#include <cstdlib>
#include <iostream>
#include <unistd.h>

namespace dpc::runtime {

int runCommand(const std::vector<std::string> &args, std::ostream &out,
               std::ostream &err) {
  try {
    train::RunOptions options = train::parseRunOptions(args);
    if (options.help) {
      out << train::getRunUsage();
      return 0;
    }
    bool interactive = &out == &std::cout && ::isatty(STDOUT_FILENO);
    train::runTraining(options, out, interactive);
    return 0;
  } catch (const train::UsageError &error) {
    err << "dpc run: " << error.what() << " (see dpc run --help)" << std::endl;
  } catch (const std::exception &error) {
    // One of several ranks: say which, and leave at once -- threads may be
    // blocked in collectives, and the other ranks learn of the failure from
    // the closed connections.
    const char *rank = std::getenv("RANK");
    if (!rank)
      rank = std::getenv("OMPI_COMM_WORLD_RANK");
    if (rank && *rank) {
      // One write, so that the ranks' lines do not interleave.
      std::string line = "rank " + std::string(rank) + ": " + error.what();
      err << line + "\n" << std::flush;
      out.flush();
      std::_Exit(1);
    }
    err << error.what() << std::endl;
  } catch (...) {
    err << "dpc run: unexpected error" << std::endl;
  }
  return 1;
}

int runCommand(int argc, char **argv) {
  std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + argc);
  return runCommand(args, std::cout, std::cerr);
}

} // namespace dpc::runtime
