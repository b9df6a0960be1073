//===- Importer.h - the ONNX graph walk and its value table -----*- C++ -*-===//
//
// The importer walks a checked ModelProto's nodes in order and binds each
// ONNX value name to what dpc knows of it. Most names become nn values, but
// some stay deferred until a node reads them as a tensor: an initializer (a
// function argument at its first use), a Constant node, a tensor known at
// import (KnownValues.cpp), a random mask on its way to a dropout
// (ExporterIdioms.cpp), an LSTM view or fill (LstmImport.h), and outputs that
// have no nn counterpart ("unavailable"). A node is imported by the handler
// its op family registered in the OnnxOpTable (ops/), unless an exporter
// idiom, LSTM or the folder took it first.
//
// Every op is built with placeholder result types that the nn dialect's own
// shape inference then fills in, so a model whose shapes do not fit is
// reported at the node that breaks them, with the op's own message.
//
// Internal to frontend/onnx: it needs ONNX's protobuf classes, and so
// exceptions (ONNXImporter.h is the public entry point).
//
//===----------------------------------------------------------------------===//

#ifndef DPC_FRONTEND_ONNX_IMPORTER_H
#define DPC_FRONTEND_ONNX_IMPORTER_H

#include "frontend/onnx/ImportContext.h"
#include "frontend/onnx/LstmImport.h"
#include "frontend/onnx/ShapeFolding.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <onnx/onnx_pb.h>

#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dpc::frontend {

/// An import failure: its message is the one line the user sees.
struct ImportError {
  std::string message;
};

[[noreturn]] inline void fail(const std::string &message) {
  throw ImportError{message};
}

/// ONNX stores these attributes as float32: read 1e-5f back as 1e-5 rather
/// than as the double nearest the float (9.99999974e-6), so the IR shows the
/// value the model's author wrote.
double shortestDecimal(float value);

mlir::FailureOr<mlir::Type> elementTypeOf(mlir::MLIRContext &ctx,
                                          int32_t onnxType);

/// `type` as MLIR prints it, for messages.
std::string typeToString(mlir::Type type);

/// nn.reshape's target for `dims`: the batch's dim, whichever it is, is
/// left for shape inference (-1), so it follows the batch at run time.
llvm::SmallVector<int64_t> reshapeTarget(llvm::ArrayRef<int64_t> dims);

/// Static element count of `type` without its dynamic dims.
int64_t staticElements(mlir::RankedTensorType type);

/// `axes` as dims in [0, rank), each once; fails naming a bad one.
llvm::SmallVector<int64_t> normalizeAxes(llvm::ArrayRef<int64_t> axes,
                                         int64_t rank);

/// An end that means "to the end of the dim" whatever its size: exporters
/// write INT64_MAX (or INT32_MAX) for x[:, ...].
constexpr int64_t kMaxSliceEnd = std::numeric_limits<int32_t>::max();

//===----------------------------------------------------------------------===//
// Tensor data
//===----------------------------------------------------------------------===//

/// The number of elements `tensor`'s dims say it has; fails on a negative
/// dim or a count whose bytes would overflow.
size_t elementCount(const onnx::TensorProto &tensor);

/// Reads `count` little-endian values of type T from raw_data or the typed
/// repeated field.
template <typename T, typename Repeated>
std::vector<T> tensorValues(const onnx::TensorProto &tensor,
                            const Repeated &typed, size_t count) {
  std::vector<T> result(count);
  if (tensor.has_raw_data()) {
    const std::string &raw = tensor.raw_data();
    if (raw.size() != count * sizeof(T))
      fail("tensor '" + tensor.name() + "' holds " +
           std::to_string(raw.size()) + " bytes of data, expected " +
           std::to_string(count * sizeof(T)));
    std::memcpy(result.data(), raw.data(), raw.size());
    return result;
  }
  if (static_cast<size_t>(typed.size()) != count)
    fail("tensor '" + tensor.name() + "' holds " +
         std::to_string(typed.size()) + " values, expected " +
         std::to_string(count));
  for (size_t i = 0; i < count; ++i)
    result[i] = static_cast<T>(typed.Get(i));
  return result;
}

//===----------------------------------------------------------------------===//
// Node attributes
//===----------------------------------------------------------------------===//

