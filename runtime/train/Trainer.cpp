//===- Trainer.cpp - the training loop of `dpc run` -----------------------===//

#include "runtime/train/Trainer.h"
#include "runtime/abi/PlanTypes.h"
#include "runtime/comm/ProcessGroup.h"
#include "runtime/data/BatchLoader.h"
#include "runtime/data/Dataset.h"
#include "runtime/exec/Executor.h"
#include "runtime/exec/Trace.h"
#include "runtime/io/FileWrite.h"
#include "runtime/plan/Checksum.h"
#include "runtime/plan/PlanMemory.h"
#include "runtime/train/Checkpoint.h"
#include "runtime/train/DataOptions.h"
#include "runtime/train/Init.h"
#include "runtime/train/ModelInput.h"
#include "runtime/train/NonFinite.h"
#include "runtime/train/Progress.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <memory>
#include <sstream>

namespace dpc::train {

using data::Dataset;
using exec::Executor;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

[[noreturn]] void fail(const std::string &message) { throw RunError(message); }

using Split = LoadedData;

/// Checks one split against the plan: samples and label range (the loader
/// checked the image shape).
void checkSplit(const Split &split, int64_t numClasses) {
  if (split.dataset.count == 0)
    fail(split.imagesPath + ": holds no images");
  data::checkLabels(split.dataset, split.labelsPath, numClasses);
}

/// Moves the last `fraction` of `train` (rounded down) into a validation
/// split of its own.
Split splitOffValidation(Split &train, double fraction) {
  int64_t count = static_cast<int64_t>(fraction * train.dataset.count);
  if (count < 1 || count >= train.dataset.count) {
    char given[32];
    std::snprintf(given, sizeof(given), "%g", fraction);
    fail(train.imagesPath + ": --val-split " + given + " of " +
         std::to_string(train.dataset.count) + " samples leaves " +
         (count < 1 ? "no validation samples" : "no training samples"));
  }
  Split validation{data::splitOffLast(train.dataset, count), train.imagesPath,
                   train.labelsPath};
  return validation;
}

/// The pixel a crop pads with: a zero pixel, normalized.
data::Augmentation getAugmentation(const RunOptions &options) {
  data::Augmentation augmentation = options.augmentation;
  const data::Normalization &normalization = options.normalization;
  for (size_t c = 0; c < normalization.mean.size(); ++c)
    augmentation.fill.push_back((0.0f - normalization.mean[c]) /
                                normalization.std[c]);
  return augmentation;
}

/// Checks that step `step` binds `name` as `dtype`; returns the tensor.
const plan::Tensor *requireBinding(const Executor &executor, int step,
                                   const char *name, plan::DType dtype,
                                   bool input, bool required) {
  const plan::Tensor *tensor =
      input ? executor.findInput(step, name) : executor.findOutput(step, name);
  std::string stepName = executor.getPlan()->steps()->Get(step)->name()->str();
  if (!tensor) {
    if (required)
      fail(executor.getPlan().getName() + ": " + stepName + " has no " +
           (input ? "input" : "output") + " '" + name + "'");
    return nullptr;
  }
  if (tensor->dtype() == dtype)
    return tensor;
  fail(executor.getPlan().getName() + ": " + stepName + "'s " + name + " is " +
       plan::EnumNameDType(tensor->dtype()) + ", expected " +
       plan::EnumNameDType(dtype));
}

/// The sample dims the plan was compiled for: images [C, H, W] or token
/// ids [T].
std::vector<int64_t> sampleDims(const Executor &executor, int trainStep) {
  const plan::Plan &plan = executor.getPlan().get();
  std::vector<int64_t> sample = getInputSample(executor, trainStep);
  if (plan.sample_dims() && plan::toDims(plan.sample_dims()) != sample)
    fail(executor.getPlan().getName() + ": sample_dims " +
         plan::formatDims(plan::toDims(plan.sample_dims())) +
         " disagree with train_step's input " + plan::formatDims(sample));
  return sample;
}

/// "nan", "inf" or "-inf".
std::string formatNonFinite(double value) {
  return std::isnan(value) ? "nan" : value < 0 ? "-inf" : "inf";
}

/// Writes `text` to `path` (via a temporary file, so a reader never sees
/// half a plot).
void writeTextFile(const std::string &path, const std::string &text) {
  std::string error;
  if (!io::writeFileAtomically(path, text, error))
    fail(error);
}

/// Copies a batch into the images and labels inputs of `step`.
void bindBatch(Executor &executor, int step, const data::Batch &batch) {
  bindInputs(executor, step, batch);
  executor.setInput(step, "labels", batch.labels.data(),
                    batch.labels.size() * sizeof(int32_t));
}

/// The eval step's loss and accuracy over a data set: the means over its
/// samples (NaN where the plan has no such output).
struct EvalSums {
  double loss = kNaN, accuracy = kNaN;
};

/// Runs the eval step over `loader`'s data set (`count` samples) in order.
EvalSums evaluate(Executor &executor, int evalStep, data::BatchLoader &loader,
                  int64_t count) {
  bool hasCorrect = executor.findOutput(evalStep, "correct") != nullptr;
  bool hasLoss = executor.findOutput(evalStep, "loss") != nullptr;
  if (!hasCorrect && !hasLoss)
    return {};
  loader.startEpoch(0);
  double correct = 0, lossSum = 0;
  const data::Batch *batch = loader.next();
  if (batch) {
    bindBatch(executor, evalStep, *batch);
    executor.start(evalStep, batch->size);
  }
  while (batch) {
    int64_t rows = batch->size;
    // The next batch uploads while this one runs.
    batch = loader.next();
    if (batch)
      bindBatch(executor, evalStep, *batch);
    executor.finish(evalStep);
    if (hasCorrect)
      correct += executor.getScalarOutput(evalStep, "correct");
    if (hasLoss)
      lossSum += executor.getScalarOutput(evalStep, "loss") *
                 static_cast<double>(rows);
    if (batch)
      executor.start(evalStep, batch->size);
  }
  EvalSums sums;
  if (hasCorrect)
    sums.accuracy = correct / static_cast<double>(count);
  if (hasLoss)
    sums.loss = lossSum / static_cast<double>(count);
  return sums;
}

/// --layout, --normalize, --augment and --val-split as text.
std::string describeDataForm(const RunOptions &options) {
  std::string text = std::to_string(int(options.layout)) + "/";
  for (size_t c = 0; c < options.normalization.mean.size(); ++c)
    text += std::to_string(options.normalization.mean[c]) + ":" +
            std::to_string(options.normalization.std[c]) + ",";
  return text + "/" + std::to_string(options.augmentation.cropPadding) +
         (options.augmentation.flip ? "f" : "-") + "/" +
         std::to_string(options.valSplit) + "/" +
         (options.valImages.empty() ? "-" : "v");
}

/// The flags every rank of a process-per-device run must agree on.
uint64_t hashRunOptions(const RunOptions &options) {
  std::string text =
      std::to_string(options.seed) + "/" + std::to_string(options.epochs) +
      "/" + std::to_string(options.maxSteps) + "/" +
      std::to_string(options.lr) + "/" + options.init + "/" +
      std::to_string(options.trainSubset) + "/" +
      std::to_string(options.testSubset) + "/" + options.lastBatch + "/" +
      (options.resume ? "r" : "-") + "/" + describeDataForm(options) + "/" +
      (options.skipNonFiniteSteps ? "s" : "-");
  return fnv1a(reinterpret_cast<const uint8_t *>(text.data()), text.size());
}

/// Connects this process to the other ranks when its environment says it
/// is one of several (see ProcessGroup.h); an empty ProcessRank otherwise.
exec::ProcessRank joinProcessGroup(const RunOptions &options,
                                   const plan::LoadedPlan &loaded) {
  exec::ProcessRank rank;
  comm::RankEnvironment environment = comm::readRankEnvironment();
  if (environment.launcher == comm::Launcher::None)
    return rank;
  auto timeout = std::chrono::milliseconds(
      static_cast<int64_t>(options.timeoutSeconds * 1000));
  comm::Backend backend = options.backend.empty()
                              ? comm::Backend::Default
                              : comm::parseBackend(options.backend);
  rank.communicator = comm::connectProcessGroup(environment, backend, timeout);
  rank.localWorldSize = environment.localWorldSize;
  rank.localRank = environment.localRank;
  rank.timeout = timeout;
  // Before the first step: the same plan and flags everywhere.
  comm::checkSameOnEveryRank(
      *rank.communicator, loaded.get().checksum(), "plan",
      "by a hash of the plan file; this rank loaded " + loaded.getName());
  comm::checkSameOnEveryRank(*rank.communicator, hashRunOptions(options),
                             "flags",
                             "--seed --epochs --steps --lr --init "
                             "--train-subset --test-subset --last-batch "
                             "--resume --layout --normalize --augment "
                             "--val-split --on-nonfinite must agree");
  return rank;
}

/// "after epoch E (step S)" or, mid-epoch, "at step S (epoch E, batch B of
/// N)": where a checkpoint stands.
std::string describePosition(const TrainingState &state,
                             int64_t stepsPerEpoch) {
  if (state.partial.stepsDone == 0)
    return "after epoch " + std::to_string(state.epochsDone) + " (step " +
           std::to_string(state.stepsDone) + ")";
  return "at step " + std::to_string(state.stepsDone) + " (epoch " +
         std::to_string(state.epochsDone + 1) + ", batch " +
         std::to_string(state.partial.stepsDone) + " of " +
         std::to_string(stepsPerEpoch) + ")";
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

/// Whether to resume: --resume, or a worker restarted by its launcher
/// (TORCHELASTIC_RESTART_COUNT > 0: dpc launch --max-restarts, torchrun)
/// whose --checkpoint directory holds a checkpoint.
bool shouldResume(const RunOptions &options) {
  if (options.resume)
    return true;
  const char *restarts = std::getenv("TORCHELASTIC_RESTART_COUNT");
  // strtol, not atoi: a huge count saturates instead of overflowing.
  return restarts && std::strtol(restarts, nullptr, 10) > 0 &&
         !options.checkpointDirectory.empty() &&
         std::filesystem::exists(
             getCheckpointPath(options.checkpointDirectory));
}

data::LastBatch parseLastBatch(const std::string &name) {
  return name == "drop"  ? data::LastBatch::Drop
         : name == "pad" ? data::LastBatch::Pad
                         : data::LastBatch::Short;
}

} // namespace

TrainResult runTraining(const RunOptions &given, std::ostream &out,
                        bool interactive) {
  using Clock = std::chrono::steady_clock;
  // What the run is doing, for a memory allocation that fails in it.
  std::string doing = given.planPath + ": reading the plan";
  try {
    RunOptions options = given;
    options.resume = shouldResume(given);
    auto loaded = plan::LoadedPlan::load(options.planPath);
    // Before any arena is allocated: a plan too big says so in one line.
    plan::checkDeviceMemory(*loaded);
    exec::ProcessRank rank = joinProcessGroup(options, *loaded);
    bool rankMode = rank.communicator != nullptr;
    bool leader = !rankMode || rank.communicator->getRank() == 0;
    doing = options.planPath +
            ": allocating the plan's training state, arenas and inputs";
    Executor executor(loaded, exec::createDevice, std::move(rank));
    const std::string &planName = loaded->getName();
    // Rank 0 alone reports and writes files.
    RunOptions local = options;
    if (!leader) {
      local.quiet = true;
      local.metricsPath.clear();
      local.plotPath.clear();
      local.tracePath.clear();
    }

    int trainStep = executor.findStep("train_step");
    if (trainStep < 0)
      fail(planName + ": the plan has no train_step");
    getInputSample(executor, trainStep);
    requireBinding(executor, trainStep, "labels", plan::DType::I32, true, true);
    const plan::Tensor *lrInput = executor.findInput(trainStep, "lr");
    if (!lrInput || lrInput->dtype() != plan::DType::F32 ||
        plan::getNumElements(plan::toDims(lrInput->dims())) != 1)
      fail(planName + ": train_step has no f32 scalar input 'lr'");
    requireBinding(executor, trainStep, "loss", plan::DType::F32, false, true);
    bool trainCounts = executor.findOutput(trainStep, "correct") != nullptr;
    int evalStep = executor.findStep("eval_step");
    if (evalStep >= 0) {
      getInputSample(executor, evalStep);
      requireBinding(executor, evalStep, "labels", plan::DType::I32, true,
                     true);
    }
    std::vector<int64_t> sample = sampleDims(executor, trainStep);
    PlanInputs inputs = getDataInputs(executor, trainStep);
    if (inputs.size() > 1 && options.augmentation.enabled())
      fail(planName + ": --augment takes a model with one input; this one "
                      "has several");
    if (sample.size() != 3 && options.augmentation.enabled())
      fail(planName + ": --augment transforms images; the plan takes " +
           (sample.size() == 1 ? "token ids" : "sequences"));
    if (inputs.size() > 1 && options.fashionMnist)
      fail(planName + ": --data fashion-mnist feeds one input; this plan "
                      "takes several (name a .npy file for each: --data "
                      "npy:NAME=FILE,...,LABELS)");
    if (inputs.size() > 1 && !options.valImages.empty())
      fail(planName + ": --val-data takes a model with one input; this one "
                      "has several (use --val-split)");
    int64_t numClasses = loaded->get().num_classes();
    if (numClasses <= 0)
      fail(planName + ": the plan does not say how many classes it has");

    // Where to start: a resumed run takes the checkpoint's data form
    // (--layout, --normalize) unless the flags say otherwise, and refuses a
    // conflicting one.
    TrainingState state;
    state.seed = options.seed;
    std::string resumePath = getCheckpointPath(options.checkpointDirectory);
    if (options.resume) {
      doing = resumePath + ": reading the checkpoint";
      state = loadCheckpoint(options.checkpointDirectory);
      if (options.seedGiven && options.seed != state.seed)
        fail(resumePath + ": was trained with --seed " +
             std::to_string(state.seed) + ", not " +
             std::to_string(options.seed));
    }
    reconcileDataForm(state, options.layout, options.normalization, resumePath);

    // The data set, in the form the plan takes.
    doing = (options.fashionMnist ? getFashionMnistDirectory(options)
                                  : options.trainImages) +
            ": reading the data set";
    data::ImageFormat format = getImageFormat(options, sample);
    Split train, validation, test;
    bool hasTest;
    if (options.fashionMnist) {
      std::string dir = getFashionMnistDirectory(options);
      train =
          loadLabelledFiles(dir + "/train-images-idx3-ubyte.gz",
                            dir + "/train-labels-idx1-ubyte.gz", false, format);
      test =
          loadLabelledFiles(dir + "/t10k-images-idx3-ubyte.gz",
                            dir + "/t10k-labels-idx1-ubyte.gz", false, format);
      hasTest = true;
    } else {
      train = loadInputs(options, /*test=*/false, inputs);
      hasTest = !options.testImages.empty();
      if (hasTest)
        test = loadInputs(options, /*test=*/true, inputs);
    }
    data::keepFirst(train.dataset, options.trainSubset);
    bool hasValidation = options.valSplit > 0 || !options.valImages.empty();
    if (hasValidation && evalStep < 0)
      fail(planName + ": the plan has no eval_step to validate with");
    if (options.valSplit > 0)
      validation = splitOffValidation(train, options.valSplit);
    else if (hasValidation)
      validation = loadLabelledFiles(options.valImages, options.valLabels,
                                     options.valNpy, format);
    checkSplit(train, numClasses);
    if (hasValidation)
      checkSplit(validation, numClasses);
    if (hasTest) {
      data::keepFirst(test.dataset, options.testSubset);
      checkSplit(test, numClasses);
    }

    if (options.resume) {
      restoreState(executor, state, resumePath);
    } else {
      initializeParameters(executor, parseInitScheme(options.init), state.seed);
    }
    executor.setRandomSeed(state.seed); // dropout's masks

    doing = planName + ": training";
    int64_t batchSize = executor.getMaxBatch(trainStep);
    // Each rank assembles only its rows of every global batch.
    auto sliceOf = [&](int step) -> data::RowSlice {
      if (!rankMode)
        return {};
      return [&executor, step](int64_t rows) {
        return executor.getLocalRows(step, rows);
      };
    };
    data::BatchLoader trainLoader(train.dataset, batchSize, true, state.seed,
                                  parseLastBatch(options.lastBatch),
                                  sliceOf(trainStep), getAugmentation(options));
    // The test and validation sets, in order, whole batches of the eval
    // step's size.
    auto evalLoader = [&](const Split &split, bool wanted) {
      std::unique_ptr<data::BatchLoader> loader;
      if (wanted && evalStep >= 0)
        loader = std::make_unique<data::BatchLoader>(
            split.dataset, std::max<int64_t>(1, executor.getMaxBatch(evalStep)),
            false, 0, data::LastBatch::Short, sliceOf(evalStep));
      return loader;
    };
    std::unique_ptr<data::BatchLoader> testLoader = evalLoader(test, hasTest);
    std::unique_ptr<data::BatchLoader> validationLoader =
        evalLoader(validation, hasValidation);
    int64_t stepsPerEpoch = trainLoader.batchesPerEpoch();
    if (stepsPerEpoch == 0)
      fail(train.imagesPath + ": --last-batch drop leaves no batch (" +
           std::to_string(train.dataset.count) + " samples, batch " +
           std::to_string(batchSize) + ")");
    int64_t epochs = options.epochs;
    if (options.maxSteps > 0 && !options.epochsGiven)
      epochs = (options.maxSteps + stepsPerEpoch - 1) / stepsPerEpoch;
    if (options.resume)
      checkResumable(state, epochs, options.maxSteps,
                     getCheckpointPath(options.checkpointDirectory));

    io::AppendFile metrics;
    auto appendMetrics = [&](const EpochMetrics &m) {
      std::string error;
      if (!metrics.append(toJsonLine(m) + "\n", error))
        fail(error);
    };
    if (!local.metricsPath.empty()) {
      std::string error;
      if (!metrics.open(local.metricsPath, error))
        fail(error);
      for (const EpochMetrics &m : state.history)
        appendMetrics(m);
    }

    // --trace: the first train steps, as a Chrome trace.
    constexpr int64_t kTracedSteps = 20;
    std::unique_ptr<exec::Tracer> tracer;
    int64_t tracedSteps = 0;
    if (!local.tracePath.empty()) {
      tracer = std::make_unique<exec::Tracer>();
      std::vector<std::string> names;
      for (const auto *device : *loaded->get().devices())
        names.push_back(device->name()->str());
      tracer->setDeviceNames(std::move(names));
      executor.setTracer(tracer.get());
    }
    auto finishTrace = [&] {
      if (!tracer)
        return;
      executor.setTracer(nullptr);
      for (int d = 0; d < int(loaded->get().devices()->size()); ++d)
        tracer->setDeviceNotes(d, executor.getRunTimeChoices(d));
      std::ostringstream trace;
      tracer->writeChromeTrace(trace);
      writeTextFile(local.tracePath, trace.str());
      double collective = 0, hidden = 0;
      for (const exec::Tracer::Overlap &device : tracer->getOverlap())
        collective += device.communicationMicros, hidden += device.hiddenMicros;
      if (!local.quiet && collective > 0) {
        char text[160];
        std::snprintf(text, sizeof(text),
                      "communication: %.1f ms in collectives over %lld "
                      "traced steps, %.0f%% hidden behind compute",
                      collective / 1000, static_cast<long long>(tracedSteps),
                      100 * hidden / collective);
        out << text << std::endl;
      }
      tracer.reset();
    };

    Progress progress(out, interactive, local.quiet);
    std::string checkpointPath =
        options.checkpointDirectory.empty()
            ? std::string()
            : getCheckpointPath(options.checkpointDirectory);
    if (options.resume) {
      checkResumable(state, stepsPerEpoch, checkpointPath);
      if (!local.quiet)
        out << "resuming from " << checkpointPath << " "
            << describePosition(state, stepsPerEpoch) << std::endl;
    }
    // Rank 0 alone writes checkpoints; stepsDone of the last one on disk.
    bool checkpoints = leader && !checkpointPath.empty();
    int64_t checkpointedAt = options.resume ? state.stepsDone : -1;
    auto checkpoint = [&] {
      captureState(executor, state);
      saveCheckpoint(options.checkpointDirectory, state);
      checkpointedAt = state.stepsDone;
    };
    auto stepsLeft = [&] {
      return options.maxSteps < 0 || state.stepsDone < options.maxSteps;
    };
    NonFiniteGuard guard(executor, trainStep,
                         options.skipNonFiniteSteps ? OnNonFinite::SkipStep
                                                    : OnNonFinite::Stop);
    guard.keepState();
    EpochMetrics lastPartialEpoch; // the run's last epoch, if incomplete
    bool endedMidEpoch = false;
    for (int64_t epoch = state.epochsDone; epoch < epochs && stepsLeft();
         ++epoch) {
      Clock::time_point start = Clock::now();
      trainLoader.startEpoch(epoch);
      // A run resumed mid-epoch goes on where it stopped, with its sums.
      PartialEpoch done = state.partial;
      skipBatches(trainLoader, done.stepsDone, train.imagesPath);
      double lossSum = done.lossSum, correct = done.correct;
      int64_t seen = done.samplesSeen, step = done.stepsDone;
      auto secondsSoFar = [&] {
        return done.trainSeconds +
               std::chrono::duration<double>(Clock::now() - start).count();
      };
      EpochMetrics m;
      m.epoch = epoch + 1;
      m.lr = options.schedule.at(options.lr, epoch, 0, stepsPerEpoch, epochs);
      // Step k+1's batch is bound (and uploads) while step k runs.
      auto startNext = [&](int64_t index) -> int64_t {
        if (options.maxSteps >= 0 &&
            state.stepsDone + (index - step) >= options.maxSteps)
          return 0;
        const data::Batch *batch = trainLoader.next();
        if (!batch)
          return 0;
        float lr = static_cast<float>(options.schedule.at(
            options.lr, epoch, index, stepsPerEpoch, epochs));
        bindBatch(executor, trainStep, *batch);
        executor.setInput(trainStep, "lr", &lr, sizeof(lr));
        return batch->size;
      };
      int64_t rows = startNext(step);
      if (rows)
        executor.start(trainStep, rows);
      while (rows) {
        int64_t nextRows = startNext(step + 1);
        executor.finish(trainStep);
        if (tracer && ++tracedSteps == kTracedSteps)
          finishTrace();
        double loss = executor.getScalarOutput(trainStep, "loss");
        double stepCorrect =
            trainCounts ? executor.getScalarOutput(trainStep, "correct") : 0;
        if (std::optional<NonFiniteValue> bad = guard.check();
            bad || !std::isfinite(loss)) {
          std::string what = "step " + std::to_string(state.stepsDone + 1) +
                             " (epoch " + std::to_string(epoch + 1) +
                             ", batch " + std::to_string(step + 1) + "): " +
                             (bad ? bad->describe() + " after the update"
                                  : "the loss is " + formatNonFinite(loss));
          if (!options.skipNonFiniteSteps)
            fail(planName + ": " + what +
                 "; stopping (try a smaller --lr, or --on-nonfinite "
                 "skip-step to skip such steps)");
          guard.restoreState();
          if (!local.quiet)
            out << what << "; skipped: its update is undone" << std::endl;
        } else {
          lossSum += loss * static_cast<double>(rows);
          correct += stepCorrect;
          seen += rows;
        }
        ++step;
        ++state.stepsDone;
        rows = nextRows;
        // --checkpoint-every, between two steps; an epoch's end saves below.
        if (checkpoints && options.checkpointEvery > 0 &&
            state.stepsDone % options.checkpointEvery == 0 &&
            step < stepsPerEpoch) {
          state.partial = {step, seen, lossSum, correct, secondsSoFar()};
          checkpoint();
        }
        if (rows)
          executor.start(trainStep, rows);
        double seconds = secondsSoFar();
        progress.update(epoch + 1, epochs, step, stepsPerEpoch,
                        seen ? lossSum / seen : kNaN,
                        trainCounts && seen ? correct / seen : kNaN,
                        seconds > 0 ? seen / seconds : 0);
      }
      double trainSeconds = secondsSoFar();
      bool complete = step == stepsPerEpoch;
      m.trainLoss = seen ? lossSum / seen : kNaN;
      m.trainAcc = trainCounts && seen ? correct / seen : kNaN;
      if (validationLoader) {
        EvalSums sums = evaluate(executor, evalStep, *validationLoader,
                                 validation.dataset.count);
        m.valLoss = sums.loss, m.valAcc = sums.accuracy;
      }
      m.testAcc = testLoader ? evaluate(executor, evalStep, *testLoader,
                                        test.dataset.count)
                                   .accuracy
                             : kNaN;
      m.epochSeconds = secondsSoFar(); // evaluation included
      m.imagesPerSecond = trainSeconds > 0 ? seen / trainSeconds : 0;
      if (complete) {
        state.epochsDone = epoch + 1;
        state.partial = {};
        state.history.push_back(m);
      } else {
        state.partial = {step, seen, lossSum, correct, trainSeconds};
        lastPartialEpoch = m;
        endedMidEpoch = true;
      }
      progress.finishEpoch(m, epochs);

      std::vector<EpochMetrics> shown = state.history;
      if (!complete)
        shown.push_back(m);
      if (metrics.isOpen())
        appendMetrics(m);
      if (!local.plotPath.empty())
        writeTextFile(local.plotPath, renderSvgPlot(shown, epochs));
      if (complete && checkpoints)
        checkpoint();
      if (options.onEpochEnd && !options.onEpochEnd(m))
        break;
    }
    // A run that --steps stopped mid-epoch keeps its place too.
    if (checkpoints && checkpointedAt != state.stepsDone)
      checkpoint();

    finishTrace(); // a run shorter than the traced steps
    TrainResult result;
    result.history = state.history;
    if (endedMidEpoch)
      result.history.push_back(lastPartialEpoch);
    result.finalTestAcc =
        result.history.empty() ? kNaN : result.history.back().testAcc;
    if (!local.quiet) {
      if (std::isfinite(result.finalTestAcc)) {
        char text[32];
        std::snprintf(text, sizeof(text), "%.4f", result.finalTestAcc);
        out << "final test accuracy: " << text << std::endl;
      } else {
        out << "final test accuracy: - (no test set)" << std::endl;
      }
      // The last line: where this run's training state is.
      if (checkpoints)
        out << "checkpoint: " << checkpointPath << " "
            << describePosition(state, stepsPerEpoch) << std::endl;
    }
    return result;
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
    bool described = dynamic_cast<const exec::OutOfMemory *>(&error);
    throw RunError((doing.empty() ? "" : doing + ": ") + "out of memory" +
                   (described ? std::string(" (") + error.what() + ")" : ""));
  } catch (const std::exception &error) {
    throw RunError(error.what());
  }
}

} // namespace dpc::train
