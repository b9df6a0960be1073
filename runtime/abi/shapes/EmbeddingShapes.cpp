//===- EmbeddingShapes.cpp - table lookups by index -----------------------===//

#include "runtime/abi/shapes/EmbeddingShapes.h"
#include "runtime/abi/KernelArgs.h"

namespace dpc::plan {
using namespace args;

EmbeddingShape getEmbeddingShape(const KernelCall &call) {
  bool forward = call.kernel == Kernel::EmbeddingForward;
  const TensorArg &table = forward ? operand(call, 0) : result(call, 0);
  Name tableName =
      forward ? operandName(call.kernel, 0) : resultName(call.kernel, 0);
  expectRank(table, tableName, 2, 2);
  EmbeddingShape s;
  s.rows = table.dims[0], s.dim = table.dims[1];
  s.count = operand(call, forward ? 1 : 0, DType::I32).getNumElements();
  int64_t values = countOf({s.count, s.dim});
  if (forward)
    expectResultCount(call, 0, values);
  else
    expectOperandCount(call, 1, values);
  return s;
}

} // namespace dpc::plan
