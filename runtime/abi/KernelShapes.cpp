//===- KernelShapes.cpp - a kernel call's check, by shape family ----------===//

#include "runtime/abi/KernelShapes.h"
#include "runtime/abi/KernelSignature.h"

#include <string>

namespace dpc::plan {
using args::fail;

//===----------------------------------------------------------------------===//
// The dispatch: each kernel's shape check, as Kernels.def names it
//===----------------------------------------------------------------------===//

namespace {
void checkConv2d(const KernelCall &call) { getConv2dShape(call); }
void checkBatchNorm(const KernelCall &call) {
  getBatchNormShape(call);
  getBatchNormParams(call);
}
void checkPool2d(const KernelCall &call) { getPool2dShape(call); }
void checkGlobalAvgPool(const KernelCall &call) { getGlobalAvgPoolShape(call); }
void checkPad2d(const KernelCall &call) { getPad2dShape(call); }
void checkLinear(const KernelCall &call) { getLinearShape(call); }
void checkMatmul(const KernelCall &call) { getMatmulShape(call); }
void checkBatchMatmul(const KernelCall &call) { getBatchMatmulShape(call); }
void checkElementwise(const KernelCall &call) { getElementwiseSize(call); }
void checkInputActivation(const KernelCall &call) {
  getInputActivationShape(call);
}
void checkBroadcast(const KernelCall &call) { getBroadcastShape(call); }
void checkDropout(const KernelCall &call) { getDropoutShape(call); }
void checkLayerNorm(const KernelCall &call) { getLayerNormShape(call); }
void checkEmbedding(const KernelCall &call) { getEmbeddingShape(call); }
void checkRows(const KernelCall &call) { getRowsShape(call); }
void checkLoss(const KernelCall &call) { getLossShape(call); }
void checkTranspose(const KernelCall &call) { getTransposeShape(call); }
void checkPermute(const KernelCall &call) { getPermuteShape(call); }
void checkConcat(const KernelCall &call) { getJoinShape(call); }
void checkReduce(const KernelCall &call) { getReduceShape(call); }
void checkReduceBackward(const KernelCall &call) {
  getReduceBackwardShape(call);
}
void checkOptimizer(const KernelCall &call) { getOptimizerSize(call); }
void checkAllReduce(const KernelCall &call) { getAllReduceOp(call); }
void checkSharded(const KernelCall &call) { getShardSizes(call); }
} // namespace

void checkKernelCall(const KernelCall &call) {
  // Only convolutions and matrix multiplies have a precision to choose.
  if (call.instruction && call.instruction->precision() != DType::F32) {
    const KernelSignature *signature = getKernelSignature(call.kernel);
    if (signature && !signature->has(kMixedPrecision))
      fail(std::string("precision ") +
           EnumNameDType(call.instruction->precision()) + " on " +
           signature->name + ", which computes in f32 only");
  }
  switch (call.kernel) {
#define DPC_KERNEL(Name, Shape, ...)                                           \
  case Kernel::Name:                                                           \
    return check##Shape(call);
#include "runtime/abi/Kernels.def"
  }
  fail(std::string("kernel ") + std::to_string(static_cast<int>(call.kernel)) +
       " is not supported by this runtime");
}

std::string findKernelCallError(const KernelCall &call) {
  try {
    checkKernelCall(call);
  } catch (const ShapeError &error) {
    return error.what();
  }
  return "";
}

} // namespace dpc::plan
