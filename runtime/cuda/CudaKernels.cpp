//===- CudaKernels.cpp - a KernelCall on a CUDA stream --------------------===//
//
// Layouts: every tensor is plain row-major (NCHW), as the plan says, and
// float32. cuBLAS is column-major: a row-major [r, c] matrix is the
// column-major [c, r] one, so C = A·B row-major is computed as Cᵀ = Bᵀ·Aᵀ
// with the operands swapped and no copy.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/CudaKernels.h"
#include "runtime/abi/KernelDispatch.h"
#include "runtime/abi/KernelRoles.h"
#include "runtime/abi/KernelShapes.h"
#include "runtime/cuda/NcclCommunicator.h"
#include "runtime/cuda/OwnKernels.h"

#include <climits>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace dpc::cuda {

using plan::Kernel;
using plan::KernelCall;

//===----------------------------------------------------------------------===//
// StreamContext
//===----------------------------------------------------------------------===//

StreamContext::~StreamContext() {
  if (cudnn)
    DPC_CUDA_REPORT(cudnnDestroy(cudnn));
  if (cublas)
    DPC_CUDA_REPORT(cublasDestroy(cublas));
}

cudnnHandle_t StreamContext::getCudnn() {
  if (!cudnn) {
    DPC_CUDA_CHECK(cudnnCreate(&cudnn));
    DPC_CUDA_CHECK(cudnnSetStream(cudnn, stream));
  }
  return cudnn;
}

cublasHandle_t StreamContext::getCublas() {
  if (!cublas) {
    DPC_CUDA_CHECK(cublasCreate(&cublas));
    DPC_CUDA_CHECK(cublasSetStream(cublas, stream));
    // FP32 compute (no TF32 tensor-core rounding, which the default mode
    // never picks for Sgemm): results stay within the CPU's tolerances.
    DPC_CUDA_CHECK(cublasSetMathMode(cublas, CUBLAS_DEFAULT_MATH));
  }
  return cublas;
}

//===----------------------------------------------------------------------===//
// Convolutions (cuDNN)
//===----------------------------------------------------------------------===//

struct ConvPlan {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnConvolutionFwdAlgo_t forward{};
  cudnnConvolutionBwdDataAlgo_t backwardData{};
  cudnnConvolutionBwdFilterAlgo_t backwardFilter{};
  size_t forwardBytes = 0, backwardDataBytes = 0, backwardFilterBytes = 0;

  ~ConvPlan() {
    if (x)
      DPC_CUDA_REPORT(cudnnDestroyTensorDescriptor(x));
    if (y)
      DPC_CUDA_REPORT(cudnnDestroyTensorDescriptor(y));
    if (bias)
      DPC_CUDA_REPORT(cudnnDestroyTensorDescriptor(bias));
    if (w)
      DPC_CUDA_REPORT(cudnnDestroyFilterDescriptor(w));
    if (conv)
      DPC_CUDA_REPORT(cudnnDestroyConvolutionDescriptor(conv));
  }
};

