//===- Trainer.cpp - the training loop of `dpc run` -----------------------===//
//
// runTraining opens a training session (TrainingSession.h) and trains it;
// whatever fails on the way becomes a RunError in one line.
//
//===----------------------------------------------------------------------===//

#include "runtime/train/Trainer.h"
#include "runtime/exec/Executor.h"
#include "runtime/train/TrainingSession.h"

#include <memory>
#include <new>

namespace dpc::train {

TrainResult runTraining(const RunOptions &given, std::ostream &out,
                        bool interactive) {
  // What the run is doing, for a memory allocation that fails in it.
  std::string doing = given.planPath + ": reading the plan";
  try {
    std::unique_ptr<TrainingSession> session =
        TrainingSession::open(given, doing);
    return session->train(out, interactive);
  } catch (...) {
    rethrowAsRunError(doing);
  }
}

void rethrowAsRunError(const std::string &doing) {
  try {
    throw;
  } catch (const RunError &) {
    throw;
  } catch (const std::bad_alloc &error) {
    // A device's OutOfMemory says where and how many bytes; a bare
    // bad_alloc (a container) says nothing of use.
    bool described = dynamic_cast<const rt::OutOfMemory *>(&error);
    throw RunError((doing.empty() ? "" : doing + ": ") + "out of memory" +
                   (described ? std::string(" (") + error.what() + ")" : ""));
  } catch (const std::exception &error) {
    throw RunError(error.what());
  }
}

} // namespace dpc::train
