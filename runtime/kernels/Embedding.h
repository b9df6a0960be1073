//===- Embedding.h - Table lookups by index ---------------------*- C++ -*-===//
//
// torch.nn.Embedding: y [count, dim] holds rows `indices` of table [rows,
// dim]. Indices outside [0, rows) are refused before anything is read.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_KERNELS_EMBEDDING_H
#define DPC_RUNTIME_KERNELS_EMBEDDING_H

#include "runtime/abi/shapes/EmbeddingShapes.h"

#include <cstdint>

namespace dpc::kernels {

using plan::EmbeddingShape;

/// Throws std::out_of_range naming the first index outside [0, rows).
void checkEmbeddingIndices(const EmbeddingShape &s, const int32_t *indices);

void embeddingForward(const EmbeddingShape &s, const float *table,
                      const int32_t *indices, float *y);

/// dTable = the rows of dy added at their indices (zero elsewhere).
void embeddingBackward(const EmbeddingShape &s, const int32_t *indices,
                       const float *dy, float *dTable);

} // namespace dpc::kernels

#endif // DPC_RUNTIME_KERNELS_EMBEDDING_H
