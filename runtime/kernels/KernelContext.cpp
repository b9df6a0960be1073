//===- KernelContext.cpp - Per-device state of the CPU kernels ------------===//

#include "runtime/kernels/KernelContext.h"
#include "runtime/kernels/DnnlSupport.h"

#include <memory>
#include <new>
#include <omp.h>

namespace dpc::kernels {

KernelContext::KernelContext() : impl(std::make_unique<Impl>()) {}
KernelContext::~KernelContext() = default;

size_t KernelContext::getNumCachedPrimitives() const {
  return impl->cache.size();
}

void KernelContext::clearCache() {
  impl->cache.clear();
  impl->releaseScratchpad();
}

ReductionThreadsScope::ReductionThreadsScope(const KernelContext &context) {
  int threads = context.getReductionThreads();
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
  return scratchpad;
}

void KernelContext::Impl::releaseScratchpad() {
  std::free(scratchpad);
  scratchpad = nullptr;
  scratchpadCapacity = 0;
}

void KernelContext::Impl::execute(const CachedPrimitive &prim,
                                  std::unordered_map<int, dnnl::memory> args) {
  if (prim.scratchpadBytes > 0) {
    dnnl::memory::desc desc({static_cast<int64_t>(prim.scratchpadBytes)},
                            dnnl::memory::data_type::u8,
                            dnnl::memory::format_tag::a);
    args.emplace(
        DNNL_ARG_SCRATCHPAD,
        dnnl::memory(desc, engine, getScratchpad(prim.scratchpadBytes)));
  }
  // Plain arguments to the primitive's own layouts, and back for outputs.
  std::vector<std::pair<dnnl::memory, dnnl::memory>> writeBack;
  for (auto [arg, written] : kTensorArgs) {
    auto layout = prim.layouts.find(arg);
    auto given = args.find(arg);
    if (layout == prim.layouts.end() || given == args.end() ||
        given->second.get_desc() == layout->second)
      continue;
    // Cache-line aligned, as oneDNN's own buffers are.
    constexpr size_t kAlign = 64 / sizeof(float);
    std::vector<float> &buffer = layoutBuffers[arg];
    size_t floats =
        (layout->second.get_size() + sizeof(float) - 1) / sizeof(float);
    if (buffer.size() < floats + kAlign)
      buffer.resize(floats + kAlign);
    void *start = buffer.data();
    size_t space = buffer.size() * sizeof(float);
    std::align(64, floats * sizeof(float), start, space);
    dnnl::memory reordered(layout->second, engine, start);
    if (written)
      writeBack.emplace_back(reordered, given->second);
    else
      dnnl::reorder(given->second, reordered)
          .execute(stream, given->second, reordered);
    given->second = reordered;
  }
  prim.primitive.execute(stream, args);
  for (auto &[from, to] : writeBack)
    dnnl::reorder(from, to).execute(stream, from, to);
  stream.wait();
}

dnnl::primitive_attr defaultAttr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

} // namespace dpc::kernels
