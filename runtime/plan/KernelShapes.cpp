//===- KernelShapes.cpp - kernel shapes from tensor dims ------------------===//

#include "runtime/plan/KernelShapes.h"
#include "runtime/kernels/Reorder.h"
#include "runtime/plan/CheckedMath.h"
#include "runtime/plan/KernelSignature.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace dpc::plan {
namespace {

[[noreturn]] void fail(const std::string &message) {
  throw ShapeError(message);
}

std::string describe(const KernelCall &call, bool isOperand, size_t index) {
  return isOperand ? describeOperand(call.kernel, index)
                   : describeResult(call.kernel, index);
}

/// What an error calls a tensor: an operand or result of a kernel, spelled
/// out only when an error reports it (the checks run on every kernel call,
/// which must not build strings), or a given text.
class Name {
public:
  Name() = default;
  Name(std::string text) : text(std::move(text)) {}
  Name(Kernel kernel, bool isOperand, size_t index)
      : kernel(kernel), isOperand(isOperand), index(index), isRole(true) {}
  std::string str() const {
    if (!isRole)
      return text;
    return isOperand ? describeOperand(kernel, index)
                     : describeResult(kernel, index);
  }
  friend std::string operator+(const Name &name, std::string_view more) {
    return name.str().append(more);
  }
  friend std::string operator+(std::string text, const Name &name) {
    return text.append(name.str());
  }

private:
  std::string text;
  Kernel kernel = Kernel::Copy;
  bool isOperand = true;
  size_t index = 0;
  bool isRole = false;
};
Name operandName(Kernel kernel, size_t index) { return {kernel, true, index}; }
Name resultName(Kernel kernel, size_t index) { return {kernel, false, index}; }

/// Fetches operand/result `index`, which must be present and of `dtype`.
const TensorArg &get(const KernelCall &call, bool isOperand, size_t index,
                     DType dtype = DType::F32) {
  const std::vector<TensorArg> &args = isOperand ? call.operands : call.results;
  if (index >= args.size() || !args[index].present)
    fail(describe(call, isOperand, index) + " is missing");
  const TensorArg &arg = args[index];
  if (arg.dtype != dtype)
    fail(describe(call, isOperand, index) + " is " + EnumNameDType(arg.dtype) +
         ", expected " + EnumNameDType(dtype));
  if (arg.getNumElements() < 0)
    fail(describe(call, isOperand, index) + " has invalid dims " +
         formatDims(arg.dims));
  return arg;
}
const TensorArg &operand(const KernelCall &call, size_t index,
                         DType dtype = DType::F32) {
  return get(call, true, index, dtype);
}
const TensorArg &result(const KernelCall &call, size_t index,
                        DType dtype = DType::F32) {
  return get(call, false, index, dtype);
}
bool hasOperand(const KernelCall &call, size_t index) {
  return call.operand(index).present;
}
bool hasResult(const KernelCall &call, size_t index) {
  return call.result(index).present;
}

/// The product of `factors` (sizes from dims and attributes a plan may
/// forge): an error instead of an overflow.
template <typename Range> int64_t countOf(const Range &factors) {
  std::optional<int64_t> count = checkedProduct(factors);
  if (!count)
    fail("the kernel's sizes overflow");
  return *count;
}
int64_t countOf(std::initializer_list<int64_t> factors) {
  return countOf<std::initializer_list<int64_t>>(factors);
}

void expectCount(const TensorArg &arg, const Name &what, int64_t expected) {
  if (arg.getNumElements() != expected)
    fail(what + " has " + std::to_string(arg.getNumElements()) + " elements " +
         formatDims(arg.dims) + ", expected " + std::to_string(expected));
}
void expectOperandCount(const KernelCall &call, size_t index, int64_t expected,
                        DType dtype = DType::F32) {
  expectCount(operand(call, index, dtype), operandName(call.kernel, index),
              expected);
}
void expectResultCount(const KernelCall &call, size_t index, int64_t expected,
                       DType dtype = DType::F32) {
  expectCount(result(call, index, dtype), resultName(call.kernel, index),
              expected);
}

void expectRank(const TensorArg &arg, const Name &what, size_t lo, size_t hi) {
  if (arg.dims.size() < lo || arg.dims.size() > hi)
    fail(what + " has rank " + std::to_string(arg.dims.size()) + " " +
         formatDims(arg.dims) + ", expected " +
         (lo == hi ? std::to_string(lo)
                   : std::to_string(lo) + " to " + std::to_string(hi)));
}

/// A count-like result (correct predictions): any numeric dtype, 1 element.
void expectCountResult(const KernelCall &call, size_t index) {
  const TensorArg &arg = call.result(index);
  if (!arg.present)
    fail(resultName(call.kernel, index) + " is missing");
  if (getDTypeSize(arg.dtype) == 0 || arg.dtype == DType::F16 ||
      arg.dtype == DType::BF16)
    fail(resultName(call.kernel, index) + " is " + EnumNameDType(arg.dtype) +
         ", expected I64, I32, F32 or F64");
  expectCount(arg, resultName(call.kernel, index), 1);
}

/// Rows (dims[0]) and the rest flattened, of a tensor of rank >= 1.
RowsShape rowsOf(const TensorArg &arg, const Name &what) {
  expectRank(arg, what, 1, 8);
  // The columns from the dims, not count / rows: a replica's share may be
  // 0 rows.
  struct {
    const int64_t *first, *last;
    const int64_t *begin() const { return first; }
    const int64_t *end() const { return last; }
  } rest{arg.dims.data() + 1, arg.dims.data() + arg.dims.size()};
  std::optional<int64_t> cols = checkedProduct(rest);
  if (!cols)
    fail(what + " " + formatDims(arg.dims) + " has too many columns");
  return {arg.dims[0], *cols};
}

/// A matmul operand whose columns are `cols`: rows are every dim but the
/// last when the last is `cols` (x [n, t, k] times a [k, m] weight), else
/// dims[0] with the rest flattened (x [n, c, h, w] into a linear layer).
/// Both readings agree when both fit (the middle dims are 1).
RowsShape matmulRowsOf(const TensorArg &arg, const Name &what, int64_t cols) {
  RowsShape flat = rowsOf(arg, what);
  if (arg.dims.size() > 2 && arg.dims.back() == cols) {
    std::vector<int64_t> lead(arg.dims.begin(), arg.dims.end() - 1);
    std::optional<int64_t> rows = checkedProduct(lead);
    if (!rows)
      fail(what + " " + formatDims(arg.dims) + " has too many rows");
    return {*rows, cols};
  }
  return flat;
}

std::vector<int64_t> attrList(const flatbuffers::Vector<int64_t> *values) {
  return toDims(values);
}

/// A pair [h, w] from an attribute list of `size` 0 (default) or 2.
void pairAttr(const flatbuffers::Vector<int64_t> *values, const char *name,
              int64_t fallbackH, int64_t fallbackW, int64_t &h, int64_t &w) {
  if (!values || values->size() == 0) {
    h = fallbackH, w = fallbackW;
    return;
  }
  if (values->size() != 2)
    fail(std::string(name) + " must have 2 values, has " +
         std::to_string(values->size()));
  h = values->Get(0), w = values->Get(1);
}

/// Padding [top, left, bottom, right], [h, w] or empty.
void paddingAttr(const flatbuffers::Vector<int64_t> *values, int64_t &top,
                 int64_t &left, int64_t &bottom, int64_t &right) {
  size_t size = values ? values->size() : 0;
  if (size != 0 && size != 2 && size != 4)
    fail("padding must have 2 or 4 values, has " + std::to_string(size));
  int64_t list[4] = {0, 0, 0, 0};
  for (size_t i = 0; i < 4 && size; ++i)
    list[i] = values->Get(static_cast<flatbuffers::uoffset_t>(i % size));
  for (int64_t p : list)
    if (p < 0)
      fail("padding must not be negative");
  top = list[0], left = list[1], bottom = list[2], right = list[3];
}

Nchw nchwOf(const TensorArg &arg, const Name &what, size_t minRank) {
  expectRank(arg, what, minRank, 4);
  const auto &d = arg.dims;
  return {d[0], d[1], d.size() > 2 ? d[2] : 1, d.size() > 3 ? d[3] : 1};
}

} // namespace

