//===- Precision.h - What a matmul or convolution computes in ---*- C++ -*-===//
//
// The compute type of one convolution or matrix-multiply call, chosen at
// compile time per layer and per pass (the plan's Instruction.precision).
// Operands and results stay f32 in memory; BF16 rounds the operands to
// bfloat16 as the kernel reads them and accumulates in f32 (what
// torch.autocast does), so master weights, optimizer state and everything
// outside these kernels stay f32.
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_ABI_PRECISION_H
#define DPC_RUNTIME_ABI_PRECISION_H

#include <cstdint>

namespace dpc::plan {

/// TF32: f32 operands rounded to TensorFloat-32 (10 mantissa bits) by a
/// GPU's tensor cores, accumulated in f32 (PyTorch's allow_tf32); CUDA only.
enum class Precision : uint8_t { F32, BF16, TF32 };

/// Where a bf16 call keeps or finds the bf16 copy of its shared operand (a
/// linear layer's X, a convolution's DY: the plan's cast slot,
/// runtime/abi/SharedCast.h): slot 0, the call casts it for itself;
/// otherwise it casts it into the context's slot `slot`, or with `reuse`
/// reads the copy an earlier call of the step left there.
struct CastSlot {
  int slot = 0;
  bool reuse = false;
};

} // namespace dpc::plan

#endif // DPC_RUNTIME_ABI_PRECISION_H
