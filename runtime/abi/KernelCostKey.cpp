//===- KernelCostKey.cpp - what a kernel call's time depends on -----------===//

#include "runtime/abi/KernelCostKey.h"

namespace dpc::plan {
namespace {

std::string joinDims(const std::vector<int64_t> &dims, const char *separator) {
  std::string text;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i)
      text += separator;
    text += dims[i] < 0 ? "?" : std::to_string(dims[i]);
  }
  return text;
}

std::string joinTensors(const std::vector<std::vector<int64_t>> &tensors) {
  std::string text = "(";
  for (size_t i = 0; i < tensors.size(); ++i)
    text += (i ? ", " : "") + joinDims(tensors[i], "x");
  return text + ")";
}

} // namespace

std::string getKernelCostKey(Kernel kernel,
                             const std::vector<std::vector<int64_t>> &operands,
                             const std::vector<std::vector<int64_t>> &results,
                             const Conv2dAttrsT *conv) {
  if (kernel == Kernel::Conv2dReluForward)
    kernel = Kernel::Conv2dForward;
  else if (kernel == Kernel::LinearReluForward)
    kernel = Kernel::LinearForward;
  std::string key = std::string(EnumNameKernel(kernel)) +
                    joinTensors(operands) + " -> " + joinTensors(results);
  if (conv)
    key += " stride " + joinDims(conv->stride, "x") + " padding " +
           joinDims(conv->padding, ",") + " dilation " +
           joinDims(conv->dilation, "x") + " groups " +
           std::to_string(conv->groups);
  return key;
}

} // namespace dpc::plan
