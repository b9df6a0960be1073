//===- KernelCheck.h - a kernel call's checks, without exceptions -*- C++
//-*-===//
//
// KernelShapes.h's checkKernelCall for callers built without exceptions
// (the compiler's exec.kernel verifier): the same checks, the same words.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_ABI_KERNELCHECK_H
#define DPC_RUNTIME_ABI_KERNELCHECK_H

#include "runtime/abi/KernelCall.h"

#include <string>

namespace dpc::plan {

/// What is wrong with `call`, or "" when the kernel may run it.
std::string findKernelCallError(const KernelCall &call);

} // namespace dpc::plan

#endif // DPC_RUNTIME_ABI_KERNELCHECK_H