kernels::Precision getPrecision(const KernelCall &call) {
  DType precision =
      call.instruction ? call.instruction->precision() : DType::F32;
  if (precision == DType::BF16)
    return kernels::Precision::BF16;
  if (precision != DType::F32)
    fail(std::string("precision ") + EnumNameDType(precision) +
         " is neither F32 nor BF16");
  return kernels::Precision::F32;
}

kernels::CastSlot getCastSlot(const KernelCall &call) {
  if (!call.instruction || getPrecision(call) != kernels::Precision::BF16)
    return {};
  return {call.instruction->cast_slot(), call.instruction->cast_reuse()};
}

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

kernels::ConvAlgorithm getConvAlgorithm(const KernelCall &call) {
  const flatbuffers::String *name =
      call.instruction ? call.instruction->algorithm() : nullptr;
  if (!name || name->string_view() == "direct" ||
      name->string_view() == "cudnn_heuristic")
    return kernels::ConvAlgorithm::Direct;
  if (name->string_view() == "winograd")
    return kernels::ConvAlgorithm::Winograd;
  fail("unknown convolution algorithm '" + name->str() +
       "' (direct, winograd or cudnn_heuristic)");
}

kernels::Conv2dShape getConv2dShape(const KernelCall &call) {
  // Which tensor holds the input, the weights and the output.
  const TensorArg *in, *weights, *out;
  Name inName, weightsName, outName;
  switch (call.kernel) {
  case Kernel::Conv2dForward:
  case Kernel::Conv2dReluForward:
    in = &operand(call, 0), weights = &operand(call, 1), out = &result(call, 0);
    inName = operandName(call.kernel, 0),
    weightsName = operandName(call.kernel, 1),
    outName = resultName(call.kernel, 0);
    break;
  case Kernel::Conv2dBackwardData:
    out = &operand(call, 0), weights = &operand(call, 1), in = &result(call, 0);
    outName = operandName(call.kernel, 0),
    weightsName = operandName(call.kernel, 1),
    inName = resultName(call.kernel, 0);
    break;
  default: // Conv2dBackwardWeights
    in = &operand(call, 0), out = &operand(call, 1), weights = &result(call, 0);
    inName = operandName(call.kernel, 0), outName = operandName(call.kernel, 1),
    weightsName = resultName(call.kernel, 0);
    break;
  }
  expectRank(*in, inName, 4, 4);
  expectRank(*weights, weightsName, 4, 4);
  kernels::Conv2dShape s{};
  s.n = in->dims[0], s.c = in->dims[1], s.h = in->dims[2], s.w = in->dims[3];
  s.k = weights->dims[0], s.r = weights->dims[2], s.s = weights->dims[3];
  const Conv2dAttrs *attrs =
      call.instruction ? call.instruction->attrs_as_Conv2dAttrs() : nullptr;
  if (attrs) {
    pairAttr(attrs->stride(), "stride", 1, 1, s.strideH, s.strideW);
    paddingAttr(attrs->padding(), s.padTop, s.padLeft, s.padBottom, s.padRight);
    pairAttr(attrs->dilation(), "dilation", 1, 1, s.dilationH, s.dilationW);
    s.groups = attrs->groups();
  }
  if (s.strideH < 1 || s.strideW < 1 || s.dilationH < 1 || s.dilationW < 1)
    fail("stride and dilation must be positive");
  if (s.groups < 1 || s.c % s.groups != 0 || s.k % s.groups != 0)
    fail("groups " + std::to_string(s.groups) + " must divide the " +
         std::to_string(s.c) + " input and " + std::to_string(s.k) +
         " output channels");
  if (weights->dims[1] * s.groups != s.c)
    fail(weightsName + " " + formatDims(weights->dims) + " does not match " +
         std::to_string(s.c) + " input channels in " +
         std::to_string(s.groups) + " groups");
  if (s.outH() < 1 || s.outW() < 1)
    fail("the convolution's output would be empty");
  expectCount(*out, outName, countOf({s.n, s.k, s.outH(), s.outW()}));
  if ((call.kernel == Kernel::Conv2dForward ||
       call.kernel == Kernel::Conv2dReluForward) &&
      hasOperand(call, 2))
    expectOperandCount(call, 2, s.k);
  if (call.kernel == Kernel::Conv2dBackwardWeights && hasResult(call, 1))
    expectResultCount(call, 1, s.k);
  s.blockedX = in->layout == Layout::NChw16c;
  s.blockedY = out->layout == Layout::NChw16c;
  s.precision = getPrecision(call);
  s.algorithm = getConvAlgorithm(call);
  s.dyCast = getCastSlot(call);
  if (s.algorithm == kernels::ConvAlgorithm::Winograd &&
      s.precision != kernels::Precision::F32)
    fail("a Winograd convolution computes in F32 only");
  return s;
}

