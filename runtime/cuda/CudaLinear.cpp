//===- CudaLinear.cpp - linear layers and matmuls on CUDA -----------------===//
//
// Linear layers (also fused with the ReLU that follows), matmul and its
// gradients, and batched matmul, through cuBLAS. cuBLAS is column-major: a
// row-major [r, c] matrix is the column-major [c, r] one, so C = A·B
// row-major is computed as Cᵀ = Bᵀ·Aᵀ with the operands swapped and no
// copy.
//
//===----------------------------------------------------------------------===//

#include "runtime/abi/KernelRoles.h"
#include "runtime/abi/KernelShapes.h"
#include "runtime/cuda/CudaKernelEntries.h"

#include <climits>
#include <stdexcept>
#include <string>

namespace dpc::cuda {

namespace {

int toGemmInt(int64_t value) {
  if (value <= 0 || value > INT_MAX)
    throw std::runtime_error("gemm: dimension " + std::to_string(value) +
                             " does not fit cuBLAS's int");
  return static_cast<int>(value);
}

/// Row-major C[rows, cols] = op(A)[rows, inner] · op(B)[inner, cols], where
/// `aTransposed` means A is stored as its transpose [inner, rows]. In bf16
/// (TF32) the f32 operands are rounded to bf16 (TensorFloat-32) by cuBLAS
/// itself (CUBLAS_COMPUTE_32F_FAST_16BF / _FAST_TF32: tensor cores, f32
/// accumulation and C), so no rounded copies are needed.
void gemmRowMajor(StreamContext &ctx, int64_t rows, int64_t cols, int64_t inner,
                  bool aTransposed, bool bTransposed, const float *a,
                  const float *b, float *c,
                  kernels::Precision precision = kernels::Precision::F32) {
  int m = toGemmInt(cols), n = toGemmInt(rows), k = toGemmInt(inner);
  // Column-major: Cᵀ[cols, rows] = op(B)ᵀ · op(A)ᵀ.
  int ldb = bTransposed ? k : m; // B stored [inner, cols] or [cols, inner]
  int lda = aTransposed ? n : k; // A stored [rows, inner] or [inner, rows]
  cublasOperation_t opB = bTransposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opA = aTransposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  if (precision != kernels::Precision::F32) {
    cublasComputeType_t compute = precision == kernels::Precision::BF16
                                      ? CUBLAS_COMPUTE_32F_FAST_16BF
                                      : CUBLAS_COMPUTE_32F_FAST_TF32;
    DPC_CUDA_CHECK(cublasGemmEx(ctx.getCublas(), opB, opA, m, n, k, &kOne, b,
                                CUDA_R_32F, ldb, a, CUDA_R_32F, lda, &kZero, c,
                                CUDA_R_32F, m, compute, CUBLAS_GEMM_DEFAULT));
    return;
  }
  DPC_CUDA_CHECK(cublasSgemm(ctx.getCublas(), opB, opA, m, n, k, &kOne, b, ldb,
                             a, lda, &kZero, c, m));
}

/// gemmRowMajor for each of `s.batch` consecutive matrices.
void batchMatmul(StreamContext &ctx, const plan::BatchMatmulShape &s,
                 const float *a, const float *b, float *c) {
  int m = toGemmInt(s.n), n = toGemmInt(s.m), k = toGemmInt(s.k);
  int ldb = s.transposeB ? k : m;
  int lda = s.transposeA ? n : k;
  DPC_CUDA_CHECK(cublasSgemmStridedBatched(
      ctx.getCublas(), s.transposeB ? CUBLAS_OP_T : CUBLAS_OP_N,
      s.transposeA ? CUBLAS_OP_T : CUBLAS_OP_N, m, n, k, &kOne, b, ldb,
      s.k * s.n, a, lda, s.m * s.k, &kZero, c, m, s.m * s.n,
      toGemmInt(s.batch)));
}

void linearForward(StreamContext &ctx, const plan::LinearShape &s,
                   const float *x, const float *w, const float *bias,
                   float *y) {
  // y[n, out] = x[n, in] · W[out, in]ᵀ
  gemmRowMajor(ctx, s.n, s.out, s.in, false, true, x, w, y, s.precision);
  if (bias)
    addRowBias(ctx.getStream(), s.n, s.out, bias, y);
}

void linearBackwardData(StreamContext &ctx, const plan::LinearShape &s,
                        const float *dy, const float *w, float *dx) {
  // dx[n, in] = dy[n, out] · W[out, in]
  gemmRowMajor(ctx, s.n, s.in, s.out, false, false, dy, w, dx, s.precision);
}

void linearBackwardWeights(StreamContext &ctx, const plan::LinearShape &s,
                           const float *x, const float *dy, float *dw,
                           float *dBias) {
  // dW[out, in] = dy[n, out]ᵀ · x[n, in]
  gemmRowMajor(ctx, s.out, s.in, s.n, true, false, dy, x, dw, s.precision);
  if (dBias)
    columnSums(ctx.getStream(), s.n, s.out, dy, dBias);
}

void matmulForward(StreamContext &ctx, const plan::MatmulShape &s,
                   const float *a, const float *b, float *c) {
  gemmRowMajor(ctx, s.n, s.m, s.k, false, false, a, b, c, s.precision);
}

void matmulBackward(StreamContext &ctx, const plan::MatmulShape &s,
                    const float *a, const float *b, const float *dc, float *da,
                    float *db) {
  if (da) // da[n, k] = dc[n, m] · b[k, m]ᵀ
    gemmRowMajor(ctx, s.n, s.k, s.m, false, true, dc, b, da, s.precision);
  if (db) // db[k, m] = a[n, k]ᵀ · dc[n, m]
    gemmRowMajor(ctx, s.k, s.m, s.n, true, false, a, dc, db, s.precision);
}

} // namespace

} // namespace dpc::cuda

