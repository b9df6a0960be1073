//===- CpuTensorOps.cpp - data movement kernels on the CPU ----------------===//
//
// Copies (also between layouts), fills, accumulation, transposes, concat and
// split, the sum over dims, and the embedding gather and its scatter-add.
//
//===----------------------------------------------------------------------===//

#include "runtime/abi/KernelRoles.h"
#include "runtime/abi/KernelShapes.h"
#include "runtime/cpu/CpuKernelEntries.h"
#include "runtime/kernels/Embedding.h"
#include "runtime/kernels/KernelElements.h"
#include "runtime/kernels/Parallel.h"
#include "runtime/kernels/Reorder.h"
#include "runtime/kernels/Utility.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace dpc::rt::cpu {

using namespace dpc::kernels;

namespace {

void fillTensor(const plan::TensorArg &y, int64_t size, double value) {
  switch (y.dtype) {
  case plan::DType::F32:
    kernels::fill(size, static_cast<float>(value), y.f32());
    break;
  case plan::DType::F64:
    std::fill_n(y.as<double>(), size, value);
    break;
  case plan::DType::I32:
    std::fill_n(y.as<int32_t>(), size, static_cast<int32_t>(value));
    break;
  default:
    std::fill_n(y.as<int64_t>(), size, static_cast<int64_t>(value));
    break;
  }
}

void transpose2d(int64_t rows, int64_t cols, const uint32_t *x, uint32_t *y) {
#pragma omp parallel for if (isWorthThreads(rows * cols, 2))
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      y[j * rows + i] = x[i * cols + j];
}

/// Sums x over the reduced dims in double, each output in a fixed order:
/// the same per-output body as the CUDA kernel.
kernels::elements::ReduceIndex reduceIndexOf(const plan::ReduceShape &shape) {
  int rank = static_cast<int>(shape.dims.size());
  if (rank > 8)
    throw std::invalid_argument("reduction: rank above 8");
  bool reduced[8] = {};
  for (int d = 0; d < rank; ++d)
    reduced[d] = shape.reduced[d];
  return kernels::elements::makeReduceIndex(rank, shape.dims.data(), reduced);
}

void reduceSum(const plan::ReduceShape &shape, const float *x, float *y) {
  kernels::elements::ReduceIndex r = reduceIndexOf(shape);
  if (r.redRank == 1 && r.keptRank == 1 && r.redStrides[0] == r.kept) {
    // Leading dims summed away (a bias gradient): the same per-output sums
    // in the same order, a row of a chunk of outputs at a time, so that the
    // loads are contiguous and the adds vectorise across outputs.
    constexpr int64_t kChunk = 512;
    int64_t chunks = (r.kept + kChunk - 1) / kChunk;
#pragma omp parallel for if (chunks > 1 && isWorthThreads(r.kept * r.reduced))
    for (int64_t chunk = 0; chunk < chunks; ++chunk) {
      int64_t begin = chunk * kChunk;
      int64_t size = std::min(kChunk, r.kept - begin);
      double sums[kChunk] = {};
      for (int64_t row = 0; row < r.reduced; ++row) {
        const float *in = x + row * r.kept + begin;
#pragma omp simd
        for (int64_t o = 0; o < size; ++o)
          sums[o] += in[o];
      }
      for (int64_t o = 0; o < size; ++o)
        y[begin + o] = static_cast<float>(sums[o]);
    }
    return;
  }
#pragma omp parallel for if (isWorthThreads(r.kept * r.reduced))
  for (int64_t o = 0; o < r.kept; ++o)
    y[o] = kernels::elements::reduceSum(r, o, x);
}

/// Concat and Split: each row of the whole holds every part's row in order.
void copyParts(const KernelCall &call, bool concat) {
  plan::JoinShape s = plan::getJoinShape(call);
  const std::vector<plan::TensorArg> &parts =
      concat ? call.operands : call.results;
  auto *whole = static_cast<uint8_t *>(concat ? call.result(0).data
                                              : call.operand(0).data);
#pragma omp parallel for
  for (int64_t row = 0; row < s.outer; ++row) {
    int64_t offset = row * s.rowBytes;
    for (size_t p = 0; p < parts.size(); ++p) {
      auto *part = static_cast<uint8_t *>(parts[p].data) + row * s.partBytes[p];
      if (concat)
        std::memcpy(whole + offset, part, s.partBytes[p]);
      else
        std::memcpy(part, whole + offset, s.partBytes[p]);
      offset += s.partBytes[p];
    }
  }
}

} // namespace