namespace {

int toInt(int64_t value, const char *what) {
  if (value < 0 || value > INT_MAX)
    throw std::runtime_error(std::string("convolution: ") + what +
                             " does not fit cuDNN's int");
  return static_cast<int>(value);
}

/// Non-fused Winograd trades precision for speed (TensorFlow skips it too):
/// the CPU backend's tolerances would not hold.
bool isImprecise(cudnnConvolutionFwdAlgo_t algo) {
  return algo == CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED;
}
bool isImprecise(cudnnConvolutionBwdDataAlgo_t algo) {
  return algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_WINOGRAD_NONFUSED;
}
bool isImprecise(cudnnConvolutionBwdFilterAlgo_t algo) {
  return algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_WINOGRAD_NONFUSED;
}

/// The heuristics' fastest (they come sorted by expected speed) algorithm
/// whose workspace -- `workspaceOf(algo)`, cuDNN's own size query -- fits
/// `limit`, the plan's workspace for the call: deterministic if any fits.
/// Never the imprecise one, nor one rated for tensor-op math (the
/// descriptor runs FMA math only; PyTorch filters the same way). Sets
/// `bytes` to its workspace.
template <typename Perf, typename WorkspaceOf>
auto pickAlgorithm(const Perf *perf, int count, size_t limit,
                   WorkspaceOf workspaceOf, size_t &bytes, const char *what) {
  for (bool strict : {true, false})
    for (int i = 0; i < count; ++i) {
      if (perf[i].status != CUDNN_STATUS_SUCCESS || isImprecise(perf[i].algo) ||
          perf[i].mathType == CUDNN_TENSOR_OP_MATH ||
          perf[i].mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION ||
          (strict && perf[i].determinism != CUDNN_DETERMINISTIC))
        continue;
      size_t needed = workspaceOf(perf[i].algo);
      if (needed <= limit) {
        bytes = needed;
        return perf[i].algo;
      }
    }
  throw std::runtime_error(std::string("cuDNN has no ") + what +
                           " algorithm for this convolution shape within "
                           "the plan's workspace of " +
                           std::to_string(limit) + " bytes");
}

/// cuDNN's names for its algorithms (cudnn_ops.h), by enum value.
template <size_t N>
const char *nameOf(int algo, const char *const (&names)[N]) {
  return algo >= 0 && algo < int(N) ? names[algo] : "?";
}
const char *nameOf(cudnnConvolutionFwdAlgo_t algo) {
  static const char *const names[] = {"IMPLICIT_GEMM", "IMPLICIT_PRECOMP_GEMM",
                                      "GEMM",          "DIRECT",
                                      "FFT",           "FFT_TILING",
                                      "WINOGRAD",      "WINOGRAD_NONFUSED"};
  return nameOf(algo, names);
}
const char *nameOf(cudnnConvolutionBwdDataAlgo_t algo) {
  static const char *const names[] = {
      "ALGO_0", "ALGO_1", "FFT", "FFT_TILING", "WINOGRAD", "WINOGRAD_NONFUSED"};
  return nameOf(algo, names);
}
const char *nameOf(cudnnConvolutionBwdFilterAlgo_t algo) {
  static const char *const names[] = {
      "ALGO_0",    "ALGO_1", "FFT", "ALGO_3", "WINOGRAD", "WINOGRAD_NONFUSED",
      "FFT_TILING"};
  return nameOf(algo, names);
}

/// "convolution n256 c64 56x56 k64 3x3 within 8388608 B of workspace:
/// forward IMPLICIT_PRECOMP_GEMM (4608 B), ...".
std::string describeChoice(const kernels::Conv2dShape &s, size_t workspaceBytes,
                           const ConvPlan &plan) {
  auto algorithm = [](const char *direction, const char *name, size_t bytes) {
    return std::string(direction) + " " + name + " (" + std::to_string(bytes) +
           " B)";
  };
  return "convolution n" + std::to_string(s.n) + " c" + std::to_string(s.c) +
         " " + std::to_string(s.h) + "x" + std::to_string(s.w) + " k" +
         std::to_string(s.k) + " " + std::to_string(s.r) + "x" +
         std::to_string(s.s) + " within " + std::to_string(workspaceBytes) +
         " B of workspace: " +
         algorithm("forward", nameOf(plan.forward), plan.forwardBytes) + ", " +
         algorithm("backward-data", nameOf(plan.backwardData),
                   plan.backwardDataBytes) +
         ", " +
         algorithm("backward-filter", nameOf(plan.backwardFilter),
                   plan.backwardFilterBytes);
}

std::unique_ptr<ConvPlan> makeConvPlan(cudnnHandle_t handle,
                                       const kernels::Conv2dShape &s,
                                       size_t limit) {
  if (s.padTop != s.padBottom || s.padLeft != s.padRight)
    throw std::runtime_error(
        "convolution: the CUDA backend (cuDNN) takes symmetric padding only");
  auto plan = std::make_unique<ConvPlan>();
  int n = toInt(s.n, "n"), c = toInt(s.c, "c"), h = toInt(s.h, "h"),
      w = toInt(s.w, "w"), k = toInt(s.k, "k"), groups = toInt(s.groups, "g");
  if (groups < 1 || c % groups != 0)
    throw std::runtime_error("convolution: channels do not split in groups");
  DPC_CUDA_CHECK(cudnnCreateTensorDescriptor(&plan->x));
  DPC_CUDA_CHECK(cudnnSetTensor4dDescriptor(plan->x, CUDNN_TENSOR_NCHW,
                                            CUDNN_DATA_FLOAT, n, c, h, w));
  DPC_CUDA_CHECK(cudnnCreateFilterDescriptor(&plan->w));
  DPC_CUDA_CHECK(cudnnSetFilter4dDescriptor(plan->w, CUDNN_DATA_FLOAT,
                                            CUDNN_TENSOR_NCHW, k, c / groups,
                                            toInt(s.r, "r"), toInt(s.s, "s")));
  DPC_CUDA_CHECK(cudnnCreateConvolutionDescriptor(&plan->conv));
  // Cross-correlation is what PyTorch (and oneDNN) call convolution.
  DPC_CUDA_CHECK(cudnnSetConvolution2dDescriptor(
      plan->conv, toInt(s.padTop, "padding"), toInt(s.padLeft, "padding"),
      toInt(s.strideH, "stride"), toInt(s.strideW, "stride"),
      toInt(s.dilationH, "dilation"), toInt(s.dilationW, "dilation"),
      CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  DPC_CUDA_CHECK(cudnnSetConvolutionGroupCount(plan->conv, groups));
  // FMA only: no TF32 tensor-core rounding, as cuBLAS above.
  DPC_CUDA_CHECK(cudnnSetConvolutionMathType(plan->conv, CUDNN_FMA_MATH));
  int outN, outC, outH, outW;
  DPC_CUDA_CHECK(cudnnGetConvolution2dForwardOutputDim(
      plan->conv, plan->x, plan->w, &outN, &outC, &outH, &outW));
  if (outN != n || outC != k || outH != s.outH() || outW != s.outW())
    throw std::runtime_error("convolution: cuDNN's output shape differs from "
                             "the plan's");
  DPC_CUDA_CHECK(cudnnCreateTensorDescriptor(&plan->y));
  DPC_CUDA_CHECK(cudnnSetTensor4dDescriptor(
      plan->y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, outN, outC, outH, outW));
  DPC_CUDA_CHECK(cudnnCreateTensorDescriptor(&plan->bias));
  DPC_CUDA_CHECK(cudnnSetTensor4dDescriptor(plan->bias, CUDNN_TENSOR_NCHW,
                                            CUDNN_DATA_FLOAT, 1, k, 1, 1));

  int returned = 0;
  cudnnConvolutionFwdAlgoPerf_t forward[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  DPC_CUDA_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(
      handle, plan->x, plan->w, plan->conv, plan->y,
      CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, forward));
  plan->forward = pickAlgorithm(
      forward, returned, limit,
      [&](cudnnConvolutionFwdAlgo_t algo) {
        size_t bytes = 0;
        DPC_CUDA_CHECK(cudnnGetConvolutionForwardWorkspaceSize(
            handle, plan->x, plan->w, plan->conv, plan->y, algo, &bytes));
        return bytes;
      },
      plan->forwardBytes, "forward");

  cudnnConvolutionBwdDataAlgoPerf_t data[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
  DPC_CUDA_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(
      handle, plan->w, plan->y, plan->conv, plan->x,
      CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &returned, data));
  plan->backwardData = pickAlgorithm(
      data, returned, limit,
      [&](cudnnConvolutionBwdDataAlgo_t algo) {
        size_t bytes = 0;
        DPC_CUDA_CHECK(cudnnGetConvolutionBackwardDataWorkspaceSize(
            handle, plan->w, plan->y, plan->conv, plan->x, algo, &bytes));
        return bytes;
      },
      plan->backwardDataBytes, "backward-data");

  cudnnConvolutionBwdFilterAlgoPerf_t
      filter[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
  DPC_CUDA_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
      handle, plan->x, plan->y, plan->conv, plan->w,
      CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &returned, filter));
  plan->backwardFilter = pickAlgorithm(
      filter, returned, limit,
      [&](cudnnConvolutionBwdFilterAlgo_t algo) {
        size_t bytes = 0;
        DPC_CUDA_CHECK(cudnnGetConvolutionBackwardFilterWorkspaceSize(
            handle, plan->x, plan->y, plan->conv, plan->w, algo, &bytes));
        return bytes;
      },
      plan->backwardFilterBytes, "backward-filter");
  return plan;
}

} // namespace

ConvPlanCache::ConvPlanCache() = default;
ConvPlanCache::~ConvPlanCache() = default;

const ConvPlan &ConvPlanCache::get(cudnnHandle_t handle,
                                   const kernels::Conv2dShape &s,
                                   size_t workspaceBytes) {
  auto key =
      std::make_tuple(s.n, s.c, s.h, s.w, s.k, s.r, s.s, s.strideH, s.strideW,
                      s.padTop, s.padLeft, s.padBottom, s.padRight, s.dilationH,
                      s.dilationW, s.groups, workspaceBytes);
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<ConvPlan> &plan = plans[key];
  if (!plan) {
    plan = makeConvPlan(handle, s, workspaceBytes);
    // The choice, once per shape, for traces and whoever wants to see it.
    choices.push_back(describeChoice(s, workspaceBytes, *plan));
    if (std::getenv("DPC_CUDA_LOG_ALGORITHMS"))
      reportLine(currentDeviceName() + ": " + choices.back());
  }
  return *plan;
}

std::vector<std::string> ConvPlanCache::getChoices() const {
  std::lock_guard<std::mutex> lock(mutex);
  return choices;
}

namespace {

const float kOne = 1.f, kZero = 0.f;

/// The call's scratch memory: the plan's arena slot (none: 0 bytes).
struct Workspace {
  void *data = nullptr;
  size_t bytes = 0;
  explicit Workspace(const plan::TensorArg &arg) {
    if (arg.present) {
      data = arg.data;
      bytes = static_cast<size_t>(arg.getNumBytes());
    }
  }
};

/// cuDNN convolves bf16 only from bf16 tensors (CUDNN_DATA_BFLOAT16 x, w
/// and y), which the plan's f32 buffers are not: refused until the plan
/// carries bf16 buffers and casts.
void requireF32Convolution(const kernels::Conv2dShape &s) {
  if (s.precision != kernels::Precision::F32)
    throw std::runtime_error("bf16 convolutions are not supported on CUDA "
                             "devices yet: compile with --precision f32");
}

void conv2dForward(StreamContext &ctx, const kernels::Conv2dShape &s,
                   Workspace workspace, const float *x, const float *w,
                   const float *bias, float *y) {
  requireF32Convolution(s);
  cudnnHandle_t handle = ctx.getCudnn();
  const ConvPlan &p = ctx.getConvPlans().get(handle, s, workspace.bytes);
  DPC_CUDA_CHECK(cudnnConvolutionForward(handle, &kOne, p.x, x, p.w, w, p.conv,
                                         p.forward, workspace.data,
                                         p.forwardBytes, &kZero, p.y, y));
  if (bias)
    DPC_CUDA_CHECK(cudnnAddTensor(handle, &kOne, p.bias, bias, &kOne, p.y, y));
}

void conv2dBackwardData(StreamContext &ctx, const kernels::Conv2dShape &s,
                        Workspace workspace, const float *dy, const float *w,
                        float *dx) {
  requireF32Convolution(s);
  cudnnHandle_t handle = ctx.getCudnn();
  const ConvPlan &p = ctx.getConvPlans().get(handle, s, workspace.bytes);
  DPC_CUDA_CHECK(cudnnConvolutionBackwardData(
      handle, &kOne, p.w, w, p.y, dy, p.conv, p.backwardData, workspace.data,
      p.backwardDataBytes, &kZero, p.x, dx));
}

void conv2dBackwardWeights(StreamContext &ctx, const kernels::Conv2dShape &s,
                           Workspace workspace, const float *x, const float *dy,
                           float *dw, float *dBias) {
  requireF32Convolution(s);
  cudnnHandle_t handle = ctx.getCudnn();
  const ConvPlan &p = ctx.getConvPlans().get(handle, s, workspace.bytes);
  DPC_CUDA_CHECK(cudnnConvolutionBackwardFilter(
      handle, &kOne, p.x, x, p.y, dy, p.conv, p.backwardFilter, workspace.data,
      p.backwardFilterBytes, &kZero, p.w, dw));
  if (dBias)
    DPC_CUDA_CHECK(cudnnConvolutionBackwardBias(handle, &kOne, p.y, dy, &kZero,
                                                p.bias, dBias));
}

//===----------------------------------------------------------------------===//
// Batch normalization (cuDNN, spatial mode; own kernels otherwise)
//===----------------------------------------------------------------------===//

/// x [n, c, h, w] and the per-channel [1, c, 1, 1] descriptor.
struct BatchNormDescs {
  cudnnTensorDescriptor_t x = nullptr, channel = nullptr;
  explicit BatchNormDescs(const kernels::BatchNormShape &s) {
    DPC_CUDA_CHECK(cudnnCreateTensorDescriptor(&x));
    DPC_CUDA_CHECK(cudnnCreateTensorDescriptor(&channel));
    DPC_CUDA_CHECK(cudnnSetTensor4dDescriptor(
        x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, toInt(s.n, "n"),
        toInt(s.c, "c"), toInt(s.h, "h"), toInt(s.w, "w")));
    DPC_CUDA_CHECK(
        cudnnDeriveBNTensorDescriptor(channel, x, CUDNN_BATCHNORM_SPATIAL));
  }
  ~BatchNormDescs() {
    DPC_CUDA_REPORT(cudnnDestroyTensorDescriptor(x));
    DPC_CUDA_REPORT(cudnnDestroyTensorDescriptor(channel));
  }
};

/// cuDNN's training batch norm keeps PyTorch's statistics (unbiased running
/// variance, momentum as the exponential average factor) except with one
/// value per channel, where the CPU falls back to the biased variance.
/// Outside the limits PyTorch also keeps (Normalization.cpp: cuDNN answers
/// NOT_SUPPORTED past 65535 rows in inference, 880801 in training, and
/// some of its kernels index with 32 bits) the own kernels run instead;
/// forward and backward decide alike, and their saved statistics agree.
bool useCudnnBatchNorm(const kernels::BatchNormShape &s,
                       const kernels::BatchNormParams &params, bool training) {
  int64_t rows = s.n * s.h * s.w;
  return rows > 1 && params.eps >= CUDNN_BN_MIN_EPSILON &&
         rows * s.c < int64_t(INT_MAX) && s.n <= (training ? 880801 : 65535);
}

void batchNormTrainingForward(StreamContext &ctx,
                              const kernels::BatchNormShape &s,
                              const kernels::BatchNormParams &params,
                              const float *x, const float *scale,
                              const float *shift, float *y, float *saveMean,
                              float *saveInvStd, float *runningMean,
                              float *runningVar) {
  if (!useCudnnBatchNorm(s, params, true) || !runningMean || !runningVar)
    return cuda::batchNormTrainingForward(ctx.getStream(), s, params, x, scale,
                                          shift, y, saveMean, saveInvStd,
                                          runningMean, runningVar);
  BatchNormDescs d(s);
  DPC_CUDA_CHECK(cudnnBatchNormalizationForwardTraining(
      ctx.getCudnn(), CUDNN_BATCHNORM_SPATIAL, &kOne, &kZero, d.x, x, d.x, y,
      d.channel, scale, shift, params.momentum, runningMean, runningVar,
      params.eps, saveMean, saveInvStd));
}

void batchNormInferenceForward(StreamContext &ctx,
                               const kernels::BatchNormShape &s,
                               const kernels::BatchNormParams &params,
                               const float *x, const float *scale,
                               const float *shift, const float *runningMean,
                               const float *runningVar, float *y) {
  if (!useCudnnBatchNorm(s, params, false))
    return cuda::batchNormInferenceForward(ctx.getStream(), s, params, x, scale,
                                           shift, runningMean, runningVar, y);
  BatchNormDescs d(s);
  DPC_CUDA_CHECK(cudnnBatchNormalizationForwardInference(
      ctx.getCudnn(), CUDNN_BATCHNORM_SPATIAL, &kOne, &kZero, d.x, x, d.x, y,
      d.channel, scale, shift, runningMean, runningVar, params.eps));
}

void batchNormBackward(StreamContext &ctx, const kernels::BatchNormShape &s,
                       const kernels::BatchNormParams &params, const float *x,
                       const float *dy, const float *scale,
                       const float *saveMean, const float *saveInvStd,
                       float *dx, float *dScale, float *dShift) {
  if (!useCudnnBatchNorm(s, params, true))
    return cuda::batchNormBackward(ctx.getStream(), s, x, dy, scale, saveMean,
                                   saveInvStd, dx, dScale, dShift);
  BatchNormDescs d(s);
  DPC_CUDA_CHECK(cudnnBatchNormalizationBackward(
      ctx.getCudnn(), CUDNN_BATCHNORM_SPATIAL, &kOne, &kZero, &kOne, &kZero,
      d.x, x, d.x, dy, d.x, dx, d.channel, scale, dScale, dShift, params.eps,
      saveMean, saveInvStd));
}

//===----------------------------------------------------------------------===//
// Linear layers and matmuls (cuBLAS)
//===----------------------------------------------------------------------===//

int toGemmInt(int64_t value) {
  if (value <= 0 || value > INT_MAX)
    throw std::runtime_error("gemm: dimension " + std::to_string(value) +
                             " does not fit cuBLAS's int");
  return static_cast<int>(value);
}

/// Row-major C[rows, cols] = op(A)[rows, inner] · op(B)[inner, cols], where
/// `aTransposed` means A is stored as its transpose [inner, rows]. In bf16
/// the f32 operands are rounded to bf16 by cuBLAS itself
/// (CUBLAS_COMPUTE_32F_FAST_16BF: tensor cores, f32 accumulation and C),
/// so no bf16 copies are needed.
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
  if (precision == kernels::Precision::BF16) {
    DPC_CUDA_CHECK(cublasGemmEx(ctx.getCublas(), opB, opA, m, n, k, &kOne, b,
                                CUDA_R_32F, ldb, a, CUDA_R_32F, lda, &kZero, c,
                                CUDA_R_32F, m, CUBLAS_COMPUTE_32F_FAST_16BF,
                                CUBLAS_GEMM_DEFAULT));
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

//===----------------------------------------------------------------------===//
// Dispatch
//===----------------------------------------------------------------------===//

float *in(const KernelCall &call, size_t i) {
  return call.operand(i).present ? call.operand(i).f32() : nullptr;
}
float *out(const KernelCall &call, size_t i) {
  return call.result(i).present ? call.result(i).f32() : nullptr;
}

ScalarType scalarTypeOf(const plan::TensorArg &arg) {
  switch (arg.dtype) {
  case plan::DType::F32:
    return ScalarType::F32;
  case plan::DType::F64:
    return ScalarType::F64;
  case plan::DType::I32:
    return ScalarType::I32;
  case plan::DType::I64:
    return ScalarType::I64;
  default:
    throw std::runtime_error("the CUDA backend has no 16-bit scalars yet");
  }
}

void zeroNonEmptyResults(StreamContext &ctx, const KernelCall &call) {
  for (const plan::TensorArg &result : call.results)
    if (result.present && result.getNumElements() > 0)
      DPC_CUDA_CHECK(cudaMemsetAsync(result.data, 0, result.getNumBytes(),
                                     ctx.getStream()));
}

//===----------------------------------------------------------------------===//
// One function per kernel of Kernels.def
//===----------------------------------------------------------------------===//

void runAllReduce(StreamContext &ctx, const KernelCall &call) {
  plan::ReduceOp op = plan::getAllReduceOp(call);
  auto *nccl = dynamic_cast<NcclCommunicator *>(call.communicator);
  if (!nccl)
    throw std::runtime_error(
        "AllReduce on a CUDA device needs the NCCL communicator");
  std::vector<comm::ReduceBuffer> buffers;
  for (const plan::TensorArg &arg : call.operands)
    buffers.push_back({arg.data, arg.getNumElements(), arg.dtype});
  nccl->enqueueAllReduce(buffers, op, ctx.getStream());
}

void runBatchNormStatistics(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::BatchNormStatistics;
  batchNormStatistics(ctx.getStream(), plan::getBatchNormShape(call),
                      in(call, X), call.result(Sum).as<double>(),
                      call.result(SumSq).as<double>(),
                      call.result(Count).as<double>());
}

void runBatchNormApply(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::BatchNormApply;
  batchNormApply(ctx.getStream(), plan::getBatchNormShape(call),
                 plan::getBatchNormParams(call), in(call, X), in(call, Scale),
                 in(call, Shift), in(call, RunningMean), in(call, RunningVar),
                 call.operand(Sum).as<double>(),
                 call.operand(SumSq).as<double>(),
                 call.operand(Count).as<double>(), out(call, Y),
                 out(call, SavedMean), out(call, SavedInvStd));
}

void runBatchNormGradStatistics(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::BatchNormGradStatistics;
  batchNormGradStatistics(ctx.getStream(), plan::getBatchNormShape(call),
                          in(call, X), in(call, DY), in(call, SavedMean),
                          in(call, SavedInvStd), out(call, SumDY),
                          out(call, SumDYXhat));
}

void runBatchNormGradApply(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::BatchNormGradApply;
  batchNormGradApply(ctx.getStream(), plan::getBatchNormShape(call),
                     in(call, X), in(call, DY), in(call, Scale),
                     in(call, SavedMean), in(call, SavedInvStd),
                     in(call, SumDY), in(call, SumDYXhat),
                     call.operand(Count).as<double>(), out(call, DX));
}

void runConv2dForward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::Conv2dForward;
  conv2dForward(ctx, plan::getConv2dShape(call), Workspace(call.workspace),
                in(call, X), in(call, W), in(call, Bias), out(call, Y));
}

void runConv2dBackwardData(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::Conv2dBackwardData;
  conv2dBackwardData(ctx, plan::getConv2dShape(call), Workspace(call.workspace),
                     in(call, DY), in(call, W), out(call, DX));
}

void runConv2dBackwardWeights(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::Conv2dBackwardWeights;
  conv2dBackwardWeights(ctx, plan::getConv2dShape(call),
                        Workspace(call.workspace), in(call, X), in(call, DY),
                        out(call, DW), out(call, DB));
}

void runBatchNormTrainingForward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::BatchNormTrainingForward;
  batchNormTrainingForward(ctx, plan::getBatchNormShape(call),
                           plan::getBatchNormParams(call), in(call, X),
                           in(call, Scale), in(call, Shift), out(call, Y),
                           out(call, SavedMean), out(call, SavedInvStd),
                           in(call, RunningMean), in(call, RunningVar));
}

void runBatchNormInferenceForward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::BatchNormInferenceForward;
  batchNormInferenceForward(ctx, plan::getBatchNormShape(call),
                            plan::getBatchNormParams(call), in(call, X),
                            in(call, Scale), in(call, Shift), in(call, Mean),
                            in(call, Var), out(call, Y));
}

