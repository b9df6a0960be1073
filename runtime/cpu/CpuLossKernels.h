//===- CpuLossKernels.h - nn.loss's kernels on the CPU ----------*- C++ -*-===//
//
// The CPU table's entries (CpuKernels.cpp) for LossForward, LossBackward,
// LossWeight and LossCorrectCount, over runtime/kernels/Loss.h.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_CPU_CPULOSSKERNELS_H
#define DPC_RUNTIME_CPU_CPULOSSKERNELS_H

#include "runtime/abi/KernelCall.h"
#include "runtime/kernels/KernelContext.h"

namespace dpc::exec {

void runLossForward(kernels::KernelContext &, const plan::KernelCall &call);
void runLossBackward(kernels::KernelContext &, const plan::KernelCall &call);
void runLossWeight(kernels::KernelContext &, const plan::KernelCall &call);
void runLossCorrectCount(kernels::KernelContext &,
                         const plan::KernelCall &call);

} // namespace dpc::exec

#endif // DPC_RUNTIME_CPU_CPULOSSKERNELS_H
