//===- Activation.cpp - activations, softmax and dropout ------------------===//
//
// Elementwise activations (Relu, Sigmoid, Tanh, Erf, HardSigmoid,
// HardSwish, Gelu, Clip, LeakyRelu, Elu, Selu, Celu, Softplus, Mish, Abs,
// Log, PRelu), Softmax and LogSoftmax, and Dropout (random masks written
// out as ops are ExporterIdioms.cpp's).
//
//===----------------------------------------------------------------------===//

#include "frontend/onnx/Importer.h"
#include "frontend/onnx/OnnxOpTable.h"

#include "ir/nn/NNOps.h"

#include "frontend/onnx/ModelValidation.h"

using namespace mlir;

namespace dpc::frontend {
namespace {

void importRelu(Importer &im, const onnx::NodeProto &node) {
  im.define(node, 0, im.create<nn::ReluOp>(im.operand(node, 0)));
}

void importSigmoid(Importer &im, const onnx::NodeProto &node) {
  im.define(node, 0, im.create<nn::SigmoidOp>(im.operand(node, 0)));
}

void importTanh(Importer &im, const onnx::NodeProto &node) {
  im.define(node, 0, im.create<nn::TanhOp>(im.operand(node, 0)));
}

void importErf(Importer &im, const onnx::NodeProto &node) {
  im.define(node, 0, im.create<nn::ErfOp>(im.operand(node, 0)));
}

void importHardSwish(Importer &im, const onnx::NodeProto &node) {
  im.define(node, 0, im.create<nn::HardSwishOp>(im.operand(node, 0)));
}

void importHardSigmoid(Importer &im, const onnx::NodeProto &node) {
  im.define(
      node, 0,
      im.create<nn::HardSigmoidOp>(
          im.operand(node, 0),
          {im.named("alpha", im.opBuilder().getF64FloatAttr(shortestDecimal(
                                 floatAttr(node, "alpha", 0.2f)))),
           im.named("beta", im.opBuilder().getF64FloatAttr(shortestDecimal(
                                floatAttr(node, "beta", 0.5f))))}));
}

void importGelu(Importer &im, const onnx::NodeProto &node) {
  std::string approximate = stringAttr(node, "approximate", "none");
  if (approximate != "none" && approximate != "tanh")
    fail("approximate must be none or tanh, got '" + approximate + "'");
  im.define(node, 0,
            im.create<nn::GeluOp>(
                im.operand(node, 0),
                {im.named("tanh_approximation",
                          im.opBuilder().getBoolAttr(approximate == "tanh"))}));
}

/// The named float attribute `name` of `node` (`fallback` where absent), as
/// the op attribute of the same name.
NamedAttribute floatParam(Importer &im, const onnx::NodeProto &node,
                          const char *name, float fallback) {
  return im.named(name, im.opBuilder().getF64FloatAttr(
                            shortestDecimal(floatAttr(node, name, fallback))));
}

void importLeakyRelu(Importer &im, const onnx::NodeProto &node) {
  im.define(node, 0,
            im.create<nn::LeakyReluOp>(im.operand(node, 0),
                                       {floatParam(im, node, "alpha", 0.01f)}));
}

void importElu(Importer &im, const onnx::NodeProto &node) {
  im.define(node, 0,
            im.create<nn::EluOp>(im.operand(node, 0),
                                 {floatParam(im, node, "alpha", 1.f)}));
}

void importSelu(Importer &im, const onnx::NodeProto &node) {
  im.define(node, 0,
            im.create<nn::SeluOp>(
                im.operand(node, 0),
                {floatParam(im, node, "alpha", 1.67326319217681884765625f),
                 floatParam(im, node, "gamma", 1.05070102214813232421875f)}));
}

void importCelu(Importer &im, const onnx::NodeProto &node) {
  if (floatAttr(node, "alpha", 1.f) == 0)
    fail("alpha must not be 0");
  im.define(node, 0,
            im.create<nn::CeluOp>(im.operand(node, 0),
                                  {floatParam(im, node, "alpha", 1.f)}));
}

// ONNX's Softplus, log(exp(x) + 1), is PyTorch's at beta 1; PyTorch's
// threshold (20) changes no float32 value there.
void importSoftplus(Importer &im, const onnx::NodeProto &node) {
  im.define(node, 0, im.create<nn::SoftplusOp>(im.operand(node, 0)));
}

void importMish(Importer &im, const onnx::NodeProto &node) {
  im.define(node, 0, im.create<nn::MishOp>(im.operand(node, 0)));
}

void importAbs(Importer &im, const onnx::NodeProto &node) {
  im.define(node, 0, im.create<nn::AbsOp>(im.operand(node, 0)));
}

// Log of a sigmoid (how both exporters write LogSigmoid) is nn.log_sigmoid,
// which does not round sigmoid's small values to 0 first.
void importLog(Importer &im, const onnx::NodeProto &node) {
  Value input = im.operand(node, 0);
  if (auto sigmoid = input.getDefiningOp<nn::SigmoidOp>()) {
    im.define(node, 0, im.create<nn::LogSigmoidOp>(sigmoid.getInput()));
    return;
  }
  im.define(node, 0, im.create<nn::LogOp>(input));
}

// PRelu(x, slope) = relu(x) + slope (x - relu(x)), the slope broadcast to x
// (per channel: [C, 1, ...]); the ops' gradients are PyTorch's, the slope's
// summed over what it was broadcast along, also at x = 0.
void importPRelu(Importer &im, const onnx::NodeProto &node) {
  Value x = im.operand(node, 0), slope = im.operand(node, 1);
  Value relu = im.create<nn::ReluOp>(x);
  Value negativePart = im.create<nn::AddOp>({x, im.createNegation(relu)});
  im.define(node, 0,
            im.create<nn::AddOp>(
                {relu, im.create<nn::MulOp>({negativePart, slope})}));
}

void importClip(Importer &im, const onnx::NodeProto &node) {
  // From opset 11 the bounds are optional inputs (constants, or shape
  // arithmetic on them); a missing one is the float range's end.
  auto bound = [&](int i, double fallback) {
    if (i >= node.input_size() || node.input(i).empty())
      return fallback;
    std::optional<double> value = im.knownScalar(node, i);
    if (!value)
      fail("input '" + node.input(i) + "' (a bound) must be a constant scalar");
    return *value;
  };
  double lowest = -std::numeric_limits<float>::max();
  double min = shortestDecimal(static_cast<float>(bound(1, lowest)));
  double max = shortestDecimal(
      static_cast<float>(bound(2, std::numeric_limits<float>::max())));
  if (min > max)
    fail("min " + std::to_string(min) + " is above max " + std::to_string(max));
  im.define(node, 0,
            im.create<nn::ClipOp>(
                im.operand(node, 0),
                {im.named("min", im.opBuilder().getF64FloatAttr(min)),
                 im.named("max", im.opBuilder().getF64FloatAttr(max))}));
}

void importSoftmax(Importer &im, const onnx::NodeProto &node, bool isLog) {
  Value input = im.operand(node, 0);
  int64_t rank = cast<RankedTensorType>(input.getType()).getRank();
  int64_t axis = intAttr(node, "axis", im.getOpset() < 13 ? 1 : -1);
  if (axis < 0)
    axis += rank;
  // Before opset 13, softmax flattened the dims from `axis` on into one; that
  // is a softmax along `axis` only when `axis` is the last dim.
  if (im.getOpset() < 13 && axis != rank - 1)
    fail("softmax over the flattened dims from axis " + std::to_string(axis) +
         " of a rank-" + std::to_string(rank) +
         " input (opset < 13 semantics) is not supported");
  // The kernels take rows of the last dim: another axis (Softmax2d's
  // channels) is swapped with it before and after.
  SmallVector<int64_t> swap = llvm::to_vector(llvm::seq<int64_t>(rank));
  std::swap(swap[axis], swap[rank - 1]);
  if (axis != rank - 1)
    input =
        im.create<nn::TransposeOp>(input, {im.i64Array("permutation", swap)});
  NamedAttribute axisAttr =
      im.named("axis", im.opBuilder().getI64IntegerAttr(rank - 1));
  Value result = isLog ? im.create<nn::LogSoftmaxOp>(input, {axisAttr})
                       : im.create<nn::SoftmaxOp>(input, {axisAttr});
  if (axis != rank - 1)
    result =
        im.create<nn::TransposeOp>(result, {im.i64Array("permutation", swap)});
  im.define(node, 0, result);
}

void importDropout(Importer &im, const onnx::NodeProto &node) {
  Value input = im.operand(node, 0);
  if (node.output_size() > 1 && !node.output(1).empty())
    im.markUnavailable(
        node.output(1),
        "value '" + node.output(1) +
            "' (dropout mask) is read by a node; dpc draws masks itself");
  // From opset 12, ratio and training_mode are optional inputs (constants);
  // without training_mode, or with it false, Dropout is the identity.
  // Before, ratio is an attribute, and an exporter writes Dropout only for a
  // training-mode model (an evaluation export leaves it out).
  auto scalar = [&](int i) -> std::optional<double> {
    if (i >= node.input_size() || node.input(i).empty())
      return std::nullopt;
    std::optional<double> value = im.knownScalar(node, i);
    if (!value)
      fail("input '" + node.input(i) + "' must be a constant scalar");
    return value;
  };
  double ratio = im.getOpset() >= 12 ? scalar(1).value_or(0.5)
                                     : floatAttr(node, "ratio", 0.5f);
  bool training = im.getOpset() >= 12 ? scalar(2).value_or(0.0) != 0 : true;
  if (!training || ratio == 0) {
    im.define(node, 0, input);
    return;
  }
  im.define(node, 0,
            im.createDropout(input, shortestDecimal(static_cast<float>(ratio)),
                             /*rowwise=*/false));
}

} // namespace

void registerActivationOps(OnnxOpTable &table) {
  table.add("Relu", importRelu);
  table.add("Sigmoid", importSigmoid);
  table.add("Tanh", importTanh);
  table.add("Erf", importErf);
  table.add("HardSigmoid", importHardSigmoid);
  // dpc has read HardSwish and Gelu at every opset it imports, also
  // before ONNX defined them (14, 20); kept so.
  table.add("HardSwish", kMinOpset, kMaxOpset, importHardSwish);
  table.add("Gelu", kMinOpset, kMaxOpset, importGelu);
  table.add("Clip", importClip);
  table.add("LeakyRelu", importLeakyRelu);
  table.add("Elu", importElu);
  table.add("Selu", importSelu);
  table.add("Celu", importCelu);
  table.add("Softplus", importSoftplus);
  table.add("Mish", importMish);
  table.add("Abs", importAbs);
  table.add("Log", importLog);
  table.add("PRelu", importPRelu);
  table.add("Softmax", [](Importer &im, const onnx::NodeProto &node) {
    importSoftmax(im, node, /*isLog=*/false);
  });
  table.add("LogSoftmax", [](Importer &im, const onnx::NodeProto &node) {
    importSoftmax(im, node, /*isLog=*/true);
  });
  table.add("Dropout", importDropout);
}

} // namespace dpc::frontend
