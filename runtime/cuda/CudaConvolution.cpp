//===- CudaConvolution.cpp - convolutions on a CUDA stream ----------------===//
//
// 2-D and 3-D convolutions through cuDNN (its Nd descriptors), the algorithm
// each shape uses (chosen once per device, ConvPlanCache), and the convolution
// fused with the ReLU that follows it. A bf16 call casts its f32 operands to
// bf16 copies in its workspace, convolves those on tensor cores (f32
// accumulation) and casts the result back: the plan's buffers stay f32, as
// on the CPU.
//
//===----------------------------------------------------------------------===//

#include "runtime/abi/KernelRoles.h"
#include "runtime/abi/KernelShapes.h"
#include "runtime/cuda/CudaKernelEntries.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace dpc::cuda {

struct ConvPlan {
  /// x, w and y in the call's data type (bf16 for a bf16 call); yFloat
  /// is y in f32, where the bias is added and its gradient summed.
  cudnnTensorDescriptor_t x = nullptr, y = nullptr, yFloat = nullptr,
                          bias = nullptr;
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
    if (yFloat)
      DPC_CUDA_REPORT(cudnnDestroyTensorDescriptor(yFloat));
    if (bias)
      DPC_CUDA_REPORT(cudnnDestroyTensorDescriptor(bias));
    if (w)
      DPC_CUDA_REPORT(cudnnDestroyFilterDescriptor(w));
    if (conv)
      DPC_CUDA_REPORT(cudnnDestroyConvolutionDescriptor(conv));
  }
};

