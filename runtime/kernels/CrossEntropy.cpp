//===- CrossEntropy.cpp - Fused log-softmax + NLL loss --------------------===//

#include "runtime/kernels/CrossEntropy.h"
#include "runtime/kernels/KernelMath.h"
#include "runtime/kernels/Parallel.h"

#include <cmath>

namespace dpc::kernels {

void crossEntropyForward(int64_t rows, int64_t classes, const float *logits,
                         const int32_t *labels, float divisor, float *loss,
                         int64_t *numCorrect) {
  // Rows are few (the local batch): one serial pass keeps the sum's order,
  // and so the loss, independent of the thread count.
  double sum = 0.0;
  int64_t correct = 0;
  for (int64_t i = 0; i < rows; ++i) {
    const float *row = logits + i * classes;
    sum -= math::logSoftmax(row[labels[i]], math::rowLogSumExp(row, classes));
    correct += math::rowArgMax(row, classes) == labels[i];
  }
  *loss = static_cast<float>(sum / divisor);
  if (numCorrect)
    *numCorrect = correct;
}

void crossEntropyForwardBackward(int64_t rows, int64_t classes,
                                 const float *logits, const int32_t *labels,
                                 const float *dLoss, float divisor, float *loss,
                                 int64_t *numCorrect, float *dLogits) {
  // Serial, in crossEntropyForward's order (the loss's sum); the gradient's
  // rows are crossEntropyBackward's.
  float g = *dLoss / divisor;
  double sum = 0.0;
  int64_t correct = 0;
  for (int64_t i = 0; i < rows; ++i) {
    const float *row = logits + i * classes;
    float *dRow = dLogits + i * classes;
    sum -= math::logSoftmax(
        row[labels[i]],
        math::crossEntropyRowGrad(row, classes, labels[i], g, dRow));
    correct += math::rowArgMax(row, classes) == labels[i];
  }
  *loss = static_cast<float>(sum / divisor);
  if (numCorrect)
    *numCorrect = correct;
}

void crossEntropyBackward(int64_t rows, int64_t classes, const float *logits,
                          const int32_t *labels, const float *dLoss,
                          float divisor, float *dLogits) {
  float g = *dLoss / divisor;
#pragma omp parallel for if (isWorthThreads(rows * classes, 8))
  for (int64_t i = 0; i < rows; ++i) {
    math::crossEntropyRowGrad(logits + i * classes, classes, labels[i], g,
                              dLogits + i * classes);
  }
}

} // namespace dpc::kernels
