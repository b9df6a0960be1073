//===- KernelAttrs.cpp - a kernel call's attributes, decoded --------------===//

#include "runtime/abi/KernelAttrs.h"
#include "runtime/abi/KernelArgs.h"

#include <algorithm>

#include <string>

namespace dpc::plan {
using namespace args;

Precision getPrecision(const KernelCall &call) {
  DType precision =
      call.instruction ? call.instruction->precision() : DType::F32;
  if (precision == DType::BF16)
    return Precision::BF16;
  if (precision == DType::TF32)
    return Precision::TF32;
  if (precision != DType::F32)
    fail(std::string("precision ") + EnumNameDType(precision) +
         " is none of F32, BF16 and TF32");
  return Precision::F32;
}

CastSlot getCastSlot(const KernelCall &call) {
  if (!call.instruction || getPrecision(call) != Precision::BF16)
    return {};
  return {call.instruction->cast_slot(), call.instruction->cast_reuse()};
}

ConvAlgorithm getConvAlgorithm(const KernelCall &call) {
  const flatbuffers::String *name =
      call.instruction ? call.instruction->algorithm() : nullptr;
  if (!name || name->string_view() == "direct" ||
      name->string_view() == "cudnn_heuristic")
    return ConvAlgorithm::Direct;
  if (name->string_view() == "winograd")
    return ConvAlgorithm::Winograd;
  fail("unknown convolution algorithm '" + name->str() +
       "' (direct, winograd or cudnn_heuristic)");
}

BatchNormParams getBatchNormParams(const KernelCall &call) {
  BatchNormParams params;
  if (const BatchNormAttrs *attrs =
          call.instruction ? call.instruction->attrs_as_BatchNormAttrs()
                           : nullptr) {
    params.eps = static_cast<float>(attrs->epsilon());
    params.momentum = static_cast<float>(attrs->momentum());
  }
  if (!(params.eps > 0))
    fail("batch-norm epsilon must be positive");
  return params;
}

float getPadValue(const KernelCall &call) {
  const PadAttrs *attrs =
      call.instruction ? call.instruction->attrs_as_PadAttrs() : nullptr;
  return attrs ? static_cast<float>(attrs->value()) : 0.f;
}

SgdParams getSgdParams(const KernelCall &call) {
  SgdParams p;
  if (const SgdAttrs *attrs =
          call.instruction ? call.instruction->attrs_as_SgdAttrs() : nullptr) {
    p.momentum = attrs->momentum();
    p.dampening = attrs->dampening();
    p.weightDecay = attrs->weight_decay();
    p.nesterov = attrs->nesterov();
  }
  if (p.nesterov && (p.momentum <= 0.0 || p.dampening != 0.0))
    fail("nesterov needs momentum and zero dampening");
  return p;
}

AdamWParams getAdamWParams(const KernelCall &call) {
  AdamWParams p;
  if (const AdamWAttrs *attrs = call.instruction
                                    ? call.instruction->attrs_as_AdamWAttrs()
                                    : nullptr) {
    p.beta1 = attrs->beta1();
    p.beta2 = attrs->beta2();
    p.eps = attrs->eps();
    p.weightDecay = attrs->weight_decay();
  }
  return p;
}

namespace {

/// Fails unless `arg`, operand or result `name` of a reduction, is present
/// with valid dims and a dtype the communicators reduce.
void checkReducible(const TensorArg &arg, const Name &name) {
  if (!arg.present)
    fail(name + " is missing");
  if (arg.dtype != DType::F32 && arg.dtype != DType::F64 &&
      arg.dtype != DType::I32 && arg.dtype != DType::I64)
    fail(name + " is " + EnumNameDType(arg.dtype) +
         ", expected F32, F64, I32 or I64");
  if (arg.getNumElements() < 0)
    fail(name + " has invalid dims " + formatDims(arg.dims));
}

ReduceOp checkReduceOp(ReduceOp op) {
  if (op != ReduceOp::Sum && op != ReduceOp::Mean && op != ReduceOp::Max)
    fail("unknown reduce op " + std::to_string(static_cast<int>(op)));
  return op;
}

} // namespace

ReduceOp getAllReduceOp(const KernelCall &call) {
  size_t count = call.operands.size();
  if (count == 0)
    fail("has no operands");
  for (size_t i = 0; i < count; ++i)
    checkReducible(call.operand(i), operandName(call.kernel, i));
  const AllReduceAttrs *attrs =
      call.instruction ? call.instruction->attrs_as_AllReduceAttrs() : nullptr;
  return checkReduceOp(attrs ? attrs->op() : ReduceOp::Sum);
}

ReduceOp getReduceScatterOp(const KernelCall &call) {
  const ReduceScatterAttrs *attrs =
      call.instruction ? call.instruction->attrs_as_ReduceScatterAttrs()
                       : nullptr;
  return checkReduceOp(attrs ? attrs->op() : ReduceOp::Sum);
}

std::vector<std::vector<int64_t>> getShardSizes(const KernelCall &call) {
  // AllGather reads parts and writes wholes; ReduceScatter the reverse.
  bool gather = call.kernel == Kernel::AllGather;
  size_t count = call.operands.size();
  if (count == 0 || call.results.size() != count)
    fail("has " + std::to_string(count) + " operands and " +
         std::to_string(call.results.size()) +
         " results, expected one whole per part");
  const flatbuffers::Vector<int64_t> *listed = nullptr;
  if (const Instruction *instruction = call.instruction) {
    if (gather) {
      if (const AllGatherAttrs *attrs = instruction->attrs_as_AllGatherAttrs())
        listed = attrs->sizes();
    } else if (const ReduceScatterAttrs *attrs =
                   instruction->attrs_as_ReduceScatterAttrs()) {
      listed = attrs->sizes();
    }
  }
  std::vector<int64_t> all = args::attrList(listed);
  if (all.empty() || all.size() % count != 0)
    fail("lists " + std::to_string(all.size()) + " sizes for " +
         std::to_string(count) + " parts: expected one per rank for each");
  size_t ranks = all.size() / count;
  std::vector<std::vector<int64_t>> sizes;
  for (size_t k = 0; k < count; ++k) {
    const TensorArg &part = gather ? call.operand(k) : call.result(k);
    const TensorArg &whole = gather ? call.result(k) : call.operand(k);
    if (!part.present || !whole.present)
      fail(operandName(call.kernel, k) + " or its " +
           (gather ? "whole" : "part") + " is missing");
    if (!gather)
      checkReducible(whole, operandName(call.kernel, k));
    if (part.dtype != whole.dtype)
      fail("part " + std::to_string(k) + " is " + EnumNameDType(part.dtype) +
           ", its whole " + EnumNameDType(whole.dtype));
    std::vector<int64_t> &mine = sizes.emplace_back(
        all.begin() + k * ranks, all.begin() + (k + 1) * ranks);
    int64_t sum = 0;
    for (int64_t size : mine) {
      if (size < 0)
        fail("a part of operand " + std::to_string(k) + " has " +
             std::to_string(size) + " elements");
      sum += size;
    }
    if (sum != whole.getNumElements() ||
        std::find(mine.begin(), mine.end(), part.getNumElements()) ==
            mine.end())
      fail("parts of " + std::to_string(part.getNumElements()) + " of " +
           formatDims(mine) + " elements do not tile a whole of " +
           std::to_string(whole.getNumElements()));
  }
  return sizes;
}

double getFillValue(const KernelCall &call) {
  const FillAttrs *attrs =
      call.instruction ? call.instruction->attrs_as_FillAttrs() : nullptr;
  return attrs ? attrs->value() : 0.0;
}

namespace args {

std::vector<int64_t> attrList(const flatbuffers::Vector<int64_t> *values) {
  return toDims(values);
}

std::vector<int64_t> axesAttr(const flatbuffers::Vector<int64_t> *values,
                              const char *name, std::vector<int64_t> fallback) {
  if (!values || values->size() == 0)
    return fallback;
  if (values->size() != fallback.size())
    fail(std::string(name) + " must have " + std::to_string(fallback.size()) +
         " values, has " + std::to_string(values->size()));
  return toDims(values);
}

std::vector<int64_t> paddingAxesAttr(const flatbuffers::Vector<int64_t> *values,
                                     size_t axes) {
  size_t size = values ? values->size() : 0;
  if (size != 0 && size != axes && size != 2 * axes)
    fail("padding must have " + std::to_string(axes) + " or " +
         std::to_string(2 * axes) + " values, has " + std::to_string(size));
  std::vector<int64_t> list(2 * axes, 0);
  for (size_t i = 0; i < list.size() && size; ++i)
    list[i] = values->Get(static_cast<flatbuffers::uoffset_t>(i % size));
  for (int64_t p : list)
    if (p < 0)
      fail("padding must not be negative");
  return list;
}

void pairAttr(const flatbuffers::Vector<int64_t> *values, const char *name,
              int64_t fallbackH, int64_t fallbackW, int64_t &h, int64_t &w) {
  std::vector<int64_t> pair = axesAttr(values, name, {fallbackH, fallbackW});
  h = pair[0], w = pair[1];
}

void paddingAttr(const flatbuffers::Vector<int64_t> *values, int64_t &top,
                 int64_t &left, int64_t &bottom, int64_t &right) {
  std::vector<int64_t> list = paddingAxesAttr(values, 2);
  top = list[0], left = list[1], bottom = list[2], right = list[3];
}

} // namespace args
} // namespace dpc::plan
