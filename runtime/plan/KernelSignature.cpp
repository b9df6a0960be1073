//===- KernelSignature.cpp - operand and result counts per kernel ---------===//

#include "runtime/plan/KernelSignature.h"

namespace dpc::plan {

const KernelSignature *getKernelSignature(Kernel kernel) {
  using A = KernelAttrs;
  // {minOps, maxOps, minRes, maxRes, optionalOps, optionalRes, attrs, req,
  //  workspace}
  static const KernelSignature unary{1, 1, 1, 1, 0, 0, A::NONE, false};
  static const KernelSignature binary{2, 2, 1, 1, 0, 0, A::NONE, false};
  // Convolutions may take a workspace (cuDNN's, planned in the arena).
  static const KernelSignature convForward{
      2, 3, 1, 1, 0, 0, A::Conv2dAttrs, false, true};
  static const KernelSignature convData{2,     2,   1, 1, 0, 0, A::Conv2dAttrs,
                                        false, true};
  static const KernelSignature convWeights{
      2, 2, 1, 2, 0, 0, A::Conv2dAttrs, false, true};
  // Running statistics (operands 3, 4) may be left out together.
  static const KernelSignature bnTraining{
      5, 5, 3, 3, 0b11000, 0, A::BatchNormAttrs, false};
  static const KernelSignature bnInference{
      5, 5, 1, 1, 0, 0, A::BatchNormAttrs, false};
  static const KernelSignature bnBackward{
      5, 5, 3, 3, 0, 0, A::BatchNormAttrs, false};
  static const KernelSignature pool{1, 1, 1, 1, 0, 0, A::Pool2dAttrs, true};
  static const KernelSignature maxPoolBackward{
      2, 2, 1, 1, 0, 0, A::Pool2dAttrs, true};
  static const KernelSignature pad{1, 1, 1, 1, 0, 0, A::PadAttrs, true};
  static const KernelSignature linearForward{2, 3, 1, 1, 0, 0, A::NONE, false};
  static const KernelSignature linearWeights{2, 2, 1, 2, 0, 0, A::NONE, false};
  static const KernelSignature twoGradients{3, 3,    2,       2,
                                            0, 0b11, A::NONE, false};
  static const KernelSignature addBackward{1, 1, 2, 2, 0, 0b11, A::NONE, false};
  static const KernelSignature crossEntropy{2, 2, 1, 2, 0, 0, A::NONE, false};
  static const KernelSignature crossEntropyBackward{2, 3, 1,       1,
                                                    0, 0, A::NONE, false};
  static const KernelSignature sgd{3, 4, 0, 0, 0, 0, A::SgdAttrs, false};
  static const KernelSignature adamw{6, 6, 0, 0, 0, 0, A::AdamWAttrs, false};
  static const KernelSignature fill{0, 0, 1, 1, 0, 0, A::FillAttrs, false};
  static const KernelSignature reduce{1, 1, 1, 1, 0, 0, A::ReduceAttrs, true};
  static const KernelSignature allReduce{
      1, 255, 0, 0, 0, 0, A::AllReduceAttrs, false};
  static const KernelSignature bnStatistics{1, 1, 3, 3, 0, 0, A::NONE, false};
  static const KernelSignature bnApply{8,    8, 3, 3, 0, 0, A::BatchNormAttrs,
                                       false};
  static const KernelSignature bnGradStatistics{4, 4, 2,       2,
                                                0, 0, A::NONE, false};
  static const KernelSignature bnGradApply{8, 8, 1, 1, 0, 0, A::NONE, false};

  switch (kernel) {
  case Kernel::Conv2dForward:
    return &convForward;
  case Kernel::Conv2dBackwardData:
    return &convData;
  case Kernel::Conv2dBackwardWeights:
    return &convWeights;
  case Kernel::BatchNormTrainingForward:
    return &bnTraining;
  case Kernel::BatchNormInferenceForward:
    return &bnInference;
  case Kernel::BatchNormBackward:
    return &bnBackward;
  case Kernel::MaxPool2dForward:
  case Kernel::AvgPool2dForward:
  case Kernel::AvgPool2dBackward:
    return &pool;
  case Kernel::MaxPool2dBackward:
    return &maxPoolBackward;
  case Kernel::PadForward:
  case Kernel::PadBackward:
    return &pad;
  case Kernel::LinearForward:
    return &linearForward;
  case Kernel::LinearBackwardWeights:
    return &linearWeights;
  case Kernel::MatmulBackward:
  case Kernel::MulBackward:
    return &twoGradients;
  case Kernel::AddBackward:
    return &addBackward;
  case Kernel::CrossEntropyForward:
    return &crossEntropy;
  case Kernel::CrossEntropyBackward:
    return &crossEntropyBackward;
  case Kernel::SgdUpdate:
    return &sgd;
  case Kernel::AdamWUpdate:
    return &adamw;
  case Kernel::Fill:
    return &fill;
  case Kernel::ReduceSum:
    return &reduce;
  case Kernel::AllReduce:
    return &allReduce;
  case Kernel::BatchNormStatistics:
    return &bnStatistics;
  case Kernel::BatchNormApply:
    return &bnApply;
  case Kernel::BatchNormGradStatistics:
    return &bnGradStatistics;
  case Kernel::BatchNormGradApply:
    return &bnGradApply;
  case Kernel::GlobalAvgPool2dForward:
  case Kernel::GlobalAvgPool2dBackward:
  case Kernel::ReluForward:
  case Kernel::SigmoidForward:
  case Kernel::TanhForward:
  case Kernel::SoftmaxForward:
  case Kernel::LogSoftmaxForward:
  case Kernel::Copy:
  case Kernel::Accumulate:
  case Kernel::Transpose2d:
    return &unary;
  case Kernel::LinearBackwardData:
  case Kernel::MatmulForward:
  case Kernel::ReluBackward:
  case Kernel::SigmoidBackward:
  case Kernel::TanhBackward:
  case Kernel::AddForward:
  case Kernel::MulForward:
  case Kernel::SoftmaxBackward:
  case Kernel::LogSoftmaxBackward:
  case Kernel::CorrectCount:
  case Kernel::MatmulTransposedA:
    return &binary;
  }
  return nullptr;
}

bool isOptimizerKernel(Kernel kernel) {
  return kernel == Kernel::SgdUpdate || kernel == Kernel::AdamWUpdate;
}

} // namespace dpc::plan