const onnx::AttributeProto *attr(const onnx::NodeProto &node,
                                 llvm::StringRef name);
int64_t intAttr(const onnx::NodeProto &node, llvm::StringRef name,
                int64_t dflt);
float floatAttr(const onnx::NodeProto &node, llvm::StringRef name, float dflt);
llvm::SmallVector<int64_t> intsAttr(const onnx::NodeProto &node,
                                    llvm::StringRef name,
                                    llvm::ArrayRef<int64_t> dflt);
std::string stringAttr(const onnx::NodeProto &node, llvm::StringRef name,
                       llvm::StringRef dflt);
/// Conv's and pooling's pads as nn's 2-D ones, [top, left, bottom, right];
/// a 1-D op (`spatialRank` 1) runs on [N, C, 1, L], so its pads are the
/// width's.
llvm::SmallVector<int64_t> spatialPads(const onnx::NodeProto &node,
                                       int64_t spatialRank = 2);
/// Attribute `name` (strides, dilations, kernel_shape) as nn's 2-D values,
/// one per spatial dim: a 1-D op's on the width, `dflt` on the height.
llvm::SmallVector<int64_t> spatialInts(const onnx::NodeProto &node,
                                       llvm::StringRef name,
                                       int64_t spatialRank, int64_t dflt);

/// PyTorch's padding_idx of the embedding lookup `node` (ExporterIdioms.cpp).
std::optional<int64_t> embeddingPaddingIdx(const onnx::NodeProto &node);

/// The value of `node`'s metadata entry `key` (IR 10's metadata_props,
/// where PyTorch 2's exporter says which module and rewrite a node is from).
std::optional<std::string> getNodeMetadata(const onnx::NodeProto &node,
                                           llvm::StringRef key);

/// Refuses `node` if the exporter's optimizer rewrote it in a way that
/// computes the same inference but not the same training (batch norm
/// folded into a convolution's weights).
void checkExportRewrite(const onnx::NodeProto &node);

//===----------------------------------------------------------------------===//
// Importer
//===----------------------------------------------------------------------===//

/// The values of a run-time tensor (`subject`) where a comparison with a
/// constant holds (or Or of two of them): sorted, disjoint intervals.
struct ValueSet {
  struct Interval {
    double lo, hi;
    bool loClosed, hiClosed;
  };
  mlir::Value subject;
  llvm::SmallVector<Interval, 2> intervals;
};

class Importer : public ImportContext {
public:
  Importer(mlir::MLIRContext &ctx, llvm::StringRef path,
           const onnx::ModelProto &model)
      : ctx(ctx), builder(&ctx), path(path), model(model),
        graph(model.graph()) {}

  mlir::OwningOpRef<mlir::ModuleOp> run();

  //===--------------------------------------------------------------------===//
  // What the op families' handlers (ops/) import with.
  //===--------------------------------------------------------------------===//

  /// The default-domain opset the model is imported at.
  int64_t getOpset() const { return opset; }
  /// The first data input: what sizes a tensor expanded to the batch.
  mlir::Value getDataInput() const { return dataInput; }
  /// The static batch size the data inputs were exported with, if any.
  std::optional<int64_t> getExportedBatch() const { return exportedBatch; }

  /// Imports the nodes of `branch` (an If's, whose condition is known) in
  /// the enclosing graph's scope.
  void importBranch(const onnx::GraphProto &branch);

