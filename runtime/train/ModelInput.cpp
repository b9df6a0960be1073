//===- ModelInput.cpp - the data inputs a plan binds ----------------------===//

#include "runtime/train/ModelInput.h"
#include "runtime/train/Trainer.h"

#include <algorithm>

namespace dpc::train {

namespace {

/// `step`'s first LossForward call, or null.
const plan::Instruction *findLoss(const plan::Step &step) {
  for (const plan::Stream *stream : *step.streams())
    for (const plan::Instruction *instruction : *stream->instructions())
      if (instruction->kernel() == plan::Kernel::LossForward &&
          instruction->attrs_as_LossAttrs())
        return instruction;
  return nullptr;
}

/// A float loss's name, after what it computes.
const char *getLossName(plan::LossKind kind) {
  switch (kind) {
  case plan::LossKind::Mse:
    return "mse";
  case plan::LossKind::L1:
    return "mae";
  case plan::LossKind::Huber:
    return "huber";
  case plan::LossKind::SmoothL1:
    return "smooth_l1";
  case plan::LossKind::BceWithLogits:
    return "bce";
  default:
    return "loss";
  }
}

/// Binds `values` to `step`'s input `name`, as floats or token ids.
void bindNamedInput(rt::Executor &executor, int step, const std::string &name,
                    const std::vector<float> &values) {
  const plan::Tensor *input = executor.findInput(step, name);
  if (input && input->dtype() == plan::DType::I32) {
    std::vector<int32_t> ids(values.begin(), values.end());
    executor.setInput(step, name, ids.data(), ids.size() * sizeof(int32_t));
    return;
  }
  executor.setInput(step, name, values.data(), values.size() * sizeof(float));
}

} // namespace

PlanInputs getDataInputs(const rt::Executor &executor, int step) {
  const std::string &plan = executor.getPlan().getName();
  const plan::Step *s = executor.getPlan()->steps()->Get(step);
  std::string stepName = s->name()->str();
  PlanInputs inputs;
  for (const plan::Binding *binding : *s->inputs()) {
    if (binding->role() != plan::InputRole::Data)
      continue;
    std::string name = binding->name()->str();
    const plan::Tensor *input = executor.findInput(step, name);
    std::vector<int64_t> dims = plan::toDims(input->dims());
    bool images = input->dtype() == plan::DType::F32 && dims.size() == 4;
    bool sequences = input->dtype() == plan::DType::F32 && dims.size() == 3;
    bool features = input->dtype() == plan::DType::F32 && dims.size() == 2;
    bool tokens = input->dtype() == plan::DType::I32 && dims.size() == 2;
    if (!input->batch_dim() || (!images && !sequences && !features && !tokens))
      throw RunError(plan + ": " + stepName + "'s input '" + name +
                     "' must be F32 images [N, C, H, W], F32 sequences "
                     "[N, T, F], F32 features [N, F] or I32 token ids "
                     "[N, T] with a batch dim, "
                     "is " +
                     plan::EnumNameDType(input->dtype()) + " " +
                     plan::formatDims(dims));
    inputs.push_back({name, {dims.begin() + 1, dims.end()}});
  }
  if (inputs.empty())
    throw RunError(plan + ": " + stepName + " has no input 'images'");
  return inputs;
}

PlanTargets getPlanTargets(const rt::Executor &executor, int step) {
  const plan::Step &s = *executor.getPlan()->steps()->Get(step);
  const plan::Tensor *labels =
      executor.findInput(step, plan::InputRole::Labels);
  if (!labels || (labels->dtype() != plan::DType::I32 &&
                  labels->dtype() != plan::DType::F32))
    throw RunError(executor.getPlan().getName() + ": " + s.name()->str() +
                   " has no I32 or F32 input 'labels'");
  PlanTargets targets;
  std::vector<int64_t> dims = plan::toDims(labels->dims());
  targets.form.sample.assign(dims.begin() + std::min<size_t>(1, dims.size()),
                             dims.end());
  targets.form.isFloat = labels->dtype() == plan::DType::F32;
  targets.form.classes = executor.getPlan()->num_classes();
  if (const plan::Instruction *loss = findLoss(s)) {
    const plan::LossAttrs &attrs = *loss->attrs_as_LossAttrs();
    targets.lossName = getLossName(attrs.kind());
    const plan::Tensor *logits = s.tensors()->Get(loss->operands()->Get(0));
    int64_t axis = attrs.class_axis();
    if (attrs.kind() == plan::LossKind::CrossEntropy && axis >= 0 &&
        axis < static_cast<int64_t>(logits->dims()->size())) {
      targets.form.classes = logits->dims()->Get(axis);
      targets.classAxis = axis;
    }
    if (attrs.has_ignore_index())
      targets.form.ignoreIndex = attrs.ignore_index();
  }
  if (targets.form.isFloat) {
    targets.task = Task::Regression;
  } else {
    targets.lossName = "loss"; // a cross-entropy
    if (!targets.form.sample.empty())
      targets.task =
          targets.form.sample.size() == 1 ? Task::Tokens : Task::Pixels;
  }
  return targets;
}

std::vector<int64_t> getInputSample(const rt::Executor &executor, int step) {
  return getDataInputs(executor, step).front().second;
}

void bindInputs(rt::Executor &executor, int step, const data::Batch &batch) {
  PlanInputs inputs = getDataInputs(executor, step);
  bindNamedInput(executor, step, inputs[0].first, batch.images);
  for (size_t i = 1; i < inputs.size() && i - 1 < batch.extras.size(); ++i)
    bindNamedInput(executor, step, inputs[i].first, batch.extras[i - 1]);
}

void bindInput(rt::Executor &executor, int step,
               const std::vector<float> &values) {
  bindNamedInput(executor, step, getDataInputs(executor, step).front().first,
                 values);
}

} // namespace dpc::train
