//===- KernelContext.cpp - Per-device state of the CPU kernels ------------===//

#include "runtime/kernels/KernelContext.h"
#include "runtime/kernels/DnnlSupport.h"

#include <memory>
#include <new>
#include <omp.h>

namespace dpc::kernels {

CallSite::CallSite() : bound(std::make_unique<Bound>()) {}
CallSite::~CallSite() = default;

KernelContext::KernelContext() : impl(std::make_unique<Impl>()) {}
KernelContext::~KernelContext() = default;

void KernelContext::setCallSite(CallSite *site) {
  impl->site = site;
  impl->nextPrimitive = 0;
}

size_t KernelContext::getNumCachedPrimitives() const {
  return impl->cache.size();
}

void KernelContext::clearCache() {
  // Call sites keep their own references to the primitives they bound.
  impl->cache.clear();
  impl->releaseScratchpad();
  impl->noteHeldBytes();
}

void KernelContext::setMemoryObserver(std::function<void(int64_t)> observer) {
  impl->observer = std::move(observer);
  if (impl->observer && impl->heldBytes)
    impl->observer(impl->heldBytes);
}

ReductionThreadsScope::ReductionThreadsScope(const KernelContext &context,
                                             int64_t flops) {
  int threads = flops >= 0 && flops < kMinParallelFlops
                    ? 1
                    : context.getReductionThreads();
  int current = omp_get_max_threads();
  if (threads > 0 && threads != current) {
    saved = current;
    omp_set_num_threads(threads);
  }
}

ReductionThreadsScope::~ReductionThreadsScope() {
  if (saved > 0)
    omp_set_num_threads(saved);
}

void *KernelContext::Impl::getScratchpad(size_t bytes) {
  if (bytes <= scratchpadCapacity)
    return scratchpad;
  releaseScratchpad();
  // Page-aligned so vectorised oneDNN code never straddles a line on entry.
  constexpr size_t alignment = 4096;
  size_t rounded = (bytes + alignment - 1) / alignment * alignment;
  scratchpad = std::aligned_alloc(alignment, rounded);
  if (!scratchpad)
    throw std::bad_alloc();
  scratchpadCapacity = rounded;
  noteHeldBytes();
  return scratchpad;
}

void KernelContext::Impl::releaseScratchpad() {
  std::free(scratchpad);
  scratchpad = nullptr;
  scratchpadCapacity = 0;
}

namespace {
/// `bytes` of `buffer`, grown if needed, cache-line aligned as oneDNN's own
/// buffers are.
void *getAlignedBytes(std::vector<float> &buffer, size_t bytes) {
  constexpr size_t kAlign = 64 / sizeof(float);
  size_t floats = (bytes + sizeof(float) - 1) / sizeof(float);
  if (buffer.size() < floats + kAlign)
    buffer.resize(floats + kAlign);
  void *start = buffer.data();
  size_t space = buffer.size() * sizeof(float);
  return std::align(64, floats * sizeof(float), start, space);
}
} // namespace

void *KernelContext::Impl::getLayoutBuffer(int index, size_t bytes) {
  size_t before = layoutBuffers[index].size();
  void *buffer = getAlignedBytes(layoutBuffers[index], bytes);
  if (layoutBuffers[index].size() != before)
    noteHeldBytes();
  return buffer;
}

void KernelContext::Impl::noteHeldBytes() {
  int64_t held = int64_t(scratchpadCapacity);
  for (const std::vector<float> &buffer : layoutBuffers)
    held += int64_t(buffer.size() * sizeof(float));
  for (const CastCopy &copy : castCopies)
    held += int64_t(copy.buffer.size() * sizeof(float));
  if (held != heldBytes && observer)
    observer(held - heldBytes);
  heldBytes = held;
}

void KernelContext::Impl::bindCastSlot(BoundPrimitive::Tensor &tensor,
                                       const void *source) {
  auto index = static_cast<size_t>(tensor.cast.slot - 1);
  if (castCopies.size() <= index)
    castCopies.resize(index + 1);
  CastCopy &copy = castCopies[index];
  dnnl::memory::desc desc = tensor.blocked.get_desc();
  // A reuse that finds another source or layout (a plan the compiler did
  // not pair this way) casts again: never a stale or mismatched copy.
  tensor.castReused =
      tensor.cast.reuse && copy.source == source && copy.desc == desc;
  size_t before = copy.buffer.size();
  tensor.blocked.set_data_handle(
      getAlignedBytes(copy.buffer, tensor.blockedBytes));
  if (copy.buffer.size() != before)
    noteHeldBytes();
  if (!tensor.castReused) {
    copy.source = source;
    copy.desc = desc;
  }
}

std::unique_ptr<BoundPrimitive>
KernelContext::Impl::bind(const PrimitiveKey &key, const CachedPrimitive &prim,
                          const std::vector<dnnl::memory::desc> &plainDescs,
                          std::initializer_list<TensorBinding> tensors) {
  auto bound = std::make_unique<BoundPrimitive>(
      BoundPrimitive{key, prim.primitive, prim.scratchpadBytes, {}, {}, {}});
  size_t index = 0;
  for (const TensorBinding &binding : tensors) {
    const dnnl::memory::desc &plain = plainDescs.at(index++);
    if (!binding.data)
      continue;
    BoundPrimitive::Tensor tensor;
    tensor.user = dnnl::memory(plain, engine, DNNL_MEMORY_NONE);
    dnnl::memory used = tensor.user;
    auto layout = prim.layouts.find(binding.arg);
    if (layout != prim.layouts.end() && layout->second != plain) {
      const auto *known =
          std::find_if(std::begin(kTensorArgs), std::end(kTensorArgs),
                       [&](auto entry) { return entry.first == binding.arg; });
      tensor.written = known->second;
      tensor.buffer = static_cast<int>(known - std::begin(kTensorArgs));
      tensor.blockedBytes = layout->second.get_size();
      tensor.blocked = dnnl::memory(layout->second, engine, DNNL_MEMORY_NONE);
      tensor.reorder = tensor.written
                           ? dnnl::reorder(tensor.blocked, tensor.user)
                           : dnnl::reorder(tensor.user, tensor.blocked);
      if (!tensor.written)
        tensor.cast = binding.cast;
      used = tensor.blocked;
    }
    bound->args.push_back({binding.arg, used.get()});
    bound->tensors.push_back(std::move(tensor));
  }
  if (bound->scratchpadBytes > 0) {
    dnnl::memory::desc desc({static_cast<int64_t>(bound->scratchpadBytes)},
                            dnnl::memory::data_type::u8,
                            dnnl::memory::format_tag::a);
    bound->scratchpad = dnnl::memory(desc, engine, DNNL_MEMORY_NONE);
    bound->args.push_back({DNNL_ARG_SCRATCHPAD, bound->scratchpad.get()});
  }
  return bound;
}

namespace {
void executeReorder(const dnnl::stream &stream,
                    const BoundPrimitive::Tensor &tensor) {
  const dnnl::memory &from = tensor.written ? tensor.blocked : tensor.user;
  const dnnl::memory &to = tensor.written ? tensor.user : tensor.blocked;
  dnnl_exec_arg_t args[] = {{DNNL_ARG_FROM, from.get()},
                            {DNNL_ARG_TO, to.get()}};
  dnnl::error::wrap_c_api(
      dnnl_primitive_execute(tensor.reorder.get(), stream.get(), 2, args),
      "could not execute a reorder");
}
} // namespace

void KernelContext::Impl::execute(
    BoundPrimitive &bound, std::initializer_list<TensorBinding> tensors) {
  size_t index = 0;
  for (const TensorBinding &binding : tensors) {
    if (!binding.data)
      continue;
    BoundPrimitive::Tensor &tensor = bound.tensors[index++];
    tensor.user.set_data_handle(const_cast<void *>(binding.data));
    if (tensor.blocked && tensor.cast.slot > 0)
      bindCastSlot(tensor, binding.data);
    else if (tensor.blocked)
      tensor.blocked.set_data_handle(
          getLayoutBuffer(tensor.buffer, tensor.blockedBytes));
  }
  if (bound.scratchpadBytes > 0)
    bound.scratchpad.set_data_handle(getScratchpad(bound.scratchpadBytes));
  // Plain arguments to the primitive's own layouts, and back for outputs.
  for (const BoundPrimitive::Tensor &tensor : bound.tensors)
    if (tensor.blocked && !tensor.written && !tensor.castReused)
      executeReorder(stream, tensor);
  dnnl::error::wrap_c_api(
      dnnl_primitive_execute(bound.primitive.get(), stream.get(),
                             static_cast<int>(bound.args.size()),
                             bound.args.data()),
      "could not execute a primitive");
  for (const BoundPrimitive::Tensor &tensor : bound.tensors)
    if (tensor.blocked && tensor.written)
      executeReorder(stream, tensor);
  stream.wait();
}

dnnl::primitive_attr withReluPostOp(dnnl::primitive_attr attr, bool relu) {
  if (relu) {
    dnnl::post_ops ops;
    ops.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
    attr.set_post_ops(ops);
  }
  return attr;
}

dnnl::primitive_attr defaultAttr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

} // namespace dpc::kernels
