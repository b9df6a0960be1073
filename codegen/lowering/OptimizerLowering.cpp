//===- OptimizerLowering.cpp - updates of the training state to kernels ---===//
//
// The optimizer steps and gradient accumulation write the training state
// in place: the kernels have no results, and the updated values live in
// the buffers of the values they replace.
//
//===----------------------------------------------------------------------===//

#include "codegen/lowering/KernelLowering.h"
#include "ir/nn/NNOps.h"

using namespace mlir;
using namespace dpc;
using plan::Kernel;
namespace roles = plan::roles;

namespace dpc {

template <>
LogicalResult lowerToKernels(nn::AccumulateOp op, KernelBuilder &b) {
  // In place: the accumulator is optimizer state.
  Value accumulator = b.buffer(op.getAccumulator());
  Value value = b.buffer(op.getValue());
  if (op.getFirst()) {
    using namespace roles::Copy;
    b.kernel(Kernel::Copy, KernelBuilder::orderByRole({{X, value}}),
             {accumulator});
  } else {
    using namespace roles::AddForward;
    b.kernel(Kernel::AddForward,
             KernelBuilder::orderByRole({{A, accumulator}, {B, value}}),
             {accumulator});
  }
  return b.inPlace(op.getResult(), op.getAccumulator());
}

template <> LogicalResult lowerToKernels(nn::SgdUpdateOp op, KernelBuilder &b) {
  using namespace roles::SgdUpdate;
  b.kernel(Kernel::SgdUpdate,
           b.buffersByRole({{Param, op.getParam()},
                            {Grad, op.getGrad()},
                            {Lr, op.getLr()},
                            {MomentumBuffer, op.getMomentumBuffer()}}),
           {},
           {b.attr("momentum", op.getMomentumAttr()),
            b.attr("dampening", op.getDampeningAttr()),
            b.attr("nesterov", op.getNesterovAttr()),
            b.attr("weight_decay", op.getWeightDecayAttr())});
  if (failed(b.inPlace(op.getNewParam(), op.getParam())))
    return failure();
  if (op.getMomentumBuffer())
    return b.inPlace(op.getNewMomentumBuffer(), op.getMomentumBuffer());
  return success();
}

template <>
LogicalResult lowerToKernels(nn::AdamWUpdateOp op, KernelBuilder &b) {
  using namespace roles::AdamWUpdate;
  b.kernel(Kernel::AdamWUpdate,
           b.buffersByRole({{Param, op.getParam()},
                            {Grad, op.getGrad()},
                            {ExpAvg, op.getExpAvg()},
                            {ExpAvgSq, op.getExpAvgSq()},
                            {Lr, op.getLr()},
                            {Step, op.getStep()}}),
           {},
           {b.attr("beta1", op.getBeta1Attr()),
            b.attr("beta2", op.getBeta2Attr()), b.attr("eps", op.getEpsAttr()),
            b.attr("weight_decay", op.getWeightDecayAttr())});
  if (failed(b.inPlace(op.getNewParam(), op.getParam())) ||
      failed(b.inPlace(op.getNewExpAvg(), op.getExpAvg())) ||
      failed(b.inPlace(op.getNewExpAvgSq(), op.getExpAvgSq())))
    return failure();
  return success();
}

} // namespace dpc

void dpc::attachOptimizerLowerings(MLIRContext &context) {
  attachKernelLowerings<nn::AccumulateOp, nn::SgdUpdateOp, nn::AdamWUpdateOp>(
      context);
}
