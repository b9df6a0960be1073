//===- LayerNorm.cpp - Layer normalization over rows ----------------------===//

#include "runtime/kernels/LayerNorm.h"

namespace dpc::kernels {

void layerNormForward(const LayerNormShape &s, const float *x,
                      const float *scale, const float *bias, float *y) {
#pragma omp parallel for
  for (int64_t r = 0; r < s.rows; ++r) {
    const float *row = x + r * s.cols;
    elements::RowStats stats = elements::layerNormStats(row, s.cols, s.epsilon);
    for (int64_t c = 0; c < s.cols; ++c)
      y[r * s.cols + c] = elements::layerNormForward(row[c], stats, scale[c],
                                                     bias ? bias[c] : 0.f);
  }
}

void layerNormBackward(const LayerNormShape &s, const float *x, const float *dy,
                       const float *scale, elements::RowStats *stats, float *dx,
                       float *dScale, float *dBias) {
#pragma omp parallel for
  for (int64_t r = 0; r < s.rows; ++r) {
    int64_t offset = r * s.cols;
    stats[r] = elements::layerNormStats(x + offset, s.cols, s.epsilon);
    elements::layerNormBackwardRow(x + offset, dy + offset, scale, s.cols,
                                   stats[r], dx + offset);
  }
  // Each column sums over every row in row order: no dependence on the
  // thread count.
#pragma omp parallel for
  for (int64_t c = 0; c < s.cols; ++c)
    elements::layerNormParamGrads(x, dy, stats, s.rows, s.cols, c, dScale,
                                  dBias);
}

} // namespace dpc::kernels
