//===- CpuKernels.h - a KernelCall on the CPU kernel library ----*- C++ -*-===//

#ifndef DPC_RUNTIME_EXEC_CPUKERNELS_H
#define DPC_RUNTIME_EXEC_CPUKERNELS_H

#include "runtime/kernels/KernelContext.h"
#include "runtime/plan/KernelCall.h"

namespace dpc::exec {

/// Runs `call` with runtime/kernels, shapes from its tensors (checked
/// again, cheaply). Throws std::runtime_error (a ShapeError, or a label
/// outside the classes) without touching memory it should not.
void runCpuKernel(kernels::KernelContext &context,
                  const plan::KernelCall &call);

} // namespace dpc::exec

#endif // DPC_RUNTIME_EXEC_CPUKERNELS_H