void runBatchNormBackward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::BatchNormBackward;
  batchNormBackward(ctx, plan::getBatchNormShape(call),
                    plan::getBatchNormParams(call), in(call, X), in(call, DY),
                    in(call, Scale), in(call, SavedMean), in(call, SavedInvStd),
                    out(call, DX), out(call, DScale), out(call, DShift));
}

void runMaxPool2dForward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::MaxPool2dForward;
  maxPool2dForward(ctx.getStream(), plan::getPool2dShape(call), in(call, X),
                   out(call, Y));
}

void runMaxPool2dBackward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::MaxPool2dBackward;
  maxPool2dBackward(ctx.getStream(), plan::getPool2dShape(call), in(call, X),
                    in(call, DY), out(call, DX));
}

void runAvgPool2dForward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::AvgPool2dForward;
  avgPool2dForward(ctx.getStream(), plan::getPool2dShape(call), in(call, X),
                   out(call, Y));
}

void runAvgPool2dBackward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::AvgPool2dBackward;
  avgPool2dBackward(ctx.getStream(), plan::getPool2dShape(call), in(call, DY),
                    out(call, DX));
}

void runGlobalAvgPool2dForward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::GlobalAvgPool2dForward;
  plan::Nchw s = plan::getGlobalAvgPoolShape(call);
  globalAvgPool2dForward(ctx.getStream(), s.n * s.c, s.h * s.w, in(call, X),
                         out(call, Y));
}

