//===- Evaluate.cpp - a trained plan on a data set, forward only ----------===//

#include "runtime/train/Evaluate.h"
#include "runtime/abi/PlanTypes.h"
#include "runtime/data/BatchLoader.h"
#include "runtime/data/Dataset.h"
#include "runtime/exec/Executor.h"
#include "runtime/kernels/KernelMath.h"
#include "runtime/plan/PlanMemory.h"
#include "runtime/train/Checkpoint.h"
#include "runtime/train/ModelInput.h"
#include "runtime/train/NonFinite.h"
#include "runtime/train/Trainer.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <memory>
#include <numeric>

namespace dpc::train {

using rt::Executor;

namespace {

[[noreturn]] void fail(const std::string &message) { throw RunError(message); }

/// The split `data` names for a plan taking `inputs`: the test split
/// where there is one. Returns the images file, for messages.
std::string loadDataset(const std::string &plan, const DataOptions &data,
                        const PlanInputs &inputs,
                        const data::TargetForm &targets,
                        data::Dataset &dataset) {
  if (data.fashionMnist && inputs.size() > 1)
    throw RunError(plan +
                   ": --data fashion-mnist feeds one input; the plan takes "
                   "several (name a .npy file for each: --data "
                   "npy:NAME=FILE,...,LABELS)");
  if (data.fashionMnist) {
    std::string dir = getFashionMnistDirectory(data);
    dataset = data::loadFashionMnist(
        dir, /*train=*/false,
        getImageFormat(data, inputs.front().second, targets));
    return dir + "/t10k-images-idx3-ubyte.gz";
  }
  LoadedData loaded =
      loadInputs(data, !data.testImages.empty(), inputs, targets);
  dataset = std::move(loaded.dataset);
  return loaded.imagesPath;
}

/// A plan's eval_step, loaded with the training state to evaluate.
class Inference {
public:
  explicit Inference(const InferenceOptions &options)
      : planPath(options.planPath), dataOptions(options.data),
        allowNonFinite(options.allowNonFinite),
        loaded(plan::LoadedPlan::load(options.planPath)) {
    plan::checkDeviceMemory(*loaded);
    executor = std::make_unique<Executor>(loaded, rt::createDevice);
    evalStep = executor->findStep(plan::StepRole::Eval);
    if (evalStep < 0)
      fail(planPath + ": the plan has no eval_step");
    getInputSample(*executor, evalStep);
    targets = getPlanTargets(*executor, evalStep);
    const plan::Tensor *logits =
        executor->findOutput(evalStep, plan::OutputRole::Logits);
    bool perSample = targets.task == Task::Classes;
    if (!logits || logits->dtype() != plan::DType::F32 ||
        (perSample ? logits->dims()->size() != 2 : logits->dims()->size() < 1))
      fail(planPath + ": eval_step has no f32 output 'logits'" +
           (perSample ? " [N, classes]" : ""));
    // Per sample: the classes, or what the model outputs (tokens' or
    // pixels' logits, a regression's values).
    classes = 1;
    for (size_t d = 1; d < logits->dims()->size(); ++d)
      classes *= logits->dims()->Get(d);
    outputDims = plan::toDims(logits->dims());
    if (!options.checkpointDirectory.empty()) {
      std::string path = getCheckpointPath(options.checkpointDirectory);
      if (!std::ifstream(path))
        fail(path + ": no checkpoint there");
      TrainingState state = loadCheckpoint(options.checkpointDirectory);
      reconcileDataForm(state, dataOptions.layout, dataOptions.normalization,
                        path);
      restoreState(*executor, state, path);
    }
  }

  /// The data flags with the checkpoint's --layout and --normalize where
  /// they were left out.
  const DataOptions &getDataOptions() const { return dataOptions; }

  /// The eval step's data inputs.
  PlanInputs getInputs() const { return getDataInputs(*executor, evalStep); }

  /// The eval step's targets.
  const PlanTargets &getTargets() const { return targets; }

  /// Checks `dataset` against the classes (the loader checked the shape).
  void check(const data::Dataset &dataset, const std::string &name) const {
    if (dataset.count == 0)
      fail(name + ": holds no images");
    if (targets.form.isFloat)
      return;
    for (int32_t label : dataset.labels)
      if (label >= targets.form.classes && label != targets.form.ignoreIndex)
        fail(name + ": label " + std::to_string(label) +
             " is out of range for the plan's " +
             std::to_string(targets.form.classes) + " classes");
  }

