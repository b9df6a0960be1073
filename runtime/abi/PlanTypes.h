//===- PlanTypes.h - element types and sizes of plan tensors ----*- C++ -*-===//

#ifndef DPC_RUNTIME_ABI_PLANTYPES_H
#define DPC_RUNTIME_ABI_PLANTYPES_H

#include "runtime/plan/Plan_generated.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dpc::plan {

/// Bytes per element; 0 for a value outside the enum.
inline int64_t getDTypeSize(DType dtype) {
  switch (dtype) {
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F64:
  case DType::I64:
    return 8;
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::U8:
    return 1;
  case DType::TF32: // a compute type: no tensor holds it
    return 0;
  }
  return 0;
}

/// What a plan may hold, checked by the loader before anything is
/// allocated: far beyond any real model, low enough that the sizes and
/// sums computed from them never overflow.
inline constexpr int64_t kMaxTensorElements = int64_t(1) << 48;
inline constexpr size_t kMaxTensorRank = 8;
/// Bytes one device may be asked for, in all (256 TiB).
inline constexpr int64_t kMaxDeviceBytes = int64_t(1) << 48;
/// Devices of a plan, and streams of a step (codegen writes two: compute
/// and communication); each is a thread or a CUDA stream at run time.
inline constexpr size_t kMaxDevices = 65536;
inline constexpr size_t kMaxStreams = 64;
/// Events of a step (codegen writes two per gradient bucket): the loader
/// keeps a clock of every stream per event.
inline constexpr int64_t kMaxEvents = int64_t(1) << 18;

/// Elements of a tensor with `dims` (1 for a scalar); -1 if a dim is
/// negative or the count exceeds kMaxTensorElements.
int64_t getNumElements(const std::vector<int64_t> &dims);

/// Bytes of a tensor of `dtype` and `dims`; -1 for an unknown dtype or
/// invalid dims (as getNumElements).
int64_t getByteSize(DType dtype, const std::vector<int64_t> &dims);

/// The dims of a flatbuffer vector (empty for a missing one).
std::vector<int64_t> toDims(const flatbuffers::Vector<int64_t> *dims);

/// The dims of `tensor` when its step runs on `rows` rows: the batch dim
/// (Tensor.batch_axis) is batch_scale times that.
std::vector<int64_t> getRuntimeDims(const Tensor &tensor, int64_t rows);

/// "[64, 1, 28, 28]".
std::string formatDims(const std::vector<int64_t> &dims);

} // namespace dpc::plan

#endif // DPC_RUNTIME_ABI_PLANTYPES_H
