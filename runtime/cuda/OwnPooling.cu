//===- OwnPooling.cu - pooling and padding as own CUDA kernels ------------===//
//
// Constant padding, max and average pooling over NCHW planes
// (KernelElements.h's window bodies), and global average pooling.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/OwnKernelLaunch.cuh"
#include "runtime/kernels/KernelElements.h"

#include <stdexcept>

namespace dpc::cuda {

namespace elements = kernels::elements;
using kernels::Pad2dShape;
using kernels::Pool2dShape;

namespace {

__global__ void padForwardKernel(Pad2dShape s, float value, int64_t n,
                                 const float *x, float *y) {
  DPC_GRID_STRIDE(i, n) { y[i] = elements::padForward(s, value, i, x); }
}

__global__ void padBackwardKernel(Pad2dShape s, int64_t n, const float *dy,
                                  float *dx) {
  DPC_GRID_STRIDE(i, n) { dx[i] = elements::padBackward(s, i, dy); }
}

__global__ void maxPoolForwardKernel(Pool2dShape s, int64_t n, const float *x,
                                     float *y) {
  DPC_GRID_STRIDE(i, n) { y[i] = elements::maxPoolForward(s, i, x); }
}

__global__ void maxPoolBackwardKernel(Pool2dShape s, int64_t n, const float *x,
                                      const float *dy, float *dx) {
  DPC_GRID_STRIDE(i, n) { dx[i] = elements::maxPoolBackward(s, i, x, dy); }
}

__global__ void avgPoolForwardKernel(Pool2dShape s, int64_t n, const float *x,
                                     float *y) {
  DPC_GRID_STRIDE(i, n) { y[i] = elements::avgPoolForward(s, i, x); }
}

__global__ void avgPoolBackwardKernel(Pool2dShape s, int64_t n, const float *dy,
                                      float *dx) {
  DPC_GRID_STRIDE(i, n) { dx[i] = elements::avgPoolBackward(s, i, dy); }
}

__global__ void globalAvgPoolForwardKernel(int64_t planes, int64_t size,
                                           const float *x, float *y) {
  DPC_GRID_STRIDE(p, planes) {
    y[p] = elements::globalAvgPoolForward(p, size, x);
  }
}

__global__ void globalAvgPoolBackwardKernel(int64_t n, int64_t size,
                                            const float *dy, float *dx) {
  DPC_GRID_STRIDE(i, n) { dx[i] = dy[i / size] / static_cast<float>(size); }
}

void checkPool(const Pool2dShape &s, bool average) {
  if (s.n <= 0 || s.c <= 0 || s.h <= 0 || s.w <= 0 || s.kernelH <= 0 ||
      s.kernelW <= 0 || s.strideH <= 0 || s.strideW <= 0 || s.dilationH <= 0 ||
      s.dilationW <= 0 || s.outH() <= 0 || s.outW() <= 0)
    throw std::invalid_argument("pool2d: invalid shape");
  if (average && (s.dilationH != 1 || s.dilationW != 1))
    throw std::invalid_argument("avg_pool2d: dilation must be 1");
  if (s.kernelH > elements::kMaxTaps || s.kernelW > elements::kMaxTaps)
    throw std::invalid_argument(
        "pool2d: the CUDA backend takes windows of at most 16x16");
}

} // namespace

void pad2dForward(cudaStream_t stream, const Pad2dShape &s, float value,
                  const float *x, float *y) {
  if (s.padTop < 0 || s.padLeft < 0 || s.padBottom < 0 || s.padRight < 0)
    throw std::invalid_argument("pad2d: negative padding");
  int64_t n = s.n * s.c * s.outH() * s.outW();
  launch(stream, n, padForwardKernel, s, value, n, x, y);
}

void pad2dBackward(cudaStream_t stream, const Pad2dShape &s, const float *dy,
                   float *dx) {
  if (s.padTop < 0 || s.padLeft < 0 || s.padBottom < 0 || s.padRight < 0)
    throw std::invalid_argument("pad2d: negative padding");
  int64_t n = s.n * s.c * s.h * s.w;
  launch(stream, n, padBackwardKernel, s, n, dy, dx);
}

void maxPool2dForward(cudaStream_t stream, const Pool2dShape &s, const float *x,
                      float *y) {
  checkPool(s, false);
  int64_t n = s.n * s.c * s.outH() * s.outW();
  launch(stream, n, maxPoolForwardKernel, s, n, x, y);
}

void maxPool2dBackward(cudaStream_t stream, const Pool2dShape &s,
                       const float *x, const float *dy, float *dx) {
  checkPool(s, false);
  int64_t n = s.n * s.c * s.h * s.w;
  launch(stream, n, maxPoolBackwardKernel, s, n, x, dy, dx);
}

void avgPool2dForward(cudaStream_t stream, const Pool2dShape &s, const float *x,
                      float *y) {
  checkPool(s, true);
  int64_t n = s.n * s.c * s.outH() * s.outW();
  launch(stream, n, avgPoolForwardKernel, s, n, x, y);
}

void avgPool2dBackward(cudaStream_t stream, const Pool2dShape &s,
                       const float *dy, float *dx) {
  checkPool(s, true);
  int64_t n = s.n * s.c * s.h * s.w;
  launch(stream, n, avgPoolBackwardKernel, s, n, dy, dx);
}

void globalAvgPool2dForward(cudaStream_t stream, int64_t planes,
                            int64_t planeSize, const float *x, float *y) {
  launch(stream, planes, globalAvgPoolForwardKernel, planes, planeSize, x, y);
}

void globalAvgPool2dBackward(cudaStream_t stream, int64_t planes,
                             int64_t planeSize, const float *dy, float *dx) {
  int64_t n = planes * planeSize;
  launch(stream, n, globalAvgPoolBackwardKernel, n, planeSize, dy, dx);
}

} // namespace dpc::cuda