//===----------------------------------------------------------------------===//
// Batch normalization
//===----------------------------------------------------------------------===//

kernels::BatchNormShape getBatchNormShape(const KernelCall &call) {
  const TensorArg &x = operand(call, 0);
  Nchw d = nchwOf(x, operandName(call.kernel, 0), 2);
  int64_t count = x.getNumElements();
  int64_t c = d.c;
  switch (call.kernel) {
  case Kernel::BatchNormTrainingForward:
  case Kernel::BatchNormReluTrainingForward:
    expectOperandCount(call, 1, c);
    expectOperandCount(call, 2, c);
    if (hasOperand(call, 3) != hasOperand(call, 4))
      fail("the running mean and variance are left out only together");
    if (hasOperand(call, 3)) {
      expectOperandCount(call, 3, c);
      expectOperandCount(call, 4, c);
    }
    expectResultCount(call, 0, count);
    expectResultCount(call, 1, c);
    expectResultCount(call, 2, c);
    break;
  case Kernel::BatchNormInferenceForward:
  case Kernel::BatchNormReluInferenceForward:
    for (size_t i = 1; i < 5; ++i)
      expectOperandCount(call, i, c);
    expectResultCount(call, 0, count);
    break;
  // Synchronized batch norm's statistics sums and count are f64.
  case Kernel::BatchNormStatistics:
    expectResultCount(call, 0, c, DType::F64);
    expectResultCount(call, 1, c, DType::F64);
    expectResultCount(call, 2, 1, DType::F64);
    break;
  case Kernel::BatchNormApply:
    for (size_t i = 1; i < 5; ++i)
      expectOperandCount(call, i, c);
    expectOperandCount(call, 5, c, DType::F64);
    expectOperandCount(call, 6, c, DType::F64);
    expectOperandCount(call, 7, 1, DType::F64);
    expectResultCount(call, 0, count);
    expectResultCount(call, 1, c);
    expectResultCount(call, 2, c);
    break;
  case Kernel::BatchNormGradStatistics:
    expectOperandCount(call, 1, count);
    expectOperandCount(call, 2, c);
    expectOperandCount(call, 3, c);
    expectResultCount(call, 0, c);
    expectResultCount(call, 1, c);
    break;
  case Kernel::BatchNormGradApply:
    expectOperandCount(call, 1, count);
    for (size_t i = 2; i < 7; ++i)
      expectOperandCount(call, i, c);
    expectOperandCount(call, 7, 1, DType::F64);
    expectResultCount(call, 0, count);
    break;
  case Kernel::BatchNormReluBackward:
    expectOperandCount(call, 1, count);
    expectOperandCount(call, 2, count);
    for (size_t i = 3; i < 6; ++i)
      expectOperandCount(call, i, c);
    expectResultCount(call, 0, count);
    expectResultCount(call, 1, c);
    expectResultCount(call, 2, c);
    break;
  default: // BatchNormBackward
    expectOperandCount(call, 1, count);
    for (size_t i = 2; i < 5; ++i)
      expectOperandCount(call, i, c);
    expectResultCount(call, 0, count);
    expectResultCount(call, 1, c);
    expectResultCount(call, 2, c);
    break;
  }
  return {d.n, d.c, d.h, d.w,
          x.layout == Layout::NChw16c ? kernels::kChannelBlock : 1};
}