  /// Runs eval_step over `dataset` in order; `visit` sees each batch with
  /// its logits and the plan's mean loss over its rows.
  void forEachBatch(
      const data::Dataset &dataset,
      const std::function<void(const data::Batch &, const float *logits,
                               double loss)> &visit) {
    data::BatchLoader loader(
        dataset, std::max<int64_t>(1, executor->getMaxBatch(evalStep)),
        /*shuffle=*/false, 0);
    loader.startEpoch(0);
    std::vector<float> logits;
    bool hasLoss =
        executor->findOutput(evalStep, plan::OutputRole::Loss) != nullptr;
    bool hasCorrect =
        executor->findOutput(evalStep, plan::OutputRole::Correct) != nullptr;
    int64_t first = 0; // the batch's first sample
    while (const data::Batch *batch = loader.next()) {
      bindInputs(*executor, evalStep, *batch);
      executor->setInput(evalStep, plan::InputRole::Labels,
                         batch->labels.data(),
                         batch->labels.size() * sizeof(int32_t));
      executor->run(evalStep, batch->size);
      lastCorrect =
          hasCorrect
              ? executor->getScalarOutput(evalStep, plan::OutputRole::Correct)
              : 0.0;
      logits.resize(batch->size * classes);
      executor->getOutput(evalStep, plan::OutputRole::Logits, logits.data(),
                          logits.size() * sizeof(float));
      double loss =
          hasLoss ? executor->getScalarOutput(evalStep, plan::OutputRole::Loss)
                  : 0.0;
      if (!allowNonFinite)
        checkFinite(logits, loss, first, batch->size);
      visit(*batch, logits.data(), loss);
      first += batch->size;
    }
  }

  int64_t getClasses() const { return classes; }
  /// The eval step's logits [N, ...].
  const std::vector<int64_t> &getOutputDims() const { return outputDims; }
  /// The last batch's count of right predictions (the plan's `correct`).
  double getLastCorrect() const { return lastCorrect; }

private:
  /// Huge but finite weights can overflow to NaN or infinite logits: a
  /// result built on them is no result, so fail naming the first sample.
  void checkFinite(const std::vector<float> &logits, double loss, int64_t first,
                   int64_t rows) const {
    int64_t bad = findNonFinite(int32_t(plan::DType::F32), logits.data(),
                                static_cast<int64_t>(logits.size()));
    std::string advice = " (the weights may have overflowed; "
                         "--allow-non-finite keeps such values)";
    if (bad >= 0)
      fail(planPath + ": sample " + std::to_string(first + bad / classes) +
           ": logit " + std::to_string(bad % classes) + " is " +
           describeNonFinite(int32_t(plan::DType::F32), logits.data(), bad) +
           advice);
    if (!std::isfinite(loss))
      fail(planPath + ": samples " + std::to_string(first) + " to " +
           std::to_string(first + rows - 1) + ": the loss is " +
           describeNonFinite(int32_t(plan::DType::F64), &loss, 0) + advice);
  }

