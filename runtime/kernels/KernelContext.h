//===- KernelContext.h - Per-device state of the CPU kernels ----*- C++ -*-===//
//
// A KernelContext is what one device thread of the executor owns: the oneDNN
// engine and stream, a cache of oneDNN primitives keyed by full shape (so a
// kernel serves any run-time batch size, each size creating its primitive
// once), and the scratchpad those primitives share. There is no global
// mutable state: two device threads use two contexts. A context is not
// thread-safe; it must only be used by one thread at a time.
//
// A CallSite keeps what one call site (a plan instruction) made on its
// first call -- the primitive bound to memory objects, reorders and their
// argument lists -- so that every later call with the same shapes only
// sets pointers and runs: no lookup, creation or allocation per step.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_KERNELS_KERNELCONTEXT_H
#define DPC_RUNTIME_KERNELS_KERNELCONTEXT_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>

namespace dpc::kernels {

class CallSite {
public:
  CallSite();
  ~CallSite();
  CallSite(const CallSite &) = delete;
  CallSite &operator=(const CallSite &) = delete;

  /// Only the kernel sources see its definition (oneDNN objects).
  struct Bound;
  std::unique_ptr<Bound> bound;
};

class KernelContext {
public:
  KernelContext();
  ~KernelContext();
  KernelContext(const KernelContext &) = delete;
  KernelContext &operator=(const KernelContext &) = delete;

  /// Number of oneDNN primitives created so far (one per op and shape).
  size_t getNumCachedPrimitives() const;
  /// Drops every cached primitive and the scratchpad.
  void clearCache();

  /// OpenMP threads for the kernels whose results depend on their thread
  /// count (oneDNN splits the sums of weight gradients and inner products
  /// between its threads); 0: the calling thread's count. Every layout of
  /// a run (one process, or ranks on one or several hosts) sets the same
  /// count, so that they compute the same bits.
  void setReductionThreads(int threads) { reductionThreads = threads; }
  int getReductionThreads() const { return reductionThreads; }

  /// Called with the change in bytes of the context's own buffers (oneDNN's
  /// scratchpad, reordered and converted operands) whenever they grow or
  /// are freed: the device's count of library memory.
  void setMemoryObserver(std::function<void(int64_t)> observer);

  /// The call site the next kernel calls run for (null: none, everything
  /// is looked up in the cache per call). Set by the executor's stream
  /// around each call; the site must outlive its calls.
  void setCallSite(CallSite *site);

  /// oneDNN objects live behind this so that kernel users need not include
  /// dnnl.hpp; only the kernel sources see its definition.
  struct Impl;
  Impl &getImpl() { return *impl; }

private:
  std::unique_ptr<Impl> impl;
  int reductionThreads = 0;
};

/// Runs the scope's kernels with the context's reduction threads (oneDNN
/// primitives are created there too: oneDNN fixes its split of the work
/// when it creates a primitive), and restores the caller's count on the way
/// out. A kernel of fewer than kMinParallelFlops (`flops`, when given) runs
/// on the calling thread alone: waking a sleeping team (OMP_WAIT_POLICY=
/// passive) costs more than it saves there -- the MLP's 256x256x10 product
/// took 12.7 us on one thread, 37.7 us on two (trace minima, loaded
/// machine). The count is still a function of the shape: the same bits in
/// every layout of a run.
class ReductionThreadsScope {
public:
  static constexpr int64_t kMinParallelFlops = int64_t{1} << 22;
  explicit ReductionThreadsScope(const KernelContext &context,
                                 int64_t flops = -1);
  ~ReductionThreadsScope();
  ReductionThreadsScope(const ReductionThreadsScope &) = delete;
  ReductionThreadsScope &operator=(const ReductionThreadsScope &) = delete;

private:
  int saved = 0; // the caller's count, 0 if unchanged
};

} // namespace dpc::kernels

#endif // DPC_RUNTIME_KERNELS_KERNELCONTEXT_H