namespace dpc::cuda::entries {

void runLinearForward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::LinearForward;
  linearForward(ctx, plan::getLinearShape(call), in(call, X), in(call, W),
                in(call, Bias), out(call, Y));
}

void runLinearBackwardData(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::LinearBackwardData;
  linearBackwardData(ctx, plan::getLinearShape(call), in(call, DY), in(call, W),
                     out(call, DX));
}

void runLinearBackwardWeights(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::LinearBackwardWeights;
  linearBackwardWeights(ctx, plan::getLinearShape(call), in(call, X),
                        in(call, DY), out(call, DW), out(call, DB));
}

/// The linear layer and the ReLU as two calls, the ReLU in place.
/// cuDNN's fused convolution + bias + activation needs the bias and takes
/// other algorithms: two calls, the ReLU in place, give the unfused bits.
void runLinearReluForward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::LinearReluForward;
  linearForward(ctx, plan::getLinearShape(call), in(call, X), in(call, W),
                in(call, Bias), out(call, Y));
  activationForward(ctx.getStream(), Activation::Relu,
                    call.result(Y).getNumElements(), out(call, Y),
                    out(call, Y));
}

void runMatmulForward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::MatmulForward;
  matmulForward(ctx, plan::getMatmulShape(call), in(call, A), in(call, B),
                out(call, C));
}

void runMatmulBackward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::MatmulBackward;
  matmulBackward(ctx, plan::getMatmulShape(call), in(call, A), in(call, B),
                 in(call, DC), out(call, DA), out(call, DB));
}

void runMatmulTransposedA(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::MatmulTransposedA;
  // c = a^T b is matmul's weight gradient with b as dc.
  matmulBackward(ctx, plan::getMatmulShape(call), in(call, A), nullptr,
                 in(call, B), nullptr, out(call, C));
}

void runBatchMatmul(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::BatchMatmul;
  batchMatmul(ctx, plan::getBatchMatmulShape(call), in(call, A), in(call, B),
              out(call, C));
}

} // namespace dpc::cuda::entries