kernels::BatchNormParams getBatchNormParams(const KernelCall &call) {
  kernels::BatchNormParams params;
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

//===----------------------------------------------------------------------===//
// Pooling and padding
//===----------------------------------------------------------------------===//

kernels::Pool2dShape getPool2dShape(const KernelCall &call) {
  const TensorArg *in, *out;
  Name inName, outName;
  switch (call.kernel) {
  case Kernel::MaxPool2dBackward:
    in = &operand(call, 0), out = &operand(call, 1);
    inName = operandName(call.kernel, 0), outName = operandName(call.kernel, 1);
    expectResultCount(call, 0, in->getNumElements());
    break;
  case Kernel::AvgPool2dBackward:
    out = &operand(call, 0), in = &result(call, 0);
    outName = operandName(call.kernel, 0), inName = resultName(call.kernel, 0);
    break;
  default: // forward
    in = &operand(call, 0), out = &result(call, 0);
    inName = operandName(call.kernel, 0), outName = resultName(call.kernel, 0);
    break;
  }
  expectRank(*in, inName, 4, 4);
  const Pool2dAttrs *attrs =
      call.instruction ? call.instruction->attrs_as_Pool2dAttrs() : nullptr;
  if (!attrs)
    fail("Pool2dAttrs are missing");
  kernels::Pool2dShape s{};
  s.n = in->dims[0], s.c = in->dims[1], s.h = in->dims[2], s.w = in->dims[3];
  std::vector<int64_t> kernel = attrList(attrs->kernel());
  if (kernel.size() != 2)
    fail("the pooling kernel must have 2 values");
  s.kernelH = kernel[0], s.kernelW = kernel[1];
  pairAttr(attrs->stride(), "stride", s.kernelH, s.kernelW, s.strideH,
           s.strideW);
  paddingAttr(attrs->padding(), s.padTop, s.padLeft, s.padBottom, s.padRight);
  pairAttr(attrs->dilation(), "dilation", 1, 1, s.dilationH, s.dilationW);
  s.ceilMode = attrs->ceil_mode();
  s.countIncludePad = attrs->count_include_pad();
  if (s.kernelH < 1 || s.kernelW < 1 || s.strideH < 1 || s.strideW < 1 ||
      s.dilationH < 1 || s.dilationW < 1)
    fail("pooling kernel, stride and dilation must be positive");
  bool isAvg = call.kernel == Kernel::AvgPool2dForward ||
               call.kernel == Kernel::AvgPool2dBackward;
  if (isAvg && (s.dilationH != 1 || s.dilationW != 1))
    fail("average pooling takes no dilation");
  if (s.outH() < 1 || s.outW() < 1)
    fail("the pooling's output would be empty");
  expectCount(*out, outName, countOf({s.n, s.c, s.outH(), s.outW()}));
  if (in->layout == Layout::NChw16c)
    s.channelBlock = kernels::kChannelBlock;
  return s;
}

Nchw getGlobalAvgPoolShape(const KernelCall &call) {
  bool forward = call.kernel == Kernel::GlobalAvgPool2dForward;
  const TensorArg &in = forward ? operand(call, 0) : result(call, 0);
  Nchw d = nchwOf(
      in, forward ? operandName(call.kernel, 0) : resultName(call.kernel, 0),
      4);
  if (forward)
    expectResultCount(call, 0, d.n * d.c);
  else
    expectOperandCount(call, 0, d.n * d.c);
  return d;
}

kernels::Pad2dShape getPad2dShape(const KernelCall &call) {
  bool forward = call.kernel == Kernel::PadForward;
  const TensorArg &in = forward ? operand(call, 0) : result(call, 0);
  expectRank(in,
             forward ? operandName(call.kernel, 0) : resultName(call.kernel, 0),
             4, 4);
  const PadAttrs *attrs =
      call.instruction ? call.instruction->attrs_as_PadAttrs() : nullptr;
  if (!attrs)
    fail("PadAttrs are missing");
  std::vector<int64_t> low = attrList(attrs->low()),
                       high = attrList(attrs->high());
  if (low.size() != high.size() || (low.size() != 2 && low.size() != 4))
    fail("pad low and high must both have 2 or 4 values");
  if (low.size() == 4) {
    if (low[0] || low[1] || high[0] || high[1])
      fail("only the spatial dims can be padded");
    low.erase(low.begin(), low.begin() + 2);
    high.erase(high.begin(), high.begin() + 2);
  }
  kernels::Pad2dShape s{in.dims[0], in.dims[1], in.dims[2], in.dims[3],
                        low[0],     low[1],     high[0],    high[1]};
  // Bounded so that outH/outW (sums) cannot overflow.
  constexpr int64_t kMaxPad = int64_t(1) << 32;
  for (int64_t pad : {s.padTop, s.padLeft, s.padBottom, s.padRight})
    if (pad < 0 || pad > kMaxPad)
      fail("padding " + std::to_string(pad) + " is outside [0, 2^32]");
  int64_t outCount = countOf({s.n, s.c, s.outH(), s.outW()});
  if (forward)
    expectResultCount(call, 0, outCount);
  else
    expectOperandCount(call, 0, outCount);
  return s;
}

float getPadValue(const KernelCall &call) {
  const PadAttrs *attrs =
      call.instruction ? call.instruction->attrs_as_PadAttrs() : nullptr;
  return attrs ? static_cast<float>(attrs->value()) : 0.f;
}

//===----------------------------------------------------------------------===//
// Linear and matmul
//===----------------------------------------------------------------------===//

kernels::LinearShape getLinearShape(const KernelCall &call) {
  kernels::LinearShape s{};
  switch (call.kernel) {
  case Kernel::LinearForward:
  case Kernel::LinearReluForward: {
    const TensorArg &w = operand(call, 1);
    expectRank(w, operandName(call.kernel, 1), 2, 2);
    s.out = w.dims[0], s.in = w.dims[1];
    s.n = rowsOf(operand(call, 0), operandName(call.kernel, 0)).rows;
    expectOperandCount(call, 0, countOf({s.n, s.in}));
    if (hasOperand(call, 2))
      expectOperandCount(call, 2, s.out);
    expectResultCount(call, 0, countOf({s.n, s.out}));
    break;
  }
  case Kernel::LinearBackwardData: {
    const TensorArg &w = operand(call, 1);
    expectRank(w, operandName(call.kernel, 1), 2, 2);
    s.out = w.dims[0], s.in = w.dims[1];
    s.n = rowsOf(operand(call, 0), operandName(call.kernel, 0)).rows;
    expectOperandCount(call, 0, countOf({s.n, s.out}));
    expectResultCount(call, 0, countOf({s.n, s.in}));
    break;
  }
  default: { // LinearBackwardWeights
    const TensorArg &dw = result(call, 0);
    expectRank(dw, resultName(call.kernel, 0), 2, 2);
    s.out = dw.dims[0], s.in = dw.dims[1];
    s.n = rowsOf(operand(call, 0), operandName(call.kernel, 0)).rows;
    expectOperandCount(call, 0, countOf({s.n, s.in}));
    expectOperandCount(call, 1, countOf({s.n, s.out}));
    if (hasResult(call, 1))
      expectResultCount(call, 1, s.out);
    break;
  }
  }
  s.precision = getPrecision(call);
  s.xCast = getCastSlot(call);
  return s;
}

kernels::MatmulShape getMatmulShape(const KernelCall &call) {
  if (call.kernel == Kernel::MatmulTransposedA) {
    // c [k, m] = a [n, k]^T b [n, m]; c's dims say how a and b read.
    const TensorArg &c = result(call, 0);
    expectRank(c, resultName(call.kernel, 0), 2, 2);
    RowsShape a =
        matmulRowsOf(operand(call, 0), operandName(call.kernel, 0), c.dims[0]);
    RowsShape b =
        matmulRowsOf(operand(call, 1), operandName(call.kernel, 1), c.dims[1]);
    if (a.rows != b.rows)
      fail("operands 0 and 1 have " + std::to_string(a.rows) + " and " +
           std::to_string(b.rows) + " rows");
    expectResultCount(call, 0, countOf({a.cols, b.cols}));
    return {a.rows, a.cols, b.cols, getPrecision(call)};
  }
  const TensorArg &b = operand(call, 1);
  expectRank(b, operandName(call.kernel, 1), 2, 2);
  RowsShape a =
      matmulRowsOf(operand(call, 0), operandName(call.kernel, 0), b.dims[0]);
  kernels::MatmulShape s{a.rows, a.cols, b.dims[1]};
  if (b.dims[0] != s.k)
    fail(operandName(call.kernel, 1) + " " + formatDims(b.dims) +
         " does not have " + std::to_string(s.k) + " rows");
  if (call.kernel == Kernel::MatmulForward) {
    expectResultCount(call, 0, countOf({s.n, s.m}));
  } else {
    expectOperandCount(call, 2, countOf({s.n, s.m}));
    if (hasResult(call, 0))
      expectResultCount(call, 0, countOf({s.n, s.k}));
    if (hasResult(call, 1))
      expectResultCount(call, 1, countOf({s.k, s.m}));
  }
  s.precision = getPrecision(call);
  return s;
}

kernels::BatchMatmulShape getBatchMatmulShape(const KernelCall &call) {
  const BatchMatmulAttrs *attrs =
      call.instruction ? call.instruction->attrs_as_BatchMatmulAttrs()
                       : nullptr;
  kernels::BatchMatmulShape s{};
  s.transposeA = attrs && attrs->transpose_a();
  s.transposeB = attrs && attrs->transpose_b();
  const TensorArg &a = operand(call, 0), &b = operand(call, 1);
  const TensorArg &c = result(call, 0);
  size_t rank = a.dims.size();
  expectRank(a, operandName(call.kernel, 0), 3, 8);
  expectRank(b, operandName(call.kernel, 1), rank, rank);
  expectRank(c, resultName(call.kernel, 0), rank, rank);
  std::vector<int64_t> leading(a.dims.begin(), a.dims.end() - 2);
  for (const TensorArg *t : {&b, &c})
    if (!std::equal(leading.begin(), leading.end(), t->dims.begin()))
      fail("batch matmul operands " + formatDims(a.dims) + ", " +
           formatDims(b.dims) + " -> " + formatDims(c.dims) +
           " differ in their leading dims");
  s.batch = countOf(leading);
  // op(x) reads x's last two dims swapped when transposed.
  auto dim = [&](const TensorArg &x, bool transposed, size_t i) {
    return x.dims[rank - 2 + (transposed ? 1 - i : i)];
  };
  s.m = dim(a, s.transposeA, 0);
  s.k = dim(a, s.transposeA, 1);
  s.n = dim(b, s.transposeB, 1);
  if (dim(b, s.transposeB, 0) != s.k || c.dims[rank - 2] != s.m ||
      c.dims[rank - 1] != s.n)
    fail("batch matmul operands " + formatDims(a.dims) + ", " +
         formatDims(b.dims) + " -> " + formatDims(c.dims) + " do not multiply");
  return s;
}

//===----------------------------------------------------------------------===//
// Elementwise, broadcast, rows
//===----------------------------------------------------------------------===//

int64_t getElementwiseSize(const KernelCall &call) {
  switch (call.kernel) {
  case Kernel::Fill: {
    const TensorArg &y = call.result(0);
    if (!y.present)
      fail(resultName(call.kernel, 0) + " is missing");
    if (y.dtype != DType::F32 && y.dtype != DType::F64 &&
        y.dtype != DType::I32 && y.dtype != DType::I64)
      fail(std::string("cannot fill a ") + EnumNameDType(y.dtype) + " tensor");
    return y.getNumElements();
  }
  case Kernel::Copy: {
    const TensorArg &x = call.operand(0), &y = call.result(0);
    if (!x.present || !y.present)
      fail("copy needs an operand and a result");
    if (x.dtype != y.dtype)
      fail("copy from " + std::string(EnumNameDType(x.dtype)) + " to " +
           EnumNameDType(y.dtype));
    int64_t size = x.getNumElements();
    expectCount(y, resultName(call.kernel, 0), size);
    return size;
  }
  default: {
    int64_t size = operand(call, 0).getNumElements();
    for (size_t i = 1; i < call.operands.size(); ++i)
      expectOperandCount(call, i, size);
    expectResultCount(call, 0, size);
    return size;
  }
  }
}

InputActivationShape getInputActivationShape(const KernelCall &call) {
  using kernels::math::InputActivation;
  InputActivationShape s{InputActivation::HardSwish, {}, 0};
  const Instruction *instruction = call.instruction;
  switch (call.kernel) {
  case Kernel::ClipForward:
  case Kernel::ClipBackward: {
    const ClipAttrs *attrs =
        instruction ? instruction->attrs_as_ClipAttrs() : nullptr;
    if (!attrs)
      fail("ClipAttrs are missing");
    if (!std::isfinite(attrs->min()) || !std::isfinite(attrs->max()) ||
        attrs->min() > attrs->max())
      fail("clip bounds [" + std::to_string(attrs->min()) + ", " +
           std::to_string(attrs->max()) + "] are not an interval");
    s.kind = InputActivation::Clip;
    s.params = {static_cast<float>(attrs->min()),
                static_cast<float>(attrs->max())};
    break;
  }
  case Kernel::HardSigmoidForward:
  case Kernel::HardSigmoidBackward: {
    const HardSigmoidAttrs *attrs =
        instruction ? instruction->attrs_as_HardSigmoidAttrs() : nullptr;
    double alpha = attrs ? attrs->alpha() : 0.2,
           beta = attrs ? attrs->beta() : 0.5;
    if (!std::isfinite(alpha) || !std::isfinite(beta))
      fail("hard sigmoid alpha and beta must be finite");
    s.kind = InputActivation::HardSigmoid;
    s.params = {static_cast<float>(alpha), static_cast<float>(beta)};
    break;
  }
  case Kernel::GeluForward:
  case Kernel::GeluBackward: {
    const GeluAttrs *attrs =
        instruction ? instruction->attrs_as_GeluAttrs() : nullptr;
    s.kind = attrs && attrs->tanh_approximation() ? InputActivation::GeluTanh
                                                  : InputActivation::Gelu;
    break;
  }
  case Kernel::ErfForward:
  case Kernel::ErfBackward:
    s.kind = InputActivation::Erf;
    break;
  default: // HardSwish
    break;
  }
  s.size = getElementwiseSize(call);
  return s;
}

DropoutShape getDropoutShape(const KernelCall &call) {
  const DropoutAttrs *attrs =
      call.instruction ? call.instruction->attrs_as_DropoutAttrs() : nullptr;
  if (!attrs)
    fail("DropoutAttrs are missing");
  if (!(attrs->ratio() >= 0 && attrs->ratio() <= 1))
    fail("dropout ratio " + std::to_string(attrs->ratio()) +
         " is not in [0, 1]");
  if (attrs->key() < 0 || attrs->key() > UINT32_MAX)
    fail("dropout key " + std::to_string(attrs->key()) +
         " is not a 32-bit site number");
  int64_t size = getElementwiseSize(call);
  const TensorArg &x = operand(call, 0);
  if (x.dims.empty())
    fail("dropout needs a batch dimension");
  DropoutShape s{attrs->ratio(), attrs->key(), x.dims[0], 0, attrs->rowwise()};
  s.cols = s.rows > 0 ? size / s.rows : 0;
  // The mask counts rows and groups of four elements in 32 bits.
  if (s.cols > (int64_t(1) << 34))
    fail("dropout rows of " + std::to_string(s.cols) +
         " elements exceed the mask's 2^34");
  return s;
}

kernels::LayerNormShape getLayerNormShape(const KernelCall &call) {
  const LayerNormAttrs *attrs =
      call.instruction ? call.instruction->attrs_as_LayerNormAttrs() : nullptr;
  if (!attrs)
    fail("LayerNormAttrs are missing");
  const TensorArg &x = operand(call, 0);
  int64_t rank = static_cast<int64_t>(x.dims.size());
  if (attrs->axis() < 1 || attrs->axis() >= rank)
    fail("layer norm axis " + std::to_string(attrs->axis()) +
         " is not in [1, " + std::to_string(rank) + ")");
  if (!(attrs->epsilon() > 0) || !std::isfinite(attrs->epsilon()))
    fail("layer norm epsilon must be finite and > 0");
  kernels::LayerNormShape s;
  auto split = x.dims.begin() + attrs->axis();
  s.rows = countOf(std::vector<int64_t>(x.dims.begin(), split));
  s.cols = countOf(std::vector<int64_t>(split, x.dims.end()));
  s.epsilon = attrs->epsilon();
  int64_t count = countOf({s.rows, s.cols});
  expectResultCount(call, 0, count);             // Y or DX
  if (call.kernel == Kernel::LayerNormForward) { // (X, Scale, Bias) -> Y
    expectOperandCount(call, 1, s.cols);
    if (hasOperand(call, 2))
      expectOperandCount(call, 2, s.cols);
    return s;
  }
  // (X, DY, Scale) -> (DX, DScale, DBias)
  expectOperandCount(call, 1, count);
  expectOperandCount(call, 2, s.cols);
  expectResultCount(call, 1, s.cols);
  if (hasResult(call, 2))
    expectResultCount(call, 2, s.cols);
  const TensorArg &workspace = call.workspace;
  int64_t needed =
      countOf({s.rows, int64_t(sizeof(kernels::elements::RowStats))});
  if (!workspace.present || workspace.getNumBytes() < needed)
    fail("layer norm's backward needs a workspace of " +
         std::to_string(needed) +
         " bytes (a mean and an inverse standard "
         "deviation per row)");
  return s;
}

kernels::EmbeddingShape getEmbeddingShape(const KernelCall &call) {
  bool forward = call.kernel == Kernel::EmbeddingForward;
  const TensorArg &table = forward ? operand(call, 0) : result(call, 0);
  Name tableName =
      forward ? operandName(call.kernel, 0) : resultName(call.kernel, 0);
  expectRank(table, tableName, 2, 2);
  kernels::EmbeddingShape s;
  s.rows = table.dims[0], s.dim = table.dims[1];
  s.count = operand(call, forward ? 1 : 0, DType::I32).getNumElements();
  int64_t values = countOf({s.count, s.dim});
  if (forward)
    expectResultCount(call, 0, values);
  else
    expectOperandCount(call, 1, values);
  return s;
}

kernels::BroadcastShape getBroadcastShape(const KernelCall &call) {
  std::vector<int64_t> lhs, rhs;
  int64_t lhsCount = 0;
  switch (call.kernel) {
  case Kernel::AddForward:
  case Kernel::AddReluForward:
  case Kernel::MulForward:
    lhs = operand(call, 0).dims, rhs = operand(call, 1).dims;
    lhsCount = operand(call, 0).getNumElements();
    expectResultCount(call, 0, lhsCount);
    break;
  case Kernel::AddBackward:
    lhs = operand(call, 0).dims;
    lhsCount = operand(call, 0).getNumElements();
    if (hasResult(call, 0))
      expectResultCount(call, 0, lhsCount);
    rhs = hasResult(call, 1) ? result(call, 1).dims : std::vector<int64_t>{};
    break;
  default: // MulBackward (a, b, dc) -> (da, db)
    lhs = operand(call, 0).dims, rhs = operand(call, 1).dims;
    lhsCount = operand(call, 0).getNumElements();
    expectOperandCount(call, 2, lhsCount);
    if (hasResult(call, 0))
      expectResultCount(call, 0, lhsCount);
    if (hasResult(call, 1))
      expectResultCount(call, 1, operand(call, 1).getNumElements());
    break;
  }
  try {
    return kernels::makeBroadcastShape(lhs, rhs);
  } catch (const std::invalid_argument &) {
    fail(formatDims(rhs) + " does not broadcast to " + formatDims(lhs));
  }
}

RowsShape getRowsShape(const KernelCall &call) {
  switch (call.kernel) {
  case Kernel::SoftmaxForward:
  case Kernel::LogSoftmaxForward:
  case Kernel::SoftmaxBackward:
  case Kernel::LogSoftmaxBackward: {
    const TensorArg &x = operand(call, 0);
    expectRank(x, operandName(call.kernel, 0), 1, 8);
    int64_t cols = x.dims.back();
    std::optional<int64_t> rows =
        checkedProduct(std::vector<int64_t>(x.dims.begin(), x.dims.end() - 1));
    if (!rows)
      fail(operandName(call.kernel, 0) + " " + formatDims(x.dims) +
           " has too many rows");
    RowsShape s{*rows, cols};
    getElementwiseSize(call); // every operand and the result alike
    return s;
  }
  default: { // CrossEntropyForward/Backward/ForwardBackward, CorrectCount
    RowsShape s = rowsOf(operand(call, 0), operandName(call.kernel, 0));
    if (s.cols < 1)
      fail("the logits have no classes");
    expectOperandCount(call, 1, s.rows, DType::I32);
    if (call.kernel == Kernel::CrossEntropyForward) {
      expectResultCount(call, 0, 1);
      if (hasResult(call, 1))
        expectCountResult(call, 1);
    } else if (call.kernel == Kernel::CrossEntropyBackward) {
      if (hasOperand(call, 2))
        expectOperandCount(call, 2, 1);
      expectResultCount(call, 0, countOf({s.rows, s.cols}));
    } else if (call.kernel == Kernel::CrossEntropyForwardBackward) {
      if (hasOperand(call, 2))
        expectOperandCount(call, 2, 1);
      expectResultCount(call, 0, 1);
      expectResultCount(call, 1, countOf({s.rows, s.cols}));
      if (hasResult(call, 2))
        expectCountResult(call, 2);
    } else {
      expectCountResult(call, 0);
    }
    return s;
  }
  }
}

RowsShape getTransposeShape(const KernelCall &call) {
  const TensorArg &x = operand(call, 0);
  expectRank(x, operandName(call.kernel, 0), 2, 2);
  const TensorArg &y = result(call, 0, x.dtype);
  expectCount(y, resultName(call.kernel, 0), x.getNumElements());
  if (getDTypeSize(x.dtype) != 4)
    fail("transpose supports 4-byte elements");
  return {x.dims[0], x.dims[1]};
}

PermuteShape getPermuteShape(const KernelCall &call) {
  const TensorArg &x = call.operand(0);
  if (!x.present || getDTypeSize(x.dtype) != 4)
    fail(operandName(call.kernel, 0) + " must be a tensor of 4-byte elements");
  operand(call, 0, x.dtype); // its dims
  const TransposeAttrs *attrs =
      call.instruction ? call.instruction->attrs_as_TransposeAttrs() : nullptr;
  if (!attrs)
    fail("TransposeAttrs are missing");
  PermuteShape s{x.dims, attrList(attrs->permutation())};
  size_t rank = x.dims.size();
  if (rank > 8 || s.permutation.size() != rank)
    fail("the permutation has " + std::to_string(s.permutation.size()) +
         " entries for " + formatDims(x.dims));
  std::vector<bool> seen(rank, false);
  std::vector<int64_t> permuted;
  for (int64_t p : s.permutation) {
    if (p < 0 || p >= static_cast<int64_t>(rank) || seen[p])
      fail(formatDims(s.permutation) + " is not a permutation of " +
           std::to_string(rank) + " dims");
    seen[p] = true;
    permuted.push_back(x.dims[p]);
  }
  const TensorArg &y = result(call, 0, x.dtype);
  if (y.dims != permuted)
    fail(resultName(call.kernel, 0) + " is " + formatDims(y.dims) +
         ", expected " + formatDims(permuted));
  return s;
}

JoinShape getJoinShape(const KernelCall &call) {
  bool concat = call.kernel == Kernel::ConcatForward;
  const std::vector<TensorArg> &parts = concat ? call.operands : call.results;
  const TensorArg &whole = concat ? call.result(0) : call.operand(0);
  Name wholeName =
      concat ? resultName(call.kernel, 0) : operandName(call.kernel, 0);
  if (!whole.present || parts.empty())
    fail("needs a whole tensor and at least one part");
  const ConcatAttrs *attrs =
      call.instruction ? call.instruction->attrs_as_ConcatAttrs() : nullptr;
  if (!attrs)
    fail("ConcatAttrs are missing");
  int64_t rank = static_cast<int64_t>(whole.dims.size());
  int64_t axis = attrs->axis();
  if (axis < 0 || axis >= rank)
    fail("axis " + std::to_string(axis) + " is out of range for " +
         formatDims(whole.dims));
  int64_t elementBytes = getDTypeSize(whole.dtype);
  if (elementBytes == 0 || whole.getNumElements() < 0)
    fail(wholeName + " is not a tensor");
  JoinShape s;
  s.outer = countOf(
      std::vector<int64_t>(whole.dims.begin(), whole.dims.begin() + axis));
  int64_t inner = countOf(
      std::vector<int64_t>(whole.dims.begin() + axis + 1, whole.dims.end()));
  int64_t joined = 0;
  for (size_t p = 0; p < parts.size(); ++p) {
    const TensorArg &part = parts[p];
    Name name =
        concat ? operandName(call.kernel, p) : resultName(call.kernel, p);
    if (!part.present || part.dtype != whole.dtype ||
        static_cast<int64_t>(part.dims.size()) != rank)
      fail(name + " does not match " + wholeName + " " +
           formatDims(whole.dims));
    for (int64_t d = 0; d < rank; ++d)
      if (d != axis && part.dims[d] != whole.dims[d])
        fail(name + " " + formatDims(part.dims) + " does not match " +
             formatDims(whole.dims) + " outside dim " + std::to_string(axis));
    if (part.dims[axis] < 0)
      fail(name + " has invalid dims " + formatDims(part.dims));
    joined += part.dims[axis];
    s.partBytes.push_back(countOf({part.dims[axis], inner, elementBytes}));
  }
  if (joined != whole.dims[axis])
    fail("the parts' dim " + std::to_string(axis) + " adds up to " +
         std::to_string(joined) + ", " + wholeName + " has " +
         std::to_string(whole.dims[axis]));
  s.rowBytes = countOf({whole.dims[axis], inner, elementBytes});
  return s;
}

ReduceShape getReduceShape(const KernelCall &call) {
  const TensorArg &x = operand(call, 0);
  const ReduceAttrs *attrs =
      call.instruction ? call.instruction->attrs_as_ReduceAttrs() : nullptr;
  if (!attrs)
    fail("ReduceAttrs are missing");
  ReduceShape s{x.dims, std::vector<bool>(x.dims.size(), false)};
  int64_t rank = static_cast<int64_t>(x.dims.size());
  for (int64_t dim : attrList(attrs->dims())) {
    int64_t d = dim < 0 ? dim + rank : dim;
    if (d < 0 || d >= rank)
      fail("reduced dim " + std::to_string(dim) + " is out of range for " +
           formatDims(x.dims));
    if (s.reduced[d])
      fail("dim " + std::to_string(dim) + " is reduced twice");
    s.reduced[d] = true;
  }
  int64_t kept = 1;
  for (int64_t d = 0; d < rank; ++d)
    if (!s.reduced[d])
      kept *= x.dims[d];
  expectResultCount(call, 0, kept);
  return s;
}

//===----------------------------------------------------------------------===//
// Optimizers, fill
//===----------------------------------------------------------------------===//

int64_t getOptimizerSize(const KernelCall &call) {
  int64_t size = operand(call, 0).getNumElements();
  expectOperandCount(call, 1, size);
  if (call.kernel == Kernel::SgdUpdate) {
    // (param, grad, lr[, momentum_buffer])
    expectOperandCount(call, 2, 1);
    kernels::SgdParams p = getSgdParams(call);
    if (p.momentum != 0.0 && !hasOperand(call, 3))
      fail("SGD with momentum needs a momentum buffer (operand 3)");
    if (hasOperand(call, 3))
      expectOperandCount(call, 3, size);
  } else {
    // (param, grad, exp_avg, exp_avg_sq, lr, step)
    expectOperandCount(call, 2, size);
    expectOperandCount(call, 3, size);
    expectOperandCount(call, 4, 1);
    expectOperandCount(call, 5, 1, DType::I64);
  }
  return size;
}

kernels::SgdParams getSgdParams(const KernelCall &call) {
  kernels::SgdParams p;
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

kernels::AdamWParams getAdamWParams(const KernelCall &call) {
  kernels::AdamWParams p;
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

ReduceOp getAllReduceOp(const KernelCall &call) {
  size_t count = call.operands.size();
  if (count == 0)
    fail("has no operands");
  for (size_t i = 0; i < count; ++i) {
    const TensorArg &arg = call.operand(i);
    if (!arg.present)
      fail(operandName(call.kernel, i) + " is missing");
    if (arg.dtype != DType::F32 && arg.dtype != DType::F64 &&
        arg.dtype != DType::I32 && arg.dtype != DType::I64)
      fail(operandName(call.kernel, i) + " is " + EnumNameDType(arg.dtype) +
           ", expected F32, F64, I32 or I64");
    if (arg.getNumElements() < 0)
      fail(operandName(call.kernel, i) + " has invalid dims " +
           formatDims(arg.dims));
  }
  const AllReduceAttrs *attrs =
      call.instruction ? call.instruction->attrs_as_AllReduceAttrs() : nullptr;
  ReduceOp op = attrs ? attrs->op() : ReduceOp::Sum;
  if (op != ReduceOp::Sum && op != ReduceOp::Mean && op != ReduceOp::Max)
    fail("unknown reduce op " + std::to_string(static_cast<int>(op)));
  return op;
}

double getFillValue(const KernelCall &call) {
  const FillAttrs *attrs =
      call.instruction ? call.instruction->attrs_as_FillAttrs() : nullptr;
  return attrs ? attrs->value() : 0.0;
}

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
void checkTranspose(const KernelCall &call) { getTransposeShape(call); }
void checkPermute(const KernelCall &call) { getPermuteShape(call); }
void checkConcat(const KernelCall &call) { getJoinShape(call); }
void checkReduce(const KernelCall &call) { getReduceShape(call); }
void checkOptimizer(const KernelCall &call) { getOptimizerSize(call); }
void checkAllReduce(const KernelCall &call) { getAllReduceOp(call); }
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
#include "runtime/plan/Kernels.def"
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
