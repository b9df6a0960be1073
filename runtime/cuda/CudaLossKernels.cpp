//===- CudaLossKernels.cpp - nn.loss's kernels on CUDA --------------------===//

#include "runtime/cuda/CudaLossKernels.h"
#include "runtime/abi/KernelRoles.h"
#include "runtime/abi/KernelShapes.h"
#include "runtime/cuda/LossKernels.h"

#include <stdexcept>

namespace dpc::cuda {

using plan::KernelCall;

namespace {

const float *optionalScalar(const KernelCall &call, size_t index) {
  return call.operands.size() > index && call.operand(index).present
             ? call.operand(index).f32()
             : nullptr;
}

ScalarType countTypeOf(const plan::TensorArg &arg) {
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
    throw std::runtime_error("a count cannot be stored as this dtype");
  }
}

} // namespace

void runLossForward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::LossForward;
  lossForward(ctx.getStream(), plan::getLossShape(call),
              call.operand(Output).f32(), call.operand(Target).data,
              optionalScalar(call, Divisor), call.result(Loss).f32());
}

void runLossBackward(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::LossBackward;
  lossBackward(ctx.getStream(), plan::getLossShape(call),
               call.operand(Output).f32(), call.operand(Target).data,
               optionalScalar(call, DLoss), optionalScalar(call, Divisor),
               call.result(DOutput).f32());
}

void runLossWeight(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::LossWeight;
  lossWeight(ctx.getStream(), plan::getLossShape(call),
             call.operand(Target).as<int32_t>(), call.result(Weight).f32());
}

void runLossCorrectCount(StreamContext &ctx, const KernelCall &call) {
  using namespace plan::roles::LossCorrectCount;
  lossCorrectCount(ctx.getStream(), plan::getLossShape(call),
                   call.operand(Output).f32(),
                   call.operand(Target).as<int32_t>(), call.result(Count).data,
                   countTypeOf(call.result(Count)));
}

} // namespace dpc::cuda
