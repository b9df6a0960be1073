//===- ModelInput.cpp - the data input a plan binds -----------------------===//

#include "runtime/train/ModelInput.h"
#include "runtime/train/Trainer.h"

namespace dpc::train {

std::vector<int64_t> getInputSample(const exec::Executor &executor, int step) {
  const std::string &plan = executor.getPlan().getName();
  std::string stepName = executor.getPlan()->steps()->Get(step)->name()->str();
  const plan::Tensor *input = executor.findInput(step, "images");
  if (!input)
    throw RunError(plan + ": " + stepName + " has no input 'images'");
  std::vector<int64_t> dims = plan::toDims(input->dims());
  bool images = input->dtype() == plan::DType::F32 && dims.size() == 4;
  bool tokens = input->dtype() == plan::DType::I32 && dims.size() == 2;
  if (!input->batch_dim() || (!images && !tokens))
    throw RunError(plan + ": " + stepName +
                   "'s input 'images' must be F32 images [N, C, H, W] or I32 "
                   "token ids [N, T] with a batch dim, is " +
                   plan::EnumNameDType(input->dtype()) + " " +
                   plan::formatDims(dims));
  return {dims.begin() + 1, dims.end()};
}

void bindInput(exec::Executor &executor, int step,
               const std::vector<float> &values) {
  const plan::Tensor *input = executor.findInput(step, "images");
  if (input && input->dtype() == plan::DType::I32) {
    std::vector<int32_t> ids(values.begin(), values.end());
    executor.setInput(step, "images", ids.data(), ids.size() * sizeof(int32_t));
    return;
  }
  executor.setInput(step, "images", values.data(),
                    values.size() * sizeof(float));
}

} // namespace dpc::train
