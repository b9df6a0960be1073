//===- DnnlSupport.h - oneDNN plumbing private to the kernels ---*- C++ -*-===//
//
// Not part of the public API: the definition of KernelContext::Impl, the
// primitive cache and the helpers that wrap raw pointers in dnnl::memory.
// Callers hand over buffers in the layouts the plan chose (plain row-major,
// or nChw16c activations: codegen's assign-exec-layouts); a primitive
// created with `format_tag::any` (the convolutions) runs in the layout
// oneDNN prefers, and execute() reorders only the arguments that are not
// in it already (the weights, plain activations) to and from it.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_KERNELS_DNNLSUPPORT_H
#define DPC_RUNTIME_KERNELS_DNNLSUPPORT_H

#include "runtime/abi/Precision.h"
#include "runtime/kernels/KernelContext.h"

#include <dnnl.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <unordered_map>
#include <vector>

namespace dpc::kernels {

using plan::CastSlot;
using plan::Precision;

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
/// primitive. Two calls with equal keys may share a primitive. Fixed
/// capacity, so that making one per call allocates nothing.
class PrimitiveKey {
public:
  PrimitiveKey(std::initializer_list<int64_t> list) : size(list.size()) {
    if (list.size() > kCapacity)
      throw std::logic_error("primitive key longer than its capacity");
    std::copy(list.begin(), list.end(), values.begin());
  }
  /// `head`, then `tail` (a shape's key: plan::getConvGeometryKey).
  template <size_t N>
  PrimitiveKey(std::initializer_list<int64_t> head,
               const std::array<int64_t, N> &tail)
      : PrimitiveKey(head) {
    if (size + N > kCapacity)
      throw std::logic_error("primitive key longer than its capacity");
    std::copy(tail.begin(), tail.end(), values.begin() + size);
    size += N;
  }
  bool operator==(const PrimitiveKey &other) const {
    return size == other.size &&
           std::equal(begin(), end(), other.values.begin());
  }
  bool operator!=(const PrimitiveKey &other) const { return !(*this == other); }
  const int64_t *begin() const { return values.data(); }
  const int64_t *end() const { return values.data() + size; }

private:
  static constexpr size_t kCapacity = 32;
  std::array<int64_t, kCapacity> values{};
  size_t size;
};

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

/// One tensor a primitive call reads or writes: its DNNL_ARG_* and where it
/// lives (null: left out, e.g. no bias).
struct TensorBinding {
  int arg;
  const void *data;
  /// A read tensor's cast slot: its converted copy kept for, or taken
  /// from, another call of the step.
  CastSlot cast = {};
};

/// A primitive with everything one call site needs to run it again without
/// creating anything: a memory object per tensor (the caller's plain buffer;
/// its pointer set per call), and where the primitive wants another layout,
/// one in that layout (over a buffer of the context) with the reorder
/// primitive between the two, plus the scratchpad's memory object and the
/// C argument list that names them all.
struct BoundPrimitive {
  struct Tensor {
    dnnl::memory user;
    dnnl::memory blocked; // null when the primitive takes the plain layout
    dnnl::primitive reorder;
    bool written = false;
    int buffer = 0; // the context's layout buffer for `blocked`
    size_t blockedBytes = 0;
    CastSlot cast;           // a read tensor's shared copy, if any
    bool castReused = false; // this call found it there: no reorder
  };
  PrimitiveKey key;
  dnnl::primitive primitive;
  size_t scratchpadBytes = 0;
  dnnl::memory scratchpad;
  std::vector<Tensor> tensors; // the present bindings, in order
  std::vector<dnnl_exec_arg_t> args;
};

/// The primitives one call site (a plan instruction) runs, in the order it
/// runs them, kept from one call to the next.
struct CallSite::Bound {
  std::vector<std::unique_ptr<BoundPrimitive>> primitives;
};

struct KernelContext::Impl {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  PrimitiveCache cache;
  /// The call site being run (setCallSite), and how many of its primitives
  /// have run in this call.
  CallSite *site = nullptr;
  size_t nextPrimitive = 0;

