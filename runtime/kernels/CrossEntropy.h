//===- CrossEntropy.h - Fused log-softmax + NLL loss ------------*- C++ -*-===//
//
// logits [rows, classes], labels [rows] as int32 class indices, each in
// [0, classes). The loss is SUM over the local rows divided by `divisor`:
// data-parallel replicas pass the GLOBAL batch size so that their losses
// and gradients add up to the mean over the global batch.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_KERNELS_CROSSENTROPY_H
#define DPC_RUNTIME_KERNELS_CROSSENTROPY_H

#include <cstdint>

namespace dpc::kernels {

/// loss[0] = sum_i (logsumexp(logits_i) - logits_i[label_i]) / divisor;
/// numCorrect[0] = rows whose first argmax equals the label. `numCorrect`
/// may be null.
void crossEntropyForward(int64_t rows, int64_t classes, const float *logits,
                         const int32_t *labels, float divisor, float *loss,
                         int64_t *numCorrect);

/// dLogits = (softmax(logits) - onehot(labels)) * dLoss[0] / divisor.
void crossEntropyBackward(int64_t rows, int64_t classes, const float *logits,
                          const int32_t *labels, const float *dLoss,
                          float divisor, float *dLogits);

/// Both of the above in one pass over the rows (the training step's loss
/// and its gradient): the same bits as the two calls, each row's
/// logsumexp computed once. Both gradients take one exp per logit: the
/// exp(x - max) of the row's sum, kept and scaled by 1 / the sum.
void crossEntropyForwardBackward(int64_t rows, int64_t classes,
                                 const float *logits, const int32_t *labels,
                                 const float *dLoss, float divisor, float *loss,
                                 int64_t *numCorrect, float *dLogits);

} // namespace dpc::kernels

#endif // DPC_RUNTIME_KERNELS_CROSSENTROPY_H