  // Values (Importer.cpp).
  /// The value `name` is bound to. An initializer becomes a function
  /// argument at its first use: nn.buffer where `isBuffer` (the node reads
  /// it as state) or the exporter says it is a buffer, else nn.param.
  mlir::Value lookup(const std::string &name, bool isBuffer = false);
  mlir::Value operand(const onnx::NodeProto &node, int i,
                      bool isBuffer = false);
  mlir::Value optionalOperand(const onnx::NodeProto &node, int i);
  const onnx::TensorProto *constantTensor(const std::string &name) const;
  bool isInitializer(const std::string &name) const {
    return initializers.count(name);
  }
  mlir::DenseElementsAttr toElementsAttr(const onnx::TensorProto &tensor);
  void define(const onnx::NodeProto &node, int i, mlir::Value value);
  /// Makes reading `name` fail with `message`: an output with no nn
  /// counterpart (batch-norm's running statistics, a dropout mask).
  void markUnavailable(const std::string &name, std::string message) {
    unavailable[name] = std::move(message);
  }
  /// How many times the batch the dynamic dim of `value` is: 1 for the
  /// batch itself, more where a reshape merged it with static dims.
  int64_t batchScaleOf(mlir::Value value);
  /// A new tensor the importer keeps for as long as it runs.
  onnx::TensorProto *ownTensor();
  /// Binds `name` to a Constant node's value, materialized only if a node
  /// reads it as a tensor.
  void bindConstantNode(const std::string &name,
                        const onnx::TensorProto *tensor) {
    constantNodes[name] = tensor;
  }
  /// Makes `output` a parameter of its own that starts out equal to
  /// initializer `input`; false if `input` is no initializer or `output` is
  /// already bound.
  bool copyInitializer(const std::string &input, const std::string &output);
  /// SplitToSequence's parts, for SequenceAt; null for an unknown sequence.
  void bindSequence(const std::string &name,
                    llvm::SmallVector<mlir::Value> parts) {
    sequences[name] = std::move(parts);
  }
  const llvm::SmallVector<mlir::Value> *
  sequenceOf(const std::string &name) const;

  // Values known at import (KnownValues.cpp).
  /// Input `i` as integers; kBatch entries only if `allowBatch`.
  llvm::SmallVector<int64_t> constantInts(const onnx::NodeProto &node, int i,
                                          bool allowBatch = false);
  /// The value of `name` if it is known at import (ShapeFolding.h): shape
  /// arithmetic's results, Constant nodes, integer initializers. Float
  /// initializers are parameters, never folded away.
  const KnownTensor *knownValue(const std::string &name);
  /// Input `i` as a number if it is given and a known one-element tensor.
  std::optional<double> knownScalar(const onnx::NodeProto &node, int i);
  /// The ONNX element type of value `name`.
  int32_t onnxTypeOf(const std::string &name);

  // Exporter idioms (ExporterIdioms.cpp).
  /// The operands of a binary elementwise node; a known value repeated for
  /// each sample meeting a batch tensor is one sample's constant.
  std::pair<mlir::Value, mlir::Value>
  elementwiseOperands(const onnx::NodeProto &node);
  /// What known value `name` repeats for each sample, if it is one.
  const KnownTensor *repeatedSample(const std::string &name);
  /// IsNaN: its output may only be read by importNanGuard.
  void recordNanTest(const onnx::NodeProto &node);
  /// Where(IsNaN(p), c, p) on a softmax; false if `node` is no such guard.
  bool importNanGuard(const onnx::NodeProto &node);
  /// Where of a known condition between a tensor and a known value (a
  /// causal attention mask's masked_fill): x * keep + fill.
  void importWhere(const onnx::NodeProto &node);
  /// Rows `ids` (constant, consecutive or one repeated) of `table`, shaped
  /// [ids dims..., features].
  mlir::Value constantRows(mlir::Value table, const KnownTensor &ids);

