//===- JoinShapes.cpp - concatenation and split ---------------------------===//

#include "runtime/abi/shapes/JoinShapes.h"
#include "runtime/abi/KernelArgs.h"
#include "runtime/abi/KernelAttrs.h"

#include <string>
#include <vector>

namespace dpc::plan {
using namespace args;

JoinShape getJoinShape(const KernelCall &call) {
  bool concat = call.kernel == Kernel::ConcatForward;
  const std::vector<TensorArg> &parts = concat ? call.operands : call.results;
  const TensorArg &whole = concat ? call.result(0) : call.operand(0);
  Name wholeName =
      concat ? resultName(call.kernel, 0) : operandName(call.kernel, 0);
  if (!whole.present || parts.empty())
    fail("needs a whole tensor and at least one part");
  const ConcatAttrs *attrs =
      call.instruction ? call.instruction->attrs_as_ConcatAttrs() : nullptr;
  if (!attrs)
    fail("ConcatAttrs are missing");
  int64_t rank = static_cast<int64_t>(whole.dims.size());
  int64_t axis = attrs->axis();
  if (axis < 0 || axis >= rank)
    fail("axis " + std::to_string(axis) + " is out of range for " +
         formatDims(whole.dims));
  int64_t elementBytes = getDTypeSize(whole.dtype);
  if (elementBytes == 0 || whole.getNumElements() < 0)
    fail(wholeName + " is not a tensor");
  JoinShape s;
  s.outer = countOf(
      std::vector<int64_t>(whole.dims.begin(), whole.dims.begin() + axis));
  int64_t inner = countOf(
      std::vector<int64_t>(whole.dims.begin() + axis + 1, whole.dims.end()));
  int64_t joined = 0;
  for (size_t p = 0; p < parts.size(); ++p) {
    const TensorArg &part = parts[p];
    Name name =
        concat ? operandName(call.kernel, p) : resultName(call.kernel, p);
    if (!part.present || part.dtype != whole.dtype ||
        static_cast<int64_t>(part.dims.size()) != rank)
      fail(name + " does not match " + wholeName + " " +
           formatDims(whole.dims));
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis && part.dims[d] != whole.dims[d])
        fail(name + " " + formatDims(part.dims) + " does not match " +
             formatDims(whole.dims) + " outside dim " + std::to_string(axis));
    if (part.dims[axis] < 0)
      fail(name + " has invalid dims " + formatDims(part.dims));
    joined += part.dims[axis];
    s.partBytes.push_back(countOf({part.dims[axis], inner, elementBytes}));
  }
  if (joined != whole.dims[axis])
    fail("the parts' dim " + std::to_string(axis) + " adds up to " +
         std::to_string(joined) + ", " + wholeName + " has " +
         std::to_string(whole.dims[axis]));
  s.rowBytes = countOf({whole.dims[axis], inner, elementBytes});
  return s;
}

} // namespace dpc::plan
