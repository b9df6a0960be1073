//===- RematSupport.cpp - op costs and step structure for remat ----------===//

#include "passes/RematSupport.h"

#include "ir/nn/NNOps.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace dpc;

static int64_t numElements(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.hasStaticShape() ? type.getNumElements() : 0;
}

/// A filter's elements per output channel: its dims from 1 on.
static int64_t filterTaps(Value filter) {
  auto type = cast<RankedTensorType>(filter.getType());
  int64_t taps = 1;
  for (int64_t dim : type.getShape().drop_front())
    taps *= dim;
  return taps;
}

int64_t dpc::estimateFlops(Operation *op) {
  if (op->getName().getDialectNamespace() != "nn" || op->getNumResults() == 0)
    return 0;
  int64_t out = numElements(op->getResult(0));
  return TypeSwitch<Operation *, int64_t>(op)
      .Case([&](nn::Conv2dOp o) {
        // Every output element: C_in / groups * kH * kW (* kD) multiply-adds.
        return 2 * out * filterTaps(o.getFilter());
      })
      .Case([&](nn::ConvTranspose2dOp o) {
        // Every input element: C_out / groups * kH * kW (* kD) multiply-adds.
        return 2 * numElements(o.getInput()) * filterTaps(o.getFilter());
      })
      .Case([&](nn::LinearOp o) {
        auto input = cast<RankedTensorType>(o->getOperand(0).getType());
        return 2 * out * input.getShape().back();
      })
      .Case([&](nn::MatmulOp o) {
        auto lhs = cast<RankedTensorType>(o.getLhs().getType());
        return 2 * out * lhs.getShape().back();
      })
      // Statistics (two passes) and the normalization (two per element).
      .Case<nn::BatchNormTrainOp, nn::BatchNormApplyOp>(
          [&](auto o) { return 6 * numElements(o.getInput()); })
      .Case([&](nn::BatchNormOp o) { return 2 * out; })
      .Case(
          [&](nn::BatchNormStatsOp o) { return 3 * numElements(o.getInput()); })
      .Case<nn::MaxPool2dOp, nn::AvgPool2dOp>([&](auto o) {
        ArrayRef<int64_t> kernel = o.getKernelSize();
        return out * kernel[0] * kernel[1];
      })
      .Case([&](nn::GlobalAvgPool2dOp o) { return numElements(o.getInput()); })
      .Case<nn::FlattenOp, nn::ReshapeOp, nn::ConstantOp>(
          [](Operation *) { return int64_t(0); })
      // Elementwise and the rest: about one operation per output element.
      .Default([&](Operation *) { return out; });
}

bool dpc::inReplica(Operation *op, int64_t replica) {
  auto attr = op->getAttrOfType<IntegerAttr>("dist.replica");
  return !attr || attr.getInt() == replica;
}

Operation *dpc::findLossOp(func::FuncOp step, int64_t replica) {
  for (Operation &op : step.getBody().front())
    if (isa<nn::LossOp>(op) && inReplica(&op, replica))
      return &op;
  return nullptr;
}
