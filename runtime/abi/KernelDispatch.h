//===- KernelDispatch.h - one pre-dispatch for every backend ----*- C++ -*-===//
//
// A backend is a table with one function per entry of Kernels.def, built by
// including the list (so a backend that lacks a kernel does not compile),
// plus a way to write zeros. dispatchKernel applies, once for every
// backend, the rules that are no kernel's own business:
//
//  - A call with an empty tensor (a replica on 0 rows) runs no kernel and
//    writes zeros to its non-empty results (KernelCall.h), except for the
//    collectives, which every replica must join, and the kernels that run
//    on empty shares (synchronized batch norm's).
//  - Optimizer kernels need a 1-based update count.
//  - A TF32 call runs only on a backend that computes it.
//  - A kernel a backend leaves out (a null entry) is one error naming both.
//
// Labels are not checked here: the executor checks them on the host when
// they are bound (a device kernel could only turn a bad label into NaN).
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_ABI_KERNELDISPATCH_H
#define DPC_RUNTIME_ABI_KERNELDISPATCH_H

#include "runtime/abi/KernelCall.h"
#include "runtime/abi/KernelSignature.h"

#include <array>
#include <stdexcept>
#include <string>

namespace dpc::plan {

constexpr size_t kNumKernels = static_cast<size_t>(Kernel::MAX) + 1;

template <typename Context> struct KernelTable {
  using Function = void (*)(Context &, const KernelCall &);
  const char *backend; // "the CPU", "CUDA": for errors
  std::array<Function, kNumKernels> kernels;
  /// Writes zeros to every present, non-empty result of the call.
  Function zeroResults;
  /// Whether its kernels take the blocked layouts of KernelLayouts.h; a
  /// backend without refuses any call with a tensor not plain.
  bool blockedLayouts = false;
  /// Whether its convolutions and matrix multiplies compute in TF32 (a
  /// GPU's tensor cores); a backend without refuses a TF32 call.
  bool tensorFloat32 = false;
};

/// The first tensor of `call` that is not plain, or null.
inline const TensorArg *findBlockedTensor(const KernelCall &call) {
  for (const auto *args : {&call.operands, &call.results})
    for (const TensorArg &arg : *args)
      if (arg.present && arg.layout != Layout::Plain)
        return &arg;
  return nullptr;
}

template <typename Context>
void dispatchKernel(const KernelTable<Context> &table, Context &context,
                    const KernelCall &call) {
  const KernelSignature *signature = getKernelSignature(call.kernel);
  auto function =
      signature ? table.kernels[static_cast<size_t>(call.kernel)] : nullptr;
  if (!function)
    throw std::runtime_error("kernel " +
                             std::to_string(static_cast<int>(call.kernel)) +
                             " (" + (signature ? signature->name : "unknown") +
                             ") is not supported on " + table.backend);
  if (!signature->has(kCollective) && !signature->has(kRunsOnEmpty) &&
      call.hasEmptyTensor())
    return table.zeroResults(context, call);
  if (!table.blockedLayouts)
    if (const TensorArg *blocked = findBlockedTensor(call))
      throw std::runtime_error(std::string(signature->name) + ": " +
                               table.backend +
                               " takes plain tensors only, "
                               "not " +
                               EnumNameLayout(blocked->layout) +
                               " (a plan compiled for another device)");
  if (!table.tensorFloat32 && call.instruction &&
      call.instruction->precision() == DType::TF32)
    throw std::runtime_error(std::string(signature->name) + ": " +
                             table.backend +
                             " does not compute in TF32 (a plan compiled "
                             "with --precision tf32 for a GPU)");
  if (signature->has(kOptimizer) && call.optimizerStep < 1)
    throw std::runtime_error(std::string(signature->name) + ": step " +
                             std::to_string(call.optimizerStep) +
                             " is not a 1-based update count");
  function(context, call);
}

} // namespace dpc::plan

#endif // DPC_RUNTIME_ABI_KERNELDISPATCH_H