namespace {

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

/// How the algorithms are ranked (DPC_CUDNN_ALGORITHMS): by timing each on
/// this device, once per shape (cuDNN's Find, as PyTorch's
/// cudnn.benchmark), the deterministic ones first ("timed", the default:
/// runs repeat bit for bit, resumes too); timed, the fastest whatever its
/// determinism ("fastest", as PyTorch's default); or by cuDNN's heuristics
/// alone ("heuristic": no timing runs, deterministic first).
enum class Ranking { Timed, Fastest, Heuristic };

Ranking ranking() {
  static const Ranking chosen = [] {
    const char *how = std::getenv("DPC_CUDNN_ALGORITHMS");
    std::string name = how ? how : "timed";
    if (name == "fastest")
      return Ranking::Fastest;
    if (name == "heuristic")
      return Ranking::Heuristic;
    return Ranking::Timed;
  }();
  return chosen;
}

bool timeAlgorithms() { return ranking() != Ranking::Heuristic; }

/// The fastest algorithm of the ranking (fastest first) whose workspace --
/// `workspaceOf(algo)`, cuDNN's own size query -- fits `limit`, the plan's
/// workspace for the call: deterministic if any fits. Never the imprecise
/// one, nor one rated for tensor-op math unless the call computes in TF32
/// or bf16 (`tensorOps`; the descriptor runs FMA math otherwise, and
/// PyTorch filters the same way). Sets `bytes` to its workspace.
template <typename Perf, typename WorkspaceOf>
auto pickAlgorithm(const Perf *perf, int count, size_t limit, bool tensorOps,
                   WorkspaceOf workspaceOf, size_t &bytes, const char *what) {
  // The ranking itself, for whoever tunes the workspace or the ranking.
  if (std::getenv("DPC_CUDA_LOG_ALGORITHMS"))
    for (int i = 0; i < count; ++i)
      reportLine(
          currentDeviceName() + ":   " + what + " " + nameOf(perf[i].algo) +
          ": status " + std::to_string(int(perf[i].status)) + ", " +
          std::to_string(perf[i].time) + " ms, " +
          std::to_string(perf[i].memory) + " B, " +
          (perf[i].determinism == CUDNN_DETERMINISTIC ? "deterministic"
                                                      : "non-deterministic") +
          ", math " + std::to_string(int(perf[i].mathType)));
  for (bool strict : {ranking() != Ranking::Fastest, false})
    for (int i = 0; i < count; ++i) {
      if (perf[i].status != CUDNN_STATUS_SUCCESS || isImprecise(perf[i].algo) ||
          (!tensorOps &&
           (perf[i].mathType == CUDNN_TENSOR_OP_MATH ||
            perf[i].mathType == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION)) ||
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

/// "convolution n256 c64 56x56 k64 3x3 within 8388608 B of workspace:
/// forward IMPLICIT_PRECOMP_GEMM (4608 B), ...".
std::string describeChoice(const kernels::Conv2dShape &s, size_t workspaceBytes,
                           const ConvPlan &plan) {
  auto algorithm = [](const char *direction, const char *name, size_t bytes) {
    return std::string(direction) + " " + name + " (" + std::to_string(bytes) +
           " B)";
  };
  std::string depth = s.spatialDims == 3 ? std::to_string(s.d) + "x" : "";
  std::string kernelDepth = s.spatialDims == 3 ? std::to_string(s.t) + "x" : "";
  return "convolution n" + std::to_string(s.n) + " c" + std::to_string(s.c) +
         " " + depth + std::to_string(s.h) + "x" + std::to_string(s.w) + " k" +
         std::to_string(s.k) + " " + kernelDepth + std::to_string(s.r) + "x" +
         std::to_string(s.s) +
         (s.precision == kernels::Precision::TF32   ? " tf32"
          : s.precision == kernels::Precision::BF16 ? " bf16"
                                                    : "") +
         " within " + std::to_string(workspaceBytes) + " B of workspace: " +
         algorithm("forward", nameOf(plan.forward), plan.forwardBytes) + ", " +
         algorithm("backward-data", nameOf(plan.backwardData),
                   plan.backwardDataBytes) +
         ", " +
         algorithm("backward-filter", nameOf(plan.backwardFilter),
                   plan.backwardFilterBytes);
}

/// The descriptors' dims, in cuDNN's Nd form: x [n, c, (d,) h, w], the
/// filter [k, c / groups, (t,) r, s] and the window per spatial axis.
struct ConvDims {
  std::vector<int> x, filter, pad, stride, dilation;

  explicit ConvDims(const kernels::Conv2dShape &s) {
    bool volumetric = s.spatialDims == 3;
    x = {toInt(s.n, "n"), toInt(s.c, "c")};
    filter = {toInt(s.k, "k"), toInt(s.c / s.groups, "c")};
    if (volumetric) {
      x.push_back(toInt(s.d, "d"));
      filter.push_back(toInt(s.t, "t"));
      pad.push_back(toInt(s.padFront, "padding"));
      stride.push_back(toInt(s.strideD, "stride"));
      dilation.push_back(toInt(s.dilationD, "dilation"));
    }
    x.insert(x.end(), {toInt(s.h, "h"), toInt(s.w, "w")});
    filter.insert(filter.end(), {toInt(s.r, "r"), toInt(s.s, "s")});
    pad.insert(pad.end(),
               {toInt(s.padTop, "padding"), toInt(s.padLeft, "padding")});
    stride.insert(stride.end(),
                  {toInt(s.strideH, "stride"), toInt(s.strideW, "stride")});
    dilation.insert(dilation.end(), {toInt(s.dilationH, "dilation"),
                                     toInt(s.dilationW, "dilation")});
  }
};

/// Sets `plan`'s tensor, filter and convolution descriptors for `s`.
void describeConvolution(ConvPlan *plan, const kernels::Conv2dShape &s) {
  if (s.padTop != s.padBottom || s.padLeft != s.padRight ||
      s.padFront != s.padBack)
    throw std::runtime_error(
        "convolution: the CUDA backend (cuDNN) takes symmetric padding only");
  int k = toInt(s.k, "k"), groups = toInt(s.groups, "g");
  if (groups < 1 || s.c % groups != 0)
    throw std::runtime_error("convolution: channels do not split in groups");
  ConvDims dims(s);
  int rank = static_cast<int>(dims.x.size());
  // A bf16 call convolves bf16 copies (cuDNN's pseudo-bf16 configuration:
  // bf16 tensors, f32 accumulation), which the kernel casts in its
  // workspace (Bf16Copies).
  bool bf16 = s.precision == kernels::Precision::BF16;
  cudnnDataType_t dataType = bf16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_FLOAT;
  DPC_CUDA_CHECK(cudnnCreateTensorDescriptor(&plan->x));
  DPC_CUDA_CHECK(cudnnSetTensorNdDescriptorEx(plan->x, CUDNN_TENSOR_NCHW,
                                              dataType, rank, dims.x.data()));
  DPC_CUDA_CHECK(cudnnCreateFilterDescriptor(&plan->w));
  DPC_CUDA_CHECK(cudnnSetFilterNdDescriptor(
      plan->w, dataType, CUDNN_TENSOR_NCHW, rank, dims.filter.data()));
  DPC_CUDA_CHECK(cudnnCreateConvolutionDescriptor(&plan->conv));
  // Cross-correlation is what PyTorch (and oneDNN) call convolution.
  DPC_CUDA_CHECK(cudnnSetConvolutionNdDescriptor(
      plan->conv, rank - 2, dims.pad.data(), dims.stride.data(),
      dims.dilation.data(), CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  DPC_CUDA_CHECK(cudnnSetConvolutionGroupCount(plan->conv, groups));
  // FMA only unless the call computes in TF32 (cuDNN's default math then
  // rounds to TensorFloat-32 on tensor cores, as PyTorch's allow_tf32) or
  // bf16: no tensor-core rounding in f32, as StreamContext::getCublas.
  bool tensorOps = bf16 || s.precision == kernels::Precision::TF32;
  DPC_CUDA_CHECK(cudnnSetConvolutionMathType(
      plan->conv, tensorOps ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH));
  std::vector<int> out(rank);
  DPC_CUDA_CHECK(cudnnGetConvolutionNdForwardOutputDim(
      plan->conv, plan->x, plan->w, rank, out.data()));
  std::vector<int64_t> expected = {s.n, s.k, s.outH(), s.outW()};
  if (rank == 5)
    expected.insert(expected.begin() + 2, s.outD());
  if (!std::equal(out.begin(), out.end(), expected.begin()))
    throw std::runtime_error("convolution: cuDNN's output shape differs from "
                             "the plan's");
  DPC_CUDA_CHECK(cudnnCreateTensorDescriptor(&plan->y));
  DPC_CUDA_CHECK(cudnnSetTensorNdDescriptorEx(plan->y, CUDNN_TENSOR_NCHW,
                                              dataType, rank, out.data()));
  DPC_CUDA_CHECK(cudnnCreateTensorDescriptor(&plan->yFloat));
  DPC_CUDA_CHECK(cudnnSetTensorNdDescriptorEx(
      plan->yFloat, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, rank, out.data()));
  // [1, k, 1, 1(, 1)]: broadcast over the rest of y.
  std::vector<int> biasDims(rank, 1);
  biasDims[1] = k;
  DPC_CUDA_CHECK(cudnnCreateTensorDescriptor(&plan->bias));
  DPC_CUDA_CHECK(cudnnSetTensorNdDescriptorEx(
      plan->bias, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, rank, biasDims.data()));
}

std::unique_ptr<ConvPlan> makeConvPlan(cudnnHandle_t handle,
                                       const kernels::Conv2dShape &s,
                                       size_t limit) {
  auto plan = std::make_unique<ConvPlan>();
  describeConvolution(plan.get(), s);
  bool tensorOps = s.precision == kernels::Precision::BF16 ||
                   s.precision == kernels::Precision::TF32;
  int returned = 0;
  cudnnConvolutionFwdAlgoPerf_t forward[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  DPC_CUDA_CHECK((timeAlgorithms() ? cudnnFindConvolutionForwardAlgorithm
                                   : cudnnGetConvolutionForwardAlgorithm_v7)(
      handle, plan->x, plan->w, plan->conv, plan->y,
      CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, forward));
  plan->forward = pickAlgorithm(
      forward, returned, limit, tensorOps,
      [&](cudnnConvolutionFwdAlgo_t algo) {
        size_t bytes = 0;
        DPC_CUDA_CHECK(cudnnGetConvolutionForwardWorkspaceSize(
            handle, plan->x, plan->w, plan->conv, plan->y, algo, &bytes));
        return bytes;
      },
      plan->forwardBytes, "forward");

  cudnnConvolutionBwdDataAlgoPerf_t data[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
  DPC_CUDA_CHECK((timeAlgorithms()
                      ? cudnnFindConvolutionBackwardDataAlgorithm
                      : cudnnGetConvolutionBackwardDataAlgorithm_v7)(
      handle, plan->w, plan->y, plan->conv, plan->x,
      CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &returned, data));
  plan->backwardData = pickAlgorithm(
      data, returned, limit, tensorOps,
      [&](cudnnConvolutionBwdDataAlgo_t algo) {
        size_t bytes = 0;
        DPC_CUDA_CHECK(cudnnGetConvolutionBackwardDataWorkspaceSize(
            handle, plan->w, plan->y, plan->conv, plan->x, algo, &bytes));
        return bytes;
      },
      plan->backwardDataBytes, "backward-data");

  cudnnConvolutionBwdFilterAlgoPerf_t
      filter[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
  DPC_CUDA_CHECK((timeAlgorithms()
                      ? cudnnFindConvolutionBackwardFilterAlgorithm
                      : cudnnGetConvolutionBackwardFilterAlgorithm_v7)(
      handle, plan->x, plan->y, plan->conv, plan->w,
      CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &returned, filter));
  plan->backwardFilter = pickAlgorithm(
      filter, returned, limit, tensorOps,
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
  std::array<int64_t, 24> geometry = plan::getConvGeometryKey(s);
  std::vector<int64_t> key(geometry.begin(), geometry.end());
  key.push_back(static_cast<int64_t>(workspaceBytes));
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

/// A bf16 call's bf16 copies of x, w and y (or dx, dw, dy: the same
/// sizes), at the end of the plan's workspace; cuDNN's algorithm gets the
/// rest. An f32 or TF32 call gives cuDNN the whole workspace.
struct Bf16Copies {
  uint16_t *x = nullptr, *w = nullptr, *y = nullptr;
  int64_t xCount = 0, wCount = 0, yCount = 0;
  Workspace forCudnn;

  Bf16Copies(const kernels::Conv2dShape &s, Workspace workspace)
      : forCudnn(workspace) {
    if (s.precision != kernels::Precision::BF16)
      return;
    // The depths are 1 in 2-D.
    xCount = s.n * s.c * s.d * s.h * s.w;
    wCount = s.k * (s.c / s.groups) * s.t * s.r * s.s;
    yCount = s.n * s.k * s.outD() * s.outH() * s.outW();
    // Each copy 256-byte aligned, as cuDNN wants its operands.
    auto rounded = [](int64_t count) {
      return (size_t(count) * sizeof(uint16_t) + 255) / 256 * 256;
    };
    size_t copies = rounded(xCount) + rounded(wCount) + rounded(yCount);
    if (copies > workspace.bytes)
      throw std::runtime_error(
          "bf16 convolution: the plan's workspace of " +
          std::to_string(workspace.bytes) + " bytes cannot hold the " +
          std::to_string(copies) + " bytes of bf16 copies");
    size_t at = (workspace.bytes - copies) / 256 * 256;
    auto *base = static_cast<uint8_t *>(workspace.data);
    x = reinterpret_cast<uint16_t *>(base + at);
    w = reinterpret_cast<uint16_t *>(base + at + rounded(xCount));
    y = reinterpret_cast<uint16_t *>(base + at + rounded(xCount) +
                                     rounded(wCount));
    forCudnn.bytes = at;
  }
  bool active() const { return x != nullptr; }
};

void conv2dForward(StreamContext &ctx, const kernels::Conv2dShape &s,
                   Workspace workspace, const float *x, const float *w,
                   const float *bias, float *y) {
  cudnnHandle_t handle = ctx.getCudnn();
  Bf16Copies copies(s, workspace);
  const ConvPlan &p = ctx.getConvPlans().get(handle, s, copies.forCudnn.bytes);
  const void *xIn = x, *wIn = w;
  void *yOut = y;
  if (copies.active()) {
    castToBf16(ctx.getStream(), copies.xCount, x, copies.x);
    castToBf16(ctx.getStream(), copies.wCount, w, copies.w);
    xIn = copies.x, wIn = copies.w, yOut = copies.y;
  }
  DPC_CUDA_CHECK(cudnnConvolutionForward(
      handle, &kOne, p.x, xIn, p.w, wIn, p.conv, p.forward,
      copies.forCudnn.data, p.forwardBytes, &kZero, p.y, yOut));
  if (copies.active())
    castFromBf16(ctx.getStream(), copies.yCount, copies.y, y);
  if (bias)
    DPC_CUDA_CHECK(
        cudnnAddTensor(handle, &kOne, p.bias, bias, &kOne, p.yFloat, y));
}

void conv2dBackwardData(StreamContext &ctx, const kernels::Conv2dShape &s,
                        Workspace workspace, const float *dy, const float *w,
                        float *dx) {
  cudnnHandle_t handle = ctx.getCudnn();
  Bf16Copies copies(s, workspace);
  const ConvPlan &p = ctx.getConvPlans().get(handle, s, copies.forCudnn.bytes);
  const void *dyIn = dy, *wIn = w;
  void *dxOut = dx;
  if (copies.active()) {
    castToBf16(ctx.getStream(), copies.yCount, dy, copies.y);
    castToBf16(ctx.getStream(), copies.wCount, w, copies.w);
    dyIn = copies.y, wIn = copies.w, dxOut = copies.x;
  }
  DPC_CUDA_CHECK(cudnnConvolutionBackwardData(
      handle, &kOne, p.w, wIn, p.y, dyIn, p.conv, p.backwardData,
      copies.forCudnn.data, p.backwardDataBytes, &kZero, p.x, dxOut));
  if (copies.active())
    castFromBf16(ctx.getStream(), copies.xCount, copies.x, dx);
}

void conv2dBackwardWeights(StreamContext &ctx, const kernels::Conv2dShape &s,
                           Workspace workspace, const float *x, const float *dy,
                           float *dw, float *dBias) {
  cudnnHandle_t handle = ctx.getCudnn();
  Bf16Copies copies(s, workspace);
  const ConvPlan &p = ctx.getConvPlans().get(handle, s, copies.forCudnn.bytes);
  const void *xIn = x, *dyIn = dy;
  void *dwOut = dw;
  if (copies.active()) {
    castToBf16(ctx.getStream(), copies.xCount, x, copies.x);
    castToBf16(ctx.getStream(), copies.yCount, dy, copies.y);
    xIn = copies.x, dyIn = copies.y, dwOut = copies.w;
  }
  DPC_CUDA_CHECK(cudnnConvolutionBackwardFilter(
      handle, &kOne, p.x, xIn, p.y, dyIn, p.conv, p.backwardFilter,
      copies.forCudnn.data, p.backwardFilterBytes, &kZero, p.w, dwOut));
  // The weight gradient comes in bf16, as autocast's (its f32 cast).
  if (copies.active())
    castFromBf16(ctx.getStream(), copies.wCount, copies.w, dw);
  if (dBias)
    DPC_CUDA_CHECK(cudnnConvolutionBackwardBias(handle, &kOne, p.yFloat, dy,
                                                &kZero, p.bias, dBias));
}

} // namespace

} // namespace dpc::cuda

namespace dpc::cuda::entries {

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

/// cuDNN's fused convolution + bias + activation needs the bias and takes
/// other algorithms: two calls, the ReLU in place, give the unfused bits.
void runConv2dReluForward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::Conv2dReluForward;
  kernels::Conv2dShape shape = plan::getConv2dShape(call);
  conv2dForward(ctx, shape, Workspace(call.workspace), in(call, X), in(call, W),
                in(call, Bias), out(call, Y));
  activationForward(ctx.getStream(), Activation::Relu,
                    call.result(Y).getNumElements(), out(call, Y),
                    out(call, Y));
}

} // namespace dpc::cuda::entries
