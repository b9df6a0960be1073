//===- CpuKernels.h - a KernelCall on the CPU kernel library ----*- C++ -*-===//

#ifndef DPC_RUNTIME_CPU_CPUKERNELS_H
#define DPC_RUNTIME_CPU_CPUKERNELS_H

#include "runtime/abi/KernelCall.h"
#include "runtime/abi/KernelDispatch.h"
#include "runtime/kernels/KernelContext.h"

namespace dpc::rt {

/// Runs `call` with runtime/kernels through the shared dispatch
/// (KernelDispatch.h), shapes from its tensors (checked again, cheaply).
/// Throws std::runtime_error (a ShapeError, or a label outside the classes)
/// without touching memory it should not.
void runCpuKernel(kernels::KernelContext &context,
                  const plan::KernelCall &call);

/// The CPU backend's table: an entry for every kernel of Kernels.def.
const plan::KernelTable<kernels::KernelContext> &getCpuKernelTable();

} // namespace dpc::rt

#endif // DPC_RUNTIME_CPU_CPUKERNELS_H