void runCopy(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::Copy;
  int64_t size = plan::getElementwiseSize(call);
  std::memmove(call.result(Y).data, call.operand(X).data,
               size * plan::getDTypeSize(call.operand(X).dtype));
}

void runReorder(KernelContext &context, const KernelCall &call) {
  using namespace plan::roles::Reorder;
  const plan::TensorArg &x = call.operand(X), &y = call.result(Y);
  if (x.layout == y.layout)
    return runCopy(context, call);
  // Plain <-> nChw16c; the loader took no other pair (KernelLayouts.h).
  plan::getElementwiseSize(call);
  reorderChannels(x.dims[0], x.dims[1], x.dims[2] * x.dims[3], x.f32(), y.f32(),
                  y.layout == plan::Layout::NChw16c);
}

void runFill(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::Fill;
  fillTensor(call.result(Y), plan::getElementwiseSize(call),
             plan::getFillValue(call));
}

void runAccumulate(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::Accumulate;
  accumulate(plan::getElementwiseSize(call), in(call, X), out(call, Y));
}

void runTranspose2d(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::Transpose2d;
  plan::RowsShape s = plan::getTransposeShape(call);
  transpose2d(s.rows, s.cols, call.operand(X).as<uint32_t>(),
              call.result(Y).as<uint32_t>());
}

void runTranspose(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::Transpose;
  plan::PermuteShape s = plan::getPermuteShape(call);
  elements::PermuteIndex index = elements::makePermuteIndex(
      static_cast<int>(s.dims.size()), s.dims.data(), s.permutation.data());
  const auto *x = call.operand(X).as<uint32_t>();
  auto *y = call.result(Y).as<uint32_t>();
  int64_t size = call.result(Y).getNumElements();
#pragma omp parallel for
  for (int64_t o = 0; o < size; ++o)
    y[o] = x[elements::permuteSource(index, o)];
}

void runConcatForward(KernelContext &, const KernelCall &call) {
  copyParts(call, /*concat=*/true);
}

void runSplitForward(KernelContext &, const KernelCall &call) {
  copyParts(call, /*concat=*/false);
}

void runReduceSum(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::ReduceSum;
  reduceSum(plan::getReduceShape(call), in(call, X), out(call, Y));
}

/// torch.amax (amin): the same per-output body as the CUDA kernel.
static void reduceExtremum(bool minimum, const KernelCall &call) {
  using namespace plan::roles::ReduceMax;
  kernels::elements::ReduceIndex r = reduceIndexOf(plan::getReduceShape(call));
  const float *x = in(call, X);
  float *y = out(call, Y);
#pragma omp parallel for if (isWorthThreads(r.kept * r.reduced))
  for (int64_t o = 0; o < r.kept; ++o)
    y[o] = kernels::elements::reduceExtremum(minimum, r, o, x);
}

void runReduceMax(KernelContext &, const KernelCall &call) {
  reduceExtremum(false, call);
}

void runReduceMin(KernelContext &, const KernelCall &call) {
  reduceExtremum(true, call);
}

void runReduceExtremumBackward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::ReduceExtremumBackward;
  kernels::elements::ReduceIndex r =
      reduceIndexOf(plan::getReduceBackwardShape(call));
  const float *x = in(call, X), *y = in(call, Y), *dy = in(call, DY);
  float *dx = out(call, DX);
#pragma omp parallel for if (isWorthThreads(r.kept * r.reduced))
  for (int64_t o = 0; o < r.kept; ++o)
    kernels::elements::reduceExtremumBackward(r, o, x, y, dy, dx);
}

void runEmbeddingForward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::EmbeddingForward;
  embeddingForward(plan::getEmbeddingShape(call), in(call, Table),
                   call.operand(Indices).as<int32_t>(), out(call, Y));
}

void runEmbeddingBackward(KernelContext &, const KernelCall &call) {
  using namespace plan::roles::EmbeddingBackward;
  embeddingBackward(plan::getEmbeddingShape(call),
                    call.operand(Indices).as<int32_t>(), in(call, DY),
                    out(call, DTable));
}

} // namespace dpc::rt::cpu