void runGlobalAvgPool2dBackward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::GlobalAvgPool2dBackward;
  plan::Nchw s = plan::getGlobalAvgPoolShape(call);
  globalAvgPool2dBackward(ctx.getStream(), s.n * s.c, s.h * s.w, in(call, DY),
                          out(call, DX));
}

void runPadForward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::PadForward;
  pad2dForward(ctx.getStream(), plan::getPad2dShape(call),
               plan::getPadValue(call), in(call, X), out(call, Y));
}

void runPadBackward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::PadBackward;
  pad2dBackward(ctx.getStream(), plan::getPad2dShape(call), in(call, DY),
                out(call, DX));
}

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

void runMatmulForward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::MatmulForward;
  matmulForward(ctx, plan::getMatmulShape(call), in(call, A), in(call, B),
                out(call, C));
}

void runBatchMatmul(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::BatchMatmul;
  batchMatmul(ctx, plan::getBatchMatmulShape(call), in(call, A), in(call, B),
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

/// An activation's forward (x -> y) or backward ((y, dy) -> dx): the same
/// roles for every activation kernel.
template <Activation Kind>
void runActivationForward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::ReluForward;
  activationForward(ctx.getStream(), Kind, plan::getElementwiseSize(call),
                    in(call, X), out(call, Y));
}
template <Activation Kind>
void runActivationBackward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::ReluBackward;
  activationBackward(ctx.getStream(), Kind, plan::getElementwiseSize(call),
                     in(call, Y), in(call, DY), out(call, DX));
}
constexpr auto runReluForward = &runActivationForward<Activation::Relu>;
constexpr auto runReluBackward = &runActivationBackward<Activation::Relu>;
constexpr auto runSigmoidForward = &runActivationForward<Activation::Sigmoid>;
constexpr auto runSigmoidBackward = &runActivationBackward<Activation::Sigmoid>;
constexpr auto runTanhForward = &runActivationForward<Activation::Tanh>;
constexpr auto runTanhBackward = &runActivationBackward<Activation::Tanh>;
constexpr auto runReciprocalForward =
    &runActivationForward<Activation::Reciprocal>;