  // Op construction shared by families (Importer.cpp).
  mlir::NamedAttribute named(llvm::StringRef name, mlir::Attribute value) {
    return builder.getNamedAttr(name, value);
  }
  mlir::NamedAttribute i64Array(llvm::StringRef name,
                                llvm::ArrayRef<int64_t> values) {
    return named(name, builder.getDenseI64ArrayAttr(values));
  }
  /// Dims [start, end) of `axis` (not the batch) of `input`.
  mlir::Value createSlice(mlir::Value input, int64_t axis, int64_t start,
                          int64_t end);
  llvm::SmallVector<mlir::Value> createSplit(mlir::Value input, int64_t axis,
                                             llvm::ArrayRef<int64_t> sizes);
  /// `input` reshaped to `dims` (a dynamic dim stays the batch's).
  mlir::Value createReshape(mlir::Value input, llvm::ArrayRef<int64_t> dims);
  /// `input` with a unit dim inserted at `axis`, or removed from it: a 1-D
  /// convolution or pooling runs as the 2-D one on [N, C, 1, L].
  mlir::Value insertUnitDim(mlir::Value input, int64_t axis);
  mlir::Value removeUnitDim(mlir::Value input, int64_t axis);
  /// -input, as input times -1 (exact in IEEE arithmetic).
  mlir::Value createNegation(mlir::Value input);
  /// A comparison's output (ops/Threshold.cpp): only Where may read it.
  void recordComparison(const std::string &name, ValueSet set) {
    markUnavailable(name, "value '" + name +
                              "' (a comparison) is read other than by "
                              "Where, which dpc does not support");
    comparisons[name] = std::move(set);
  }
  /// The comparison `name` is the output of, or null.
  const ValueSet *comparison(const std::string &name) const {
    auto it = comparisons.find(name);
    return it == comparisons.end() ? nullptr : &it->second;
  }
  /// nn.dropout with the next training-mode dropout's mask key, or `key`
  /// (another product with a mask already drawn); `extra` attributes (its
  /// span, scale, shift and fill).
  mlir::Value createDropout(mlir::Value input, double ratio, bool rowwise,
                            llvm::ArrayRef<mlir::NamedAttribute> extra = {},
                            std::optional<int64_t> key = std::nullopt);

  // ImportContext, for LstmImport and the handlers; create<OpTy> builds
  // through `build`.
  mlir::Value valueOf(const std::string &name) override { return lookup(name); }
  const KnownTensor *knownTensorOf(const std::string &name) override {
    return knownValue(name);
  }
  mlir::Operation *build(llvm::StringRef opName, mlir::ValueRange operands,
                         llvm::ArrayRef<mlir::NamedAttribute> attrs,
                         unsigned numResults) override;
  void bind(const std::string &name, mlir::Value value) override {
    values[name] = value;
    batchScaleOf(value);
  }
  void bindKnown(const std::string &name, KnownTensor value) override {
    known[name] = std::move(value);
  }
  [[noreturn]] void error(const std::string &message) override {
    fail(message);
  }
  mlir::OpBuilder &opBuilder() override { return builder; }
  mlir::Value batchRows() override { return dataInput; }

private:
  struct RandomMask;
  // Graph-level pieces (Importer.cpp).
  int64_t defaultOpset() const;
  void declareInputs(mlir::Block &body);
  /// Reads what PyTorch 2's exporter says of the initializers
  /// (ExporterIdioms.cpp): fills exportedBuffers, and moves the exporter's
  /// own constants to constantNodes.
  void classifyExportedInitializers();
  void importNode(const onnx::NodeProto &node, int index);
  void declareOutputs(mlir::Block &body);

  // Folding (KnownValues.cpp).
  /// Evaluates a shape-arithmetic node on known inputs; false when an input
  /// is a tensor computed at run time.
  bool foldNode(const onnx::NodeProto &node);
  mlir::Value materialize(const std::string &name, const KnownTensor &tensor);

  // Exporter idioms (ExporterIdioms.cpp).
  /// Dropout written out with random ops (RandomMasks.cpp: PyTorch 2's
  /// bernoulli, the stochastic depth of EfficientNet and ConvNeXt,
  /// Dropout2d, AlphaDropout): see RandomMask.
  bool importRandomMask(const onnx::NodeProto &node);
  /// `input` times the Bernoulli draw's affine function `mask` (no
  /// offset): nn.dropout, one draw per element, row or channel.
  mlir::Value applyRandomMask(const RandomMask &mask, mlir::Value input);
  /// `dropped` (nn.dropout of mask's draw) plus `mask`: the same dropout,
  /// its kept elements shifted by scale + offset and dropped ones filled
  /// with offset; nullopt where `dropped` is no dropout of that draw.
  std::optional<mlir::Value> addToDropout(mlir::Value dropped,
                                          const RandomMask &mask);
  /// PRelu of `slopes.like` with the random `slopes`: RReLU in training.
  mlir::Value createRandomLeakyRelu(const RandomMask &slopes);
  /// ConstantOfShape or Expand to a shape with the batch in dim 0: an
  /// uninitialized tensor (the exporter's torch.empty before bernoulli_),
  /// or known values repeated for each sample; false for any other shape.
  bool importMaskFill(const onnx::NodeProto &node);
  /// Whether `node`, reading known values repeated for each sample (its
  /// input 0 or others), computes the same on one sample's values.
  bool foldsPerSample(const onnx::NodeProto &node);
  void checkSoftmaxRowsKept(mlir::Value probabilities);

