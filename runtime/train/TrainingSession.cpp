//===- TrainingSession.cpp - opening a run of `dpc run` -------------------===//
//
// TrainingSession::open and its stages: the plan and the process group, the
// plan's steps, the checkpoint of a resumed run, the data and the loaders.
//
//===----------------------------------------------------------------------===//

#include "runtime/train/TrainingSession.h"
#include "runtime/abi/PlanTypes.h"
#include "runtime/comm/ProcessGroup.h"
#include "runtime/data/BatchLoader.h"
#include "runtime/data/Dataset.h"
#include "runtime/exec/Executor.h"
#include "runtime/plan/Checksum.h"
#include "runtime/plan/PlanMemory.h"
#include "runtime/train/Init.h"
#include "runtime/train/ModelInput.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace dpc::train {

using rt::Executor;

namespace {

[[noreturn]] void fail(const std::string &message) { throw RunError(message); }

using Split = LoadedData;

/// Checks one split against the plan: samples and label range (the loader
/// checked the image shape).
void checkSplit(const Split &split, const data::TargetForm &targets) {
  if (split.dataset.count == 0)
    fail(split.imagesPath + ": holds no images");
  data::checkLabels(split.dataset, split.labelsPath, targets.classes);
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
/// `tensor`, the binding of `what` (its role's usual name: "labels",
/// "loss"), checked to exist and have `dtype`.
const plan::Tensor *requireBinding(const Executor &executor, int step,
                                   const plan::Tensor *tensor, const char *what,
                                   plan::DType dtype, bool input) {
  std::string stepName = executor.getPlan()->steps()->Get(step)->name()->str();
  if (!tensor)
    fail(executor.getPlan().getName() + ": " + stepName + " has no " +
         (input ? "input" : "output") + " '" + what + "'");
  if (tensor->dtype() == dtype)
    return tensor;
  fail(executor.getPlan().getName() + ": " + stepName + "'s " + what + " is " +
       plan::EnumNameDType(tensor->dtype()) + ", expected " +
       plan::EnumNameDType(dtype));
}

/// The plan's train step, checked for what the trainer binds and reads.
int findTrainStep(const Executor &executor, const std::string &planName) {
  int trainStep = executor.findStep(plan::StepRole::Train);
  if (trainStep < 0)
    fail(planName + ": the plan has no train_step");
  getInputSample(executor, trainStep);
  getPlanTargets(executor, trainStep);
  const plan::Tensor *lrInput =
      executor.findInput(trainStep, plan::InputRole::LearningRate);
  if (!lrInput || lrInput->dtype() != plan::DType::F32 ||
      plan::getNumElements(plan::toDims(lrInput->dims())) != 1)
    fail(planName + ": train_step has no f32 scalar input 'lr'");
  requireBinding(executor, trainStep,
                 executor.findOutput(trainStep, plan::OutputRole::Loss), "loss",
                 plan::DType::F32, false);
  return trainStep;
}

/// The plan's eval step, checked, or -1 where it has none.
int findEvalStep(const Executor &executor) {
  int evalStep = executor.findStep(plan::StepRole::Eval);
  if (evalStep >= 0) {
    getInputSample(executor, evalStep);
    getPlanTargets(executor, evalStep);
  }
  return evalStep;
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
rt::ProcessRank joinProcessGroup(const RunOptions &options,
                                 const plan::LoadedPlan &loaded) {
  rt::ProcessRank rank;
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

TrainingSession::TrainingSession(const RunOptions &given) : options(given) {
  options.resume = shouldResume(given);
}

TrainingSession::~TrainingSession() = default;

std::unique_ptr<TrainingSession> TrainingSession::open(const RunOptions &given,
                                                       std::string &doing) {
  std::unique_ptr<TrainingSession> session(new TrainingSession(given));
  session->loadPlan(doing);
  session->checkSteps();
  session->readCheckpoint(doing);
  session->loadData(doing);
  if (session->options.resume) {
    restoreState(*session->executor, session->state, session->resumePath);
  } else {
    initializeParameters(*session->executor,
                         parseInitScheme(session->options.init),
                         session->state.seed);
  }
  session->executor->setRandomSeed(session->state.seed); // dropout's masks
  doing = session->planName + ": training";
  session->makeLoaders();
  return session;
}

/// The plan, its memory check, the process group and the executor.
void TrainingSession::loadPlan(std::string &doing) {
  loaded = plan::LoadedPlan::load(options.planPath);
  // Before any arena is allocated: a plan too big says so in one line.
  plan::checkDeviceMemory(*loaded);
  rt::ProcessRank rank = joinProcessGroup(options, *loaded);
  rankMode = rank.communicator != nullptr;
  leader = !rankMode || rank.communicator->getRank() == 0;
  doing = options.planPath +
          ": allocating the plan's training state, arenas and inputs";
  executor =
      std::make_unique<Executor>(loaded, rt::createDevice, std::move(rank));
  planName = loaded->getName();
  // Rank 0 alone reports and writes files.
  local = options;
  if (!leader) {
    local.quiet = true;
    local.metricsPath.clear();
    local.plotPath.clear();
    local.tracePath.clear();
  }
}

/// The train and eval steps and the data inputs, against the flags.
void TrainingSession::checkSteps() {
  trainStep = findTrainStep(*executor, planName);
  trainCounts =
      executor->findOutput(trainStep, plan::OutputRole::Correct) != nullptr;
  evalStep = findEvalStep(*executor);
  sample = sampleDims(*executor, trainStep);
  inputs = getDataInputs(*executor, trainStep);
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
  targets = getPlanTargets(*executor, trainStep);
  if (!targets.form.isFloat && targets.form.classes <= 0)
    fail(planName + ": the plan does not say how many classes it has");
}

/// Where to start: a resumed run takes the checkpoint's data form
/// (--layout, --normalize) unless the flags say otherwise, and refuses a
/// conflicting one.
void TrainingSession::readCheckpoint(std::string &doing) {
  state.seed = options.seed;
  resumePath = getCheckpointPath(options.checkpointDirectory);
  if (options.resume) {
    doing = resumePath + ": reading the checkpoint";
    state = loadCheckpoint(options.checkpointDirectory);
    // The checkpoint keeps no task (nor a task's test loss): its epochs
    // are reported as this plan's task.
    for (EpochMetrics &m : state.history)
      m.task = targets.task, m.lossName = targets.lossName;
    if (options.seedGiven && options.seed != state.seed)
      fail(resumePath + ": was trained with --seed " +
           std::to_string(state.seed) + ", not " +
           std::to_string(options.seed));
  }
  reconcileDataForm(state, options.layout, options.normalization, resumePath);
}

/// The data set, in the form the plan takes: the training, validation and
/// test splits, checked against the plan.
void TrainingSession::loadData(std::string &doing) {
  doing = (options.fashionMnist ? getFashionMnistDirectory(options)
                                : options.trainImages) +
          ": reading the data set";
  data::ImageFormat format = getImageFormat(options, sample, targets.form);
  if (options.fashionMnist) {
    std::string dir = getFashionMnistDirectory(options);
    trainSplit =
        loadLabelledFiles(dir + "/train-images-idx3-ubyte.gz",
                          dir + "/train-labels-idx1-ubyte.gz", false, format);
    testSplit =
        loadLabelledFiles(dir + "/t10k-images-idx3-ubyte.gz",
                          dir + "/t10k-labels-idx1-ubyte.gz", false, format);
    hasTest = true;
  } else {
    trainSplit = loadInputs(options, /*test=*/false, inputs, targets.form);
    hasTest = !options.testImages.empty();
    if (hasTest)
      testSplit = loadInputs(options, /*test=*/true, inputs, targets.form);
  }
  data::keepFirst(trainSplit.dataset, options.trainSubset);
  hasValidation = options.valSplit > 0 || !options.valImages.empty();
  if (hasValidation && evalStep < 0)
    fail(planName + ": the plan has no eval_step to validate with");
  if (options.valSplit > 0)
    validationSplit = splitOffValidation(trainSplit, options.valSplit);
  else if (hasValidation)
    validationSplit = loadLabelledFiles(options.valImages, options.valLabels,
                                        options.valNpy, format);
  checkSplit(trainSplit, targets.form);
  if (hasValidation)
    checkSplit(validationSplit, targets.form);
  if (hasTest) {
    data::keepFirst(testSplit.dataset, options.testSubset);
    checkSplit(testSplit, targets.form);
  }
}

/// The loaders of the three splits, and the epochs they make.
void TrainingSession::makeLoaders() {
  batchSize = executor->getMaxBatch(trainStep);
  // Each rank assembles only its rows of every global batch.
  Executor &stepRunner = *executor;
  auto sliceOf = [&](int step) -> data::RowSlice {
    if (!rankMode)
      return {};
    return [&stepRunner, step](int64_t rows) {
      return stepRunner.getLocalRows(step, rows);
    };
  };
  trainLoader = std::make_unique<data::BatchLoader>(
      trainSplit.dataset, batchSize, true, state.seed,
      parseLastBatch(options.lastBatch), sliceOf(trainStep),
      getAugmentation(options));
  // The test and validation sets, in order, whole batches of the eval
  // step's size.
  auto evalLoader = [&](const Split &split, bool wanted) {
    std::unique_ptr<data::BatchLoader> loader;
    if (wanted && evalStep >= 0)
      loader = std::make_unique<data::BatchLoader>(
          split.dataset, std::max<int64_t>(1, executor->getMaxBatch(evalStep)),
          false, 0, data::LastBatch::Short, sliceOf(evalStep));
    return loader;
  };
  testLoader = evalLoader(testSplit, hasTest);
  validationLoader = evalLoader(validationSplit, hasValidation);
  stepsPerEpoch = trainLoader->batchesPerEpoch();
  if (stepsPerEpoch == 0)
    fail(trainSplit.imagesPath + ": --last-batch drop leaves no batch (" +
         std::to_string(trainSplit.dataset.count) + " samples, batch " +
         std::to_string(batchSize) + ")");
  epochs = options.epochs;
  if (options.maxSteps > 0 && !options.epochsGiven)
    epochs = (options.maxSteps + stepsPerEpoch - 1) / stepsPerEpoch;
  if (options.resume)
    checkResumable(state, epochs, options.maxSteps,
                   getCheckpointPath(options.checkpointDirectory));
}

} // namespace dpc::train