constexpr auto runReciprocalBackward =
    &runActivationBackward<Activation::Reciprocal>;

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

void runConv2dReluForward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::Conv2dReluForward;
  kernels::Conv2dShape shape = plan::getConv2dShape(call);
  conv2dForward(ctx, shape, Workspace(call.workspace), in(call, X), in(call, W),
                in(call, Bias), out(call, Y));
  activationForward(ctx.getStream(), Activation::Relu,
                    call.result(Y).getNumElements(), out(call, Y),
                    out(call, Y));
}

/// Batch norm and ReLU as two calls, the ReLU in place.
void runBatchNormReluTrainingForward(StreamContext &ctx,
                                     const KernelCall &call) {
  using namespace plan::roles::BatchNormReluTrainingForward;
  batchNormTrainingForward(ctx, plan::getBatchNormShape(call),
                           plan::getBatchNormParams(call), in(call, X),
                           in(call, Scale), in(call, Shift), out(call, Y),
                           out(call, SavedMean), out(call, SavedInvStd),
                           in(call, RunningMean), in(call, RunningVar));
  activationForward(ctx.getStream(), Activation::Relu,
                    call.result(Y).getNumElements(), out(call, Y),
                    out(call, Y));
}

void runBatchNormReluInferenceForward(StreamContext &ctx,
                                      const KernelCall &call) {
  using namespace plan::roles::BatchNormReluInferenceForward;
  batchNormInferenceForward(ctx, plan::getBatchNormShape(call),
                            plan::getBatchNormParams(call), in(call, X),
                            in(call, Scale), in(call, Shift), in(call, Mean),
                            in(call, Var), out(call, Y));
  activationForward(ctx.getStream(), Activation::Relu,
                    call.result(Y).getNumElements(), out(call, Y),
                    out(call, Y));
}