  std::string planPath;
  DataOptions dataOptions;
  bool allowNonFinite;
  std::shared_ptr<const plan::LoadedPlan> loaded;
  std::unique_ptr<Executor> executor;
  int evalStep = -1;
  int64_t classes = 0;
  std::vector<int64_t> outputDims;
  PlanTargets targets;
  double lastCorrect = 0;
};

/// Adds a batch of a plan without one class per sample to `result`: the
/// plan's count of right tokens or pixels, or the float targets' errors.
void addTargetBatch(EvalResult &result, const data::Batch &batch,
                    const float *outputs, double correct) {
  result.targets += batch.countedTargets;
  if (result.task != Task::Regression) {
    result.correct += static_cast<int64_t>(correct);
    return;
  }
  const float *targets = reinterpret_cast<const float *>(batch.labels.data());
  for (size_t i = 0; i < batch.labels.size(); ++i) {
    double error = double(outputs[i]) - double(targets[i]);
    result.mse += error * error;
    result.mae += std::fabs(error);
  }
}

/// Runs `body`, turning the runtime's own errors into RunErrors.
template <typename Body> auto withRunErrors(Body body) -> decltype(body()) {
  try {
    return body();
  } catch (...) {
    rethrowAsRunError();
  }
}

} // namespace

EvalResult evaluateDataset(const InferenceOptions &options) {
  return withRunErrors([&] {
    Inference inference(options);
    const PlanTargets &targets = inference.getTargets();
    data::Dataset dataset;
    std::string name =
        loadDataset(options.planPath, inference.getDataOptions(),
                    inference.getInputs(), targets.form, dataset);
    data::keepFirst(dataset, options.subset);
    inference.check(dataset, name);
    int64_t classes = inference.getClasses();
    EvalResult result;
    result.task = targets.task, result.lossName = targets.lossName;
    if (result.task == Task::Classes)
      result.confusion.assign(classes, std::vector<int64_t>(classes, 0));
    // Per pixel: the logits around their class axis, [outer, C, inner].
    const std::vector<int64_t> &dims = inference.getOutputDims();
    int64_t axis = std::clamp<int64_t>(targets.classAxis, 1,
                                       static_cast<int64_t>(dims.size()) - 1);
    int64_t outer = std::accumulate(dims.begin() + 1, dims.begin() + axis,
                                    int64_t(1), std::multiplies<int64_t>());
    IouCounts iou(dims.size() > 1 ? dims[axis] : 1);
    // Each batch's mean loss weighs by its targets that count: the mean
    // over the data set's targets.
    double lossSum = 0;
    inference.forEachBatch(dataset, [&](const data::Batch &batch,
                                        const float *logits, double loss) {
      if (batch.countedTargets > 0)
        lossSum += loss * static_cast<double>(batch.countedTargets);
      if (result.task == Task::Pixels)
        iou.add(logits, batch.labels.data(), batch.size, outer,
                classes / outer / dims[axis], targets.form.ignoreIndex);
      if (result.task != Task::Classes) {
        addTargetBatch(result, batch, logits, inference.getLastCorrect());
        result.count += batch.size;
        return;
      }
      result.targets += batch.size;
      for (int64_t row = 0; row < batch.size; ++row) {
        int64_t predicted =
            kernels::math::rowArgMax(logits + row * classes, classes);
        int32_t label = batch.labels[row];
        ++result.confusion[label][predicted];
        result.correct += predicted == label;
      }
      result.count += batch.size;
    });
    result.loss = lossSum / static_cast<double>(result.targets);
    if (result.task == Task::Pixels)
      result.iou = iou.getPerClassIou(), result.meanIou = iou.getMeanIou();
    double values = static_cast<double>(result.count * classes);
    result.mse /= values, result.mae /= values;
    return result;
  });
}

Predictions predictDataset(const InferenceOptions &options) {
  return withRunErrors([&] {
    Inference inference(options);
    if (inference.getTargets().task != Task::Classes)
      fail(options.planPath +
           ": dpc predict takes a plan of one class per "
           "sample; this one's targets are " +
           inference.getTargets().form.describe());
    data::Dataset dataset;
    std::string name = loadDataset(options.planPath, inference.getDataOptions(),
                                   inference.getInputs(), {}, dataset);
    data::keepFirst(dataset, options.subset);
    inference.check(dataset, name);
    Predictions predictions;
    predictions.classes = inference.getClasses();
    predictions.logits.reserve(dataset.count * predictions.classes);
    inference.forEachBatch(
        dataset, [&](const data::Batch &batch, const float *logits, double) {
          predictions.logits.insert(predictions.logits.end(), logits,
                                    logits + batch.size * predictions.classes);
          predictions.count += batch.size;
        });
    return predictions;
  });
}

std::vector<int64_t> topK(const Predictions &predictions, int64_t k) {
  std::vector<int64_t> result;
  result.reserve(predictions.count * k);
  std::vector<int64_t> order(predictions.classes);
  for (int64_t row = 0; row < predictions.count; ++row) {
    const float *logits = &predictions.logits[row * predictions.classes];
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return logits[a] > logits[b];
    });
    result.insert(result.end(), order.begin(), order.begin() + k);
  }
  return result;
}

} // namespace dpc::train
