//===- ShapeTypes.h - what the shape families share -------------*- C++ -*-===//
//
// The small vocabulary of the shape families (shapes/*Shapes.h): the call
// they read, declared only, so that the kernels and the CUDA sources can
// include a family's shape struct without the plan schema; NCHW extents;
// rows of columns; the blocked layout's channel block.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_ABI_SHAPES_SHAPETYPES_H
#define DPC_RUNTIME_ABI_SHAPES_SHAPETYPES_H

#include <cstdint>

namespace dpc::plan {

/// One instruction bound to tensors (KernelCall.h).
struct KernelCall;

/// NCHW extents of a rank 2..4 tensor (missing trailing dims are 1).
struct Nchw {
  int64_t n, c, h, w;
};

struct RowsShape {
  int64_t rows, cols;
};

/// Channels per block of the blocked layout (nChw16c, Plan.fbs's Layout:
/// runtime/kernels/Reorder.h stores [n, c / 16, h, w, 16]).
inline constexpr int64_t kChannelBlock = 16;

} // namespace dpc::plan

#endif // DPC_RUNTIME_ABI_SHAPES_SHAPETYPES_H
