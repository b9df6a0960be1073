//===- KernelShapes.h - kernel shapes from tensor dims ----------*- C++ -*-===//
//
// How each kernel's shape arguments follow from the dims of its tensors and
// its attributes, checked: every getter verifies the dtypes and element
// counts of everything the kernel reads or writes, so that a plan that
// passes can never make a kernel touch memory outside its tensors. The
// loader runs the checks at the compiled batch; device backends call the
// getters at the run-time batch. Conventions beyond Plan.fbs:
//
//  - A leading batch dim counts rows: Linear/Matmul/CrossEntropy take rows =
//    dims[0] and flatten the rest (x [n, c, h, w] feeds a linear layer).
//  - BatchNorm takes x of rank 2 [n, c], 3 [n, c, l] or 4 [n, c, h, w].
//  - Pool2dAttrs: `stride` defaults to `kernel`; `padding` is empty, [h, w]
//    (symmetric) or [top, left, bottom, right]; `dilation` empty or [h, w].
//  - PadAttrs low/high are [h, w] or all four dims [n, c, h, w] (n, c = 0).
//  - ReduceAttrs dims may be negative (from the end); the result holds the
//    kept dims in order (with or without the reduced dims kept as 1).
//  - Scalars (loss, lr, dloss, counts) are tensors of one element.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_PLAN_KERNELSHAPES_H
#define DPC_RUNTIME_PLAN_KERNELSHAPES_H

#include "runtime/kernels/BatchMatmul.h"
#include "runtime/kernels/BatchNorm.h"
#include "runtime/kernels/Conv.h"
#include "runtime/kernels/Elementwise.h"
#include "runtime/kernels/Embedding.h"
#include "runtime/kernels/LayerNorm.h"
#include "runtime/kernels/Linear.h"
#include "runtime/kernels/Optimizer.h"
#include "runtime/kernels/Pool.h"
#include "runtime/plan/KernelCall.h"
#include "runtime/plan/KernelCheck.h"

#include <stdexcept>

namespace dpc::plan {

/// A mismatch between a kernel and its tensors; the message says what, the
/// caller says where.
struct ShapeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Checks `call` completely; throws ShapeError.
void checkKernelCall(const KernelCall &call);

/// NCHW extents of a rank 2..4 tensor (missing trailing dims are 1).
struct Nchw {
  int64_t n, c, h, w;
};

struct RowsShape {
  int64_t rows, cols;
};

struct ReduceShape {
  std::vector<int64_t> dims; // the operand's
  std::vector<bool> reduced; // per operand dim
};

/// What a convolution or matrix multiply computes in (Instruction.precision).
kernels::Precision getPrecision(const KernelCall &call);
/// Where a bf16 call keeps or finds its shared operand's copy
/// (Instruction.cast_slot, SharedCast.h); none for an f32 call.
kernels::CastSlot getCastSlot(const KernelCall &call);
/// A convolution call's algorithm (Instruction.algorithm; none is direct).
kernels::ConvAlgorithm getConvAlgorithm(const KernelCall &call);
kernels::Conv2dShape getConv2dShape(const KernelCall &call);
kernels::BatchNormShape getBatchNormShape(const KernelCall &call);
kernels::BatchNormParams getBatchNormParams(const KernelCall &call);
kernels::Pool2dShape getPool2dShape(const KernelCall &call);
Nchw getGlobalAvgPoolShape(const KernelCall &call);
kernels::Pad2dShape getPad2dShape(const KernelCall &call);
float getPadValue(const KernelCall &call);
kernels::LinearShape getLinearShape(const KernelCall &call);
kernels::MatmulShape getMatmulShape(const KernelCall &call);
/// BatchMatmul: A, B and C of one rank >= 3 with equal leading dims.
kernels::BatchMatmulShape getBatchMatmulShape(const KernelCall &call);
/// Activations, Copy, Fill, Accumulate: the element count.
int64_t getElementwiseSize(const KernelCall &call);

/// Clip, HardSigmoid, HardSwish, Gelu (forward or backward): which, with
/// its parameters (min <= max, finite), and the element count.
struct InputActivationShape {
  kernels::math::InputActivation kind;
  kernels::math::ActivationParams params;
  int64_t size;
};
InputActivationShape getInputActivationShape(const KernelCall &call);

/// DropoutForward/Backward: the ratio (in [0, 1]) and site of the mask, and
/// the operand as `rows` (dim 0, the batch) of `cols` elements.
struct DropoutShape {
  double ratio;
  int64_t site;
  int64_t rows, cols;
  bool rowwise;
};
DropoutShape getDropoutShape(const KernelCall &call);

/// LayerNormForward/Backward: x as rows (the dims before `axis`, batch
/// first) of cols (the dims from `axis` on); the backward's workspace holds
/// a RowStats per row.
kernels::LayerNormShape getLayerNormShape(const KernelCall &call);

/// EmbeddingForward (Table [rows, dim], Indices I32 [count...]) -> Y
/// [count..., dim]; EmbeddingBackward (Indices, DY) -> DTable.
kernels::EmbeddingShape getEmbeddingShape(const KernelCall &call);
kernels::BroadcastShape getBroadcastShape(const KernelCall &call);
/// Softmax, LogSoftmax: rows x last dim. CrossEntropy, CorrectCount:
/// rows x classes of the logits.
RowsShape getRowsShape(const KernelCall &call);
/// Transpose2d: x is [rows, cols].
RowsShape getTransposeShape(const KernelCall &call);
/// Transpose: x's dims and the permutation (a permutation of at most 8
/// dims; y's dims are x's permuted; 4-byte elements).
struct PermuteShape {
  std::vector<int64_t> dims, permutation;
};
PermuteShape getPermuteShape(const KernelCall &call);
/// Concat (operands joined into the result) and Split (the operand cut
/// into the results) along an axis: in bytes, `outer` rows, each holding
/// every part's `partBytes[p]` in order (`rowBytes` together).
struct JoinShape {
  int64_t outer = 0, rowBytes = 0;
  std::vector<int64_t> partBytes;
};
JoinShape getJoinShape(const KernelCall &call);
ReduceShape getReduceShape(const KernelCall &call);
kernels::SgdParams getSgdParams(const KernelCall &call);
kernels::AdamWParams getAdamWParams(const KernelCall &call);
/// Sgd/AdamW: the parameter's element count.
int64_t getOptimizerSize(const KernelCall &call);
double getFillValue(const KernelCall &call);
/// AllReduce: every operand present and of a reducible dtype; the op
/// (Sum without attributes).
ReduceOp getAllReduceOp(const KernelCall &call);

} // namespace dpc::plan

#endif // DPC_RUNTIME_PLAN_KERNELSHAPES_H
