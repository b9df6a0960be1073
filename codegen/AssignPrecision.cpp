//===- AssignPrecision.cpp - precision and algorithm per kernel call ------===//
//
// Runs on planned `exec` steps and chooses how each convolution and matmul
// call computes: `precision` f32 or bf16 on the calls that may compute in
// bf16 (Kernels.def's kMixedPrecision), and `algorithm` direct or Winograd on
// the CPU's f32 convolutions. The buffers stay f32:
// a bf16 call rounds its operands as it reads them and accumulates and
// writes in f32, so the arena plan, master weights and optimizer state are
// untouched and a cast is never needed between calls.
//
// `auto` decides per call, i.e. per layer and per pass (forward,
// backward-data, backward-weights), from rules fitted to oneDNN 2.6 on an
// AVX512-BF16 CPU (tools/bench/PrecisionBench.cpp; the numbers are in the
// rules' comments: f32 ms / bf16 ms at batch 256, rounding included). The
// precision rules read only the per-sample geometry, never the batch, so
// that every replica of a data-parallel step -- whatever its share of the
// batch -- chooses the same and the replicas stay equivalent. A cost file of
// measured times (`dpc calibrate --kernels`) overrides them for the calls
// it has, by the same batch-free key.
//
// Winograd F(4x4, 3x3) (oneDNN's, AVX-512, f32 only) needs 2.25x fewer
// multiplies than the direct algorithm on 3x3 stride-1 convolutions, in
// every pass; its rounding error is 2-5x direct's (1e-6 of the output's
// range against 3e-7: runtime/kernels/test/ConvAlgorithmTest.cpp), far
// below bf16's. But it transforms the weights on every call, a cost the
// batch does not share: it pays only with enough rows (images times 4x4
// output tiles) per matrix product. `conv-algorithm=auto` chooses it per
// call, i.e. per layer and per pass, where it applies and pays by these
// rules (`dpc-bench-precision --winograd --cpu-time`, one thread, AVX-512
// without AMX, activations nChw16c; direct ms / Winograd ms):
//   forward and backward-data: both channel counts >= 64 and >= 64 rows
//     (64->64 on 28x28 1.45x-1.55x at any batch; 128->128 on 14x14 1.1x at
//     128 rows, 1.5x at 1024; 256->256 on 7x7 0.8x at 32 rows, 1.05x at 64,
//     1.3x at 128, 1.9x at 256; 512->512 on 4x4 0.5x-0.6x at 8-16 rows,
//     1x at 32, 1.3x-1.5x at 64, 2.1x-2.6x at 256); fewer channels gain
//     nothing (16->16 and 32->32 on 28x28: 0.7x-1.05x);
//   backward-weights: both channel counts >= 128 and >= 16 rows (128->128
//     on 14x14 1.2x-1.5x, 256->256 on 7x7 1.35x-1.8x, 512->512 on 4x4 0.7x
//     at 8 rows, 1.2x at 16, 1.8x-3.2x from 32); at 64 channels it wins on
//     small batches and loses on large ones (64->64 on 28x28 1.2x-1.55x at
//     8-32 images, 0.82x-0.9x at 64-256), so the rules leave it direct.
// The rows count a step's global batch, the sum of its replicas' shares:
// every replica, and a one-device plan of the same batch, choose alike,
// and N devices still train like one. With `precision=auto` a call the
// bf16 rules pick stays bf16 (1.3x-1.6x over f32 Winograd on 64 and 128
// channels), except forward and backward-data with >= 256 channels on
// enough rows, where Winograd's gain grows past bf16's (winogradBeatsBf16);
// a cost file compares all three times.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "codegen/lowering/KernelBuilder.h"
#include "ir/exec/ExecOps.h"
#include "ir/exec/KernelAttributes.h"
#include "runtime/abi/KernelCostKey.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"

#include <functional>
#include <numeric>

namespace dpc {
#define GEN_PASS_DEF_ASSIGNKERNELPRECISION
#include "codegen/Passes.h.inc"
} // namespace dpc

using namespace mlir;
using namespace dpc;
namespace ex = dpc::exec;
using plan::Kernel;
namespace roles = plan::roles;

