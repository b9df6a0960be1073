//===- CudaTensorOps.cpp - data movement on a CUDA stream -----------------===//
//
// Copies, fills, accumulation, transposes, concat and split, the sum over
// dims, and the embedding gather and its scatter-add.
//
//===----------------------------------------------------------------------===//

#include "runtime/abi/KernelRoles.h"
#include "runtime/abi/KernelShapes.h"
#include "runtime/cuda/CudaKernelEntries.h"

#include <vector>

namespace dpc::cuda::entries {

namespace {

/// Concat and Split: each row of the whole holds every part's row in order,
/// so each part is one pitched 2-D copy.
void copyParts(StreamContext &ctx, const KernelCall &call, bool concat) {
  plan::JoinShape s = plan::getJoinShape(call);
  const std::vector<plan::TensorArg> &parts =
      concat ? call.operands : call.results;
  auto *whole = static_cast<uint8_t *>(concat ? call.result(0).data
                                              : call.operand(0).data);
  int64_t offset = 0;
  for (size_t p = 0; p < parts.size(); ++p) {
    auto width = static_cast<size_t>(s.partBytes[p]);
    if (width > 0 && s.outer > 0) {
      auto rowBytes = static_cast<size_t>(s.rowBytes);
      auto rows = static_cast<size_t>(s.outer);
      if (concat)
        DPC_CUDA_CHECK(cudaMemcpy2DAsync(
            whole + offset, rowBytes, parts[p].data, width, width, rows,
            cudaMemcpyDeviceToDevice, ctx.getStream()));
      else
        DPC_CUDA_CHECK(cudaMemcpy2DAsync(
            parts[p].data, width, whole + offset, rowBytes, width, rows,
            cudaMemcpyDeviceToDevice, ctx.getStream()));
    }
    offset += s.partBytes[p];
  }
}

} // namespace

void runCopy(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::Copy;
  int64_t size = plan::getElementwiseSize(call);
  if (call.result(Y).data == call.operand(X).data)
    return;
  DPC_CUDA_CHECK(
      cudaMemcpyAsync(call.result(Y).data, call.operand(X).data,
                      size * plan::getDTypeSize(call.operand(X).dtype),
                      cudaMemcpyDeviceToDevice, ctx.getStream()));
}

/// Between plain tensors (dispatchKernel refuses blocked ones here): a copy.
void runReorder(StreamContext &ctx, const KernelCall &call) {
  runCopy(ctx, call);
}

void runFill(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::Fill;
  fill(ctx.getStream(), plan::getElementwiseSize(call),
       scalarTypeOf(call.result(Y)), plan::getFillValue(call),
       call.result(Y).data);
}

void runAccumulate(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::Accumulate;
  accumulate(ctx.getStream(), plan::getElementwiseSize(call), in(call, X),
             out(call, Y));
}

void runTranspose2d(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::Transpose2d;
  plan::RowsShape s = plan::getTransposeShape(call);
  transpose2d(ctx.getStream(), s.rows, s.cols, call.operand(X).as<uint32_t>(),
              call.result(Y).as<uint32_t>());
}

void runTranspose(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::Transpose;
  plan::PermuteShape s = plan::getPermuteShape(call);
  permute(ctx.getStream(),
          kernels::elements::makePermuteIndex(static_cast<int>(s.dims.size()),
                                              s.dims.data(),
                                              s.permutation.data()),
          call.result(Y).getNumElements(), call.operand(X).as<uint32_t>(),
          call.result(Y).as<uint32_t>());
}

void runConcatForward(StreamContext &ctx, const KernelCall &call) {
  copyParts(ctx, call, /*concat=*/true);
}

void runSplitForward(StreamContext &ctx, const KernelCall &call) {
  copyParts(ctx, call, /*concat=*/false);
}

namespace {
/// The reduced flags of a reduction's shape, as the CUDA kernels take them.
struct ReducedFlags {
  bool reduced[8] = {};
  explicit ReducedFlags(const plan::ReduceShape &s) {
    for (size_t d = 0; d < s.reduced.size() && d < 8; ++d)
      reduced[d] = s.reduced[d];
  }
};

void reduceExtremumOf(StreamContext &ctx, const KernelCall &call,
                      bool minimum) {
  using namespace plan::roles::ReduceMax;
  plan::ReduceShape s = plan::getReduceShape(call);
  reduceExtremum(ctx.getStream(), minimum, static_cast<int>(s.dims.size()),
                 s.dims.data(), ReducedFlags(s).reduced, in(call, X),
                 out(call, Y));
}
} // namespace

void runReduceSum(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::ReduceSum;
  plan::ReduceShape s = plan::getReduceShape(call);
  reduceSum(ctx.getStream(), static_cast<int>(s.dims.size()), s.dims.data(),
            ReducedFlags(s).reduced, in(call, X), out(call, Y));
}

void runReduceMax(StreamContext &ctx, const KernelCall &call) {
  reduceExtremumOf(ctx, call, false);
}

void runReduceMin(StreamContext &ctx, const KernelCall &call) {
  reduceExtremumOf(ctx, call, true);
}

void runReduceExtremumBackward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::ReduceExtremumBackward;
  plan::ReduceShape s = plan::getReduceBackwardShape(call);
  reduceExtremumBackward(ctx.getStream(), static_cast<int>(s.dims.size()),
                         s.dims.data(), ReducedFlags(s).reduced, in(call, X),
                         in(call, Y), in(call, DY), out(call, DX));
}

void runEmbeddingForward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::EmbeddingForward;
  embeddingForward(ctx.getStream(), plan::getEmbeddingShape(call),
                   in(call, Table), call.operand(Indices).as<int32_t>(),
                   out(call, Y));
}

void runEmbeddingBackward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::EmbeddingBackward;
  embeddingBackward(ctx.getStream(), plan::getEmbeddingShape(call),
                    call.operand(Indices).as<int32_t>(), in(call, DY),
                    out(call, DTable));
}

} // namespace dpc::cuda::entries
