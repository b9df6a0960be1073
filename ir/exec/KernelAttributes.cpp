//===- KernelAttributes.cpp - exec.kernel attributes as plan tables -------===//

#include "ir/exec/KernelAttributes.h"
#include "runtime/abi/SharedCast.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"

using namespace mlir;
namespace plan = dpc::plan;

namespace dpc::exec {

FailureOr<plan::DType> getPlanDType(Type type, Location loc) {
  if (type.isF32())
    return plan::DType::F32;
  if (type.isF64())
    return plan::DType::F64;
  if (type.isF16())
    return plan::DType::F16;
  if (type.isBF16())
    return plan::DType::BF16;
  if (type.isInteger(32))
    return plan::DType::I32;
  if (type.isInteger(64))
    return plan::DType::I64;
  if (type.isInteger(8)) // raw bytes: a kernel's workspace
    return plan::DType::U8;
  return emitError(loc) << "element type " << type << " has no plan equivalent";
}

namespace {

/// Reads `op`'s kernel attributes by name, each of one expected kind;
/// `failed` is set (with a diagnostic) on the first of another kind.
class AttributeReader {
public:
  explicit AttributeReader(Operation *op) : op(op) {}

  std::vector<int64_t> list(StringRef name) {
    if (auto attr = get<DenseI64ArrayAttr>(name, "an i64 array"))
      return std::vector<int64_t>(attr.asArrayRef());
    return {};
  }
  std::vector<double> reals(StringRef name) {
    if (auto attr = get<DenseF64ArrayAttr>(name, "an f64 array"))
      return std::vector<double>(attr.asArrayRef());
    return {};
  }
  bool has(StringRef name) const { return op->hasAttr(name); }
  double real(StringRef name, double fallback) {
    if (auto attr = get<FloatAttr>(name, "a float"))
      return attr.getValueAsDouble();
    return fallback;
  }
  bool flag(StringRef name) {
    auto attr = get<BoolAttr>(name, "a bool");
    return attr && attr.getValue();
  }
  int64_t integer(StringRef name, int64_t fallback) {
    if (auto attr = get<IntegerAttr>(name, "an integer"))
      return attr.getInt();
    return fallback;
  }
  FailureOr<plan::ReduceOp> reduction(StringRef name) {
    auto attr = get<StringAttr>(name, "a string");
    if (!attr)
      return plan::ReduceOp::Sum;
    if (attr.getValue() == "sum")
      return plan::ReduceOp::Sum;
    if (attr.getValue() == "mean")
      return plan::ReduceOp::Mean;
    if (attr.getValue() == "max")
      return plan::ReduceOp::Max;
    op->emitOpError() << "'" << name << "' must be sum, mean or max, got '"
                      << attr.getValue() << "'";
    failed = true;
    return failure();
  }

  bool failed = false;

private:
  template <typename AttrT> AttrT get(StringRef name, const char *kind) {
    Attribute attr = op->getAttr(name);
    if (!attr)
      return {};
    if (auto typed = dyn_cast<AttrT>(attr))
      return typed;
    if (!failed)
      op->emitOpError() << "'" << name << "' must be " << kind << ", got "
                        << attr;
    failed = true;
    return {};
  }

