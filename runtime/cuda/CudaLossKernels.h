//===- CudaLossKernels.h - nn.loss's kernels on CUDA ------------*- C++ -*-===//
//
// The CUDA table's entries (CudaKernels.cpp) for LossForward, LossBackward,
// LossWeight and LossCorrectCount, over LossKernels.cu.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_CUDA_CUDALOSSKERNELS_H
#define DPC_RUNTIME_CUDA_CUDALOSSKERNELS_H

#include "runtime/abi/KernelCall.h"
#include "runtime/cuda/CudaKernels.h"

namespace dpc::cuda {

void runLossForward(StreamContext &ctx, const plan::KernelCall &call);
void runLossBackward(StreamContext &ctx, const plan::KernelCall &call);
void runLossWeight(StreamContext &ctx, const plan::KernelCall &call);
void runLossCorrectCount(StreamContext &ctx, const plan::KernelCall &call);

} // namespace dpc::cuda

#endif // DPC_RUNTIME_CUDA_CUDALOSSKERNELS_H
