//===- KernelAttrs.h - a kernel call's attributes, decoded ------*- C++ -*-===//
//
// What an Instruction's attribute table (Plan.fbs's KernelAttrs) and its
// scheduling fields say, as the values the kernels take: the precision and
// cast slot, a convolution's algorithm, batch norm's epsilon and momentum,
// the optimizers' hyper-parameters, fill and pad values, the all-reduce op.
// A missing table gives the defaults (Kernels.def says which kernels must
// have one); a value no kernel could run with throws a ShapeError
// (KernelArgs.h).
//
//===----------------------------------------------------------------------===//

#ifndef DPC_RUNTIME_ABI_KERNELATTRS_H
#define DPC_RUNTIME_ABI_KERNELATTRS_H

#include "runtime/abi/KernelCall.h"
#include "runtime/abi/Precision.h"
#include "runtime/abi/shapes/ConvShapes.h"
#include "runtime/abi/shapes/NormShapes.h"
#include "runtime/abi/shapes/OptimizerShapes.h"

#include <cstdint>
#include <vector>

namespace dpc::plan {

/// What a convolution or matrix multiply computes in (Instruction.precision).
Precision getPrecision(const KernelCall &call);
/// Where a bf16 call keeps or finds its shared operand's copy
/// (Instruction.cast_slot, SharedCast.h); none for an f32 call.
CastSlot getCastSlot(const KernelCall &call);
/// A convolution call's algorithm (Instruction.algorithm; none is direct).
ConvAlgorithm getConvAlgorithm(const KernelCall &call);
BatchNormParams getBatchNormParams(const KernelCall &call);
float getPadValue(const KernelCall &call);
SgdParams getSgdParams(const KernelCall &call);
AdamWParams getAdamWParams(const KernelCall &call);
double getFillValue(const KernelCall &call);
/// AllReduce: every operand present and of a reducible dtype; the op
/// (Sum without attributes).
ReduceOp getAllReduceOp(const KernelCall &call);
/// AllGather and ReduceScatter: one present whole per part, of its dtype
/// (a reducible one for ReduceScatter); for each, the element count of
/// every rank's part (the attributes' sizes), summing to the whole's. The
/// number of ranks is sizes.size() / parts.
std::vector<std::vector<int64_t>> getShardSizes(const KernelCall &call);
/// ReduceScatter's reduction (Sum without attributes).
ReduceOp getReduceScatterOp(const KernelCall &call);

namespace args {

/// The values of an attribute list (empty for a missing one).
std::vector<int64_t> attrList(const flatbuffers::Vector<int64_t> *values);

/// One value per spatial axis from an attribute list of as many values as
/// `fallback` has, or none (then `fallback`).
std::vector<int64_t> axesAttr(const flatbuffers::Vector<int64_t> *values,
                              const char *name, std::vector<int64_t> fallback);

/// Padding of `axes` spatial axes: every axis's start, then its end, from a
/// list of 2 * axes values, `axes` (symmetric) or none (zeros).
std::vector<int64_t> paddingAxesAttr(const flatbuffers::Vector<int64_t> *values,
                                     size_t axes);

/// A pair [h, w] from an attribute list of `size` 0 (default) or 2.
void pairAttr(const flatbuffers::Vector<int64_t> *values, const char *name,
              int64_t fallbackH, int64_t fallbackW, int64_t &h, int64_t &w);

/// Padding [top, left, bottom, right], [h, w] or empty.
void paddingAttr(const flatbuffers::Vector<int64_t> *values, int64_t &top,
                 int64_t &left, int64_t &bottom, int64_t &right);

} // namespace args
} // namespace dpc::plan

#endif // DPC_RUNTIME_ABI_KERNELATTRS_H
