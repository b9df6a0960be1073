//===- KernelCall.h - one instruction bound to tensors ----------*- C++ -*-===//
//
// An Instruction with its operand and result tensors resolved: where each
// lives on the device and its dims at the step's run-time batch. The
// executor builds one per instruction per step and hands it to a stream;
// a device backend turns it into a kernel launch. The loader builds the same
// thing without data, at the compiled batch, to check shapes.
//
// A replica of a data-parallel step may run on 0 rows. A call with an empty
// (0-element) tensor skips its kernel and writes zeros to its non-empty
// results: those are sums over the rows (weight and bias gradients, the
// loss, counts), and every other result is empty too. Operands updated in
// place (running statistics) are left alone. Collectives are the exception:
// they always run, since every replica must take part.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_ABI_KERNELCALL_H
#define DPC_RUNTIME_ABI_KERNELCALL_H

#include "runtime/abi/PlanTypes.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace dpc::comm {
class Communicator;
}

namespace dpc::plan {

/// What a backend keeps for one instruction from one call to the next (the
/// CPU's oneDNN primitives bound to their memory objects): made by the
/// backend on the instruction's first call, owned by the executor, one per
/// instruction of each replica, used by one stream at a time.
struct KernelState {
  virtual ~KernelState() = default;
};

struct TensorArg {
  bool present = false; // false for a left-out optional operand or result
  void *data = nullptr; // device memory; null when only checking shapes
  DType dtype = DType::F32;
  std::vector<int64_t> dims;
  /// How the elements lie in memory (KernelLayouts.h says where a kernel
  /// takes other than plain).
  Layout layout = Layout::Plain;

  int64_t getNumElements() const { return plan::getNumElements(dims); }
  int64_t getNumBytes() const { return getNumElements() * getDTypeSize(dtype); }
  float *f32() const { return static_cast<float *>(data); }
  template <typename T> T *as() const { return static_cast<T *>(data); }
};

struct KernelCall {
  Kernel kernel = Kernel::Copy;
  const Instruction *instruction = nullptr; // attrs and algorithm
  std::vector<TensorArg> operands, results;
  /// Scratch (U8) the kernel may use while it runs; not present: none.
  TensorArg workspace;
  /// The global run-time batch (every replica's rows together): the
  /// cross-entropy divisor. The replica's own rows are in the tensors' dims.
  int64_t batch = 0;
  /// The 1-based optimizer update this run belongs to: in a step that
  /// updates parameters, its own count (SGD's first-step rule); in any
  /// other step (a gradient-accumulation micro-batch), the next update's.
  int64_t optimizerStep = 1;
  /// Dropout's mask keys (KernelMath.h): the run's seed, and the global
  /// row, within the optimizer update's whole batch, of this replica's
  /// first row (micro-batches and replicas before it counted).
  uint64_t randomSeed = 0;
  int64_t firstRow = 0;
  /// The replica's handle for collectives (AllReduce); null when checking.
  comm::Communicator *communicator = nullptr;
  /// The instruction's KernelState slot; null: the backend keeps nothing.
  std::unique_ptr<KernelState> *state = nullptr;
  /// Where an optimizer update (Kernels.def's kOptimizer) sets 1 when a
  /// value it writes is NaN or infinite, on a backend that checks its
  /// updates (Device::checksUpdates); null: not asked.
  std::atomic<uint32_t> *nonFinite = nullptr;

  /// True when a present operand or result has no elements (a replica on 0
  /// rows): see the rule above.
  bool hasEmptyTensor() const {
    for (const auto *args : {&operands, &results})
      for (const TensorArg &arg : *args)
        if (arg.present && arg.getNumElements() == 0)
          return true;
    return false;
  }

  /// A left-out (not present) argument for indices past the end.
  const TensorArg &operand(size_t i) const {
    return i < operands.size() ? operands[i] : missing();
  }
  const TensorArg &result(size_t i) const {
    return i < results.size() ? results[i] : missing();
  }

private:
  static const TensorArg &missing() {
    static const TensorArg none;
    return none;
  }
};

} // namespace dpc::plan

#endif // DPC_RUNTIME_ABI_KERNELCALL_H
