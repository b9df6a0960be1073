//===- EmbeddingShapes.h - table lookups by index ---------------*- C++ -*-===//

#ifndef DPC_RUNTIME_ABI_SHAPES_EMBEDDINGSHAPES_H
#define DPC_RUNTIME_ABI_SHAPES_EMBEDDINGSHAPES_H

#include "runtime/abi/shapes/ShapeTypes.h"

#include <cstdint>

namespace dpc::plan {

struct EmbeddingShape {
  int64_t count = 0; // indices
  int64_t rows = 0;  // table rows
  int64_t dim = 0;   // floats per row
};

/// EmbeddingForward (Table [rows, dim], Indices I32 [count...]) -> Y
/// [count..., dim]; EmbeddingBackward (Indices, DY) -> DTable.
EmbeddingShape getEmbeddingShape(const KernelCall &call);

} // namespace dpc::plan

#endif // DPC_RUNTIME_ABI_SHAPES_EMBEDDINGSHAPES_H
