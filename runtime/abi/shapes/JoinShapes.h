//===- JoinShapes.h - concatenation and split -------------------*- C++ -*-===//

#ifndef DPC_RUNTIME_ABI_SHAPES_JOINSHAPES_H
#define DPC_RUNTIME_ABI_SHAPES_JOINSHAPES_H

#include "runtime/abi/shapes/ShapeTypes.h"

#include <cstdint>
#include <vector>

namespace dpc::plan {

/// Concat (operands joined into the result) and Split (the operand cut
/// into the results) along an axis: in bytes, `outer` rows, each holding
/// every part's `partBytes[p]` in order (`rowBytes` together).
struct JoinShape {
  int64_t outer = 0, rowBytes = 0;
  std::vector<int64_t> partBytes;
};
JoinShape getJoinShape(const KernelCall &call);

} // namespace dpc::plan

#endif // DPC_RUNTIME_ABI_SHAPES_JOINSHAPES_H