  Operation *op;
};

/// The plan table `table` read from the op's attributes.
// size: one case per attribute table of the plan schema, each a few reads,
// side by side so a new table's case reads like its neighbours.
plan::KernelAttrsUnion read(AttributeReader &r, plan::KernelAttrs table) {
  plan::KernelAttrsUnion attrs;
  switch (table) {
  case plan::KernelAttrs::NONE:
    break;
  case plan::KernelAttrs::Conv2dAttrs: {
    plan::Conv2dAttrsT conv;
    conv.stride = r.list("stride");
    conv.padding = r.list("padding");
    conv.dilation = r.list("dilation");
    conv.groups = r.integer("groups", conv.groups);
    attrs.Set(std::move(conv));
    break;
  }
  case plan::KernelAttrs::Pool2dAttrs: {
    plan::Pool2dAttrsT pool;
    pool.kernel = r.list("kernel_size");
    pool.stride = r.list("stride");
    pool.padding = r.list("padding");
    pool.dilation = r.list("dilation");
    pool.ceil_mode = r.flag("ceil_mode");
    pool.count_include_pad = r.flag("count_include_pad");
    attrs.Set(std::move(pool));
    break;
  }
  case plan::KernelAttrs::BatchNormAttrs: {
    plan::BatchNormAttrsT bn;
    bn.epsilon = r.real("epsilon", bn.epsilon);
    bn.momentum = r.real("momentum", bn.momentum);
    attrs.Set(std::move(bn));
    break;
  }
  case plan::KernelAttrs::PadAttrs: {
    plan::PadAttrsT pad;
    pad.low = r.list("low");
    pad.high = r.list("high");
    pad.value = r.real("value", 0.0);
    attrs.Set(std::move(pad));
    break;
  }
  case plan::KernelAttrs::SgdAttrs: {
    plan::SgdAttrsT sgd;
    sgd.momentum = r.real("momentum", 0.0);
    sgd.dampening = r.real("dampening", 0.0);
    sgd.weight_decay = r.real("weight_decay", 0.0);
    sgd.nesterov = r.flag("nesterov");
    attrs.Set(std::move(sgd));
    break;
  }
  case plan::KernelAttrs::AdamWAttrs: {
    plan::AdamWAttrsT adamw;
    adamw.beta1 = r.real("beta1", adamw.beta1);
    adamw.beta2 = r.real("beta2", adamw.beta2);
    adamw.eps = r.real("eps", adamw.eps);
    adamw.weight_decay = r.real("weight_decay", adamw.weight_decay);
    attrs.Set(std::move(adamw));
    break;
  }
  case plan::KernelAttrs::FillAttrs: {
    plan::FillAttrsT fill;
    fill.value = r.real("value", 0.0);
    attrs.Set(std::move(fill));
    break;
  }
  case plan::KernelAttrs::ReduceAttrs: {
    plan::ReduceAttrsT reduce;
    reduce.dims = r.list("dims");
    attrs.Set(std::move(reduce));
    break;
  }
  case plan::KernelAttrs::ClipAttrs: {
    plan::ClipAttrsT clip;
    clip.min = r.real("min", 0.0);
    clip.max = r.real("max", 0.0);
    attrs.Set(std::move(clip));
    break;
  }
  case plan::KernelAttrs::HardSigmoidAttrs: {
    plan::HardSigmoidAttrsT hardSigmoid;
    hardSigmoid.alpha = r.real("alpha", hardSigmoid.alpha);
    hardSigmoid.beta = r.real("beta", hardSigmoid.beta);
    attrs.Set(std::move(hardSigmoid));
    break;
  }
  case plan::KernelAttrs::ActivationAttrs: {
    plan::ActivationAttrsT activation;
    activation.alpha = r.real("alpha", 0.0);
    activation.beta = r.real("beta", 0.0);
    attrs.Set(std::move(activation));
    break;
  }
  case plan::KernelAttrs::GeluAttrs: {
    plan::GeluAttrsT gelu;
    gelu.tanh_approximation = r.flag("tanh_approximation");
    attrs.Set(std::move(gelu));
    break;
  }
  case plan::KernelAttrs::TransposeAttrs: {
    plan::TransposeAttrsT transpose;
    transpose.permutation = r.list("permutation");
    attrs.Set(std::move(transpose));
    break;
  }
  case plan::KernelAttrs::ConcatAttrs: {
    plan::ConcatAttrsT concat;
    concat.axis = r.integer("axis", -1);
    attrs.Set(std::move(concat));
    break;
  }
  case plan::KernelAttrs::DropoutAttrs: {
    plan::DropoutAttrsT dropout;
    dropout.ratio = r.real("ratio", -1.0);
    dropout.key = r.integer("key", -1);
    dropout.rowwise = r.flag("rowwise");
    dropout.span = r.integer("span", 1);
    dropout.scale = r.real("scale", 0.0);
    dropout.shift = r.real("shift", 0.0);
    dropout.fill = r.real("fill", 0.0);
    dropout.uniform = r.flag("uniform");
    attrs.Set(std::move(dropout));
    break;
  }
  case plan::KernelAttrs::LayerNormAttrs: {
    plan::LayerNormAttrsT layerNorm;
    layerNorm.axis = r.integer("axis", -1);
    layerNorm.epsilon = r.real("epsilon", layerNorm.epsilon);
    attrs.Set(std::move(layerNorm));
    break;
  }
  case plan::KernelAttrs::BatchMatmulAttrs: {
    plan::BatchMatmulAttrsT batchMatmul;
    batchMatmul.transpose_a = r.flag("transpose_a");
    batchMatmul.transpose_b = r.flag("transpose_b");
    attrs.Set(std::move(batchMatmul));
    break;
  }
  case plan::KernelAttrs::LossAttrs: {
    plan::LossAttrsT loss;
    loss.kind = static_cast<plan::LossKind>(r.integer("kind", 0));
    loss.class_axis = r.integer("class_axis", loss.class_axis);
    loss.has_ignore_index = r.has("ignore_index");
    loss.ignore_index = r.integer("ignore_index", 0);
    loss.label_smoothing = r.real("label_smoothing", 0.0);
    loss.delta = r.real("delta", loss.delta);
    loss.weights = r.reals("weights");
    attrs.Set(std::move(loss));
    break;
  }
  case plan::KernelAttrs::AllReduceAttrs: {
    plan::AllReduceAttrsT allReduce;
    if (FailureOr<plan::ReduceOp> op = r.reduction("op"); succeeded(op))
      allReduce.op = *op;
    attrs.Set(std::move(allReduce));
    break;
  }
  case plan::KernelAttrs::AllGatherAttrs: {
    plan::AllGatherAttrsT allGather;
    allGather.sizes = r.list("sizes");
    attrs.Set(std::move(allGather));
    break;
  }
  case plan::KernelAttrs::ReduceScatterAttrs: {
    plan::ReduceScatterAttrsT reduceScatter;
    if (FailureOr<plan::ReduceOp> op = r.reduction("op"); succeeded(op))
      reduceScatter.op = *op;
    reduceScatter.sizes = r.list("sizes");
    attrs.Set(std::move(reduceScatter));
    break;
  }
  }
  return attrs;
}

} // namespace

FailureOr<plan::KernelAttrsUnion>
convertKernelAttrs(Operation *op, const plan::KernelSignature &signature) {
  AttributeReader reader(op);
  plan::KernelAttrsUnion attrs = read(reader, signature.attrs);
  if (reader.failed)
    return failure();
  return attrs;
}

FailureOr<plan::DType>
convertKernelPrecision(Operation *op, const plan::KernelSignature &signature) {
  Attribute attr = op->getAttr(kPrecisionAttrName);
  if (!attr)
    return plan::DType::F32;
  auto type = dyn_cast<TypeAttr>(attr);
  if (!type || !(type.getValue().isF32() || type.getValue().isBF16() ||
                 type.getValue().isTF32()))
    return op->emitOpError() << "'" << kPrecisionAttrName
                             << "' must be f32, bf16 or tf32, got " << attr;
  if (type.getValue().isF32())
    return plan::DType::F32;
  if (!signature.has(plan::kMixedPrecision))
    return op->emitOpError() << signature.name << " computes in f32 only, not "
                             << (type.getValue().isBF16() ? "bf16" : "tf32");
  return type.getValue().isBF16() ? plan::DType::BF16 : plan::DType::TF32;
}

FailureOr<SharedCast> convertKernelSharedCast(Operation *op,
                                              plan::Kernel kernel,
                                              plan::DType precision) {
  SharedCast shared;
  Attribute slot = op->getAttr(kCastSlotAttrName);
  bool reuse = op->hasAttr(kCastReuseAttrName);
  if (!slot) {
    if (reuse)
      return op->emitOpError() << "'" << kCastReuseAttrName << "' needs a '"
                               << kCastSlotAttrName << "'";
    return shared;
  }
  auto integer = dyn_cast<IntegerAttr>(slot);
  if (!integer || integer.getInt() < 1 ||
      integer.getInt() > plan::kMaxCastSlots)
    return op->emitOpError()
           << "'" << kCastSlotAttrName << "' must be an integer in [1, "
           << plan::kMaxCastSlots << "], got " << slot;
  if (reuse && !isa<UnitAttr>(op->getAttr(kCastReuseAttrName)))
    return op->emitOpError()
           << "'" << kCastReuseAttrName << "' must be a unit attribute";
  if (plan::getSharedCastOperand(kernel) < 0)
    return op->emitOpError() << plan::EnumNameKernel(kernel)
                             << " cannot share the cast of an operand";
  if (precision != plan::DType::BF16)
    return op->emitOpError()
           << "'" << kCastSlotAttrName << "' on a call that is not bf16";
  shared.slot = static_cast<int32_t>(integer.getInt());
  shared.reuse = reuse;
  return shared;
}

} // namespace dpc::exec
