//===- TrainingLoop.cpp - the epochs of a run of `dpc run` ----------------===//
//
// TrainingSession::train: each epoch runs the train step over the shuffled
// training set, pipelined (a batch uploads while the step before it runs),
// guards the training state against non-finite values, then runs the eval
// step over the validation and test sets and hands the epoch's metrics and
// checkpoints to the run's sinks.
//
//===----------------------------------------------------------------------===//

#include "runtime/data/BatchLoader.h"
#include "runtime/exec/Executor.h"
#include "runtime/train/ModelInput.h"
#include "runtime/train/NonFinite.h"
#include "runtime/train/RunSinks.h"
#include "runtime/train/TrainingSession.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>

namespace dpc::train {

using rt::Executor;

namespace {

using Clock = std::chrono::steady_clock;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

[[noreturn]] void fail(const std::string &message) { throw RunError(message); }

/// "nan", "inf" or "-inf".
std::string formatNonFinite(double value) {
  return std::isnan(value) ? "nan" : value < 0 ? "-inf" : "inf";
}

/// Copies a batch into the images and labels inputs of `step`.
void bindBatch(Executor &executor, int step, const data::Batch &batch) {
  bindInputs(executor, step, batch);
  executor.setInput(step, plan::InputRole::Labels, batch.labels.data(),
                    batch.labels.size() * sizeof(int32_t));
}

/// A step's count of right predictions as a share of its rows: its
/// accuracy over the targets that count, times its rows. For one class per
/// sample that is the count itself; for tokens and pixels it weighs each
/// batch's accuracy as the loss's mean is weighed.
double rowShare(double correct, int64_t rows, int64_t counted) {
  return counted > 0 ? correct * static_cast<double>(rows) /
                           static_cast<double>(counted)
                     : 0.0;
}

/// A checkpoint taken mid-epoch resumes only where its epoch has as many
/// batches as it had done.
void checkResumable(const TrainingState &state, int64_t stepsPerEpoch,
                    const std::string &path) {
  if (state.partial.stepsDone < stepsPerEpoch)
    return;
  fail(path + ": stopped after batch " +
       std::to_string(state.partial.stepsDone) + " of epoch " +
       std::to_string(state.epochsDone + 1) +
       ", but an epoch of this data has only " + std::to_string(stepsPerEpoch) +
       " batches (another data set or --train-subset?)");
}

/// Skips the first `count` batches of the loader's epoch: a resumed run
/// trains on the rest, in the order an uninterrupted run would.
void skipBatches(data::BatchLoader &loader, int64_t count,
                 const std::string &imagesPath) {
  for (int64_t i = 0; i < count; ++i)
    if (!loader.next())
      fail(imagesPath + ": the epoch ended after " + std::to_string(i) +
           " batches, before the checkpoint's " + std::to_string(count));
}

} // namespace

struct TrainingSession::EvalSums {
  double loss = kNaN, accuracy = kNaN;
};

struct TrainingSession::EpochRun {
  int64_t epoch = 0;
  /// Where the epoch starts: a run resumed mid-epoch goes on where it
  /// stopped, with its sums.
  PartialEpoch done;
  Clock::time_point start;
  EpochMetrics metrics;
  double lossSum = 0, correct = 0;
  int64_t seen = 0, step = 0;

