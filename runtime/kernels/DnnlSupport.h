//===- DnnlSupport.h - oneDNN plumbing private to the kernels ---*- C++ -*-===//
//
// Not part of the public API: the definition of KernelContext::Impl, the
// primitive cache and the helpers that wrap raw pointers in dnnl::memory.
// Memory layout is decided here and only here: callers hand over plain
// row-major buffers; a primitive created with `format_tag::any` (the
// convolutions) runs in the blocked layout oneDNN prefers, and execute()
// reorders its arguments to and from it around the call. (Keeping tensors
// blocked across ops, chosen at compile time, would save those reorders.)
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_KERNELS_DNNLSUPPORT_H
#define DPC_RUNTIME_KERNELS_DNNLSUPPORT_H

#include "runtime/kernels/KernelContext.h"

#include <dnnl.hpp>

#include <cstdint>
#include <cstdlib>
#include <unordered_map>
#include <vector>

namespace dpc::kernels {

/// Tags the op a cached primitive belongs to; first element of every key.
enum class PrimitiveKind : int64_t {
  ConvForward,
  ConvBackwardData,
  ConvBackwardWeights,
  LinearForward,
  LinearBackwardData,
  LinearBackwardWeights,
  Matmul,
};

/// The op kind followed by every shape and attribute that changes the
/// primitive. Two calls with equal keys may share a primitive.
using PrimitiveKey = std::vector<int64_t>;

struct PrimitiveKeyHash {
  size_t operator()(const PrimitiveKey &key) const {
    uint64_t h = 1469598103934665603ull;
    for (int64_t v : key)
      h = (h ^ static_cast<uint64_t>(v)) * 1099511628211ull;
    return static_cast<size_t>(h);
  }
};

struct CachedPrimitive {
  dnnl::primitive primitive;
  size_t scratchpadBytes = 0;
  /// The layout the primitive expects for each tensor argument.
  std::unordered_map<int, dnnl::memory::desc> layouts;
};

/// The tensor arguments of the primitives we create, and whether each is
/// written (reordered back after the call) or read.
inline constexpr std::pair<int, bool> kTensorArgs[] = {
    {DNNL_ARG_SRC, false},     {DNNL_ARG_WEIGHTS, false},
    {DNNL_ARG_DST, true},      {DNNL_ARG_DIFF_DST, false},
    {DNNL_ARG_DIFF_SRC, true}, {DNNL_ARG_DIFF_WEIGHTS, true}};

class PrimitiveCache {
public:
  /// Returns the primitive for `key`, building it with `create()` (which
  /// returns a primitive_desc) on first use.
  template <typename CreateFn>
  const CachedPrimitive &getOrCreate(const PrimitiveKey &key,
                                     CreateFn &&create) {
    auto it = entries.find(key);
    if (it != entries.end())
      return it->second;
    auto pd = create();
    CachedPrimitive entry{
        dnnl::primitive(pd), pd.scratchpad_desc().get_size(), {}};
    for (auto [arg, written] : kTensorArgs) {
      dnnl::memory::desc desc = pd.query_md(dnnl::query::exec_arg_md, arg);
      if (desc.get_size() > 0)
        entry.layouts.emplace(arg, desc);
    }
    return entries.emplace(key, std::move(entry)).first->second;
  }
  size_t size() const { return entries.size(); }
  void clear() { entries.clear(); }

private:
  std::unordered_map<PrimitiveKey, CachedPrimitive, PrimitiveKeyHash> entries;
};

struct KernelContext::Impl {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  PrimitiveCache cache;

  /// Primitives run in user scratchpad mode and share this buffer, so a
  /// context's temporary memory is one growing allocation.
  void *getScratchpad(size_t bytes);
  void releaseScratchpad();
  ~Impl() { releaseScratchpad(); }

  /// Runs `prim` on this context's stream with `args` plus the scratchpad,
  /// and waits: kernels return with their outputs written. An argument in
  /// another layout than the primitive's goes through a reorder into (and,
  /// if written, back out of) a buffer of the context.
  void execute(const CachedPrimitive &prim,
               std::unordered_map<int, dnnl::memory> args);

private:
  void *scratchpad = nullptr;
  size_t scratchpadCapacity = 0;
  /// Reordered arguments, one growing buffer per argument kind.
  std::unordered_map<int, std::vector<float>> layoutBuffers;
};

/// Attributes every cached primitive is created with.
dnnl::primitive_attr defaultAttr();

/// A plain (row-major) f32 descriptor for `dims` with the given format tag.
inline dnnl::memory::desc plainDesc(const dnnl::memory::dims &dims,
                                    dnnl::memory::format_tag tag) {
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, tag);
}

/// Wraps a caller-owned buffer; oneDNN never frees it. Inputs are passed as
/// const pointers and only read by the primitive.
inline dnnl::memory wrap(KernelContext::Impl &ctx,
                         const dnnl::memory::desc &desc, const float *ptr) {
  return dnnl::memory(desc, ctx.engine, const_cast<float *>(ptr));
}

/// Arguments of a weighted primitive with an optional bias (convolution and
/// inner product share them): forward reads src/weights/bias and writes dst.
template <typename Descs>
std::unordered_map<int, dnnl::memory>
weightedForwardArgs(KernelContext::Impl &ctx, const Descs &d, const float *src,
                    const float *weights, const float *bias, float *dst) {
  std::unordered_map<int, dnnl::memory> args{
      {DNNL_ARG_SRC, wrap(ctx, d.src, src)},
      {DNNL_ARG_WEIGHTS, wrap(ctx, d.weights, weights)},
      {DNNL_ARG_DST, wrap(ctx, d.dst, dst)}};
  if (bias)
    args.emplace(DNNL_ARG_BIAS, wrap(ctx, d.bias, bias));
  return args;
}

/// ... and the weight gradient reads src/diff_dst, writes the weight and
/// (optional) bias gradients.
template <typename Descs>
std::unordered_map<int, dnnl::memory>
weightGradientArgs(KernelContext::Impl &ctx, const Descs &d, const float *src,
                   const float *diffDst, float *diffWeights, float *diffBias) {
  std::unordered_map<int, dnnl::memory> args{
      {DNNL_ARG_SRC, wrap(ctx, d.src, src)},
      {DNNL_ARG_DIFF_DST, wrap(ctx, d.dst, diffDst)},
      {DNNL_ARG_DIFF_WEIGHTS, wrap(ctx, d.weights, diffWeights)}};
  if (diffBias)
    args.emplace(DNNL_ARG_DIFF_BIAS, wrap(ctx, d.bias, diffBias));
  return args;
}

} // namespace dpc::kernels

#endif // DPC_RUNTIME_KERNELS_DNNLSUPPORT_H