/// The ReLU's gradient goes to DX, and the batch norm's own kernel (whose
/// dx[i] depends on dy[i] alone once the sums are taken) reads it there and
/// overwrites it in place.
void runBatchNormReluBackward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::BatchNormReluBackward;
  activationBackward(ctx.getStream(), Activation::Relu,
                     call.result(DX).getNumElements(), in(call, Y),
                     in(call, DY), out(call, DX));
  cuda::batchNormBackward(ctx.getStream(), plan::getBatchNormShape(call),
                          in(call, X), out(call, DX), in(call, Scale),
                          in(call, SavedMean), in(call, SavedInvStd),
                          out(call, DX), out(call, DScale), out(call, DShift));
}

void runAddForward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::AddForward;
  addForward(ctx.getStream(), plan::getBroadcastShape(call), in(call, A),
             in(call, B), out(call, C));
}

// The fused joins as the two kernels they replace, the second in place
// (element by element, read before written). The compiler never gives
// AddReluBackward a DX on Y's bytes (codegen/FuseKernels.cpp).
void runAddReluForward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::AddReluForward;
  float *c = out(call, C);
  addForward(ctx.getStream(), plan::getBroadcastShape(call), in(call, A),
             in(call, B), c);
  activationForward(ctx.getStream(), Activation::Relu,
                    call.result(C).getNumElements(), c, c);
}

