//===- FuseKernels.cpp - one kernel call where the plan made several ------===//
//
// Runs on planned `exec` steps. A Conv2dForward whose output only the very
// next kernel of the step reads, a ReluForward, becomes one
// Conv2dReluForward that writes the ReLU's buffer: oneDNN applies the ReLU
// as the convolution stores its output (a post-op), so the activation is
// written once instead of written, read and written again. The backward
// pass is unchanged: ReluBackward reads the ReLU's output, and the
// convolution's gradients read its input.
//
// The arena is already planned, so a fusion must not make a buffer live
// where the planner let another one use its bytes: the ReLU's output now
// is written at the convolution, so it must not share bytes with the
// convolution's inputs or workspace (which may die there). The
// convolution's own output buffer goes away; the arena keeps its size.
//
//===----------------------------------------------------------------------===//

#include "codegen/Passes.h"
#include "ir/exec/ExecOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLExtras.h"

#include <optional>

namespace dpc {
#define GEN_PASS_DEF_FUSEEXECKERNELS
#include "codegen/Passes.h.inc"
} // namespace dpc

using namespace mlir;
using namespace dpc;
namespace ex = dpc::exec;

namespace {

/// The arena bytes [begin, end) a buffer occupies at the step's compiled
/// batch, or none when it is not in the arena (an input, training state).
std::optional<std::pair<int64_t, int64_t>> getArenaBytes(Value buffer,
                                                         int64_t batch) {
  while (auto view = buffer.getDefiningOp<ex::ViewOp>())
    buffer = view.getSource();
  auto arena = buffer.getDefiningOp<ex::ArenaOp>();
  if (!arena)
    return std::nullopt;
  auto type = cast<MemRefType>(arena.getBuffer().getType());
  int64_t bytes = std::max<int64_t>(1, type.getElementTypeBitWidth() / 8);
  for (int64_t dim : type.getShape())
    bytes *= ShapedType::isDynamic(dim) ? batch : dim;
  int64_t begin = static_cast<int64_t>(arena.getOffset());
  return std::make_pair(begin, begin + bytes);
}

bool overlap(std::optional<std::pair<int64_t, int64_t>> a,
             std::optional<std::pair<int64_t, int64_t>> b) {
  return a && b && a->first < b->second && b->first < a->second;
}

/// The kernel after `op` in its step, skipping the buffer definitions.
ex::KernelOp getNextKernel(Operation *op) {
  for (Operation *next = op->getNextNode(); next; next = next->getNextNode()) {
    if (auto kernel = dyn_cast<ex::KernelOp>(next))
      return kernel;
    if (!isa<ex::ArenaOp, ex::ViewOp, ex::InputOp, ex::StateOp>(next))
      return nullptr;
  }
  return nullptr;
}

/// Where a fused Conv2dReluForward may write, if anywhere.
enum class ConvReluTarget { None, ReluBuffer, ConvBuffer };

ConvReluTarget getConvReluTarget(ex::KernelOp conv, ex::KernelOp relu,
                                 int64_t batch) {
  if (conv.getOuts().size() != 1 || relu.getIns().size() != 1 ||
      relu.getIns()[0] != conv.getOuts()[0] || relu.getOuts().size() != 1)
    return ConvReluTarget::None;
  // Same stream, and no event between the two (the fused call signals what
  // the ReLU signalled).
  if (conv->getAttr("stream") != relu->getAttr("stream") ||
      conv->hasAttr("signal") || relu->hasAttr("wait") ||
      conv->hasAttr("remat") != relu->hasAttr("remat"))
    return ConvReluTarget::None;
  Value convOut = conv.getOuts()[0], reluOut = relu.getOuts()[0];
  // Training: ReluBackward reads the convolution's output as its Y, which
  // tells the same signs after the ReLU. If nothing else needs the
  // pre-activation, the fused call writes there, and the ReLU's readers,
  // all before the convolution output's last reader (so within its planned
  // life), read it instead.
  Operation *lastUse = conv;
  bool onlyRelus = true, readBackward = false;
  for (OpOperand &use : convOut.getUses()) {
    Operation *user = use.getOwner();
    auto kernel = dyn_cast<ex::KernelOp>(user);
    bool isReluY = kernel && kernel.getKernel() == "ReluBackward" &&
                   use.getOperandNumber() == 0;
    if (user != conv && user != relu && !isReluY)
      onlyRelus = false;
    readBackward |= isReluY;
    if (lastUse->isBeforeInBlock(user))
      lastUse = user;
  }
  if (!onlyRelus)
    return ConvReluTarget::None;
  bool covered = llvm::all_of(reluOut.getUsers(), [&](Operation *user) {
    return user == lastUse || user->isBeforeInBlock(lastUse);
  });
  if (lastUse != relu && covered)
    return ConvReluTarget::ConvBuffer;
  if (readBackward)
    return ConvReluTarget::None;
  // Inference: the fused call writes the ReLU's buffer, which is then live
  // from the convolution on, so it must not share bytes with what the
  // convolution reads (that may die there).
  auto output = getArenaBytes(reluOut, batch);
  for (Value read : conv.getIns())
    if (overlap(output, getArenaBytes(read, batch)))
      return ConvReluTarget::None;
  if (Value workspace = conv.getWorkspace())
    if (overlap(output, getArenaBytes(workspace, batch)))
      return ConvReluTarget::None;
  return ConvReluTarget::ReluBuffer;
}

void fuseConvRelu(ex::KernelOp conv, ex::KernelOp relu, ConvReluTarget target) {
  Value convOut = conv.getOuts()[0], reluOut = relu.getOuts()[0];
  Value output = target == ConvReluTarget::ConvBuffer ? convOut : reluOut;
  OpBuilder builder(relu);
  auto fused = builder.create<ex::KernelOp>(conv.getLoc(), "Conv2dReluForward",
                                            conv.getIns(), ValueRange{output},
                                            conv.getWorkspace());
  for (NamedAttribute attr : conv->getDiscardableAttrs())
    fused->setAttr(attr.getName(), attr.getValue());
  if (Attribute signal = relu->getAttr("signal"))
    fused->setAttr("signal", signal);
  relu.erase();
  conv.erase();
  Value unused = convOut;
  if (target == ConvReluTarget::ConvBuffer) {
    reluOut.replaceAllUsesWith(convOut);
    unused = reluOut;
  }
  if (Operation *buffer = unused.getDefiningOp(); buffer && buffer->use_empty())
    buffer->erase();
}

struct FuseExecKernelsPass
    : public dpc::impl::FuseExecKernelsBase<FuseExecKernelsPass> {
  void runOnOperation() override {
    for (auto step : getOperation().getOps<ex::StepOp>()) {
      int64_t batch = static_cast<int64_t>(step.getBatch());
      SmallVector<ex::KernelOp> convs;
      step.getBody().walk([&](ex::KernelOp op) {
        if (op.getKernel() == "Conv2dForward")
          convs.push_back(op);
      });
      for (ex::KernelOp conv : convs) {
        ex::KernelOp relu = getNextKernel(conv);
        if (!relu || relu.getKernel() != "ReluForward")
          continue;
        ConvReluTarget target = getConvReluTarget(conv, relu, batch);
        if (target != ConvReluTarget::None)
          fuseConvRelu(conv, relu, target);
      }
    }
  }
};

} // namespace