namespace {

ArrayRef<int64_t> dimsOf(Value buffer) {
  return cast<MemRefType>(buffer.getType()).getShape();
}

bool isConvolution(Kernel kernel) {
  return kernel == Kernel::Conv2dForward ||
         kernel == Kernel::Conv2dReluForward ||
         kernel == Kernel::Conv2dBackwardData ||
         kernel == Kernel::Conv2dBackwardWeights;
}

/// The weights [k, c / groups, (t,) r, s] of a convolution call: the
/// result of backward-weights, else its operand W.
ArrayRef<int64_t> getConvWeights(Kernel kernel, ex::KernelOp op) {
  static_assert(
      samePosition(roles::Conv2dForward::W, roles::Conv2dReluForward::W) &&
      samePosition(roles::Conv2dForward::W, roles::Conv2dBackwardData::W));
  if (kernel == Kernel::Conv2dBackwardWeights)
    return dimsOf(op.getOuts()[roles::Conv2dBackwardWeights::DW]);
  return dimsOf(op.getIns()[roles::Conv2dForward::W]);
}

/// Whether a convolution pass is faster in bf16. Forward pays off once
/// each output sums enough products (c * r * s >= 256: 64->64 3x3 1.55x,
/// 128->256 3x3 2.7x; 1->64 3x3 0.64x, 64->128 1x1 0.96x). Backward-data
/// wins everywhere measured (1.3x-4.2x). Backward-weights loses on strided
/// 3x3 and larger kernels (64->128 s2 0.02x-0.38x, 256->512 s2 0.03x-0.55x),
/// on few output channels (1->6 5x5 0.04x) and on small outputs (512->512
/// on 4x4: 0.11x-1.06x, 256->512 1x1 on 4x4 0.48x), and wins otherwise
/// (6->16 5x5 on 10x10 6.8x, 128->128 on 14x14 1.6x-1.9x, 64->128 1x1 s2
/// 1.2x-1.4x).
bool convPrefersBf16(Kernel kernel, ex::KernelOp op) {
  // The products per output, and the output's spatial extent, count a 3-D
  // convolution's depth too.
  auto product = [](ArrayRef<int64_t> dims) {
    return std::accumulate(dims.begin(), dims.end(), int64_t(1),
                           std::multiplies<int64_t>());
  };
  ArrayRef<int64_t> weights = getConvWeights(kernel, op);
  int64_t k = weights[0], reduction = product(weights.drop_front());
  bool pointwise = product(weights.drop_front(2)) == 1;
  bool strided = false;
  if (auto stride = op->getAttrOfType<DenseI64ArrayAttr>("stride"))
    strided =
        llvm::any_of(stride.asArrayRef(), [](int64_t s) { return s != 1; });
  if (kernel == Kernel::Conv2dBackwardData)
    return true;
  if (kernel == Kernel::Conv2dBackwardWeights) {
    // [n, k, (outD,) outH, outW]
    ArrayRef<int64_t> dy =
        dimsOf(op.getIns()[roles::Conv2dBackwardWeights::DY]);
    return k >= 16 && (!strided || pointwise) &&
           product(dy.drop_front(2)) >= 49;
  }
  return reduction >= 256;
}

/// Whether a matrix multiply is faster in bf16: when both of its weight's
/// dims are wide (784x256 1.1x-1.3x, 768x768 1.3x-2x); narrow layers lose
/// to rounding their operands (400x120 0.5x-0.65x, 512x10 0.2x).
bool matmulPrefersBf16(Kernel kernel, ex::KernelOp op) {
  // The dims other than the rows: the weight [out, in] of a linear layer
  // (the result DW of its weight gradient), b [k, m] of a matmul, c [k, m]
  // of MatmulTransposedA.
  static_assert(
      samePosition(roles::LinearForward::W, roles::LinearReluForward::W) &&
      samePosition(roles::LinearForward::W, roles::LinearBackwardData::W) &&
      samePosition(roles::LinearForward::W, roles::MatmulForward::B) &&
      samePosition(roles::MatmulForward::B, roles::MatmulBackward::B));
  static_assert(samePosition(roles::LinearBackwardWeights::DW,
                             roles::MatmulTransposedA::C));
  ArrayRef<int64_t> dims;
  if (kernel == Kernel::LinearBackwardWeights ||
      kernel == Kernel::MatmulTransposedA)
    dims = dimsOf(op.getOuts()[roles::MatmulTransposedA::C]);
  else
    dims = dimsOf(op.getIns()[roles::MatmulForward::B]);
  if (dims.size() != 2 || ShapedType::isDynamic(dims[0]) ||
      ShapedType::isDynamic(dims[1]))
    return false;
  return dims[0] >= 256 && dims[1] >= 256;
}

/// Whether oneDNN has a Winograd kernel for a convolution call: 3x3, stride
/// 1, dense, one group (f32 on an AVX-512 CPU; the runtime runs the call
/// direct where the CPU has none).
bool winogradApplies(Kernel kernel, ex::KernelOp op) {
  if (!isConvolution(kernel))
    return false;
  ArrayRef<int64_t> weights = getConvWeights(kernel, op);
  auto ones = [&](StringRef name) {
    auto attr = op->getAttrOfType<DenseI64ArrayAttr>(name);
    return !attr ||
           llvm::all_of(attr.asArrayRef(), [](int64_t v) { return v == 1; });
  };
  auto groups = op->getAttrOfType<IntegerAttr>("groups");
  return weights.size() == 4 && weights[2] == 3 && weights[3] == 3 &&
         ones("stride") && ones("dilation") &&
         (!groups || groups.getInt() == 1);
}

/// The rows of a convolution call's Winograd matrix products: `batch`
/// images times the 4x4 tiles of one output (y, or dy for the backward
/// passes: [n, k, outH, outW]).
int64_t winogradRows(Kernel kernel, ex::KernelOp op, int64_t batch) {
  static_assert(
      samePosition(roles::Conv2dForward::Y, roles::Conv2dReluForward::Y));
  ArrayRef<int64_t> y =
      kernel == Kernel::Conv2dBackwardData
          ? dimsOf(op.getIns()[roles::Conv2dBackwardData::DY])
      : kernel == Kernel::Conv2dBackwardWeights
          ? dimsOf(op.getIns()[roles::Conv2dBackwardWeights::DY])
          : dimsOf(op.getOuts()[roles::Conv2dForward::Y]);
  return batch * llvm::divideCeil(y[2], 4) * llvm::divideCeil(y[3], 4);
}

/// Whether Winograd pays off without measured times: per pass, from the
/// channel counts and the rows of `batch` images (see the file comment).
bool winogradPays(Kernel kernel, ex::KernelOp op, int64_t batch) {
  ArrayRef<int64_t> weights = getConvWeights(kernel, op);
  int64_t channels = std::min(weights[0], weights[1]);
  int64_t rows = winogradRows(kernel, op, batch);
  if (kernel == Kernel::Conv2dBackwardWeights)
    return channels >= 128 && rows >= 16;
  return channels >= 64 && rows >= 64;
}

/// Whether f32 Winograd beats bf16 without measured times, on a call both
/// apply to. Winograd's matrix products grow with the channels and its
/// weight transform is shared by more rows, while oneDNN 2.6's bf16 direct
/// kernels lose speed on small images; so with >= 256 channels and enough
/// rows, forward and backward-data are faster in f32 Winograd
/// (`dpc-bench-precision --cpu-time`, one thread, nChw16c; bf16 ms / f32
/// Winograd ms): 256->256 on 7x7 forward 0.90x at 256 rows, 1.19x at 1024;
/// backward-data 1.24x at 256 rows, 1.32x at 1024; 512->512 on 4x4
/// forward 0.52x at 64 rows, 1.05x at 256; backward-data 0.82x at 64 rows,
/// 1.41x at 256. At 128 channels bf16 wins at any batch (128->128 on 14x14
/// forward 1.6x, backward-data 1.3x-1.4x in bf16's favour), and
/// backward-weights is level at best (256->256 on 7x7 1.0x at 1024 rows).
bool winogradBeatsBf16(Kernel kernel, ex::KernelOp op, int64_t batch) {
  if (kernel == Kernel::Conv2dBackwardWeights)
    return false;
  ArrayRef<int64_t> weights = getConvWeights(kernel, op);
  int64_t rows = winogradRows(kernel, op, batch);
  return std::min(weights[0], weights[1]) >= 256 &&
         rows >= (kernel == Kernel::Conv2dBackwardData ? 256 : 512);
}

/// A convolution lowered for cuDNN (its bf16 calls cast to bf16 copies in
/// their workspace, runtime/cuda/CudaConvolution.cpp).
bool onCuda(ex::KernelOp op) {
  auto algorithm = op->getAttrOfType<StringAttr>("algorithm");
  return algorithm && algorithm.getValue() == "cudnn_heuristic";
}

bool prefersBf16(Kernel kernel, ex::KernelOp op) {
  if (isConvolution(kernel))
    return convPrefersBf16(kernel, op);
  return matmulPrefersBf16(kernel, op);
}

/// A call's measured times in microseconds: f32 and bf16 with the direct
/// algorithm, and f32 Winograd where it applies.
struct KernelCosts {
  double f32 = 0, bf16 = 0;
  std::optional<double> winograd;
};

/// Times by cost key (runtime/plan/KernelCostKey.h).
using CostTable = llvm::StringMap<KernelCosts>;

/// Reads `path`, a `dpc calibrate --kernels` file: {"kernels": {KEY:
/// {"f32": us, "bf16": us[, "f32_winograd": us]}}}; an error naming the
/// file otherwise.
FailureOr<CostTable> readCostTable(StringRef path, Operation *where) {
  auto fail = [&](const Twine &problem) {
    where->emitError() << path << ": " << problem;
    return failure();
  };
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
  if (!file)
    return fail("cannot read the cost file: " + file.getError().message());
  llvm::Expected<llvm::json::Value> root =
      llvm::json::parse((*file)->getBuffer());
  if (!root)
    return fail("not JSON: " + llvm::toString(root.takeError()));
  const llvm::json::Object *kernels =
      root->getAsObject() ? root->getAsObject()->getObject("kernels") : nullptr;
  if (!kernels)
    return fail("expected a \"kernels\" object of key: {\"f32\": us, "
                "\"bf16\": us} (dpc calibrate --kernels)");
  CostTable table;
  for (const auto &[key, value] : *kernels) {
    const llvm::json::Object *times = value.getAsObject();
    std::optional<double> f32 = times ? times->getNumber("f32") : std::nullopt;
    std::optional<double> bf16 =
        times ? times->getNumber("bf16") : std::nullopt;
    std::optional<double> winograd =
        times ? times->getNumber("f32_winograd") : std::nullopt;
    if (!f32 || !bf16 || *f32 <= 0 || *bf16 <= 0 ||
        (winograd && *winograd <= 0) ||
        (times && times->get("f32_winograd") && !winograd))
      return fail("kernel '" + key.str() +
                  "' needs positive \"f32\" and \"bf16\" times (and "
                  "\"f32_winograd\", if given)");
    table[key.str()] = {*f32, *bf16, winograd};
  }
  return table;
}

/// The cost key of `op`, as the runtime computes it from the plan.
FailureOr<std::string> getCostKey(ex::KernelOp op, plan::Kernel kernel) {
  auto dims = [](ValueRange buffers) {
    std::vector<std::vector<int64_t>> all;
    for (Value buffer : buffers) {
      std::vector<int64_t> shape(dimsOf(buffer));
      for (int64_t &dim : shape)
        if (ShapedType::isDynamic(dim))
          dim = -1; // the batch
      all.push_back(std::move(shape));
    }
    return all;
  };
  FailureOr<plan::KernelAttrsUnion> attrs =
      ex::convertKernelAttrs(op, *plan::getKernelSignature(kernel));
  if (failed(attrs))
    return failure();
  return plan::getKernelCostKey(kernel, dims(op.getIns()), dims(op.getOuts()),
                                attrs->AsConv2dAttrs());
}

struct AssignKernelPrecisionPass
    : public dpc::impl::AssignKernelPrecisionBase<AssignKernelPrecisionPass> {
  using Base::Base;

  /// How one call computes.
  struct Choice {
    bool bf16 = false;
    bool winograd = false;
  };

  /// The choice for `op` among the variants the options allow: by its
  /// measured times where `measured` has them, else by the built-in rules.
  FailureOr<Choice> choose(ex::KernelOp op, Kernel kernel,
                           const CostTable &measured, int64_t batch) {
    bool mayWinograd =
        convAlgorithm != "direct" && !onCuda(op) && winogradApplies(kernel, op);
    if (precision == "bf16")
      return Choice{/*bf16=*/true, /*winograd=*/false};
    if (mayWinograd && convAlgorithm == "winograd")
      return Choice{false, true};
    bool mayBf16 = precision == "auto";
    if (!measured.empty()) {
      FailureOr<std::string> key = getCostKey(op, kernel);
      if (failed(key))
        return failure();
      auto times = measured.find(*key);
      if (times != measured.end()) {
        const KernelCosts &cost = times->second;
        Choice best;
        double fastest = cost.f32;
        if (mayBf16 && cost.bf16 < fastest)
          best = {true, false}, fastest = cost.bf16;
        if (mayWinograd && cost.winograd && *cost.winograd < fastest)
          best = {false, true};
        return best;
      }
    }
    if (mayBf16 && prefersBf16(kernel, op)) {
      if (mayWinograd && winogradBeatsBf16(kernel, op, batch))
        return Choice{/*bf16=*/false, /*winograd=*/true};
      return Choice{/*bf16=*/true, /*winograd=*/false};
    }
    return Choice{false, mayWinograd && winogradPays(kernel, op, batch)};
  }

  void runOnOperation() override {
    if (precision != "f32" && precision != "bf16" && precision != "auto" &&
        precision != "tf32") {
      getOperation().emitError() << "precision must be f32, bf16, tf32 or "
                                    "auto, got '"
                                 << precision << "'";
      return signalPassFailure();
    }
    if (convAlgorithm != "direct" && convAlgorithm != "winograd" &&
        convAlgorithm != "auto") {
      getOperation().emitError()
          << "conv-algorithm must be direct, winograd or auto, got '"
          << convAlgorithm << "'";
      return signalPassFailure();
    }
    if (precision == "bf16" && convAlgorithm == "winograd") {
      getOperation().emitError()
          << "conv-algorithm=winograd computes in f32 only, but the precision "
             "is bf16";
      return signalPassFailure();
    }
    CostTable measured;
    if (!costs.empty()) {
      FailureOr<CostTable> table = readCostTable(costs, getOperation());
      if (failed(table))
        return signalPassFailure();
      measured = std::move(*table);
    }
    // The rules read each step's global batch, the sum of its replicas':
    // so every replica, and a one-device plan of the same batch, choose
    // alike.
    llvm::StringMap<int64_t> globalBatch;
    for (auto step : getOperation().getOps<ex::StepOp>())
      globalBatch[step.getName()] += step.getBatch();
    Builder b(&getContext());
    WalkResult result = getOperation().walk([&](ex::KernelOp op) {
      std::optional<Kernel> kernel = getKernel(op);
      if (!kernel ||
          !plan::getKernelSignature(*kernel)->has(plan::kMixedPrecision))
        return WalkResult::advance();
      // TF32 is every such call's (CUDA devices: dpc compile refuses
      // others); nothing is chosen.
      if (precision == "tf32") {
        op->setAttr(ex::kPrecisionAttrName, TypeAttr::get(b.getTF32Type()));
        return WalkResult::advance();
      }
      auto step = op->getParentOfType<ex::StepOp>();
      FailureOr<Choice> choice =
          choose(op, *kernel, measured, step ? globalBatch[step.getName()] : 1);
      if (failed(choice))
        return WalkResult::interrupt();
      // The auto rules are the CPU's (oneDNN's timings); on a GPU, a
      // convolution stays f32 under auto until rules measured there exist.
      if (choice->bf16 && onCuda(op) && precision == "auto")
        choice->bf16 = false;
      // f32 plans keep the calls as they were, but for the algorithm.
      if (precision != "f32")
        op->setAttr(
            ex::kPrecisionAttrName,
            TypeAttr::get(choice->bf16 ? b.getBF16Type() : b.getF32Type()));
      if (choice->winograd)
        op->setAttr("algorithm", b.getStringAttr("winograd"));
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