  mlir::MLIRContext &ctx;
  mlir::OpBuilder builder;
  std::string path;
  const onnx::ModelProto &model;
  const onnx::GraphProto &graph;
  int64_t opset = 0;
  mlir::Block *body = nullptr;
  mlir::Location currentLoc = mlir::UnknownLoc::get(&ctx);

  llvm::StringMap<mlir::Value> values;
  llvm::StringMap<const onnx::TensorProto *> initializers;
  /// Initializers the exporter says are a module's buffers, not parameters:
  /// imported as nn.buffer (state the step does not train), as batch norm's
  /// running statistics are.
  llvm::StringSet<> exportedBuffers;
  llvm::StringMap<const onnx::TensorProto *> constantNodes;
  llvm::StringMap<KnownTensor> known;
  /// How many times the batch a value's dynamic dim is (see batchScaleOf).
  llvm::DenseMap<mlir::Value, int64_t> batchScales;
  /// The first data input: what sizes a tensor expanded to the batch.
  mlir::Value dataInput;
  /// Training-mode dropouts imported so far: the next one's mask key.
  int64_t numDropouts = 0;
  /// A random mask on its way to a Mul: a fill of `shape` (dim 0 the
  /// batch), uniform noise of that shape, its comparison with `keep` (the
  /// Bernoulli draw m, named by the comparison's output `draw`), and
  /// scale m + offset; x times (m / keep) is dropout with ratio 1 - keep,
  /// of whole rows or channels where the mask's other dims are 1.
  struct RandomMask {
    /// Or noise in [low, high) of the shape of tensor `like`, read as
    /// PRelu's slope: RReLU in training.
    enum Stage { Fill, Uniform, Bernoulli, Slopes } stage;
    llvm::SmallVector<int64_t> shape;
    double keep = 1;
    double scale = 1, offset = 0;
    std::string draw;
    double low = 0, high = 1;
    std::string like;
    /// A Fill that expands known values to the batch (BERT's token-type
    /// ids), not an empty tensor: what it repeats for each sample.
    std::optional<KnownTensor> repeated;
  };
  llvm::StringMap<RandomMask> randomMasks;
  /// The nn.dropout key of each Bernoulli draw a tensor was multiplied by.
  llvm::StringMap<int64_t> maskKeys;
  /// IsNaN's outputs, by the name of the tensor each tests: only
  /// Where(IsNaN(x), c, x) may read them (importNanGuard).
  llvm::StringMap<std::string> nanTests;
  /// Comparisons with a constant, by output name (recordComparison).
  llvm::StringMap<ValueSet> comparisons;
  /// One sample's constant of a value repeated for each sample, by name.
  llvm::StringMap<mlir::Value> sampleConstants;
  /// LSTM, and the sequence-first views and fills around it.
  LstmImport lstmImport{*this};
  /// SplitToSequence's parts, for SequenceAt.
  llvm::StringMap<llvm::SmallVector<mlir::Value>> sequences;
  /// Outputs that have no nn counterpart (batch-norm's running statistics
  /// in training-mode exports): an error only if something reads them.
  llvm::StringMap<std::string> unavailable;
  /// The static batch size the data inputs were exported with, if any.
  std::optional<int64_t> exportedBatch;
  /// Naming attributes of the function's arguments and results, in order.
  llvm::SmallVector<llvm::SmallVector<mlir::NamedAttribute, 2>> argumentAttrs;
  llvm::SmallVector<mlir::NamedAttribute> resultNames;
  /// Initializers that an Identity node copies under a new name: the new
  /// parameter's initial value is the source's (exporters deduplicate equal
  /// initializers this way; the parameters stay distinct).
  llvm::StringMap<std::string> initialValueSource;
  /// Tensors built from Constant nodes' scalar and list attributes.
  std::vector<std::unique_ptr<onnx::TensorProto>> ownedTensors;
};

} // namespace dpc::frontend

#endif // DPC_FRONTEND_ONNX_IMPORTER_H