  /// Tells `observer` how much the context's own buffers (scratchpad,
  /// layout buffers, cast copies) changed since it last did.
  void noteHeldBytes();
  std::function<void(int64_t)> observer;
  int64_t heldBytes = 0;

  /// Primitives run in user scratchpad mode and share this buffer, so a
  /// context's temporary memory is one growing allocation.
  void *getScratchpad(size_t bytes);
  void releaseScratchpad();
  ~Impl() {
    releaseScratchpad();
    if (observer && heldBytes)
      observer(-heldBytes);
  }

  /// Runs the primitive of `key` -- created by `create()` (returning its
  /// primitive_desc) on first use -- on `tensors`, on this context's stream,
  /// and waits: kernels return with their outputs written. `plainDescs()`
  /// gives the callers' plain layout of each of `tensors` (in order); a
  /// tensor the primitive wants in another layout goes through a reorder
  /// into (and, if written, back out of) a buffer of the context. Within a
  /// call site the bound primitive is kept, so that a repeated call with
  /// the same key only sets pointers and runs.
  template <typename CreateFn, typename DescsFn>
  void run(const PrimitiveKey &key, CreateFn &&create, DescsFn &&plainDescs,
           std::initializer_list<TensorBinding> tensors) {
    std::unique_ptr<BoundPrimitive> *slot = nullptr;
    std::unique_ptr<BoundPrimitive> temporary;
    if (site) {
      auto &primitives = site->bound->primitives;
      if (primitives.size() <= nextPrimitive)
        primitives.resize(nextPrimitive + 1);
      slot = &primitives[nextPrimitive++];
    } else {
      slot = &temporary;
    }
    if (!*slot || (*slot)->key != key)
      *slot = bind(key, cache.getOrCreate(key, create), plainDescs(), tensors);
    execute(**slot, tensors);
  }

private:
  std::unique_ptr<BoundPrimitive>
  bind(const PrimitiveKey &key, const CachedPrimitive &prim,
       const std::vector<dnnl::memory::desc> &plainDescs,
       std::initializer_list<TensorBinding> tensors);
  void execute(BoundPrimitive &bound,
               std::initializer_list<TensorBinding> tensors);
  /// Layout buffer `index` (one per kTensorArgs entry), at least `bytes`.
  void *getLayoutBuffer(int index, size_t bytes);
  /// Points `tensor.blocked` at its cast slot's buffer and sets
  /// `castReused` when the slot already holds this call's copy (filled by
  /// an earlier call from the same source in the same layout); otherwise
  /// the call's reorder fills it.
  void bindCastSlot(BoundPrimitive::Tensor &tensor, const void *source);

  void *scratchpad = nullptr;
  size_t scratchpadCapacity = 0;
  /// Reordered arguments, one growing buffer per argument kind.
  std::array<std::vector<float>, std::size(kTensorArgs)> layoutBuffers;
  /// Converted copies shared between calls, by cast slot - 1: the buffer,
  /// and what it was last filled from.
  struct CastCopy {
    std::vector<float> buffer;
    const void *source = nullptr;
    dnnl::memory::desc desc;
  };
  std::vector<CastCopy> castCopies;
};

/// Attributes every cached primitive is created with.
dnnl::primitive_attr defaultAttr();

/// `attr`, with a ReLU applied to the output as it is written if `relu`.
dnnl::primitive_attr withReluPostOp(dnnl::primitive_attr attr, bool relu);

/// A plain (row-major) f32 descriptor for `dims` with the given format tag.
inline dnnl::memory::desc plainDesc(const dnnl::memory::dims &dims,
                                    dnnl::memory::format_tag tag) {
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, tag);
}

/// What a kernel of `precision` reads the f32 tensor `plain` as: itself, or
/// in bf16 a bf16 tensor of the same layout, or format `any` (the reorder
/// into it rounds).
inline dnnl::memory::desc lowDesc(const dnnl::memory::desc &plain,
                                  Precision precision) {
  dnnl::memory::desc low = plain;
  if (precision == Precision::BF16)
    low.data.data_type = dnnl_bf16; // strides count elements: still valid
  return low;
}

} // namespace dpc::kernels

#endif // DPC_RUNTIME_KERNELS_DNNLSUPPORT_H
