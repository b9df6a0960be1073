//===- Loss.cpp - the losses of nn.loss on the CPU ------------------------===//

#include "runtime/kernels/Loss.h"
#include "runtime/kernels/LossMath.h"
#include "runtime/kernels/Parallel.h"

#include <stdexcept>
#include <string>

namespace dpc::kernels {

void checkClassTargets(const plan::LossShape &s, const int32_t *targets) {
  for (int64_t i = 0; i < s.targets(); ++i) {
    int32_t t = targets[i];
    if ((t < 0 || t >= s.classes) && !(s.hasIgnoreIndex && t == s.ignoreIndex))
      throw std::runtime_error("target " + std::to_string(i) + " is class " +
                               std::to_string(t) + ", outside the " +
                               std::to_string(s.classes) + " classes");
  }
}

double lossSum(const plan::LossShape &s, const float *output,
               const void *target) {
  double sum = 0.0;
  if (s.isCrossEntropy()) {
    const auto *classes = static_cast<const int32_t *>(target);
    for (int64_t i = 0; i < s.targets(); ++i)
      sum +=
          loss::crossEntropy(s, output + loss::logitsOffset(s, i), classes[i]);
    return sum;
  }
  const auto *values = static_cast<const float *>(target);
  for (int64_t j = 0; j < s.elements; ++j)
    sum += loss::pointLoss(s, output[j], values[j], j);
  return sum;
}

void lossGradient(const plan::LossShape &s, const float *output,
                  const void *target, double scale, float *dOutput) {
  if (s.isCrossEntropy()) {
    const auto *classes = static_cast<const int32_t *>(target);
#pragma omp parallel for if (isWorthThreads(s.targets() * s.classes, 8))
    for (int64_t i = 0; i < s.targets(); ++i) {
      int64_t at = loss::logitsOffset(s, i);
      loss::crossEntropyGrad(s, output + at, classes[i], scale, dOutput + at);
    }
    return;
  }
  const auto *values = static_cast<const float *>(target);
#pragma omp parallel for if (isWorthThreads(s.elements, 1))
  for (int64_t j = 0; j < s.elements; ++j)
    dOutput[j] =
        static_cast<float>(scale * loss::pointGrad(s, output[j], values[j], j));
}

double lossWeight(const plan::LossShape &s, const int32_t *targets) {
  double sum = 0.0;
  for (int64_t i = 0; i < s.targets(); ++i)
    sum += loss::targetWeight(s, targets[i]);
  return sum;
}

int64_t lossCorrectCount(const plan::LossShape &s, const float *logits,
                         const int32_t *targets) {
  int64_t correct = 0;
  for (int64_t i = 0; i < s.targets(); ++i)
    if (loss::isValidClass(s, targets[i]))
      correct +=
          loss::predicts(s, logits + loss::logitsOffset(s, i), targets[i]);
  return correct;
}

} // namespace dpc::kernels
