//===- PlanTypes.cpp - element types and sizes of plan tensors ------------===//

#include "runtime/plan/PlanTypes.h"

namespace dpc::plan {

int64_t getNumElements(const std::vector<int64_t> &dims) {
  constexpr int64_t kLimit = int64_t(1) << 48;
  int64_t count = 1;
  for (int64_t dim : dims) {
    if (dim < 0)
      return -1;
    if (dim != 0 && count > kLimit / dim)
      return -1;
    count *= dim;
  }
  return count;
}

std::vector<int64_t> toDims(const flatbuffers::Vector<int64_t> *dims) {
  if (!dims)
    return {};
  return std::vector<int64_t>(dims->begin(), dims->end());
}

std::string formatDims(const std::vector<int64_t> &dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    text += (i ? ", " : "") + std::to_string(dims[i]);
  return text + "]";
}

} // namespace dpc::plan
