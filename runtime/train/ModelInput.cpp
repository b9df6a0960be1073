//===- ModelInput.cpp - the data inputs a plan binds ----------------------===//

#include "runtime/train/ModelInput.h"
#include "runtime/train/Trainer.h"

namespace dpc::train {

namespace {

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