void runAddReluBackward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::AddReluBackward;
  int64_t size = plan::getElementwiseSize(call);
  float *dx = out(call, DX);
  addForward(ctx.getStream(), kernels::makeBroadcastShape({size}, {size}),
             in(call, A), in(call, B), dx);
  activationBackward(ctx.getStream(), Activation::Relu, size, in(call, Y), dx,
                     dx);
}

void runAddBackward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::AddBackward;
  addBackward(ctx.getStream(), plan::getBroadcastShape(call), in(call, DC),
              out(call, DA), out(call, DB));
}

void runMulForward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::MulForward;
  mulForward(ctx.getStream(), plan::getBroadcastShape(call), in(call, A),
             in(call, B), out(call, C));
}

void runMulBackward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::MulBackward;
  mulBackward(ctx.getStream(), plan::getBroadcastShape(call), in(call, A),
              in(call, B), in(call, DC), out(call, DA), out(call, DB));
}

void runSoftmaxForward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::SoftmaxForward;
  plan::RowsShape s = plan::getRowsShape(call);
  softmaxForward(ctx.getStream(), s.rows, s.cols, in(call, X), out(call, Y));
}

void runSoftmaxBackward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::SoftmaxBackward;
  plan::RowsShape s = plan::getRowsShape(call);
  softmaxBackward(ctx.getStream(), s.rows, s.cols, in(call, Y), in(call, DY),
                  out(call, DX));
}

void runLogSoftmaxForward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::LogSoftmaxForward;
  plan::RowsShape s = plan::getRowsShape(call);
  logSoftmaxForward(ctx.getStream(), s.rows, s.cols, in(call, X), out(call, Y));
}

void runLogSoftmaxBackward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::LogSoftmaxBackward;
  plan::RowsShape s = plan::getRowsShape(call);
  logSoftmaxBackward(ctx.getStream(), s.rows, s.cols, in(call, Y), in(call, DY),
                     out(call, DX));
}

void runCrossEntropyForward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::CrossEntropyForward;
  plan::RowsShape s = plan::getRowsShape(call);
  const plan::TensorArg &correct = call.result(Correct);
  crossEntropyForward(
      ctx.getStream(), s.rows, s.cols, in(call, Logits),
      call.operand(Labels).as<int32_t>(), static_cast<float>(call.batch),
      out(call, Loss), correct.present ? correct.data : nullptr,
      correct.present ? scalarTypeOf(correct) : ScalarType::F32);
}

void runCrossEntropyForwardBackward(StreamContext &ctx,
                                    const KernelCall &call) {
  using namespace plan::roles::CrossEntropyForwardBackward;
  plan::RowsShape s = plan::getRowsShape(call);
  const plan::TensorArg &correct = call.result(Correct);
  const auto *labels = call.operand(Labels).as<int32_t>();
  float divisor = static_cast<float>(call.batch);
  crossEntropyForward(
      ctx.getStream(), s.rows, s.cols, in(call, Logits), labels, divisor,
      out(call, Loss), correct.present ? correct.data : nullptr,
      correct.present ? scalarTypeOf(correct) : ScalarType::F32);
  crossEntropyBackward(ctx.getStream(), s.rows, s.cols, in(call, Logits),
                       labels, in(call, DLoss), divisor, out(call, DLogits));
}

