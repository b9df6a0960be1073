//===- OwnElementwise.cu - element-wise ops as own CUDA kernels -----------===//
//
// Add, Mul, Maximum and Minimum with the right-hand side broadcast
// (KernelElements.h's index bodies), their gradients, and dropout's product
// with its mask.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/OwnKernelLaunch.cuh"
#include "runtime/kernels/KernelElements.h"
#include "runtime/kernels/KernelMath.h"

namespace dpc::cuda {

namespace elements = kernels::elements;
namespace math = kernels::math;
using kernels::BroadcastShape;

namespace {

__global__ void dropoutKernel(math::DropoutMask mask, int64_t cols,
                              int64_t firstRow, int64_t n, const float *x,
                              float *y) {
  DPC_GRID_STRIDE(i, n) {
    y[i] = elements::dropout(mask, cols, firstRow, i, x);
  }
}

/// What a binary element-wise kernel computes: lhs + rhs or lhs * rhs,
/// then a ReLU (the fused add + ReLU); `sameShape` skips the broadcast's
/// index arithmetic (64-bit divisions) where rhs is as large as the output.
struct BinaryOp {
  bool multiply = false, relu = false, sameShape = false;
};

BinaryOp binaryOp(const BroadcastShape &s, bool multiply, bool relu) {
  bool same = true;
  for (int d = 0; d < 4; ++d)
    same = same && s.rhs[d] == s.out[d];
  return {multiply, relu, same};
}

__global__ void binaryForwardKernel(BroadcastShape s, BinaryOp op, int64_t n,
                                    const float *lhs, const float *rhs,
                                    float *out) {
  DPC_GRID_STRIDE(i, n) {
    float r = rhs[op.sameShape ? i : elements::rhsIndexOf(s, i)];
    float v = op.multiply ? lhs[i] * r : lhs[i] + r;
    out[i] = op.relu ? math::reluForward(v) : v;
  }
}

/// The fused add + ReLU's backward: ReLU's backward of the sum of the two
/// incoming gradients, in one pass.
__global__ void addReluBackwardKernel(int64_t n, const float *a, const float *b,
                                      const float *y, float *dx) {
  DPC_GRID_STRIDE(i, n) { dx[i] = math::reluBackward(a[i] + b[i], y[i]); }
}

__global__ void mulBackwardLhsKernel(BroadcastShape s, int64_t n,
                                     const float *rhs, const float *dOut,
                                     float *dLhs) {
  DPC_GRID_STRIDE(i, n) { dLhs[i] = dOut[i] * rhs[elements::rhsIndexOf(s, i)]; }
}

__global__ void reduceToRhsKernel(BroadcastShape s, int64_t rhsSize,
                                  const float *dOut, const float *lhs,
                                  float *dRhs) {
  DPC_GRID_STRIDE(j, rhsSize) {
    dRhs[j] = elements::reduceToRhs(s, j, dOut, lhs);
  }
}

__global__ void extremumForwardKernel(bool minimum, BroadcastShape s, int64_t n,
                                      const float *lhs, const float *rhs,
                                      float *out) {
  DPC_GRID_STRIDE(i, n) {
    out[i] = math::extremum(minimum, lhs[i], rhs[elements::rhsIndexOf(s, i)]);
  }
}

__global__ void extremumBackwardLhsKernel(bool minimum, BroadcastShape s,
                                          int64_t n, const float *lhs,
                                          const float *rhs, const float *dOut,
                                          float *dLhs) {
  DPC_GRID_STRIDE(i, n) {
    dLhs[i] = dOut[i] * math::extremumShare(minimum, lhs[i],
                                            rhs[elements::rhsIndexOf(s, i)]);
  }
}

__global__ void extremumToRhsKernel(bool minimum, BroadcastShape s,
                                    int64_t rhsSize, const float *lhs,
                                    const float *rhs, const float *dOut,
                                    float *dRhs) {
  DPC_GRID_STRIDE(j, rhsSize) {
    dRhs[j] = elements::extremumToRhs(minimum, s, j, lhs, rhs, dOut);
  }
}

int64_t sizeOf(const int64_t dims[4]) {
  return dims[0] * dims[1] * dims[2] * dims[3];
}

} // namespace

void dropout(cudaStream_t stream, const math::DropoutMask &mask, int64_t rows,
             int64_t cols, int64_t firstRow, const float *x, float *y) {
  int64_t n = rows * cols;
  launch(stream, n, dropoutKernel, mask, cols, firstRow, n, x, y);
}

void addForward(cudaStream_t stream, const BroadcastShape &shape,
                const float *lhs, const float *rhs, float *out) {
  int64_t n = sizeOf(shape.out);
  launch(stream, n, binaryForwardKernel, shape, binaryOp(shape, false, false),
         n, lhs, rhs, out);
}

void addReluForward(cudaStream_t stream, const BroadcastShape &shape,
                    const float *lhs, const float *rhs, float *out) {
  int64_t n = sizeOf(shape.out);
  launch(stream, n, binaryForwardKernel, shape, binaryOp(shape, false, true), n,
         lhs, rhs, out);
}

void addReluBackward(cudaStream_t stream, int64_t size, const float *a,
                     const float *b, const float *y, float *dx) {
  launch(stream, size, addReluBackwardKernel, size, a, b, y, dx);
}

void addBackward(cudaStream_t stream, const BroadcastShape &shape,
                 const float *dOut, float *dLhs, float *dRhs) {
  if (dLhs && dLhs != dOut)
    DPC_CUDA_CHECK(cudaMemcpyAsync(dLhs, dOut, sizeOf(shape.out) * 4,
                                   cudaMemcpyDeviceToDevice, stream));
  if (dRhs) {
    int64_t n = sizeOf(shape.rhs);
    launch(stream, n, reduceToRhsKernel, shape, n, dOut,
           static_cast<const float *>(nullptr), dRhs);
  }
}

void mulForward(cudaStream_t stream, const BroadcastShape &shape,
                const float *lhs, const float *rhs, float *out) {
  int64_t n = sizeOf(shape.out);
  launch(stream, n, binaryForwardKernel, shape, binaryOp(shape, true, false), n,
         lhs, rhs, out);
}

void mulBackward(cudaStream_t stream, const BroadcastShape &shape,
                 const float *lhs, const float *rhs, const float *dOut,
                 float *dLhs, float *dRhs) {
  // dRhs first: dLhs may alias dOut (the stream keeps the order).
  if (dRhs) {
    int64_t n = sizeOf(shape.rhs);
    launch(stream, n, reduceToRhsKernel, shape, n, dOut, lhs, dRhs);
  }
  if (dLhs) {
    int64_t n = sizeOf(shape.out);
    launch(stream, n, mulBackwardLhsKernel, shape, n, rhs, dOut, dLhs);
  }
}

void extremumForward(cudaStream_t stream, bool minimum,
                     const BroadcastShape &shape, const float *lhs,
                     const float *rhs, float *out) {
  int64_t n = sizeOf(shape.out);
  launch(stream, n, extremumForwardKernel, minimum, shape, n, lhs, rhs, out);
}

void extremumBackward(cudaStream_t stream, bool minimum,
                      const BroadcastShape &shape, const float *lhs,
                      const float *rhs, const float *dOut, float *dLhs,
                      float *dRhs) {
  // dRhs first: dLhs may alias dOut (the stream keeps the order).
  if (dRhs) {
    int64_t n = sizeOf(shape.rhs);
    launch(stream, n, extremumToRhsKernel, minimum, shape, n, lhs, rhs, dOut,
           dRhs);
  }
  if (dLhs) {
    int64_t n = sizeOf(shape.out);
    launch(stream, n, extremumBackwardLhsKernel, minimum, shape, n, lhs, rhs,
           dOut, dLhs);
  }
}

} // namespace dpc::cuda