  double secondsSoFar() const {
    return done.trainSeconds +
           std::chrono::duration<double>(Clock::now() - start).count();
  }
};

TrainResult TrainingSession::train(std::ostream &out, bool interactive) {
  RunSinks sinks(options, local, leader, *executor, state, out, interactive);
  if (options.resume) {
    checkResumable(state, stepsPerEpoch, sinks.checkpoints.getPath());
    if (!local.quiet)
      out << "resuming from " << sinks.checkpoints.getPath() << " "
          << describePosition(state, stepsPerEpoch) << std::endl;
  }
  NonFiniteGuard guard(*executor, trainStep,
                       options.skipNonFiniteSteps ? OnNonFinite::SkipStep
                                                  : OnNonFinite::Stop);
  guard.keepState();
  auto stepsLeft = [&] {
    return options.maxSteps < 0 || state.stepsDone < options.maxSteps;
  };
  for (int64_t epoch = state.epochsDone; epoch < epochs && stepsLeft(); ++epoch)
    if (!runEpoch(epoch, sinks, guard))
      break;
  // A run that --steps stopped mid-epoch keeps its place too.
  sinks.checkpoints.saveIfBehind(*executor, state);
  sinks.trace.finish(); // a run shorter than the traced steps
  return report(sinks);
}

bool TrainingSession::runEpoch(int64_t epoch, RunSinks &sinks,
                               NonFiniteGuard &guard) {
  EpochRun run;
  run.epoch = epoch;
  run.start = Clock::now();
  trainLoader->startEpoch(epoch);
  run.done = state.partial;
  skipBatches(*trainLoader, run.done.stepsDone, trainSplit.imagesPath);
  run.lossSum = run.done.lossSum, run.correct = run.done.correct;
  run.seen = run.done.samplesSeen, run.step = run.done.stepsDone;
  run.metrics.epoch = epoch + 1;
  run.metrics.lr =
      options.schedule.at(options.lr, epoch, 0, stepsPerEpoch, epochs);
  // Step k+1's batch is bound (and uploads) while step k runs.
  const data::Batch *batch = bindNextStep(run, run.step);
  int64_t rows = batch ? batch->size : 0;
  int64_t counted = batch ? batch->countedTargets : 0;
  if (rows)
    executor->start(trainStep, rows);
  while (rows) {
    batch = bindNextStep(run, run.step + 1);
    executor->finish(trainStep);
    sinks.trace.afterStep();
    finishStep(run, rows, counted, sinks, guard);
    rows = batch ? batch->size : 0;
    counted = batch ? batch->countedTargets : 0;
    // --checkpoint-every, between two steps; an epoch's end saves below.
    if (sinks.checkpoints.isDueMidEpoch(state.stepsDone, run.step,
                                        stepsPerEpoch)) {
      state.partial = {run.step, run.seen, run.lossSum, run.correct,
                       run.secondsSoFar()};
      sinks.checkpoints.save(*executor, state);
    }
    if (rows)
      executor->start(trainStep, rows);
    double seconds = run.secondsSoFar();
    sinks.progress.update(epoch + 1, epochs, run.step, stepsPerEpoch,
                          run.seen ? run.lossSum / run.seen : kNaN,
                          trainCounts && run.seen ? run.correct / run.seen
                                                  : kNaN,
                          seconds > 0 ? run.seen / seconds : 0);
  }
  return finishEpoch(run, sinks);
}

const data::Batch *TrainingSession::bindNextStep(const EpochRun &run,
                                                 int64_t index) {
  if (options.maxSteps >= 0 &&
      state.stepsDone + (index - run.step) >= options.maxSteps)
    return nullptr;
  const data::Batch *batch = trainLoader->next();
  if (!batch)
    return nullptr;
  float lr = static_cast<float>(
      options.schedule.at(options.lr, run.epoch, index, stepsPerEpoch, epochs));
  bindBatch(*executor, trainStep, *batch);
  executor->setInput(trainStep, plan::InputRole::LearningRate, &lr, sizeof(lr));
  return batch;
}

void TrainingSession::finishStep(EpochRun &run, int64_t rows, int64_t counted,
                                 RunSinks &sinks, NonFiniteGuard &guard) {
  double loss = executor->getScalarOutput(trainStep, plan::OutputRole::Loss);
  double stepCorrect =
      trainCounts
          ? executor->getScalarOutput(trainStep, plan::OutputRole::Correct)
          : 0;
  if (std::optional<NonFiniteValue> bad = guard.check();
      bad || !std::isfinite(loss)) {
    std::string what = "step " + std::to_string(state.stepsDone + 1) +
                       " (epoch " + std::to_string(run.epoch + 1) + ", batch " +
                       std::to_string(run.step + 1) + "): " +
                       (bad ? bad->describe() + " after the update"
                            : "the loss is " + formatNonFinite(loss));
    if (!options.skipNonFiniteSteps)
      fail(planName + ": " + what +
           "; stopping (try a smaller --lr, or --on-nonfinite "
           "skip-step to skip such steps)");
    guard.restoreState();
    if (!local.quiet)
      sinks.out << what << "; skipped: its update is undone" << std::endl;
  } else {
    run.lossSum += loss * static_cast<double>(rows);
    run.correct += rowShare(stepCorrect, rows, counted);
    run.seen += rows;
  }
  ++run.step;
  ++state.stepsDone;
}

bool TrainingSession::finishEpoch(EpochRun &run, RunSinks &sinks) {
  EpochMetrics &m = run.metrics;
  double trainSeconds = run.secondsSoFar();
  bool complete = run.step == stepsPerEpoch;
  m.trainLoss = run.seen ? run.lossSum / run.seen : kNaN;
  m.trainAcc = trainCounts && run.seen ? run.correct / run.seen : kNaN;
  m.task = targets.task, m.lossName = targets.lossName;
  if (validationLoader) {
    EvalSums sums = evaluate(*validationLoader);
    m.valLoss = sums.loss, m.valAcc = sums.accuracy;
  }
  m.testAcc = m.testLoss = kNaN;
  if (testLoader) {
    EvalSums sums = evaluate(*testLoader);
    m.testLoss = sums.loss, m.testAcc = sums.accuracy;
  }
  m.epochSeconds = run.secondsSoFar(); // evaluation included
  m.imagesPerSecond = trainSeconds > 0 ? run.seen / trainSeconds : 0;
  if (complete) {
    state.epochsDone = run.epoch + 1;
    state.partial = {};
    state.history.push_back(m);
  } else {
    state.partial = {run.step, run.seen, run.lossSum, run.correct,
                     trainSeconds};
    lastPartialEpoch = m;
  }
  sinks.progress.finishEpoch(m, epochs);
  sinks.metrics.record(m, state.history, complete, epochs);
  if (complete && sinks.checkpoints.isSaving())
    sinks.checkpoints.save(*executor, state);
  return !options.onEpochEnd || options.onEpochEnd(m);
}

TrainingSession::EvalSums TrainingSession::evaluate(data::BatchLoader &loader) {
  bool hasCorrect =
      executor->findOutput(evalStep, plan::OutputRole::Correct) != nullptr;
  bool hasLoss =
      executor->findOutput(evalStep, plan::OutputRole::Loss) != nullptr;
  if (!hasCorrect && !hasLoss)
    return {};
  loader.startEpoch(0);
  // Each batch weighs by its targets that count: the means are those over
  // the data set's targets, as PyTorch's loss over all of them would be.
  double correct = 0, lossSum = 0, counts = 0;
  const data::Batch *batch = loader.next();
  if (batch) {
    bindBatch(*executor, evalStep, *batch);
    executor->start(evalStep, batch->size);
  }
  while (batch) {
    int64_t counted = batch->countedTargets;
    // The next batch uploads while this one runs.
    batch = loader.next();
    if (batch)
      bindBatch(*executor, evalStep, *batch);
    executor->finish(evalStep);
    if (hasCorrect)
      correct += executor->getScalarOutput(evalStep, plan::OutputRole::Correct);
    if (hasLoss && counted > 0)
      lossSum += executor->getScalarOutput(evalStep, plan::OutputRole::Loss) *
                 static_cast<double>(counted);
    counts += static_cast<double>(counted);
    if (batch)
      executor->start(evalStep, batch->size);
  }
  EvalSums sums;
  if (hasCorrect)
    sums.accuracy = correct / counts;
  if (hasLoss)
    sums.loss = lossSum / counts;
  return sums;
}

TrainResult TrainingSession::report(const RunSinks &sinks) const {
  TrainResult result;
  result.history = state.history;
  if (lastPartialEpoch)
    result.history.push_back(*lastPartialEpoch);
  result.finalTestAcc =
      result.history.empty() ? kNaN : result.history.back().testAcc;
  if (local.quiet)
    return result;
  if (targets.task == Task::Regression) {
    double loss =
        result.history.empty() ? kNaN : result.history.back().testLoss;
    char text[32];
    std::snprintf(text, sizeof(text), "%.4f", loss);
    sinks.out << "final test " << targets.lossName << ": "
              << (std::isfinite(loss) ? text : "- (no test set)") << std::endl;
  } else if (std::isfinite(result.finalTestAcc)) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.4f", result.finalTestAcc);
    sinks.out << "final test accuracy: " << text << std::endl;
  } else {
    sinks.out << "final test accuracy: - (no test set)" << std::endl;
  }
  // The last line: where this run's training state is.
  if (sinks.checkpoints.isEnabled())
    sinks.out << "checkpoint: " << sinks.checkpoints.getPath() << " "
              << describePosition(state, stepsPerEpoch) << std::endl;
  return result;
}

} // namespace dpc::train