void runCrossEntropyBackward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::CrossEntropyBackward;
  plan::RowsShape s = plan::getRowsShape(call);
  crossEntropyBackward(ctx.getStream(), s.rows, s.cols, in(call, Logits),
                       call.operand(Labels).as<int32_t>(), in(call, DLoss),
                       static_cast<float>(call.batch), out(call, DLogits));
}

void runCorrectCount(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::CorrectCount;
  plan::RowsShape s = plan::getRowsShape(call);
  correctCount(ctx.getStream(), s.rows, s.cols, in(call, Logits),
               call.operand(Labels).as<int32_t>(), call.result(Count).data,
               scalarTypeOf(call.result(Count)));
}

void runSgdUpdate(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::SgdUpdate;
  sgdUpdate(ctx.getStream(), plan::getOptimizerSize(call),
            plan::getSgdParams(call), in(call, Lr), call.optimizerStep,
            in(call, Param), in(call, Grad), in(call, MomentumBuffer));
}

void runAdamWUpdate(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::AdamWUpdate;
  adamwUpdate(ctx.getStream(), plan::getOptimizerSize(call),
              plan::getAdamWParams(call), in(call, Lr),
              call.operand(Step).as<int64_t>(), in(call, Param), in(call, Grad),
              in(call, ExpAvg), in(call, ExpAvgSq));
}

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

void runConcatForward(StreamContext &ctx, const KernelCall &call) {
  copyParts(ctx, call, /*concat=*/true);
}

void runSplitForward(StreamContext &ctx, const KernelCall &call) {
  copyParts(ctx, call, /*concat=*/false);
}

void runReduceSum(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::ReduceSum;
  plan::ReduceShape s = plan::getReduceShape(call);
  bool reduced[8] = {};
  for (size_t d = 0; d < s.reduced.size() && d < 8; ++d)
    reduced[d] = s.reduced[d];
  reduceSum(ctx.getStream(), static_cast<int>(s.dims.size()), s.dims.data(),
            reduced, in(call, X), out(call, Y));
}

/// Every input activation (Clip, HardSigmoid, HardSwish, Gelu, Erf and
/// Kernels.def's DPC_INPUT_ACTIVATION rows) has the same roles: (X) -> (Y)
/// forward, (X, DY) -> (DX) backward.
void runInputActivationForward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::ClipForward;
  plan::InputActivationShape s = plan::getInputActivationShape(call);
  inputActivationForward(ctx.getStream(), s.kind, s.params, s.size, in(call, X),
                         out(call, Y));
}
void runInputActivationBackward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::ClipBackward;
  plan::InputActivationShape s = plan::getInputActivationShape(call);
  inputActivationBackward(ctx.getStream(), s.kind, s.params, s.size,
                          in(call, X), in(call, DY), out(call, DX));
}
constexpr auto runClipForward = runInputActivationForward;
constexpr auto runClipBackward = runInputActivationBackward;
constexpr auto runHardSigmoidForward = runInputActivationForward;
constexpr auto runHardSigmoidBackward = runInputActivationBackward;
constexpr auto runHardSwishForward = runInputActivationForward;
constexpr auto runHardSwishBackward = runInputActivationBackward;
constexpr auto runGeluForward = runInputActivationForward;
constexpr auto runGeluBackward = runInputActivationBackward;
constexpr auto runErfForward = runInputActivationForward;
constexpr auto runErfBackward = runInputActivationBackward;

/// Forward and backward are the same product: x (or dy) times the mask.
void runDropout(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::DropoutForward;
  plan::DropoutShape s = plan::getDropoutShape(call);
  dropout(ctx.getStream(),
          kernels::math::makeDropoutMask(call.randomSeed, call.optimizerStep,
                                         s.site, s.ratio, s.rowwise),
          s.rows, s.cols, call.firstRow, in(call, X), out(call, Y));
}
constexpr auto runDropoutForward = runDropout;
constexpr auto runDropoutBackward = runDropout;

void runLayerNormForward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::LayerNormForward;
  const plan::TensorArg &bias = call.operand(Bias);
  layerNormForward(ctx.getStream(), plan::getLayerNormShape(call), in(call, X),
                   in(call, Scale), bias.present ? bias.f32() : nullptr,
                   out(call, Y));
}

void runLayerNormBackward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::LayerNormBackward;
  const plan::TensorArg &dBias = call.result(DBias);
  layerNormBackward(
      ctx.getStream(), plan::getLayerNormShape(call), in(call, X), in(call, DY),
      in(call, Scale), call.workspace.as<kernels::elements::RowStats>(),
      out(call, DX), out(call, DScale), dBias.present ? dBias.f32() : nullptr);
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

const plan::KernelTable<StreamContext> kCudaKernels = {"CUDA",
                                                       {
#define DPC_KERNEL(Name, ...) run##Name,
#define DPC_INPUT_ACTIVATION(Name)                                             \
  runInputActivationForward, runInputActivationBackward,
#include "runtime/abi/Kernels.def"
                                                       },
                                                       &zeroNonEmptyResults};

} // namespace

const plan::KernelTable<StreamContext> &getCudaKernelTable() {
  return kCudaKernels;
}

void runCudaKernel(StreamContext &ctx, const KernelCall &call) {
  plan::dispatchKernel(kCudaKernels, ctx, call);
}

} // namespace dpc::cuda
