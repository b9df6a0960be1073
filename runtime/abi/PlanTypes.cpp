//===- PlanTypes.cpp - element types and sizes of plan tensors ------------===//

#include "runtime/abi/PlanTypes.h"
#include "runtime/abi/CheckedMath.h"

namespace dpc::plan {

int64_t getNumElements(const std::vector<int64_t> &dims) {
  return checkedProduct(dims, kMaxTensorElements).value_or(-1);
}

int64_t getByteSize(DType dtype, const std::vector<int64_t> &dims) {
  int64_t count = getNumElements(dims);
  int64_t size = getDTypeSize(dtype);
  // At most 2^48 elements of at most 8 bytes: no overflow.
  return count < 0 || size == 0 ? -1 : count * size;
}

std::vector<int64_t> toDims(const flatbuffers::Vector<int64_t> *dims) {
  if (!dims)
    return {};
  return std::vector<int64_t>(dims->begin(), dims->end());
}

std::vector<int64_t> getRuntimeDims(const Tensor &tensor, int64_t rows) {
  std::vector<int64_t> dims = toDims(tensor.dims());
  if (tensor.batch_dim() && tensor.batch_axis() >= 0 &&
      static_cast<size_t>(tensor.batch_axis()) < dims.size())
    dims[tensor.batch_axis()] = rows * tensor.batch_scale();
  return dims;
}

std::string formatDims(const std::vector<int64_t> &dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    text += (i ? ", " : "") + std::to_string(dims[i]);
  return text + "]";
}

} // namespace dpc::plan
