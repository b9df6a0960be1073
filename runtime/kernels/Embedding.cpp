//===- Embedding.cpp - Table lookups by index -----------------------------===//

#include "runtime/kernels/Embedding.h"
#include "runtime/kernels/KernelElements.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace dpc::kernels {

void checkEmbeddingIndices(const EmbeddingShape &s, const int32_t *indices) {
  for (int64_t i = 0; i < s.count; ++i)
    if (indices[i] < 0 || indices[i] >= s.rows)
      throw std::out_of_range("index " + std::to_string(indices[i]) +
                              " (entry " + std::to_string(i) +
                              ") is outside the table's " +
                              std::to_string(s.rows) + " rows");
}

void embeddingForward(const EmbeddingShape &s, const float *table,
                      const int32_t *indices, float *y) {
  checkEmbeddingIndices(s, indices);
#pragma omp parallel for
  for (int64_t i = 0; i < s.count; ++i)
    std::memcpy(y + i * s.dim, table + int64_t(indices[i]) * s.dim,
                s.dim * sizeof(float));
}

void embeddingBackward(const EmbeddingShape &s, const int32_t *indices,
                       const float *dy, float *dTable) {
  checkEmbeddingIndices(s, indices);
  std::fill(dTable, dTable + s.rows * s.dim, 0.f);
#pragma omp parallel for
  for (int64_t d = 0; d < s.dim; ++d)
    elements::embeddingGradColumn(indices, s.count, s.dim, d, dy, dTable);
}

} // namespace dpc::kernels
